"""`ToolCallMiddleware`: pure ASGI middleware that gives a raw-output LLM endpoint OpenAI tool calling.

```python
app.add_middleware(ToolCallMiddleware, dialect="qwen3_coder")   # Starlette / FastAPI
app = ToolCallMiddleware(app, dialect="kimi_k2")                 # any ASGI app
```

It moves bytes only; the work is `core.pipeline.Exchange`. Per request: the body is read whole
(a disconnect ends the request; an oversized body is replayed unchanged), rewritten and replayed
once, then `receive` is the server's own again, so the app still sees `http.disconnect`.
`http.response.start` is held until the first body tells what to do; streamed rewrites drop
`Content-Length`, buffered ones recompute it, and a buffered body that turns out not to be ours
goes out as the app sent it, head and messages. Everything else is forwarded in order, untouched.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from .config import ToolCallConfig
from .core.http import header, without
from .core.pipeline import Exchange, Settings, bad_request_body
from .core.request import BadRequest

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

logger = logging.getLogger("toolcall_middleware")


def settings_from(config: ToolCallConfig) -> Settings:
    return Settings(
        dialect_for=config.dialect_for,
        generation_prompt=config.generation_prompt,
        thinking=config.thinking,
        forward_tools=config.forward_tools,
        strict=config.strict,
        repair=config.repair,
        reasoning_field=config.reasoning_field,
        responses_reasoning=config.responses_reasoning,
        profiles=frozenset(config.profiles),
        max_response_bytes=config.limits.max_response_bytes,
        max_sse_event_bytes=config.limits.max_sse_event_bytes,
        max_calls=config.limits.max_calls,
        max_call_bytes=config.limits.max_call_bytes,
        call_ids=config.call_ids,
    )


class ToolCallMiddleware:
    """Pure ASGI middleware; keyword options are `ToolCallConfig` fields, validated here, once."""

    def __init__(self, app: ASGIApp, config: ToolCallConfig | None = None, **options: Any) -> None:
        self.app = app
        self.config = config if config is not None else ToolCallConfig(**options)
        self._settings = settings_from(self.config)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        api = self.config.route_kind(scope.get("path", ""))
        coding = header(scope.get("headers") or [], b"content-encoding")
        if api is None or (coding is not None and coding.strip().lower() not in (b"", b"identity")):
            await self.app(scope, receive, send)
            return
        await _Request(self, api, scope, receive, send).run()


class _Request:
    """The state of one request: never kept on the middleware."""

    def __init__(self, mw: ToolCallMiddleware, api: Any, scope: Scope, receive: Receive, send: Send) -> None:
        self.mw = mw
        self.scope = scope
        self.receive = receive
        self.send = send
        self.exchange = Exchange(api, mw._settings)
        self.start: Message | None = None  # the head, held until the first body says what to do
        self.original: Message | None = None  # the head as the app sent it
        self.held: list[Message] = []  # buffered JSON: the app's messages after its head, as sent
        self.state = "head"  # head -> stream | buffer -> done | pass

    async def run(self) -> None:
        chunks, complete = await self._read_body()
        if chunks is None:
            return  # the client left before the body was complete: nothing to answer
        scope = self.scope
        raw = b"".join(chunks)
        # A body that ended in the message that crossed the limit is whole, but still over it.
        if complete and len(raw) <= self.mw.config.limits.max_request_bytes:
            try:
                new = self.exchange.rewrite_request(raw)
            except BadRequest as error:
                await self._send_error(400, bad_request_body(error))
                return
            if new is not None:
                chunks = [new]
                headers = without(scope.get("headers") or [], b"content-length", b"transfer-encoding")
                scope = dict(scope)
                scope["headers"] = [*headers, (b"content-length", str(len(new)).encode())]
        else:
            self.exchange.report.notes.append("request body over the limit: forwarded unchanged")
        try:
            await self.mw.app(scope, self._replay(chunks, complete), self._send)
        except Exception as error:
            await self._abort(error)
            raise  # the server logs it as usual; the client's stream has been ended cleanly
        finally:
            self._report()

    async def _read_body(self) -> tuple[list[bytes] | None, bool]:
        limit = self.mw.config.limits.max_request_bytes
        declared = header(self.scope.get("headers") or [], b"content-length")
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

    def _replay(self, chunks: list[bytes], complete: bool) -> Receive:
        pending = list(chunks)
        last_more = not complete

        async def receive() -> Message:
            if pending:
                body = pending.pop(0)
                return {"type": "http.request", "body": body, "more_body": bool(pending) or last_more}
            return await self.receive()

        return receive

    async def _send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            self.start = self.original = message
            return
        if kind != "http.response.body":
            await self._other(message)
            return
        body = bytes(message.get("body", b""))
        more = bool(message.get("more_body", False))
        if self.state == "head":
            self._decide()
        if self.state in ("pass", "done"):
            await self._flush_start()
            await self.send(message)
            return
        ex = self.exchange
        if self.state == "buffer":
            self.held.append(message)
        try:
            out = ex.feed(body) + (b"" if more else ex.close())
        except Exception:  # a bug of ours must not take the answer down: the rest passes through
            logger.exception("toolcall-middleware: rewriting failed; passing the response through")
            if self.state == "buffer":
                await self._give_back()
                return
            self.state = "pass"
            await self._flush_start()
            await self.send(message)
            return
        if self.state == "buffer":
            if ex.passthrough:
                # Not an answer, or over the cap: the original head and bytes, byte for byte.
                await self._give_back()
            elif not more:
                # The rewritten body replaces the held ones; other held messages follow the head.
                self.held = [m for m in self.held if m["type"] != "http.response.body"]
                await self._flush_start(length=len(out), status=ex.status)
                self.state = "done"
                await self.send({"type": "http.response.body", "body": out, "more_body": False})
            return
        # Streamed. If the exchange gave up midway it keeps returning the (decoded) bytes as they
        # came: Content-Encoding is already gone from the head, so raw gzip must not follow it.
        await self._flush_start()
        if out or not more:
            await self.send({"type": "http.response.body", "body": out, "more_body": more})
        if not more:
            self.state = "done"

    async def _abort(self, error: Exception) -> None:
        """The app raised mid-stream: end the rewritten stream (held text out, an error event
        last) rather than cutting it where the parser was holding text back. Anything else (no
        body sent yet, a pass-through) is left to the server, as without the middleware."""
        if self.state != "stream" or self.start is not None:
            return
        out = self.exchange.abort(f"The upstream failed mid-stream ({type(error).__name__}).")
        if out is None:
            return
        self.state = "done"
        try:
            await self.send({"type": "http.response.body", "body": out, "more_body": False})
        except Exception:  # the client may be gone too (which may be why the app failed)
            logger.debug("toolcall-middleware: could not end the stream after the app failed", exc_info=True)

    async def _other(self, message: Message) -> None:
        """Anything but start/body (debug, trailers, early hints, pathsend, extensions): in order."""
        if message["type"] in ("http.response.pathsend", "http.response.zerocopysend") and self.state == "head":
            self.state = "pass"  # the bytes live in a file: nothing to rewrite, the head goes as it was
        elif self.start is not None and self.state == "head":
            self._decide()  # a message after start: the head must go out first, so decide now
        if self.state == "buffer":
            self.held.append(message)  # the head waits for the whole body: so does what follows it
            return
        await self._flush_start()
        await self.send(message)

    async def _give_back(self) -> None:
        """A buffered body we will not rewrite: the app's own head and messages, unchanged."""
        self.state, self.start = "pass", None
        assert self.original is not None
        await self.send(self.original)
        held, self.held = self.held, []
        for message in held:
            await self.send(message)

    def _decide(self) -> None:
        assert self.start is not None, "http.response.body before http.response.start"
        method = str(self.scope.get("method", "POST"))
        status = int(self.start["status"])
        headers = list(self.start.get("headers") or [])
        new_headers = self.exchange.start(method, status, headers)
        if self.exchange.passthrough:
            self.state = "pass"
            return
        self.start = {**self.start, "headers": new_headers}
        self.state = "buffer" if self.exchange.buffered else "stream"

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
        await self.send(start)
        held, self.held = self.held, []
        for message in held:  # what the app sent between its head and its final body, in order
            await self.send(message)

    async def _send_error(self, status: int, body: bytes) -> None:
        await self.send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await self.send({"type": "http.response.body", "body": body, "more_body": False})

    def _report(self) -> None:
        if not self.exchange.report.dialect:
            return  # the body was no JSON request object of ours: no exchange to report
        record = self.exchange.report.as_dict()
        logger.info("toolcall-middleware exchange %s", record)
        callback = self.mw.config.on_report
        if callback is not None:
            try:
                callback(record)
            except Exception:  # telemetry must never break a response
                logger.exception("toolcall-middleware: on_report callback failed")
