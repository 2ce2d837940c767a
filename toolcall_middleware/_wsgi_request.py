"""One request of ours and its response over WSGI (PEP 3333), driven by the server's worker thread.

Per request: the body is read from `CONTENT_LENGTH` (or to its end when the server sets
`wsgi.input_terminated`) by the rules of `core._body_read`, rewritten, and handed to the app as a
fresh `wsgi.input` with its own `CONTENT_LENGTH`. The app's `start_response` decides the head
(the answer's parts are made then, before the app computes its first chunk); the server's is called
with the first body chunk, as PEP 3333 has servers send a head. What the client gets of each chunk,
and which head, is `core._held_response`'s to say: a stream yields one piece (`b""` while text is
held back) per chunk of the app; a JSON body is gathered, then goes out rewritten with its new
length, or as the app sent it. `close()` reaches the app's iterable; `exc_info` follows PEP 3333;
`write()` works. The shell keeps no state of the exchange's, only I/O: the app's head as it gave
it, and the server's `write`.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable, Iterator

from ._wsgi_io import (
    Environ,
    ExcInfo,
    StartResponse,
    Write,
    WSGIApp,
    WSGIHeaders,
    read_body,
    replayed,
    respond,
    status_line,
    to_bytes,
    to_str,
    with_body,
)
from .config import ToolCallConfig
from .core._exchange import Exchange
from .core._exchange_state import AGAIN, BUFFER, ENDED
from .core._held_response import HeldResponse, Writes

logger = logging.getLogger("toolcall_middleware")


class WSGIRequest:
    """One request of ours and its response, over WSGI: never kept on the middleware."""

    def __init__(
        self, app: WSGIApp, exchange: Exchange[ToolCallConfig], environ: Environ, start_response: StartResponse
    ) -> None:
        self.app = app
        self.exchange = exchange
        self.environ = environ
        self.server_start = start_response
        self.server_write: Write | None = None  # set once the server's start_response was called
        self.head: tuple[str, WSGIHeaders] | None = None  # the app's head, as it gave it
        # The head and chunks held back; a new length is `Content-Length`, as WSGI apps write it.
        self.response: HeldResponse[bytes] = HeldResponse(exchange, length_name=b"Content-Length")
        self.forwarded: tuple[Environ, bytes] = (environ, b"")  # what the host got (`run`)

    # -- request -------------------------------------------------------------------------------

    def run(self) -> Iterable[bytes]:
        environ = self.environ
        raw, complete = read_body(environ, self.exchange.config.limits.max_request_bytes)  # (None: not read)
        forward = self.exchange.forward(raw or b"", complete=complete and raw is not None)
        if forward.refusal is not None:
            return respond(self.server_start, *forward.refusal)  # malformed, or bridged and over the limit
        if forward.body is not None:
            environ = with_body(environ, forward.body)
        elif raw is not None:
            environ = replayed(environ, raw, complete)  # what was read goes back to the app unchanged
        path_info = self.exchange.path_info(environ.get("SCRIPT_NAME", ""))
        if path_info != environ.get("PATH_INFO"):
            # The bridged request goes to the route of the host's API, under the same mount point.
            environ = {**environ, "PATH_INFO": path_info}
        # What the host gets should it be asked again (`again`): the same body, read afresh.
        self.forwarded = (environ, forward.body if forward.body is not None else raw or b"")
        self.exchange.host_asked()
        try:
            result = self.app(environ, self._start_response)
        except BaseException:
            self.exchange.host_done()
            self.exchange.report()
            raise
        return _Response(self, result)

    def again(self) -> Iterable[bytes]:
        """The app, asked the same request again: its last whole answer broke a rule another
        generation may keep (`regenerate`), and nothing of it went out."""
        self.exchange.again()
        self.head = None
        environ, body = self.forwarded
        return self.app(with_body(environ, body), self._start_response)

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
            self.head = (status, list(headers))
            self.response.replaced()
            return self._write
        if self.head is not None:
            raise RuntimeError("start_response was already called for this response (exc_info missing)")
        self.head = (status, list(headers))
        # Decided now: the answer's parts are made before the app computes its first body.
        method = str(self.environ.get("REQUEST_METHOD", "POST"))
        code = int(status.split(" ", 1)[0]) if status[:3].isdigit() else 0
        self.response.head(method, code, to_bytes(headers))
        self.exchange.prepare()
        return self._write

    # -- response body -------------------------------------------------------------------------

    def chunk(self, data: bytes) -> list[bytes]:
        """What the client gets for one chunk of the app's body (empty: held back)."""
        self.exchange.host_first_byte()
        return self._written(self.response.body(data, data, end=False))

    def abort(self, error: Exception) -> tuple[list[bytes], bool] | None:
        """The app raised while its body was read: what the exchange says of it
        (`Exchange.failed`). The pieces the client gets last (the end of a rewritten
        stream, or a whole error answer) and whether the error is handled (else raised again);
        None when the server answers the failure itself."""
        failure = self.exchange.failed(error, head_sent=self.server_write is not None)
        if failure.answer is not None:
            return respond(self.server_start, *failure.answer), failure.handled
        return None if failure.last is None else ([failure.last], failure.handled)

    def end(self) -> list[bytes]:
        """What the client gets once the app's body ended."""
        return self._written(self.response.end())

    def _written(self, writes: bytes | Writes[bytes]) -> list[bytes]:
        """The pieces the server gets of `writes` (bytes: a piece of a stream under way), its head
        given to the server's `start_response` first (the exchange's headers and status, or the
        app's own head). A stream's piece may be empty (`b""` while text is held back keeps the
        block boundary, PEP 3333)."""
        if isinstance(writes, bytes):
            return [writes]
        if writes.head is not None and self.server_write is None:
            assert self.head is not None
            status, headers = self.head
            if writes.head.headers is not None:
                headers = to_str(writes.head.headers)
                status = status if writes.head.status is None else status_line(writes.head.status)
            self.server_write = self.server_start(status, headers)
        return [*writes.messages] if writes.body is None else [*writes.messages, writes.body]

    def _write(self, data: bytes) -> None:
        """The legacy `write()` callable: the data takes the same road as a yielded chunk."""
        for piece in self.chunk(data):
            if piece:
                assert self.server_write is not None
                self.server_write(piece)


