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
