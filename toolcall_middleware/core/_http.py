"""HTTP details of rewriting a response: headers by any case, what to rewrite, content-coding.

Headers are `(name, value)` byte pairs as ASGI carries them; names are compared lower-cased
because some frameworks keep their case (Django sends `Content-Type`). Encodings we can decode
(gzip, deflate) are decoded incrementally; any other is passed through untouched.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from enum import Enum

Headers = list[tuple[bytes, bytes]]


def header(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> bytes | None:
    """The first value of a header, by case-insensitive name."""
    name = name.lower()
    for key, value in headers:
        if key.lower() == name:
            return value
    return None


def headers_named(
    headers: Iterable[tuple[bytes, bytes]], first: bytes, second: bytes
) -> tuple[bytes | None, bytes | None]:
    """The first values of two headers (lower-case names), by case-insensitive name, in one pass."""
    one = two = None
    for key, value in headers:
        key = key.lower()
        if key == first:
            if one is None:
                one = value
        elif key == second and two is None:
            two = value
    return one, two


def without(headers: Iterable[tuple[bytes, bytes]], *names: bytes) -> Headers:
    """The headers with every case variant of `names` removed."""
    drop = {n.lower() for n in names}
    return [(k, v) for k, v in headers if k.lower() not in drop]


class Body(Enum):
    JSON = "json"
    SSE = "sse"
    PASS = "pass"


# An error of ours that the same request would meet again says so: the openai and anthropic SDKs
# repeat a request answered 408, 409, 429 or 5xx (twice, by default) unless this header says not
# to, and a repeat costs the host a whole generation that fails the same way.
NO_RETRY = (b"x-should-retry", b"false")


def json_head(body: bytes, *, final: bool = False) -> Headers:
    """The headers of a whole JSON answer of ours: its type and its length. `final`: an error the
    middleware decided itself that a repeat of the request would meet again (a refusal of the
    request, an answer that broke its rules, a limit), marked `NO_RETRY`."""
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if final:
        head.append(NO_RETRY)
    return head


def no_retry(headers: Iterable[tuple[bytes, bytes]]) -> Headers:
    """`headers` (a whole answer's) marked `NO_RETRY`, whatever the host said of retrying."""
    return [*without(headers, NO_RETRY[0]), NO_RETRY]


def classify(method: str, status: int, headers: Iterable[tuple[bytes, bytes]]) -> Body:
    """Rewrite a JSON body, rewrite an SSE stream, or pass the response through untouched."""
    if not answerable(method, status, headers):
        return Body.PASS
    ctype = (header(headers, b"content-type") or b"").split(b";")[0].strip().lower()
    if ctype == b"text/event-stream":
        return Body.SSE
    if ctype == b"application/json" or ctype.endswith(b"+json"):
        return Body.JSON
    return Body.PASS


def answerable(method: str, status: int, headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """A response whose body should be an answer (a 2xx with a body, in a coding we decode),
    whatever its content type says: `classify` passes it when the type is not JSON or SSE."""
    if method.upper() == "HEAD" or not 200 <= status < 300 or status in (204, 206, 304):
        return False
    coding = (header(headers, b"content-encoding") or b"identity").strip().lower()
    return coding in (b"identity", b"", b"gzip", b"x-gzip", b"deflate")


class ContentDecoder:
    """Incremental gzip / deflate decoding (`feed`, `flush`); identity passes bytes as they are."""

    def __init__(self, coding: bytes | None) -> None:
        coding = (coding or b"identity").strip().lower()
        self.identity = coding in (b"identity", b"")
        self._deflate = coding == b"deflate"
        wbits = zlib.MAX_WBITS if self._deflate else zlib.MAX_WBITS | 16
        self._z = None if self.identity else zlib.decompressobj(wbits)
        self._head: bytes | None = b"" if self._deflate else None  # deflate: wait for the 2-byte header

    def feed(self, data: bytes) -> bytes:
        if self._z is None:
            return data
        if self._head is not None:
            data = self._head + data
            if len(data) < 2:
                self._head = data
                return b""
            self._head = None
            if (data[0] * 256 + data[1]) % 31 or data[0] & 0x0F != 8:
                # Servers send raw deflate without the zlib header as often as with it.
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)
        return self._z.decompress(data)

    def flush(self) -> bytes:
        if self._z is None:
            return b""
        tail = self.feed(b"") if self._head else b""
        return tail + self._z.flush()


__all__ = [
    "NO_RETRY",
    "Body",
    "ContentDecoder",
    "Headers",
    "answerable",
    "classify",
    "header",
    "headers_named",
    "json_head",
    "no_retry",
    "without",
]
