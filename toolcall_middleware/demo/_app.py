"""`DemoApp`: the demo model as a pure ASGI host app, a raw-output model server.

```python
app = ToolCallMiddleware(DemoApp("kimi_k2"), dialect="kimi_k2")   # real tool calls
app = DemoApp("kimi_k2")                                          # raw Kimi markup in `content`
```

Routes: `POST /v1/chat/completions` and `POST /v1/responses` (also without `/v1`), whole JSON
or SSE (`"stream": true`); `GET /v1/models`; `GET /` and `GET /healthz` answer `{"status": "ok"}`.
Each answer's raw text is handed to `on_write` (the `demo` command prints it beside what the
client received).
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from typing import Any

from . import _wire as wire
from ._model import DemoModel

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
RESPONSES_PATHS = ("/v1/responses", "/responses")


@dataclass(frozen=True)
class Written:
    """One answer of the demo model: which API asked, whether it streamed, and the raw text."""

    api: str
    stream: bool
    raw: str


class DemoApp:
    """A raw-output model server answering in `dialect`'s raw text (see the module doc)."""

    def __init__(
        self,
        dialect: str = "hermes",
        *,
        reasoning: bool = True,
        piece_size: int = 6,
        on_write: Callable[[Written], None] | None = None,
    ) -> None:
        self.model = DemoModel(dialect, reasoning=reasoning)
        self.piece_size = piece_size
        self.on_write = on_write
        self._ids = itertools.count()

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        path, method = scope.get("path", ""), scope.get("method", "GET")
        if method == "GET" and path in ("/", "/healthz"):
            await _json(send, 200, {"status": "ok", "dialect": self.model.dialect})
            return
        if method == "GET" and path in ("/v1/models", "/models"):
            model = {"id": "demo", "object": "model", "created": 0, "owned_by": "toolcall-middleware"}
            await _json(send, 200, {"object": "list", "data": [model]})
            return
        if path not in CHAT_PATHS + RESPONSES_PATHS:
            await _json(send, 404, _error(f"No route for {method} {path}.", "not_found"))
            return
        if method != "POST":
            await _json(send, 405, _error(f"{path} takes POST.", "method_not_allowed"))
            return
        try:
            body = json.loads(await _read_body(receive))
        except ValueError:
            await _json(send, 400, _error("The request body is not valid JSON.", "invalid_body"))
            return
        if not isinstance(body, dict):
            await _json(send, 400, _error("The request body must be a JSON object.", "invalid_body"))
            return
        await self._answer(path in CHAT_PATHS, body, send)

    async def _answer(self, chat: bool, body: dict[str, Any], send: Send) -> None:
        raw = self.model.respond(body)
        stream = body.get("stream") is True
        if self.on_write is not None:
            self.on_write(Written("chat" if chat else "responses", stream, raw))
        n = next(self._ids)
        model = str(body.get("model") or "demo")
        created = int(time.time())
        if chat:
            ident = f"chatcmpl-demo{n}"
            if not stream:
                await _json(send, 200, wire.chat_completion(raw, model=model, ident=ident, created=created))
                return
            usage = isinstance(body.get("stream_options"), dict) and body["stream_options"].get("include_usage") is True
            chunks = wire.chat_chunks(raw, model=model, ident=ident, created=created, size=self.piece_size, usage=usage)
            await _sse(send, chunks)
            return
        ident = f"resp_demo{n}"
        if not stream:
            await _json(send, 200, wire.response(raw, model=model, ident=ident, created=created))
            return
        await _sse(send, wire.response_events(raw, model=model, ident=ident, created=created, size=self.piece_size))


def _error(message: str, code: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}}


async def _read_body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def _json(send: Send, status: int, value: Any) -> None:
    body = json.dumps(value, ensure_ascii=False).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _sse(send: Send, events: Iterable[bytes]) -> None:
    headers = [(b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-cache")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    for event in events:
        await send({"type": "http.response.body", "body": event, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


__all__ = ["DemoApp", "Written"]
