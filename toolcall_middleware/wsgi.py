"""`ToolCallWSGIMiddleware`: native WSGI (PEP 3333) middleware over the same exchange as the ASGI one.

```python
app.wsgi_app = ToolCallWSGIMiddleware(app.wsgi_app, dialect="hermes")    # Flask
application = ToolCallWSGIMiddleware(get_wsgi_application(), dialect=...)  # Django, any WSGI app
```

No bridge to ASGI: the server's worker thread drives `ToolCallExchange` directly, chunk by chunk.
Per request: the body is read from `CONTENT_LENGTH` (or to its end when the server sets
`wsgi.input_terminated`), rewritten, and handed to the app as a fresh `wsgi.input` with its own
`CONTENT_LENGTH`. The app's `start_response` decides the head (the answer's parts are made then,
before the app computes its first chunk); the server's is called with the first body chunk, as
PEP 3333 has servers send a head. A stream yields one piece (`b""` while text is held back) per chunk
of the app; a JSON body is gathered, then goes out rewritten with its new length, or as the app
sent it. `close()` reaches the app's iterable; `exc_info` follows PEP 3333; `write()` works.
"""

from __future__ import annotations

import io
import logging
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from http import HTTPStatus
from types import TracebackType
from typing import Any, Protocol

from .compact import compact_route, compact_wsgi
from .config import ToolCallConfig
from .core.exchange_state import State
from .core.framing.utf8 import json_bytes
from .core.http import Headers
from .core.request import BadRequest
from .exchange import ToolCallExchange, settings_from

logger = logging.getLogger("toolcall_middleware")

ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]
Environ = dict[str, Any]
WSGIHeaders = list[tuple[str, str]]
Write = Callable[[bytes], object]


class StartResponse(Protocol):
    def __call__(self, status: str, headers: WSGIHeaders, exc_info: ExcInfo | None = ..., /) -> Write: ...


WSGIApp = Callable[[Environ, StartResponse], Iterable[bytes]]

_READ = 64 * 1024


class ToolCallWSGIMiddleware:
    """WSGI middleware; keyword options are `ToolCallConfig` fields, validated here, once."""

    def __init__(self, app: WSGIApp, config: ToolCallConfig | None = None, **options: Any) -> None:
        self.app = app
        self.config = config if config is not None else ToolCallConfig(**options)
        self._settings = settings_from(self.config)

    def __call__(self, environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")
        method = environ.get("REQUEST_METHOD", "GET")
        route = ToolCallExchange.route(self.config, method, path, environ.get("HTTP_CONTENT_ENCODING"))
        if route is None:
            compacted = compact_route(self.config, method, path)
            if compacted is not None:  # `compaction="emulate"`: the host's model summarizes
                return self._compact(environ, start_response, compacted)
            return self.app(environ, start_response)
        return _Request(self, ToolCallExchange(self.config, route, self._settings), environ, start_response).run()


    def _compact(self, environ: Environ, start_response: StartResponse, responses_path: str) -> Iterable[bytes]:
        limit = self.config.limits.max_request_bytes
        raw, complete = read_body(environ, limit)
        if raw is None or not complete:
            error = BadRequest(f"The request body is over {limit} bytes.", code="request_too_large")
            status, headers, body = 413, [(b"content-type", b"application/json")], json_bytes(error.body())
        else:
            status, headers, body = compact_wsgi(self, environ, raw, responses_path)
        start_response(_status_line(status), _to_str(headers))
        return [body]


def _to_bytes(headers: WSGIHeaders) -> Headers:
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]


def _to_str(headers: Headers) -> WSGIHeaders:
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in headers]


def _status_line(code: int) -> str:
    try:
        return f"{code} {HTTPStatus(code).phrase}"
    except ValueError:
        return str(code)


def read_body(environ: Environ, limit: int) -> tuple[bytes | None, bool]:
    """The request body read (None: not read at all) and whether it is whole."""
    stream = environ["wsgi.input"]
    declared = str(environ.get("CONTENT_LENGTH") or "").strip()
    if declared:
        if not declared.isdigit() or int(declared) > limit:
            return None, False  # not ours to judge, or too large to hold: left to the app
        size = int(declared)
        parts: list[bytes] = []
        got = 0
        while got < size:
            part = stream.read(min(size - got, _READ))
            if not part:
                break  # the client sent less than it declared: replayed as it came
            parts.append(part)
            got += len(part)
        return b"".join(parts), got == size
    if not environ.get("wsgi.input_terminated"):
        return b"", True  # no length and no end marker: PEP 3333 says there is no body to read
    parts, got = [], 0
    while True:
        part = stream.read(_READ)
        if not part:
            return b"".join(parts), True
        parts.append(part)
        got += len(part)
        if got > limit:  # no rewrite: what was read is replayed, the rest comes from the server
            return b"".join(parts), False


