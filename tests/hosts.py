"""Host apps for end-to-end tests on a real uvicorn (`tests.servers.uvicorn("tests.hosts:…")`).

`stalling_chat`: a chat-only raw-output model (the hermes text of `examples/fake_model.py`) that
goes silent for `STALL` seconds twice in a stream: after its first chunk, as a model thinking,
and in the middle of its tool call, which the middleware holds back until it ends. Whole answers
stall before the body. The apps below wrap it with keep-alive on a short interval.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from examples.fake_model import pieces, write
from toolcall_middleware import ToolCallMiddleware

STALL = 0.7
INTERVAL = 0.2


async def stalling_chat(request: Request) -> Response:
    body = await request.json()
    raw = write(body)
    meta = {"id": "chatcmpl-stall", "created": int(time.time()), "model": body.get("model", "fake")}
    if not body.get("stream"):
        await asyncio.sleep(STALL)
        choice = {"index": 0, "message": {"role": "assistant", "content": raw}, "finish_reason": "stop"}
        return JSONResponse({**meta, "object": "chat.completion", "choices": [choice]})

    def chunk(delta: dict[str, str], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return "data: " + json.dumps({**meta, "object": "chat.completion.chunk", "choices": [choice]}) + "\n\n"

    async def events() -> AsyncIterator[str]:
        yield chunk({"role": "assistant", "content": ""})
        await asyncio.sleep(STALL)  # thinking before the first token
        inside_call = raw.find("<tool_call>") + len("<tool_call>") + 3
        for n, piece in enumerate(pieces(raw)):
            yield chunk({"content": piece})
            if n * 5 <= inside_call < (n + 1) * 5:
                await asyncio.sleep(STALL)  # in the middle of the call's arguments
        yield chunk({}, "stop")
        yield "data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


host = Starlette(routes=[Route("/v1/chat/completions", stalling_chat, methods=["POST"])])

keepalive_app = ToolCallMiddleware(
    host,
    dialect="hermes",
    bridge={"responses-to-chat", "messages-to-chat"},
    keepalive_interval=INTERVAL,
    profiles={"ping_events"},
)
no_keepalive_app = ToolCallMiddleware(host, dialect="hermes", bridge="responses-to-chat", keepalive_interval=None)


# -- a host that speaks Anthropic Messages ---------------------------------------------------------


def anthropic_events(blocks: list[dict[str, Any]], stop: str, model: str) -> list[dict[str, Any]]:
    """The Anthropic stream of a message with `blocks` (text blocks in pieces, tool_use input in two)."""
    usage = {"input_tokens": 12, "output_tokens": 0}
    message = {"id": "msg_host", "type": "message", "role": "assistant", "model": model, "content": []}
    out: list[dict[str, Any]] = [
        {"type": "message_start", "message": {**message, "stop_reason": None, "stop_sequence": None, "usage": usage}}
    ]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            out.append({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
            for piece in pieces(block["text"]):
                out.append(
                    {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}
                )
        else:
            start = {**block, "input": {}}
            out.append({"type": "content_block_start", "index": index, "content_block": start})
            arguments = json.dumps(block["input"])
            for part in (arguments[: len(arguments) // 2], arguments[len(arguments) // 2 :]):
                delta = {"type": "input_json_delta", "partial_json": part}
                out.append({"type": "content_block_delta", "index": index, "delta": delta})
        out.append({"type": "content_block_stop", "index": index})
    out.append(
        {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 9}}
    )
    out.append({"type": "message_stop"})
    return out


def anthropic_host(*, native: bool) -> Starlette:
    """A host serving `/v1/messages` only. Raw (`native=False`): its model writes the hermes text of
    `examples/fake_model.py` into text blocks. Native: it does tool calling itself and answers real
    `tool_use` blocks for the tools it is given (a middleware in front must forward them)."""

    async def messages(request: Request) -> Response:
        body = await request.json()
        system = body.get("system") or ""
        seen = {"instructions": system if isinstance(system, str) else json.dumps(system), "messages": body["messages"]}
        model = body.get("model", "fake")
        if native:
            # The tool's result, as a `tool_result` block or as the text the middleware flattened it to.
            result = re.search(r"Sunny[^\"\\<]*", json.dumps(body["messages"]))
            if result or not body.get("tools"):
                text = f"It is {result.group(0).strip() if result else 'unknown'}."
                blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
                stop = "end_turn"
            else:
                call = {
                    "type": "tool_use",
                    "id": "toolu_host1",
                    "name": body["tools"][0]["name"],
                    "input": {"city": "Paris"},
                }
                blocks, stop = [{"type": "text", "text": "Let me check."}, call], "tool_use"
        else:
            blocks, stop = [{"type": "text", "text": write(seen)}], "end_turn"
        if not body.get("stream"):
            message = {
                "id": "msg_host",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": blocks,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {"input_tokens": 12, "output_tokens": 9},
            }
            return JSONResponse(message)

        async def events() -> AsyncIterator[str]:
            for event in anthropic_events(blocks, stop, model):
                yield f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    return Starlette(routes=[Route("/v1/messages", messages, methods=["POST"])])
