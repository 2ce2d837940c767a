"""A chat-only raw-output model for the AG-UI route's tests, on a real uvicorn
(`tests.servers.uvicorn("tests.agui.hosts:…")`).

It writes hermes markup: offered `get_weather`, it reasons, says a word and calls the tool; given
the tool's result ("Sunny"), it reasons and answers from it. A streamed answer is cut in two at
the character the `x-split` header names (every split of the output is reachable from a client
that sets a header), else in pieces of 7. `GET /last` gives the last request body it was sent.

    uvicorn tests.agui.hosts:host        # the raw host (for `serve --upstream`)
    uvicorn tests.agui.hosts:app         # the host behind ToolCallMiddleware (the route in process)
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from toolcall_middleware import ToolCallMiddleware

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
FIRST = "<think>\nI need the weather tool.\n</think>\n\nLet me check." + CALL
SECOND = "<think>\nThe tool answered.\n</think>\n\nIt is Sunny in Paris."
PLAIN = "<think>\nNo tools.\n</think>\n\nHello."
LAST: dict[str, Any] = {}


def write(body: dict[str, Any]) -> str:
    transcript = json.dumps(body)
    if "Sunny" in transcript:
        return SECOND
    return FIRST if "get_weather" in transcript else PLAIN


def pieces(text: str, split: int | None) -> list[str]:
    if split is not None:
        return [text[:split], text[split:]]
    return [text[i : i + 7] for i in range(0, len(text), 7)]


async def chat(request: Request) -> Response:
    body = await request.json()
    LAST.clear()
    LAST.update(body)
    raw = write(body)
    meta = {"id": "chatcmpl-agui", "created": int(time.time()), "model": body.get("model", "fake")}
    if not body.get("stream"):
        choice = {"index": 0, "message": {"role": "assistant", "content": raw}, "finish_reason": "stop"}
        return JSONResponse({**meta, "object": "chat.completion", "choices": [choice]})
    given = request.headers.get("x-split")
    split = int(given) if given else None

    def chunk(delta: dict[str, str], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return "data: " + json.dumps({**meta, "object": "chat.completion.chunk", "choices": [choice]}) + "\n\n"

    async def events() -> AsyncIterator[str]:
        yield chunk({"role": "assistant", "content": ""})
        for piece in pieces(raw, split):
            yield chunk({"content": piece})
        yield chunk({}, "stop")
        yield "data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


async def last(request: Request) -> Response:
    return JSONResponse(LAST)


host = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]), Route("/last", last)])
app = ToolCallMiddleware(host, dialect="hermes")
prefixed = ToolCallMiddleware(
    Starlette(routes=[Route("/api/v1/chat/completions", chat, methods=["POST"]), Route("/last", last)]),
    dialect="hermes",
    route_prefixes=("/api",),
    agui_routes=("/agent",),
)