class _Prepended(io.RawIOBase):
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


class _Request:
    """The state of one request: never kept on the middleware."""

    def __init__(
        self, mw: ToolCallWSGIMiddleware, exchange: ToolCallExchange, environ: Environ, start_response: StartResponse
    ) -> None:
        self.mw = mw
        self.exchange = exchange
        self.environ = environ
        self.server_start = start_response
        self.server_write: Write | None = None  # set once the server's start_response was called
        self.head: tuple[str, WSGIHeaders] | None = None  # the app's head, as it gave it
        self.send_head: tuple[str, WSGIHeaders] | None = None  # the head to give the server, once decided
        self.held: list[bytes] = []  # buffered JSON: the app's chunks as it sent them

    # -- request -------------------------------------------------------------------------------

    def run(self) -> Iterable[bytes]:
        environ = self.environ
        raw, complete = self._read_body()
        try:
            new = self.exchange.rewrite_request(raw or b"", complete=complete and raw is not None)
        except BadRequest as error:
            status, headers, body = self.exchange.error_response(error)
            self.server_start(_status_line(status), _to_str(headers))
            return [body]
        if new is not None:
            environ = {**environ, "wsgi.input": io.BytesIO(new), "CONTENT_LENGTH": str(len(new))}
            environ.pop("HTTP_TRANSFER_ENCODING", None)
        elif raw is not None:
            # What was read goes back to the app unchanged (the rest of a long body after it).
            stream = io.BytesIO(raw) if complete else io.BufferedReader(_Prepended(raw, environ["wsgi.input"]))
            environ = {**environ, "wsgi.input": stream}
        if self.exchange.bridged:
            # The bridged request goes to the route of the host's API, under the same mount point.
            script = environ.get("SCRIPT_NAME", "")
            target = self.exchange.path
            path_info = target[len(script) :] if script and target.startswith(script) else target
            environ = {**environ, "PATH_INFO": path_info}
        try:
            result = self.mw.app(environ, self._start_response)
        except BaseException:
            self.exchange.report()
            raise
        return _Response(self, result)

    def _read_body(self) -> tuple[bytes | None, bool]:
        """The body read (None: not read at all) and whether it is whole."""
        return read_body(self.environ, self.mw.config.limits.max_request_bytes)

    # -- response head -------------------------------------------------------------------------

    def _start_response(self, status: str, headers: WSGIHeaders, exc_info: ExcInfo | None = None) -> Write:
        if exc_info is not None:
            try:
                if self.server_write is not None:
                    # The head went to the server: it re-raises if it sent it, or takes the new one.
                    self.exchange.pass_through()
                    self.server_write = self.server_start(status, headers, exc_info)
                    return self._write
            finally:
                exc_info = None  # no reference cycle through the traceback (PEP 3333)
            # Nothing went out yet: the error response replaces the held one, untouched.
            self.exchange.pass_through("the app replaced its response (exc_info): passed through")
            self.head, self.held = (status, list(headers)), []
            self.send_head = self.head
            return self._write
        if self.head is not None:
            raise RuntimeError("start_response was already called for this response (exc_info missing)")
        self.head = (status, list(headers))
        self._decide()  # (now: the answer's parts are made before the app computes its first body)
        return self._write

    def _decide(self) -> None:
        if self.head is None:
            raise RuntimeError("the application sent a body before calling start_response")
        status, headers = self.head
        method = str(self.environ.get("REQUEST_METHOD", "POST"))
        code = int(status.split(" ", 1)[0]) if status[:3].isdigit() else 0
        new = self.exchange.start(method, code, _to_bytes(headers))
        self.send_head = self.head if self.exchange.state is State.PASS else (status, _to_str(new))

    def _flush_head(self) -> None:
        if self.server_write is None and self.send_head is not None:
            status, headers = self.send_head
            self.server_write = self.server_start(status, headers)

    # -- response body -------------------------------------------------------------------------

    def chunk(self, data: bytes) -> list[bytes]:
        """What the client gets for one chunk of the app's body (empty: held back)."""
        if self.exchange.state is State.HEAD:
            self._decide()
        state = self.exchange.state
        if state is State.PASS or state is State.DONE:
            self._flush_head()
            return [data]
        if state is State.ENDED:
            return []  # after the client's stream ended: dropped
        if state is State.BUFFER:
            self.held.append(data)
        out = self.exchange.transform(data)
        return self._after(out, data, end=False, buffering=state is State.BUFFER)

    def abort(self, error: Exception) -> bytes | None:
        """The app raised mid-stream: the bytes that end the client's rewritten stream, or None
        when the stream is not ours or has not started (the server answers the failure itself)."""
        if self.exchange.state is not State.STREAM or self.server_write is None:
            return None
        return self.exchange.abort(self.exchange.failure_message(error))

    def end(self) -> list[bytes]:
        """What the client gets once the app's body ended."""
        if self.exchange.state is State.HEAD:
            if self.head is None:
                return []  # the app never answered: the server reports it
            self._decide()
        state = self.exchange.state
        if state is State.PASS or state is State.DONE:
            self._flush_head()
            return []
        out = self.exchange.transform(b"", end=True)
        return self._after(out, b"", end=True, buffering=state is State.BUFFER)

    def _after(self, out: bytes | None, data: bytes, *, end: bool, buffering: bool) -> list[bytes]:
        """What the client gets of `out`, what the exchange made of `data`."""
        ex = self.exchange
        if out is None:  # a bug of ours (logged): the rest passes through
            if buffering:
                return self._give_back()
            self._flush_head()
            return [data]
        if buffering:
            if ex.state is State.PASS:
                return self._give_back()  # not an answer, or over the cap: the original, byte for byte
            if not end:
                return []
            status, headers = self.send_head or ("200 OK", [])
            if ex.status is not None:
                status = _status_line(ex.status)
            headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
            self.send_head = (status, [*headers, ("Content-Length", str(len(out)))])
            self.held = []
            self._flush_head()
            return [out]
        self._flush_head()  # (the stream's terminal event may have come: the state is ENDED then)
        return [out]  # streamed: b"" while text is held back keeps the block boundary (PEP 3333)

    def _give_back(self) -> list[bytes]:
        """A buffered body we will not rewrite: the app's own head and chunks, unchanged."""
        self.send_head = self.head
        held, self.held = self.held, []
        self._flush_head()
        return held

    def _write(self, data: bytes) -> None:
        """The legacy `write()` callable: the data takes the same road as a yielded chunk."""
        for piece in self.chunk(data):
            if piece:
                assert self.server_write is not None
                self.server_write(piece)