class _Response:
    """The iterable the server gets: one piece per chunk of the app's, `close()` passed on."""

    def __init__(self, request: WSGIRequest, result: Iterable[bytes]) -> None:
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
                self._out.extend(self._request.end())
                if self._request.exchange.state is AGAIN:
                    self._close_result()
                    self._result, self._chunks = self._request.again(), None
                    continue
                self._ended = True
                continue
            except Exception as error:
                # The app failed mid-stream: the client's stream ends cleanly first (held text out,
                # an error event last), then the server gets the exception as it would have.
                ending = self._request.abort(error)
                if ending is None:
                    raise
                self._ended = True
                self._failure = None if ending[1] else error
                self._out.extend(ending[0])
                continue
            pieces = self._request.chunk(data)
            state = self._request.exchange.state
            if state is BUFFER:
                continue  # gathering a whole body: nothing to say until it ends
            self._out.extend(pieces if pieces else [b""])
            if state is ENDED:
                self._ended = True  # (`close` drains the rest of the app's body)
        piece = self._out.popleft()
        self._request.exchange.sent(len(piece))  # every body byte the server gets passes here
        return piece

    def close(self) -> None:
        try:
            if self._request.exchange.state is ENDED and self._chunks is not None:
                self._drain(self._chunks)
            self._close_result()
        finally:
            self._request.exchange.host_done()  # (the app's body is over: read to its end, or given up)
            self._request.exchange.report()

    def _close_result(self) -> None:
        close = getattr(self._result, "close", None)
        if close is not None:
            close()

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


__all__ = ["WSGIRequest"]
