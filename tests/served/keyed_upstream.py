"""A raw-output model upstream that asks its own key, as `vllm serve --api-key KEY` does: the
demo model (hermes) behind a check of `Authorization: Bearer $UPSTREAM_KEY` (a 401 otherwise).
The credentials it was sent, per request, are served at `GET /credentials`.

    UPSTREAM_KEY=up-key uvicorn tests.served.keyed_upstream:app
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from toolcall_middleware.demo import DemoApp

Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

KEY = os.environ.get("UPSTREAM_KEY", "up-key")
SEEN: list[dict[str, str]] = []
model = DemoApp("hermes")


async def app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        await model(scope, receive, send)
        return
    if scope["path"] == "/credentials":
        await _json(send, 200, SEEN)
        return
    headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
    seen = {name: headers[name] for name in ("authorization", "x-api-key") if name in headers}
    SEEN.append({"path": scope["path"], **seen})
    if headers.get("authorization") != f"Bearer {KEY}":
        await _json(send, 401, {"error": {"message": "bad key", "type": "invalid_request_error", "code": None}})
        return
    await model(scope, receive, send)


async def _json(send: Send, status: int, value: Any) -> None:
    body = json.dumps(value).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
