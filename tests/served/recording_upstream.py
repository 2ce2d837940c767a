"""A raw-output model upstream that keeps what it was asked: the demo model (hermes) behind a
recorder of each chat request's body, served as JSON at `GET /requests` (oldest first), so a
test can tell which constraint fields reached the host.

    uvicorn tests.served.recording_upstream:app
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from toolcall_middleware.demo import DemoApp

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

SEEN: list[Any] = []
model = DemoApp("hermes")


async def app(scope: Message, receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        await model(scope, receive, send)
        return
    if scope["path"] == "/requests":
        body = json.dumps(SEEN).encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})
        return
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    raw = b"".join(chunks)
    if scope["path"].endswith("/chat/completions"):
        SEEN.append(json.loads(raw))
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if replayed:
            return await receive()
        replayed = True
        return {"type": "http.request", "body": raw, "more_body": False}

    await model(scope, replay, send)
