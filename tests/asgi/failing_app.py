"""A raw-output model server whose stream breaks: it writes the user's message as its raw output,
in small pieces, then raises (or, when the message starts with `END:`, stops without its end
marker). Starlette `StreamingResponse`s, Chat and Responses, behind `ToolCallMiddleware`.

    uvicorn tests.asgi.failing_app:app
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from toolcall_middleware import ToolCallMiddleware


class UpstreamBroke(RuntimeError):
    """What the host app raises mid-stream."""


def _script(body: dict[str, Any]) -> tuple[list[str], bool]:
    """The pieces to write, and whether to raise after them (else: end without the end marker)."""
    messages = body.get("messages") or [{"content": body.get("input", "")}]
    raw = str(messages[-1].get("content") or "")
    clean_end = raw.startswith("END:")
    raw = raw.removeprefix("END:")
    return [raw[i : i + 4] for i in range(0, len(raw), 4)], not clean_end


async def chat(request: Request) -> Response:
    pieces, fail = _script(await request.json())
    meta = {"id": "chatcmpl-broken", "object": "chat.completion.chunk", "created": 1, "model": "broken"}

    async def events() -> AsyncIterator[str]:
        for n, piece in enumerate(pieces):
            delta = {"role": "assistant", "content": piece} if n == 0 else {"content": piece}
            yield f"data: {json.dumps({**meta, 'choices': [{'index': 0, 'delta': delta}]})}\n\n"
        if fail:
            raise UpstreamBroke("the model server lost its GPU")

    return StreamingResponse(events(), media_type="text/event-stream")


async def responses(request: Request) -> Response:
    pieces, fail = _script(await request.json())
    base = {"id": "resp_broken", "object": "response", "created_at": 1, "model": "broken"}

    async def events() -> AsyncIterator[str]:
        created = {"type": "response.created", "sequence_number": 0, "response": {**base, "output": []}}
        yield f"event: response.created\ndata: {json.dumps(created)}\n\n"
        for n, piece in enumerate(pieces, start=1):
            delta = {"type": "response.output_text.delta", "sequence_number": n, "item_id": "msg_1"}
            delta.update({"output_index": 0, "content_index": 0, "delta": piece})
            yield f"event: response.output_text.delta\ndata: {json.dumps(delta)}\n\n"
        if fail:
            raise UpstreamBroke("the model server lost its GPU")

    return StreamingResponse(events(), media_type="text/event-stream")


host = Starlette(
    routes=[Route("/v1/chat/completions", chat, methods=["POST"]), Route("/v1/responses", responses, methods=["POST"])]
)
app = ToolCallMiddleware(host, dialect="hermes")
