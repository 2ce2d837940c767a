"""`n > 1` on Chat Completions: every choice is parsed with its own parser and rules and comes out
on its own `index`, streamed and whole, through `ToolCallMiddleware` with the openai SDK.

The host streams its choices interleaved (as vLLM does), each with its own finish reason, then
one usage chunk; the SDK's accumulator (`ChatCompletionStreamState`) rebuilds every choice.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import openai
import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from toolcall_middleware import ToolCallMiddleware

ANSWERS = [
    'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    "It is sunny in Paris, I think. Maybe use <tools> next time",
    '<tool_call>\n{"name": "get_time", "arguments": {"tz": "CET"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>',
    'Cut off: <tool_call>\n{"name": "get_weather", "argu',
]
TOOLS: Any = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    for name in ("get_weather", "get_time")
]
USAGE = {"prompt_tokens": 5, "completion_tokens": 40, "total_tokens": 45}


def host() -> Starlette:
    async def chat(request: Request) -> Response:
        body = await request.json()
        n = int(body.get("n") or 1)
        meta = {"id": "chatcmpl-n", "created": 1, "model": "m"}
        reasons = ["stop", "stop", "stop", "length"]
        if not body.get("stream"):
            choices = [
                {"index": i, "message": {"role": "assistant", "content": ANSWERS[i]}, "finish_reason": reasons[i]}
                for i in range(n)
            ]
            return JSONResponse({**meta, "object": "chat.completion", "choices": choices, "usage": USAGE})

        async def events() -> AsyncIterator[str]:
            pieces = [[a[j : j + 6] for j in range(0, len(a), 6)] for a in ANSWERS[:n]]
            for step in range(max(len(p) for p in pieces)):
                for i, own in enumerate(pieces):  # round robin: the choices interleave
                    if step < len(own):
                        delta = {"role": "assistant", "content": own[step]} if step == 0 else {"content": own[step]}
                        choice = {"index": i, "delta": delta, "logprobs": None, "finish_reason": None}
                        chunk = {**meta, "object": "chat.completion.chunk", "choices": [choice]}
                        yield f"data: {json.dumps(chunk)}\n\n"
            for i in range(n):
                choice = {"index": i, "delta": {}, "logprobs": None, "finish_reason": reasons[i]}
                yield f"data: {json.dumps({**meta, 'object': 'chat.completion.chunk', 'choices': [choice]})}\n\n"
            usage_chunk = {**meta, "object": "chat.completion.chunk", "choices": [], "usage": USAGE}
            yield f"data: {json.dumps(usage_chunk)}\n\ndata: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


def _client(http: httpx.AsyncClient) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key="none", base_url="http://test/v1", http_client=http, max_retries=0)


async def _completion(n: int, stream: bool) -> Any:
    transport = httpx.ASGITransport(app=ToolCallMiddleware(host(), dialect="hermes"))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        client = _client(http)
        messages: Any = [{"role": "user", "content": "Weather?"}]
        if not stream:
            return await client.chat.completions.create(model="m", messages=messages, tools=TOOLS, n=n)
        # The SDK's own accumulator; its `.stream()` helper would refuse a `length` choice.
        state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
        options: Any = {"include_usage": True}
        chunks = await client.chat.completions.create(
            model="m", messages=messages, tools=TOOLS, n=n, stream=True, stream_options=options
        )
        async for chunk in chunks:
            state.handle_chunk(chunk)
        return state.current_completion_snapshot


def _calls(choice: Any) -> list[tuple[str, Any]]:
    return [(c.function.name, json.loads(c.function.arguments)) for c in choice.message.tool_calls or []]


@pytest.mark.parametrize("stream", [False, True])
def test_every_choice_is_parsed_on_its_own_index(stream: bool) -> None:
    completion = asyncio.run(_completion(4, stream))
    choices = sorted(completion.choices, key=lambda c: c.index)
    assert [c.index for c in choices] == [0, 1, 2, 3]
    assert choices[0].message.content == "Checking." and _calls(choices[0]) == [("get_weather", {"city": "Paris"})]
    assert choices[0].finish_reason == "tool_calls"
    assert choices[1].message.content == ANSWERS[1] and not _calls(choices[1]) and choices[1].finish_reason == "stop"
    assert choices[2].message.content is None or choices[2].message.content == ""
    assert _calls(choices[2]) == [("get_time", {"tz": "CET"}), ("get_weather", {"city": "Oslo"})]
    assert choices[3].message.content == "Cut off:" and not _calls(choices[3]) and choices[3].finish_reason == "length"
    ids = [c.id for choice in choices for c in choice.message.tool_calls or []]
    assert len(set(ids)) == len(ids) == 3
    assert completion.usage is not None and completion.usage.total_tokens == 45


def test_streamed_and_whole_agree() -> None:
    whole, streamed = asyncio.run(_completion(3, False)), asyncio.run(_completion(3, True))
    for a, b in zip(sorted(whole.choices, key=lambda c: c.index), streamed.choices, strict=True):
        assert (a.index, a.message.content or "", _calls(a), a.finish_reason) == (
            b.index,
            b.message.content or "",
            _calls(b),
            b.finish_reason,
        )


def test_one_choice_is_unchanged() -> None:
    completion = asyncio.run(_completion(1, True))
    assert len(completion.choices) == 1 and _calls(completion.choices[0]) == [("get_weather", {"city": "Paris"})]
