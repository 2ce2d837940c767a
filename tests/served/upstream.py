"""A misbehaving upstream for the proxy's tests, served by uvicorn in a subprocess.

- `/echo`: the request as the upstream received it (method, path, query, headers, body) as JSON.
- `/slow`: answers only after 30 s (the proxy's read timeout fires first).
- `/teapot` and `/v1/chat/completions`: a 418 with an OpenAI-style error body and a custom header.
- `/forever`: an SSE stream that never ends; `/stats` tells how many such streams saw their client go.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

STATS = {"forever_started": 0, "forever_closed": 0}


async def _body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def _disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _json(send: Send, status: int, value: Any, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps(value).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    path = scope["path"]
    if path.endswith("/echo"):
        body = await _body(receive)
        headers = [[k.decode("latin-1"), v.decode("latin-1")] for k, v in scope["headers"]]
        await _json(
            send,
            200,
            {
                "method": scope["method"],
                "path": path,
                "query": scope["query_string"].decode(),
                "headers": headers,
                "body": body.decode(),
            },
            [
                (b"x-upstream", b"echo"),
                (b"keep-alive", b"timeout=5"),
                (b"connection", b"keep-alive, x-drop-me"),
                (b"x-drop-me", b"1"),
            ],
        )
    elif path.endswith("/slow"):
        await _body(receive)
        await asyncio.sleep(30)
        await _json(send, 200, {"late": True})
    elif path.endswith(("/teapot", "/chat/completions")):
        await _body(receive)
        error = {"error": {"message": "I am a teapot", "type": "invalid_request_error", "param": "model", "code": None}}
        await _json(send, 418, error, [(b"x-upstream", b"teapot")])
    elif path.endswith("/forever"):
        await _body(receive)
        STATS["forever_started"] += 1
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        gone = asyncio.ensure_future(_disconnect(receive))  # uvicorn's `send` is silent once the client is gone
        while not gone.done():
            await send({"type": "http.response.body", "body": b"tick\n", "more_body": True})
            await asyncio.sleep(0.05)
        STATS["forever_closed"] += 1
    elif path.endswith("/stats"):
        await _json(send, 200, STATS)
    else:
        await _json(send, 200, {"status": "ok"})
