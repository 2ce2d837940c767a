"""An ended exchange is freed by reference counting: nothing of ours is left in a reference cycle.

A cycle per response (an answer pointing back at its exchange, say) is garbage only the cyclic
collector can free; on a busy server it makes every response pay for collections of the young
generation and, in time, of the whole heap. Only our own types are looked for: what
the collector finds of them after a response is the middleware's doing.

Driven as a user would: the official `openai` SDK through `httpx.ASGITransport`, streamed and
whole, chat and responses, with a tool call, two choices, and a host that fails mid-stream.
"""

from __future__ import annotations

import asyncio
import gc
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import httpx
import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from examples.fake_model import app as fake_model
from tests.asgi.test_several_choices import TOOLS as TWO_TOOLS
from tests.asgi.test_several_choices import host as several_choices_host
from toolcall_middleware import ToolCallMiddleware

WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]


def sse_chunk(text: str) -> str:
    choice = {"index": 0, "delta": {"content": text}, "finish_reason": None}
    return "data: " + json.dumps({"id": "c", "object": "chat.completion.chunk", "choices": [choice]}) + "\n\n"


def failing_host() -> Starlette:
    """Streams half a tool call, then raises (the middleware ends the client's stream itself)."""

    async def chat(request: Request) -> Response:
        await request.body()

        async def events() -> AsyncIterator[str]:
            for piece in ["Checking.", "\n<tool_call>\n", '{"name": "get_weather", "argu']:
                yield sse_chunk(piece)
            raise RuntimeError("the model server went away")

        return StreamingResponse(events(), media_type="text/event-stream")

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


@pytest.fixture
def collector_off() -> Iterator[None]:
    """The collector off (so nothing is freed behind the test's back), everything older freed first."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def ours_in_cycles() -> list[str]:
    """The types of our objects that are members of a reference cycle now unreachable (collected
    here). Members, not everything a cycle keeps: a host's exception holds its traceback's frames,
    and so whatever they refer to, in a cycle that is the host's (and Python's), not ours."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        garbage = list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    return sorted({type(garbage[i]).__qualname__ for i in cycle_members(garbage) if is_ours(garbage[i])})


def is_ours(obj: object) -> bool:
    return type(obj).__module__.startswith("toolcall_middleware")


def cycle_members(objects: list[object]) -> set[int]:
    """Indexes of the objects on a cycle among `objects` (Tarjan's strongly connected components,
    iterative: a component of two or more, or one that refers to itself)."""
    where = {id(o): i for i, o in enumerate(objects)}
    edges = [[where[id(r)] for r in gc.get_referents(o) if id(r) in where] for o in objects]
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    stack: list[int] = []
    on_stack: set[int] = set()
    members: set[int] = set()
    for root in range(len(objects)):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if child < len(edges[node]):
                work.append((node, child + 1))
                nxt = edges[node][child]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1 or node in edges[node]:
                    members.update(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return members


def client(app: Any) -> openai.AsyncOpenAI:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    return openai.AsyncOpenAI(
        base_url="http://test/v1", api_key="x", max_retries=0, http_client=httpx.AsyncClient(transport=transport)
    )


async def chat_streamed(sdk: openai.AsyncOpenAI) -> None:
    stream = await sdk.chat.completions.create(model="m", messages=ASK, tools=WEATHER, stream=True)  # type: ignore[arg-type]
    calls = [c async for c in stream if c.choices and c.choices[0].delta.tool_calls]
    assert calls, "the fake model's answer is a tool call"


async def chat_whole(sdk: openai.AsyncOpenAI) -> None:
    answer = await sdk.chat.completions.create(model="m", messages=ASK, tools=WEATHER)  # type: ignore[arg-type]
    assert answer.choices[0].message.tool_calls


async def responses_streamed(sdk: openai.AsyncOpenAI) -> None:
    tools = [{"type": "function", **t["function"]} for t in WEATHER]
    stream = await sdk.responses.create(model="m", input="Weather in Paris?", tools=tools, stream=True)  # type: ignore[arg-type]
    kinds = [event.type async for event in stream]
    assert "response.function_call_arguments.done" in kinds


async def responses_whole(sdk: openai.AsyncOpenAI) -> None:
    tools = [{"type": "function", **t["function"]} for t in WEATHER]
    answer = await sdk.responses.create(model="m", input="Weather in Paris?", tools=tools)  # type: ignore[arg-type]
    assert any(item.type == "function_call" for item in answer.output)


async def two_choices(sdk: openai.AsyncOpenAI) -> None:
    stream = await sdk.chat.completions.create(model="m", messages=ASK, tools=TWO_TOOLS, n=2, stream=True)
    indexes = {c.choices[0].index async for c in stream if c.choices}
    assert indexes == {0, 1}


async def failed_midway(sdk: openai.AsyncOpenAI) -> None:
    with pytest.raises(openai.APIError):  # the stream's last event is the error the middleware wrote
        stream = await sdk.chat.completions.create(model="m", messages=ASK, tools=WEATHER, stream=True)  # type: ignore[arg-type]
        async for _ in stream:
            pass


Exchange = Callable[[openai.AsyncOpenAI], Awaitable[None]]
CASES: list[tuple[str, Callable[[], Any], Exchange]] = [
    ("chat streamed", lambda: fake_model, chat_streamed),
    ("chat whole", lambda: fake_model, chat_whole),
    ("responses streamed", lambda: fake_model, responses_streamed),
    ("responses whole", lambda: fake_model, responses_whole),
    ("two choices streamed", several_choices_host, two_choices),
    ("host failed mid-stream", failing_host, failed_midway),
]


@pytest.mark.parametrize(("host", "exchange"), [(h, e) for _, h, e in CASES], ids=[name for name, _, _ in CASES])
def test_an_ended_exchange_leaves_no_cycles(collector_off: None, host: Callable[[], Any], exchange: Exchange) -> None:
    async def main() -> list[str]:
        async with client(ToolCallMiddleware(host(), dialect="hermes")) as sdk:
            await exchange(sdk)  # a first one: lazy imports and caches are not per-response garbage
            ours_in_cycles()
            await exchange(sdk)
        return ours_in_cycles()

    found = asyncio.run(main())
    assert found == [], f"left for the cyclic collector: {found}"


def flask_host() -> Any:
    """A Flask model endpoint streaming the fake model's raw hermes text."""
    from flask import Flask, Response, request

    from examples.fake_model import pieces, write

    app = Flask(__name__)

    @app.post("/v1/chat/completions")
    def chat() -> Response:
        raw = write(request.get_json())

        def events() -> Iterator[str]:
            for piece in pieces(raw):
                yield sse_chunk(piece)
            yield "data: [DONE]\n\n"

        return Response(events(), mimetype="text/event-stream")

    return app


def test_an_ended_wsgi_request_leaves_no_cycles(collector_off: None) -> None:
    from toolcall_middleware import ToolCallWSGIMiddleware

    app = ToolCallWSGIMiddleware(flask_host(), dialect="hermes")
    http = httpx.Client(transport=httpx.WSGITransport(app=app))
    sdk = openai.OpenAI(base_url="http://test/v1", api_key="x", max_retries=0, http_client=http)

    def exchange() -> None:
        stream = sdk.chat.completions.create(model="m", messages=ASK, tools=WEATHER, stream=True)  # type: ignore[arg-type]
        assert [c for c in stream if c.choices and c.choices[0].delta.tool_calls]

    exchange()
    ours_in_cycles()
    exchange()
    assert ours_in_cycles() == []
