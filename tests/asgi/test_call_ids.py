"""`call_ids`: OpenAI-style ids by default, the model's own with `call_ids="model"`.

A Kimi K2 host writes `functions.get_weather:0` itself (the id restarts at 0 in every answer);
one Hermes call carries no id. Through `ToolCallMiddleware` with the openai SDK: Chat and
Responses, streamed and whole. The next request's history maps either id back to the one the
model's template expects, so the choice is the client's.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from toolcall_middleware import ToolCallMiddleware

KIMI = (
    "Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
    '{"city": "Paris"}<|tool_call_end|><|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>'
    "{}<|tool_call_end|><|tool_calls_section_end|>"
)
HERMES = 'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
TOOLS: Any = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    for name in ("get_weather", "get_time")
]
OPENAI_ID = re.compile(r"call_[A-Za-z0-9]{24}")


def host(raw: str) -> Starlette:
    async def chat(request: Request) -> Response:
        body = await request.json()
        meta = {"id": "chatcmpl-1", "created": 1, "model": "m"}
        if not body.get("stream"):
            choice = {"index": 0, "message": {"role": "assistant", "content": raw}, "finish_reason": "stop"}
            return JSONResponse({**meta, "object": "chat.completion", "choices": [choice]})

        async def events() -> AsyncIterator[str]:
            for i in range(0, len(raw), 7):
                choice = {"index": 0, "delta": {"content": raw[i : i + 7]}}
                yield f"data: {json.dumps({**meta, 'object': 'chat.completion.chunk', 'choices': [choice]})}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    async def responses(request: Request) -> Response:
        body = await request.json()
        base = {"id": "resp_1", "object": "response", "created_at": 1, "model": "m"}
        part = {"type": "output_text", "text": raw, "annotations": []}
        message = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed", "content": [part]}
        if not body.get("stream"):
            return JSONResponse({**base, "status": "completed", "output": [message]})

        async def events() -> AsyncIterator[str]:
            created = {"type": "response.created", "sequence_number": 0, "response": {**base, "output": []}}
            yield f"event: response.created\ndata: {json.dumps(created)}\n\n"
            delta = {"type": "response.output_text.delta", "sequence_number": 1, "item_id": "msg_1"}
            delta.update({"output_index": 0, "content_index": 0, "delta": raw})
            yield f"event: response.output_text.delta\ndata: {json.dumps(delta)}\n\n"
            done = {"type": "response.completed", "sequence_number": 2, "response": {**base, "output": [message]}}
            yield f"event: response.completed\ndata: {json.dumps(done)}\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    return Starlette(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/v1/responses", responses, methods=["POST"]),
        ]
    )


async def _ids(raw: str, dialect: str, options: dict[str, Any], api: str, stream: bool) -> list[str]:
    app = ToolCallMiddleware(host(raw), dialect=dialect, **options)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        client = openai.AsyncOpenAI(api_key="none", base_url="http://test/v1", http_client=http, max_retries=0)
        messages: Any = [{"role": "user", "content": "Paris?"}]
        if api == "chat" and stream:
            async with client.chat.completions.stream(model="m", messages=messages, tools=TOOLS) as s:
                async for _ in s:
                    pass
                completion = await s.get_final_completion()
            return [c.id for c in completion.choices[0].message.tool_calls or []]
        if api == "chat":
            whole = await client.chat.completions.create(model="m", messages=messages, tools=TOOLS)
            return [c.id for c in whole.choices[0].message.tool_calls or []]
        tools: Any = [{"type": "function", **t["function"]} for t in TOOLS]
        if stream:
            async with client.responses.stream(model="m", input="Paris?", tools=tools) as rs:
                async for _ in rs:
                    pass
                response = await rs.get_final_response()
        else:
            response = await client.responses.create(model="m", input="Paris?", tools=tools)
        return [item.call_id for item in response.output if item.type == "function_call"]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_openai_style_ids_by_default(api: str, stream: bool) -> None:
    ids = asyncio.run(_ids(KIMI, "kimi_k2", {}, api, stream))
    assert len(ids) == 2 and all(OPENAI_ID.fullmatch(i) for i in ids) and ids[0] != ids[1]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_model_ids_kept_on_request(api: str, stream: bool) -> None:
    ids = asyncio.run(_ids(KIMI, "kimi_k2", {"call_ids": "model"}, api, stream))
    assert ids == ["functions.get_weather:0", "functions.get_time:1"]


@pytest.mark.parametrize("stream", [False, True])
def test_a_format_without_ids_gets_openai_ones_either_way(stream: bool) -> None:
    ids = asyncio.run(_ids(HERMES, "hermes", {"call_ids": "model"}, "chat", stream))
    assert len(ids) == 1 and OPENAI_ID.fullmatch(ids[0])


def test_an_unknown_style_is_refused() -> None:
    with pytest.raises(ValueError, match="call_ids"):
        ToolCallMiddleware(host(HERMES), dialect="hermes", call_ids="uuid")
