"""A host that makes tool calls itself (given the tools: `forward_tools=True`), behind the
middleware under a real uvicorn, driven by the openai SDK: its calls reach the client, streamed
and whole, in Chat and Responses, with the host's call ids, through a full agent turn; and the
request's rules still apply to them (`parallel_tool_calls`, a forced function, unknown names)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.servers import serve, uvicorn


def tool(name: str) -> dict[str, Any]:
    parameters = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


WEATHER = [tool("get_weather")]


@pytest.fixture(scope="module")
def client() -> Iterator[openai.OpenAI]:
    command, port = uvicorn("tests.asgi.native_host:app")
    with serve(command, port) as base:
        yield openai.OpenAI(api_key="none", base_url=base + "/v1", max_retries=0)


def chat(client: openai.OpenAI, stream: bool, messages: list[Any], **extra: Any) -> Any:
    if stream:
        with client.chat.completions.stream(model="m", messages=messages, **extra) as s:
            for _ in s:
                pass
            return s.get_final_completion()
    return client.chat.completions.create(model="m", messages=messages, **extra)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_chat_the_hosts_own_calls_reach_the_client_through_an_agent_turn(client: openai.OpenAI, stream: bool) -> None:
    messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    choice = chat(client, stream, messages, tools=WEATHER).choices[0]
    assert choice.finish_reason == "tool_calls"
    calls = choice.message.tool_calls or []
    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("call_host0", "get_weather", {"city": "Paris"})
    ]
    messages.append(choice.message.model_dump(exclude_none=True, exclude={"parsed"}))
    messages.append({"role": "tool", "tool_call_id": "call_host0", "content": "Sunny"})
    answer = chat(client, stream, messages, tools=WEATHER).choices[0]
    assert answer.message.content == "It is sunny." and answer.finish_reason == "stop"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_chat_the_request_rules_apply_to_the_hosts_calls(client: openai.OpenAI, stream: bool) -> None:
    messages: list[Any] = [{"role": "user", "content": "Weather in Paris and Oslo?"}]
    two = [tool("get_weather"), tool("get_time")]
    both = chat(client, stream, messages, tools=two).choices[0].message.tool_calls or []
    assert [c.function.name for c in both] == ["get_weather", "get_time"]
    serial = chat(client, stream, messages, tools=two, parallel_tool_calls=False).choices[0].message.tool_calls
    assert [c.function.name for c in serial or []] == ["get_weather"]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_responses_the_hosts_own_calls_reach_the_client_through_an_agent_turn(
    client: openai.OpenAI, stream: bool
) -> None:
    tools: Any = [{"type": "function", **WEATHER[0]["function"]}]
    if stream:
        with client.responses.stream(model="m", input="Weather in Paris?", tools=tools) as s:
            kinds = [event.type for event in s]
            response = s.get_final_response()
        assert "response.function_call_arguments.delta" in kinds
    else:
        response = client.responses.create(model="m", input="Weather in Paris?", tools=tools)
    calls = [item for item in response.output if item.type == "function_call"]
    assert [(c.call_id, c.name, json.loads(c.arguments)) for c in calls] == [
        ("call_host0", "get_weather", {"city": "Paris"})
    ]
    follow: Any = [
        {"role": "user", "content": "Weather in Paris?"},
        calls[0].model_dump(exclude_none=True),
        {"type": "function_call_output", "call_id": "call_host0", "output": "Sunny"},
    ]
    answer = client.responses.create(model="m", input=follow, tools=tools)
    assert answer.output_text == "It is sunny."


def _mixed(first_call: str) -> list[dict[str, Any]]:
    """A stream with a call in the model's text (`first_call`), then a call the host made itself,
    then another text call, through the middleware (incremental argument streaming); the client's
    chunks."""
    from tests.asgi.harness import SSE_HEADERS, Receive, Recorder, body, call, request, scope, scripted, start
    from toolcall_middleware import ToolCallMiddleware

    meta = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return b"data: " + json.dumps({**meta, "choices": [choice]}).encode() + b"\n\n"

    native = {"index": 0, "id": "call_host", "function": {"name": "get_time", "arguments": "{}"}}
    stream = [
        chunk({"role": "assistant", "content": first_call}),
        chunk({"tool_calls": [native]}),
        chunk({"content": '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'}),
        chunk({}, "stop") + b"data: [DONE]\n\n",
    ]
    req = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "x"}]}
    req["tools"] = [tool("get_weather"), tool("get_time")]
    script = [start(200, SSE_HEADERS), *[body(c, more=True) for c in stream], body(b"")]
    app = ToolCallMiddleware(scripted(script), dialect="hermes", forward_tools=True, arguments_streaming="incremental")
    sent = Recorder()
    call(app, scope(), Receive([request(json.dumps(req).encode())]), sent)
    return [json.loads(e[6:]) for e in sent.body.split(b"\n\n") if e.startswith(b"data: {")]


def test_a_host_call_between_calls_of_the_models_text_keeps_every_call_apart() -> None:
    """The text after the host's call is parsed anew, its calls numbered on: three calls."""
    chunks = _mixed('<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>')
    starts = [
        (tc["index"], tc["function"]["name"], tc["id"])
        for c in chunks
        for tc in c["choices"][0]["delta"].get("tool_calls") or []
        if "id" in tc
    ]
    assert [(i, name) for i, name, _ in starts] == [(0, "get_weather"), (1, "get_time"), (2, "get_weather")]
    assert starts[1][2] == "call_host"
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_a_host_call_cutting_a_streamed_call_short_fails_the_response_clearly() -> None:
    """A call whose arguments had begun to stream, cut off by the host's own call: the response
    ends in the error the rules give such a call, not in raw bytes."""
    chunks = _mixed('<tool_call>{"name": "get_weather", "arguments": {"city": "Pa')
    last = chunks[-1]
    assert last["choices"][0]["finish_reason"] == "error"
    assert last["error"]["code"] == "incomplete_tool_call"
