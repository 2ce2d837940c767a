"""One HTTP exchange over ASGI: the request read and replayed to the app, the app's messages
translated to the exchange (`core._exchange.Exchange`) and what it says sent to the server.

The body is read whole by the rules of `core._body_read` (a disconnect ends the request; a body
over the limit is replayed unchanged), rewritten and replayed once; then `receive` is the server's
own again, so the app still sees `http.disconnect`. What the client gets of each message of the
app's, and when its head goes, is `core._held_response`'s to say (the shell turns its `Writes` into
ASGI messages); everything else is forwarded in order, untouched.

The shell keeps no state of the exchange's, and no flag of its own: only I/O and the keep-alive.
Which way a message goes is read off the exchange's state and the held response. The `send` the
app is given is `ASGIRequest._send`; every message the client gets goes to the server through
`_write` (`_counting`: the one place that counts the response's bytes), which, once a rewritten
stream's head is out, also keeps what the keep-alive's timer reads (`_keepalive.KeepAlive`): no
coroutine of ours and no clock read per message.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from types import CoroutineType

from ._inprocess import (
    ANSWERED,
    STORED_INPUT,
    ASGIApp,
    Message,
    Receive,
    Scope,
    receive_body,
    replay,
    respond,
    with_body,
)
from ._inprocess import Sink as Send
from ._keepalive import KeepAlive, ping_for
from .config import ToolCallConfig
from .core._body_read import BodyRead
from .core._exchange import Exchange
from .core._exchange_state import AGAIN, STREAM, head_final
from .core._failure import ServerStopped
from .core._held_response import Head, HeldResponse, Writes

logger = logging.getLogger("toolcall_middleware")


def _counting(send: Send, exchange: Exchange[ToolCallConfig], keepalive: KeepAlive | None = None) -> Send:
    """The server's `send`, through which every message the client gets passes (the keep-alive's
    pings too), so the record's `response_bytes` counts every body byte sent. With `keepalive`
    (a rewritten stream's, its timer running), it also keeps the server's awaitable for the
    keep-alive to read, and writes a message that comes while a ping is being written after it.
    A closure, not a method: the keep-alive holds it, and must not hold the request (a cycle per
    response)."""

    record = exchange.record  # (`Exchange.sent`, inline: this runs on every message)

    def write(message: Message) -> Awaitable[None]:
        # (the server's awaitable itself: no coroutine of ours per message)
        if message["type"] == "http.response.body":
            record.response_bytes += len(message.get("body", b""))
        return send(message)

    if keepalive is None:
        return write

    def watched(message: Message) -> Awaitable[None]:
        # (`write` inline, and no more of the keep-alive's than two attributes: a stream's every message)
        if keepalive.pinger is None:
            if message["type"] == "http.response.body":
                record.response_bytes += len(message.get("body", b""))
            written = send(message)
            if type(written) is not CoroutineType:
                written = keepalive.readable(written)
        else:
            written = keepalive.after_ping(message)
        keepalive.last_write = written
        return written

    return watched


_IN_FILE = ("http.response.pathsend", "http.response.zerocopysend")  # a body whose bytes live in a file


async def _nothing() -> None:
    """An awaitable that does nothing (a piece that gave no bytes), under any event loop."""


class ASGIRequest:
    """One HTTP request of ours and its response, over ASGI: never kept on the middleware."""

    def __init__(
        self, app: ASGIApp, exchange: Exchange[ToolCallConfig], scope: Scope, receive: Receive, send: Send
    ) -> None:
        self.app = app
        self.scope = scope
        self.receive = receive
        self.exchange = exchange
        self.response: HeldResponse[Message] = HeldResponse(exchange)  # the head and messages held back
        self.original: Message | None = None  # the head as the app sent it
        self.keepalive: KeepAlive | None = None  # pings on a rewritten stream that goes quiet
        self._server_send = send
        self._write = _counting(send, exchange)  # (`_counting` with the keep-alive once it runs)

    async def run(self, declared: bytes | None) -> None:
        """`declared`: the request's Content-Length, if it gave one."""
        read = BodyRead(self.exchange.config.limits.max_request_bytes, declared)
        if not await receive_body(self.receive, read):
            return  # the client left before the body was complete: nothing to answer
        scope, chunks, complete = self.scope, read.parts, read.complete
        forward = self.exchange.forward(read.body, complete=complete, stored=scope.get(STORED_INPUT))
        if forward.refusal is not None:
            await respond(self._write, *forward.refusal)  # malformed, or bridged and over the limit
            return
        if forward.body is not None:
            chunks, scope = [forward.body], with_body(scope, forward.body)
        if self.exchange.path != scope.get("path"):
            # The bridged request goes to the route of the host's API (the query string stays).
            scope = {**scope, "path": self.exchange.path, "raw_path": self.exchange.path.encode()}
        self.exchange.host_asked()
        try:
            while True:
                # (a body not read at all, being over the limit, comes from the server as it is)
                receive = replay(chunks, self.receive, more=not complete) if chunks else self.receive
                await self.app(scope, receive, self._send)
                if self.exchange.state is not AGAIN:
                    break
                # The whole answer broke a rule another generation may keep (`regenerate`):
                # nothing of it went out, and the app gets the same request again.
                self.exchange.again()
                self.original = None
        except Exception as error:
            if await self._abort(error):
                return  # a host's upstream failed (it logged why): the client has the API's error
            raise  # the server logs it as usual; the client's stream has been ended cleanly
        except asyncio.CancelledError:
            # The server gave up on the request (uvicorn, when its shutdown grace runs out): a
            # stream of ours ends in its API's error rather than cut off mid-answer.
            await self._abort(ServerStopped())
            raise
        finally:
            self.exchange.host_done()
            try:
                await self._quiet()  # (a cancelled request may be cancelled here too)
            finally:
                answered = self.scope.get(ANSWERED)
                status = answered() if answered is not None else None
                if status is not None:
                    self.exchange.record.status = status  # the state layer answered instead (a 503)
                self.exchange.report()

    def _send(self, message: Message) -> Awaitable[None]:
        """The app's `send`: a plain function that returns what the app awaits, so that the usual
        message (a piece of a stream, or of a response passed through) costs no coroutine of
        ours. What the held response says of a body is written here when it is one piece of a
        stream under way (the bytes of ours alone: one write, after any ping being written, whose
        awaitable is the server's); anything else takes `_deliver`. (Inline rather than a call:
        each Python call costs the usual chunk about a thousand instructions,
        `benchmarks/instruction_count.py`.)"""
        response = self.response
        if self.exchange.state is not STREAM and response.passing:  # (a stream is never passing)
            return self._write(message)  # (the server's awaitable: no coroutine of ours)
        if message["type"] != "http.response.body":
            return self._general(message)
        body = message.get("body", b"")
        end = not message.get("more_body", False)  # (not `bool()`: a call that costs the chunk ~500 instructions)
        writes = response.body(message, body if type(body) is bytes else bytes(body), end=end)
        if isinstance(writes, bytes):  # a piece of a stream under way (its keep-alive set up with its head)
            if not writes:
                return _nothing()  # (all held back: whitespace that may come before a call)
            return self._write({"type": "http.response.body", "body": writes, "more_body": True})
        self.exchange.host_first_byte()  # (a response's first body comes this way; a stream's may not)
        return self._deliver(writes)

    async def _general(self, message: Message) -> None:
        """Every message of the app's but the usual one (see `_send`)."""
        kind = message["type"]
        ex = self.exchange
        if kind == "http.response.start":
            # Decided now (the head is all it needs), so the answer's parts are made while a model
            # server computes its first token. A stream's head that no body can change (a stream
            # being made, not content-encoded) goes out at once, as without the middleware: the
            # client reads it meanwhile. Any other waits for the first body (a JSON answer's for
            # its length; one passed through as before, so a failure before it is the server's 500).
            self.original = message
            method, status = str(self.scope.get("method", "POST")), int(message["status"])
            headers, trailers = list(message.get("headers") or []), bool(message.get("trailers", False))
            self.response.head(method, status, headers, trailers=trailers)
            if head_final(ex.state, ex.head):  # (a stream of ours, STREAM: the head first, the parts are not in it)
                await self._write(self._head(self.response.release().head))
                self._keep_alive()
            ex.prepare()
            return
        # Anything else (debug, trailers, early hints, pathsend, extensions): in order, after the
        # head. A body that lives in a file has nothing to rewrite: the exchange passes it.
        trailers = kind == "http.response.trailers"
        await self._deliver(self.response.other(message, in_file=kind in _IN_FILE, trailers=trailers))

    async def _deliver(self, writes: Writes[Message]) -> None:
        """`writes` in order (after any ping being written), then the keep-alive set up or
        stopped, as the exchange's state now says."""
        state = self.exchange.state
        if state is not STREAM and self.keepalive is not None:
            # The end (the app's, or our terminal event before it), raw bytes that may split an
            # event, or the rest passed through (a bug of ours, logged, must not take the answer
            # down; a body in a file): no more pings.
            await self.keepalive.stop()
        if writes.head is not None:
            await self._write(self._head(writes.head))
        for message in writes.messages:
            await self._write(message)
        if writes.body is not None:
            await self._write({"type": "http.response.body", "body": writes.body, "more_body": writes.more})
        if state is STREAM:
            self._keep_alive()

    def _head(self, head: Head | None) -> Message:
        """The `http.response.start` for `head`: the app's own, or with the exchange's headers and status."""
        assert self.original is not None and head is not None
        if head.headers is None:
            return self.original
        message = {**self.original, "headers": head.headers}
        if head.status is not None:
            message["status"] = head.status
        return message

    async def _quiet(self) -> None:
        """No more pings."""
        if self.keepalive is not None:
            await self.keepalive.stop()

    def _keep_alive(self) -> None:
        """A rewritten stream's head is out: the keep-alive starts (once), and every message from
        here goes through the write that keeps what its timer reads."""
        interval = self.exchange.config.keepalive_interval
        if self.keepalive is None and interval:
            ping = ping_for(self.exchange.api, self.exchange.config.profiles)
            record = self.exchange.record
            self.keepalive = KeepAlive(self._write, interval, ping, lambda: record.response_bytes)
            if self.keepalive.start():
                self._write = _counting(self._server_send, self.exchange, self.keepalive)

    async def _abort(self, error: Exception) -> bool:
        """The app raised: what the exchange says of it (`Exchange.failed`) sent. True
        when the client has its answer and the error is not raised again."""
        failure = self.exchange.failed(error, head_sent=not self.response.head_held)
        if failure.answer is not None:
            self.response.drop()
            await respond(self._write, *failure.answer)  # nothing had gone out
        elif failure.last is not None:
            await self._quiet()
            try:
                await self._write({"type": "http.response.body", "body": failure.last, "more_body": False})
            except Exception:  # the client may be gone too (which may be why the app failed)
                logger.debug("toolcall-middleware: could not end the stream after the app failed", exc_info=True)
        return failure.handled


__all__ = ["ASGIApp", "ASGIRequest", "Message", "Receive", "Scope", "Send"]
