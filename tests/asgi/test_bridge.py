"""The Responses-to-Chat bridge: Responses clients (the openai SDK, the Agents SDK, Codex) in front of
a raw-output host that serves `/v1/chat/completions` only. The host never sees a Responses request:
it gets the chat request the bridge and the chat rewrite make, and answers raw hermes text."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest
from agents import Agent, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from examples.chat_only_bridge import chat_only
from examples.fake_model import chat
from tests.asgi.harness import sse_events
from tests.servers import serve, uvicorn
from tests.wire import replay_responses
from toolcall_middleware import ToolCallMiddleware
from toolcall_middleware.config import RouteMatch, ToolCallConfig

set_tracing_disabled(True)

TOOLS: Any = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "Current weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
]
CODEX_TOOLS: Any = [
    *TOOLS,
    {"type": "web_search"},
    {"type": "local_shell"},
    {"type": "custom", "name": "apply_patch", "format": {"type": "grammar", "syntax": "lark", "definition": "s"}},
]


def recording_host(seen: list[tuple[str, dict[str, Any]]], path: str = "/v1/chat/completions") -> Starlette:
    """The chat-only raw host of `examples/fake_model.py`, recording what it is sent."""

    async def recorded(request: Request) -> Response:
        seen.append((request.url.path, await request.json()))
        return await chat(request)

    return Starlette(routes=[Route(path, recorded, methods=["POST"])])


def async_client(app: Any, base: str = "http://host.test/v1") -> openai.AsyncOpenAI:
    transport = httpx.ASGITransport(app=app)
    return openai.AsyncOpenAI(
        api_key="none", base_url=base, max_retries=0, http_client=httpx.AsyncClient(transport=transport)
    )


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    command, port = uvicorn("examples.chat_only_bridge:app")
    with serve(command, port) as url:
        yield url


@pytest.fixture(scope="module")
def client(base: str) -> openai.OpenAI:
    return openai.OpenAI(api_key="none", base_url=base + "/v1", max_retries=0)


def test_the_host_alone_serves_no_responses_route() -> None:
    async def post() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=chat_only), base_url="http://h") as raw:
            return await raw.post("/v1/responses", json={"model": "m", "input": "hi"})

    assert asyncio.run(post()).status_code == 404


@pytest.mark.parametrize("stream", [False, True])
def test_responses_tool_turn_through_the_bridge_on_uvicorn(client: openai.OpenAI, stream: bool) -> None:
    def ask(items: Any) -> Any:
        if not stream:
            return client.responses.create(model="qwen3", input=items, tools=TOOLS)
        with client.responses.stream(model="qwen3", input=items, tools=TOOLS) as s:
            kinds = [event.type for event in s]
            assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
            return s.get_final_response()

    items: list[Any] = [{"role": "user", "content": "What is the weather in Paris?"}]
    first = ask(items)
    assert first.output_text == "Let me check."
    assert [item.type for item in first.output] == ["reasoning", "message", "function_call"]
    call = first.output[-1]
    assert call.name == "get_weather" and json.loads(call.arguments) == {"city": "Paris"}
    assert call.call_id != call.id and call.id.startswith("fc_")

    items += [item.model_dump(exclude_none=True) for item in first.output]
    items.append({"type": "function_call_output", "call_id": call.call_id, "output": "Sunny, 21 C"})
    answer = ask(items)
    assert answer.output_text == "It is Sunny, 21 C."
    assert not [item for item in answer.output if item.type == "function_call"]
    # The chat route behind the same middleware is unchanged.
    completion = client.chat.completions.create(model="qwen3", messages=[{"role": "user", "content": "hi"}])
    assert completion.choices[0].message.content == "Hello! How can I help?"


def test_anthropic_sdk_through_the_same_example_on_uvicorn(base: str) -> None:
    client = anthropic.Anthropic(api_key="none", base_url=base, max_retries=0)
    tools: Any = [{"name": "get_weather", "input_schema": TOOLS[0]["parameters"]}]
    messages: list[Any] = [{"role": "user", "content": "What is the weather in Oslo?"}]
    with client.messages.stream(model="qwen3", max_tokens=256, tools=tools, messages=messages) as stream:
        first = stream.get_final_message()
    call = first.content[-1]
    assert first.stop_reason == "tool_use" and call.type == "tool_use" and call.input == {"city": "Oslo"}
    messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]})
    messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "Sunny"}]})
    answer = client.messages.create(model="qwen3", max_tokens=256, tools=tools, messages=messages)
    assert answer.stop_reason == "end_turn" and answer.content[-1].type == "text"
    assert answer.content[-1].text == "It is Sunny."


CALLS: list[str] = []


@function_tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    CALLS.append(city)
    return f"Sunny, 21 C in {city}"


def test_agents_sdk_completes_its_loop_against_a_chat_only_host() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    app = ToolCallMiddleware(recording_host(seen), dialect="hermes", bridge="responses-to-chat")
    model = OpenAIResponsesModel(model="qwen3", openai_client=async_client(app))
    agent = Agent(name="weather", instructions="Answer weather questions.", tools=[get_weather], model=model)
    CALLS.clear()

    async def run_both() -> tuple[Any, Any, list[str]]:
        result = await Runner.run(agent, "What is the weather in Paris?")
        streamed = Runner.run_streamed(agent, "What is the weather in Paris?")
        kinds = [event.type async for event in streamed.stream_events()]
        return result, streamed, kinds

    result, streamed, kinds = asyncio.run(run_both())
    assert result.final_output == "It is Sunny, 21 C in Paris."
    assert streamed.final_output == "It is Sunny, 21 C in Paris."
    assert "run_item_stream_event" in kinds
    assert CALLS == ["Paris", "Paris"]
    assert {path for path, _ in seen} == {"/v1/chat/completions"}
    assert all("messages" in body and "input" not in body and "tools" not in body for _, body in seen)


def codex_request() -> dict[str, Any]:
    """A request shaped like Codex CLI's second turn: hosted and custom tools, reasoning and
    function_call items echoed back, `store: false`, `include`, a prompt cache key."""
    return {
        "model": "gpt-5-codex",
        "instructions": "You are a coding agent.",
        "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "<permissions>"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
            {"type": "reasoning", "id": "rs_1", "summary": [], "content": None, "encrypted_content": "gAAAA"},
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": "get_weather",
                "arguments": '{"city":"Paris"}',
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "Sunny, 21 C"},
        ],
        "tools": CODEX_TOOLS,
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "reasoning": {"effort": "medium", "summary": "auto"},
        "store": False,
        "stream": True,
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "0199-abc",
    }


def test_codex_style_request_is_accepted(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    app = ToolCallMiddleware(recording_host(seen), dialect="hermes", bridge="responses-to-chat")

    async def post() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://h") as raw:
            return await raw.post("/v1/responses", json=codex_request())

    with caplog.at_level(logging.INFO, logger="toolcall_middleware"):
        response = asyncio.run(post())
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    final = replay_responses(sse_events(response.content))
    assert final.output_text == "It is Sunny, 21 C." and final.status == "completed"
    # What the host got: one chat request, the history flattened into hermes text, no hosted tools.
    [(path, body)] = seen
    assert path == "/v1/chat/completions"
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert not {"input", "tools", "store", "include", "reasoning", "instructions"} & set(body)
    text = json.dumps(body["messages"])
    assert "<tool_call>" in text and "<tool_response>" in text and "get_weather" in text
    assert "web_search" not in text and "apply_patch" not in text
    assert "tools of type web_search, local_shell, custom are not offered to the host" in caplog.text


def test_previous_response_id_is_a_clear_400() -> None:
    app = ToolCallMiddleware(chat_only, dialect="hermes", bridge="responses-to-chat")

    async def ask() -> None:
        await async_client(app).responses.create(model="m", input="hi", previous_response_id="resp_1")

    with pytest.raises(openai.BadRequestError) as info:
        asyncio.run(ask())
    assert "previous_response_id" in str(info.value) and "keeps no conversation state" in str(info.value)


def test_a_body_that_is_not_json_is_a_400_not_the_hosts_404() -> None:
    app = ToolCallMiddleware(chat_only, dialect="hermes", bridge="responses-to-chat")

    async def post() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://h") as raw:
            return await raw.post("/v1/responses", content=b"{not json", headers={"content-type": "application/json"})

    response = asyncio.run(post())
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"


def test_over_the_request_limit_is_a_413() -> None:
    app = ToolCallMiddleware(chat_only, dialect="hermes", bridge="responses-to-chat", limits={"max_request_bytes": 64})

    async def post() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://h") as raw:
            return await raw.post("/v1/responses", json={"model": "m", "input": "x" * 200})

    response = asyncio.run(post())
    assert response.status_code == 413 and "64 bytes" in response.json()["error"]["message"]


def test_prefix_and_bridge_routes_decide_where_the_host_is_asked() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    app = ToolCallMiddleware(
        recording_host(seen, "/api/v2/chat"),
        dialect="hermes",
        bridge={"responses-to-chat"},
        route_prefixes=("/api",),
        bridge_routes={"chat": "/v2/chat"},
    )

    async def ask() -> Any:
        return await async_client(app, "http://h/api/v1").responses.create(
            model="m", input="Weather in Oslo?", tools=TOOLS
        )

    response = asyncio.run(ask())
    assert [item.type for item in response.output][-1] == "function_call"
    assert [path for path, _ in seen] == ["/api/v2/chat"]


def test_an_upstream_error_mid_stream_becomes_response_failed() -> None:
    async def broken(request: Request) -> Response:
        async def events() -> Any:
            chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
            yield "data: " + json.dumps({**chunk, "choices": [{"index": 0, "delta": {"content": "Hel"}}]}) + "\n\n"
            yield "data: " + json.dumps({"error": {"message": "engine overloaded", "type": "server_error"}}) + "\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    host = Starlette(routes=[Route("/v1/chat/completions", broken, methods=["POST"])])
    app = ToolCallMiddleware(host, dialect="hermes", bridge="responses-to-chat")

    async def post() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://h") as raw:
            return await raw.post("/v1/responses", json={"model": "m", "input": "hi", "stream": True})

    events = sse_events(asyncio.run(post()).content)
    final = replay_responses(events)
    assert final.status == "failed" and final.error is not None and final.error.message == "engine overloaded"
    assert final.output_text == "Hel"


def test_host_errors_keep_their_status() -> None:
    async def down(request: Request) -> Response:
        return JSONResponse({"error": {"message": "no capacity", "type": "server_error"}}, status_code=503)

    host = Starlette(routes=[Route("/v1/chat/completions", down, methods=["POST"])])
    app = ToolCallMiddleware(host, dialect="hermes", bridge="responses-to-chat")

    async def ask() -> None:
        await async_client(app).responses.create(model="m", input="hi")

    with pytest.raises(openai.InternalServerError) as info:
        asyncio.run(ask())
    assert info.value.status_code == 503 and "no capacity" in str(info.value)


# -- configuration ---------------------------------------------------------------------------


def test_route_plan() -> None:
    config = ToolCallConfig(bridge="responses-to-chat", route_prefixes=("", "/api"))
    plan = RouteMatch("responses", "chat", "/v1/chat/completions", asked="/v1/responses")
    assert config.route("/v1/responses") == plan
    asked = "/api/v1/responses/"
    assert config.route(asked) == RouteMatch("responses", "chat", "/api/v1/chat/completions", asked=asked)
    asked = "/v1/chat/completions/"
    assert config.route(asked) == RouteMatch("chat", "chat", "/v1/chat/completions/", asked=asked)
    assert config.route("/v1/models") is None
    plan = RouteMatch("responses", "responses", "/v1/responses", asked="/v1/responses")
    assert ToolCallConfig().route("/v1/responses") == plan
    assert config.bridge_routes == {"chat": "/v1/chat/completions", "messages": "/v1/messages"}


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"bridge": "responses-to-soap"}, "responses-to-chat"),
        ({"bridge": {"responses-to-chat", "responses-to-messages"}}, "choose one"),
        ({"bridge": {"chat-to-messages", "messages-to-chat"}}, "says the host lacks"),
        ({"bridge": {"responses-to-chat", "chat-to-messages"}}, "says the host lacks"),
        ({"bridge_routes": {"chat": "v1/chat"}}, "must start with '/'"),
        ({"bridge_routes": {"responses": "/v1/responses"}}, "bridge_routes"),
        ({"keepalive_interval": -1}, "keepalive_interval"),
    ],
)
def test_bad_bridge_options_fail_at_construction(options: dict[str, Any], words: str) -> None:
    with pytest.raises(ValidationError) as info:
        ToolCallConfig(**options)
    assert words in str(info.value)