class _Response:
    """The iterable the server gets: one piece per chunk of the app's, `close()` passed on."""

    def __init__(self, request: _Request, result: Iterable[bytes]) -> None:
        self._request = request
        self._result = result
        self._chunks: Iterator[bytes] | None = None
        self._out: deque[bytes] = deque()
        self._ended = False
        self._failure: Exception | None = None  # raised once the ending of the stream is out

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        while not self._out:
            if self._failure is not None:
                failure, self._failure = self._failure, None
                raise failure
            if self._ended:
                raise StopIteration
            if self._chunks is None:
                self._chunks = iter(self._result)
            try:
                data = next(self._chunks)
            except StopIteration:
                self._ended = True
                self._out.extend(self._request.end())
                continue
            except Exception as error:
                # The app failed mid-stream: the client's stream ends cleanly first (held text out,
                # an error event last), then the server gets the exception as it would have.
                ending = self._request.abort(error)
                if ending is None:
                    raise
                self._ended, self._failure = True, error
                self._out.append(ending)
                continue
            pieces = self._request.chunk(data)
            state = self._request.exchange.state
            if state is State.BUFFER:
                continue  # gathering a whole body: nothing to say until it ends
            self._out.extend(pieces if pieces else [b""])
            if state is State.ENDED:
                self._ended = True  # (`close` drains the rest of the app's body)
        piece = self._out.popleft()
        self._request.exchange.sent(len(piece))  # every body byte the server gets passes here
        return piece

    def close(self) -> None:
        try:
            if self._request.exchange.state is State.ENDED and self._chunks is not None:
                self._drain(self._chunks)
            close = getattr(self._result, "close", None)
            if close is not None:
                close()
        finally:
            self._request.exchange.report()

    @staticmethod
    def _drain(chunks: Iterator[bytes]) -> None:
        """Read the rest of the app's body and drop it: our stream ended before the app's did
        (a limit's error, say). The server calls `close` once the client has the whole response,
        so the app runs to its end, as it would have, without the client waiting for it."""
        try:
            for _ in chunks:
                pass
        except Exception:  # what the app says after our end reaches nobody: logged, not raised
            logger.warning("toolcall-middleware: the app failed after its stream was ended", exc_info=True)


__all__ = ["ToolCallWSGIMiddleware"]
