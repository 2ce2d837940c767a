"""What the WSGI shells share: the WSGI types, the request body read within its limit, and the
conversions between WSGI's text headers and status lines and the core's bytes."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from http import HTTPStatus
from types import TracebackType
from typing import Any, Protocol

from .core._body_read import BodyRead
from .core._http import Headers

ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]
Environ = dict[str, Any]
WSGIHeaders = list[tuple[str, str]]
Write = Callable[[bytes], object]


class StartResponse(Protocol):
    def __call__(self, status: str, headers: WSGIHeaders, exc_info: ExcInfo | None = ..., /) -> Write: ...


WSGIApp = Callable[[Environ, StartResponse], Iterable[bytes]]

_READ = 64 * 1024


def to_bytes(headers: WSGIHeaders) -> Headers:
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]


def to_str(headers: Headers) -> WSGIHeaders:
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in headers]


def status_line(code: int) -> str:
    try:
        return f"{code} {HTTPStatus(code).phrase}"
    except ValueError:
        return str(code)


def respond(start_response: StartResponse, status: int, headers: Headers, body: bytes) -> list[bytes]:
    """A whole response: its head given to `start_response`, its one body returned."""
    start_response(status_line(status), to_str(headers))
    return [body]


def read_body(environ: Environ, limit: int) -> tuple[bytes | None, bool]:
    """The request body read (None: not read at all) and whether it is whole (`BodyRead`'s rules)."""
    declared = str(environ.get("CONTENT_LENGTH") or "").strip() or None
    if declared is None and not environ.get("wsgi.input_terminated"):
        return b"", True  # no length and no end marker: PEP 3333 says there is no body to read
    read = BodyRead(limit, declared)
    if read.skipped:
        return None, False  # not ours to judge, or too large to hold: left to the app
    stream = environ["wsgi.input"]
    while read.reading:
        read.take(stream.read(read.wanted(_READ)))
    return read.body, read.complete


def with_body(environ: Environ, body: bytes) -> Environ:
    """The environ of a request whose body is now `body` (its length said, no chunked coding)."""
    new = {**environ, "wsgi.input": io.BytesIO(body), "CONTENT_LENGTH": str(len(body))}
    new.pop("HTTP_TRANSFER_ENCODING", None)
    return new


def replayed(environ: Environ, read: bytes, complete: bool) -> Environ:
    """The environ whose `wsgi.input` gives the body read again (not `complete`: then the rest of
    it, from the server's input)."""
    stream = io.BytesIO(read) if complete else io.BufferedReader(Prepended(read, environ["wsgi.input"]))
    return {**environ, "wsgi.input": stream}


class Prepended(io.RawIOBase):
    """The bytes already read, then the rest of the server's input (a body over the limit)."""

    def __init__(self, head: bytes, rest: Any) -> None:
        self._head = io.BytesIO(head)
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._head.read(len(buffer)) or self._rest.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


__all__ = [
    "Environ",
    "ExcInfo",
    "Prepended",
    "StartResponse",
    "WSGIApp",
    "WSGIHeaders",
    "Write",
    "read_body",
    "replayed",
    "respond",
    "status_line",
    "to_bytes",
    "to_str",
    "with_body",
]
