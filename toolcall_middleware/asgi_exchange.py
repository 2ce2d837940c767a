"""One HTTP exchange over ASGI: the request read and replayed to the app, the app's messages
translated to the exchange (`ToolCallExchange`) and what it says sent to the server.

Per request: the body is read whole (a disconnect ends the request; an oversized body is replayed
unchanged), rewritten and replayed once, then `receive` is the server's own again, so the app
still sees `http.disconnect`. `http.response.start` is decided when it comes (the answer's parts
are made then, while the model computes its first token); a stream's head no body can change (no
length given, not content-encoded) goes out at once, any other is held until the first body (a
buffered one's until its body ends). Streamed rewrites drop `Content-Length`, buffered ones
recompute it, and a buffered body that turns out not to be ours goes out as the app sent it, head
and messages. Everything else is forwarded in order, untouched.

The shell keeps no state of the exchange's: what to do with a message is read from
`exchange.state` (`core.exchange_state`). It holds only I/O: the head and messages held back, the
keep-alive, and `flowing`, the one flag the usual chunk reads. The `send` the app is given is
`HTTPExchange._send`; every message the client gets goes to the server through `_write`
(`_counting`: the one place that counts the response's bytes), and through the keep-alive
(`keepalive.KeepAlive`) once a rewritten stream is under way.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from .core.exchange_state import BUFFER, DONE, ENDED, GIVEN_UP, HEAD, PASS, STREAM, State
from .core.http import without
from .core.request import BadRequest
from .exchange import ToolCallExchange
from .inprocess import replay
from .keepalive import KeepAlive, ping_for
from .store.asgi_io import with_body

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

logger = logging.getLogger("toolcall_middleware")


def _counting(send: Send, exchange: ToolCallExchange) -> Send:
    """The server's `send`, through which every message the client gets passes (the keep-alive's
    pings too), so the record's `response_bytes` counts every body byte sent. A closure, not a
    method: the keep-alive holds it, and must not hold the request (a cycle per response)."""

    def write(message: Message) -> Awaitable[None]:
        # (the server's awaitable itself: no coroutine of ours per message)
        if message["type"] == "http.response.body":
            exchange.sent(len(message.get("body", b"")))
        return send(message)

    return write


async def _nothing() -> None:
    """An awaitable that does nothing (a piece that gave no bytes), under any event loop."""


class HTTPExchange:
    """One HTTP request of ours and its response, over ASGI: never kept on the middleware."""

    def __init__(
        self, app: ASGIApp, exchange: ToolCallExchange, scope: Scope, receive: Receive, send: Send
    ) -> None:
        self.app = app
        self.scope = scope
        self.receive = receive
        self.send = send
        self.exchange = exchange
        self.start: Message | None = None  # the head while held (a JSON answer's, an encoded stream's)
        self.original: Message | None = None  # the head as the app sent it
        self.held: list[Message] = []  # buffered JSON: the app's messages after its head, as sent
        self.keepalive: KeepAlive | None = None  # pings on a rewritten stream that goes quiet
        self._write = _counting(send, exchange)
        # The exchange is streaming, its head is out and the keep-alive set up: its next body goes
        # the short way in `_send` (one flag read per message, rather than three). Cleared whenever
        # the stream ends or is given up.
        self.flowing = False

    async def run(self, declared: bytes | None) -> None:
        """`declared`: the request's Content-Length, if it gave one."""
        chunks, complete = await self._read_body(declared)
        if chunks is None:
            return  # the client left before the body was complete: nothing to answer
        scope = self.scope
        try:
            new = self.exchange.rewrite_request(b"".join(chunks), complete=complete)
        except BadRequest as error:
            await self._send_error(*self.exchange.error_response(error))
            return
        if new is not None:
            chunks, scope = [new], with_body(scope, new)
        if self.exchange.path != scope.get("path"):
            # The bridged request goes to the route of the host's API (the query string stays).
            scope = {**scope, "path": self.exchange.path, "raw_path": self.exchange.path.encode()}
        try:
            # (a body not read at all, being over the limit, comes from the server as it is)
            receive = replay(chunks, self.receive, more=not complete) if chunks else self.receive
            await self.app(scope, receive, self._send)
        except Exception as error:
            if await self._abort(error):
                return  # a host's upstream failed (it logged why): the client has the API's error
            raise  # the server logs it as usual; the client's stream has been ended cleanly
        finally:
            try:
                if self.keepalive is not None:
                    await self.keepalive.stop()  # (a cancelled request may be cancelled here too)
            finally:
                self.exchange.report()

    async def _read_body(self, declared: bytes | None) -> tuple[list[bytes] | None, bool]:
        limit = self.exchange.config.limits.max_request_bytes
        chunks: list[bytes] = []
        size = 0
        if declared is not None and declared.isdigit() and int(declared) > limit:
            return chunks, False
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                return None, False
            body = bytes(message.get("body", b""))
            chunks.append(body)
            size += len(body)
            if not message.get("more_body", False):
                return chunks, True
            if size > limit:  # no rewrite: what was read is replayed, the rest comes from the server
                return chunks, False

    def _send(self, message: Message) -> Awaitable[None]:
        """The app's `send`: a plain function that returns what the app awaits. The usual message
        (a piece of a stream being rewritten, its head out and its keep-alive set up) is rewritten
        here, and the awaitable that writes it (the keep-alive's, or the server's) is returned as
        it is: no coroutine of ours per message. Any other message takes `_general`."""
        if self.flowing and message["type"] == "http.response.body" and message.get("more_body", False):
            # What `_general` does for such a piece, without the checks only its first one needs.
            ex = self.exchange
            body = message.get("body", b"")
            out = ex.transform(body if type(body) is bytes else bytes(body))
            state = ex.state
            if state is STREAM:
                if out:
                    return self._out({"type": "http.response.body", "body": out, "more_body": True})
                return _nothing()  # (all held back: whitespace that may come before a call)
            if state is ENDED:
                return self._last(out or b"")
            return self._streamed(message, out, True)
        return self._general(message)

    async def _last(self, out: bytes) -> None:
        """A piece of a rewritten stream that ended it (`out` holds its terminal event)."""
        if out:
            await self._out({"type": "http.response.body", "body": out, "more_body": True})
        await self._end_stream()

    async def _general(self, message: Message) -> None:
        """Every message of the app's but the usual one (see `_send`)."""
        kind = message["type"]
        ex = self.exchange
        state = ex.state
        if state is ENDED:
            # The client's stream had its terminal event: the rest of the app's body is dropped
            # (a proxy's upstream is read to its end or closed, as the app does), and only trailers
            # the head announced can still follow the final body.
            if kind == "http.response.trailers" and self.original is not None and self.original.get("trailers"):
                await self._write(message)
            return
        if kind == "http.response.start":
            # Decided now (the head is all it needs), so the answer's parts are made while a model
            # server computes its first token. A stream's head that no body can change (a stream
            # being made, not content-encoded) goes out at once, as without the middleware: the
            # client reads it meanwhile. Any other waits for the first body (a JSON answer's for
            # its length; one passed through as before, so a failure before it is the server's 500).
            self.start = self.original = message
            self._decide(prepare=False)
            if ex.head_final:  # (a stream of ours: `state` is STREAM)
                await self._flush_start()  # the head first: the parts below are not in it
            ex.prepare()
            return
        if kind != "http.response.body":
            await self._other(message)
            return
        body = bytes(message.get("body", b""))
        more = bool(message.get("more_body", False))
        if state is HEAD:
            state = self._decide()
        if state is PASS or state is DONE:
            if self.start is not None:
                await self._flush_start()
            await self._write(message)
            return
        if state is not BUFFER:  # (streaming, or a stream given up: its rest decoded)
            await self._streamed(message, ex.transform(body, end=not more), more)
            return
        self.held.append(message)
        out = ex.transform(body, end=not more)
        if out is None or ex.state is PASS:
            # A bug of ours (logged: the answer must not go down with it), not an answer, or over
            # the cap: the original head and bytes, byte for byte.
            await self._give_back()
        elif not more:
            # The rewritten body replaces the held ones; other held messages follow the head.
            self.held = [m for m in self.held if m["type"] != "http.response.body"]
            await self._flush_start(length=len(out), status=ex.status)
            await self._write({"type": "http.response.body", "body": out, "more_body": False})

    async def _streamed(self, message: Message, out: bytes | None, more: bool) -> None:
        """A body of a streamed rewrite, `out` what the exchange made of it."""
        self.flowing = False
        if out is None:  # a bug of ours (logged) must not take the answer down: the rest passes through
            if self.keepalive is not None:
                await self.keepalive.stop()
            await self._flush_start()
            await self._write(message)
            return
        # If the exchange gave up midway it keeps returning the (decoded) bytes as they came:
        # Content-Encoding is already gone from the head, so raw gzip must not follow it.
        state = self.exchange.state
        await self._flush_start()
        if self.keepalive is not None and state is not STREAM and state is not ENDED:
            await self.keepalive.stop()  # the end, or raw bytes that may split an event: no more pings
        if out or not more:
            await self._out({"type": "http.response.body", "body": out, "more_body": more})
        if state is ENDED:
            await self._end_stream()
        elif state is STREAM:
            self._keep_alive()
            self.flowing = True  # the head is out, the keep-alive set up: the next pieces go the short way

    async def _end_stream(self) -> None:
        """The client's stream had its terminal event (ours: a limit's error, the end): the
        response ends now, whatever the app sends after it (see `_general`)."""
        self.flowing = False
        if self.keepalive is not None:
            await self.keepalive.stop()
        await self._write({"type": "http.response.body", "body": b"", "more_body": False})

    def _keep_alive(self) -> None:
        interval = self.exchange.config.keepalive_interval
        if self.keepalive is None and interval:
            ping = ping_for(self.exchange.api, self.exchange.settings.profiles)
            self.keepalive = KeepAlive(self._write, interval, ping)
            self.keepalive.start()

    def _out(self, message: Message) -> Awaitable[None]:
        """A message on a started stream: after any ping being written, never inside one (the
        keep-alive's `send`, or the server's, as the awaitable to await: no coroutine of ours)."""
        return self.keepalive.send(message) if self.keepalive is not None else self._write(message)

    async def _abort(self, error: Exception) -> bool:
        """The app raised: what the exchange says of it (`ToolCallExchange.failed`) sent. True
        when the client has its answer and the error is not raised again."""
        failure = self.exchange.failed(error, head_sent=self.start is None)
        if failure.answer is not None:
            self.start, self.held = None, []
            await self._send_error(*failure.answer)  # nothing had gone out
        elif failure.last is not None:
            self.flowing = False
            if self.keepalive is not None:
                await self.keepalive.stop()
            try:
                await self._write({"type": "http.response.body", "body": failure.last, "more_body": False})
            except Exception:  # the client may be gone too (which may be why the app failed)
                logger.debug("toolcall-middleware: could not end the stream after the app failed", exc_info=True)
        return failure.handled

    async def _other(self, message: Message) -> None:
        """Anything but start/body (debug, trailers, early hints, pathsend, extensions): in order."""
        if message["type"] in ("http.response.pathsend", "http.response.zerocopysend"):
            # The bytes live in a file: nothing to rewrite. A head still held goes as the app sent
            # it; a stream's head that went out at once (the app gave no length) stays, and the
            # file's bytes follow it as they are.
            state = self.exchange.state
            if self.start is not None and all(m["type"] != "http.response.body" for m in self.held):
                self.start = self.original
                if state is STREAM or state is BUFFER:
                    self.exchange.pass_through()
            elif state is STREAM or state is GIVEN_UP:
                self.flowing = False
                self.exchange.pass_through()
                if self.keepalive is not None:
                    await self.keepalive.stop()
        if self.exchange.state is BUFFER:
            self.held.append(message)  # the head waits for the whole body: so does what follows it
            return
        await self._flush_start()
        await self._out(message)

    async def _give_back(self) -> None:
        """A buffered body we will not rewrite: the app's own head and messages, unchanged."""
        self.start = None
        assert self.original is not None
        await self._write(self.original)
        held, self.held = self.held, []
        for message in held:
            await self._write(message)

    def _decide(self, *, prepare: bool = True) -> State:
        """The exchange decides from the head (`State.STREAM`, `BUFFER` or `PASS`)."""
        assert self.start is not None, "http.response.body before http.response.start"
        method = str(self.scope.get("method", "POST"))
        status = int(self.start["status"])
        headers = list(self.start.get("headers") or [])
        new_headers = self.exchange.start(method, status, headers, prepare=prepare)
        if self.exchange.state is not PASS:
            self.start = {**self.start, "headers": new_headers}
        return self.exchange.state

    async def _flush_start(self, *, length: int | None = None, status: int | None = None) -> None:
        if self.start is None:
            return
        start, self.start = self.start, None
        if length is not None:
            headers = without(start.get("headers") or [], b"content-length")
            if not start.get("trailers", False):  # with trailers to follow, no length (as Starlette's GZip)
                headers.append((b"content-length", str(length).encode()))
            start = {**start, "headers": headers}
        if status is not None:
            start = {**start, "status": status}
        await self._write(start)
        held, self.held = self.held, []
        for message in held:  # what the app sent between its head and its final body, in order
            await self._write(message)

    async def _send_error(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        await self._write({"type": "http.response.start", "status": status, "headers": headers})
        await self._write({"type": "http.response.body", "body": body, "more_body": False})


__all__ = ["ASGIApp", "HTTPExchange", "Message", "Receive", "Scope", "Send"]
