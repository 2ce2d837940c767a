"""An upstream that lacks some API routes, for the route probing tests: the demo model (which
serves Chat Completions and Responses) behind a filter, served by uvicorn in a subprocess.

- `ROUTES` (environment, comma-separated: `chat`, `responses`; default both): the routes served;
  a POST to any other answers 404, as a server without the route does.
- `POST /drop?api=responses` takes a route away while running (it answers 404 from then on).
- A request for the model `no-such-model` is a 404 on a route that is served, as vLLM answers an
  unknown model: the route is there, the answer says otherwise.
- `/v1/messages` is never served (the demo model has no Messages route).
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from toolcall_middleware.demo import DemoApp

Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

SERVED = {name for name in os.environ.get("ROUTES", "chat,responses").split(",") if name}
SUFFIXES = {"chat": "/chat/completions", "responses": "/responses"}
model = DemoApp(os.environ.get("DEMO_DIALECT", "hermes"))


async def _error(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": {"message": message, "type": "not_found", "param": None, "code": None}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http" or scope["method"] != "POST":
        await model(scope, receive, send)
        return
    path = scope["path"]
    if path == "/drop":
        SERVED.discard(scope["query_string"].decode().removeprefix("api="))
        await _error(send, 200, "dropped")
        return
    api = next((name for name, suffix in SUFFIXES.items() if path.endswith(suffix)), None)
    if api not in SERVED:
        await _error(send, 404, f"No route for POST {path}.")
        return
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    raw = b"".join(chunks)
    if b'"no-such-model"' in raw:
        await _error(send, 404, "The model `no-such-model` does not exist.")
        return
    sent = False

    async def replay() -> MutableMapping[str, Any]:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": raw, "more_body": False}

    await model(scope, replay, send)
