"""`ToolCallMiddleware` in front of a raw-output model server under a real uvicorn on loopback,
driven by the official openai SDK: chat and responses, streamed and whole, through a full agent
turn (call, tool result, answer). The fake model only ever sees the rewritten requests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.servers import serve, uvicorn

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather in a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
RESPONSES_TOOLS: Any = [{"type": "function", **TOOLS[0]["function"]}]


@pytest.fixture(scope="module")
def client() -> Iterator[openai.OpenAI]:
    command, port = uvicorn("examples.starlette_app:app")
    with serve(command, port) as base:
        yield openai.OpenAI(api_key="none", base_url=base + "/v1", max_retries=0)


@pytest.fixture(scope="module")
def raw_client() -> Iterator[openai.OpenAI]:
    command, port = uvicorn("examples.fake_model:app")
    with serve(command, port) as base:
        yield openai.OpenAI(api_key="none", base_url=base + "/v1", max_retries=0)


def test_without_the_middleware_the_client_sees_raw_markup(raw_client: openai.OpenAI) -> None:
    messages: Any = [
        {"role": "system", "content": "You may call get_weather."},
        {"role": "user", "content": "Weather in Paris?"},
    ]
    message = raw_client.chat.completions.create(model="qwen3", messages=messages).choices[0].message
    assert message.tool_calls is None and "<tool_call>" in (message.content or "")


@pytest.mark.parametrize("stream", [False, True])
def test_chat_agent_turn(client: openai.OpenAI, stream: bool) -> None:
    messages: list[Any] = [{"role": "user", "content": "What is the weather in Paris?"}]
    if stream:
        with client.chat.completions.stream(model="qwen3", messages=messages, tools=TOOLS) as s:  # type: ignore[arg-type]
            for _ in s:
                pass
            completion = s.get_final_completion()
    else:
        completion = client.chat.completions.create(model="qwen3", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Let me check."
    call = (choice.message.tool_calls or [])[0]
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Paris"}

    messages.append(choice.message.model_dump(exclude_none=True, exclude={"parsed"}))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": "Sunny, 21 C"})
    answer = client.chat.completions.create(model="qwen3", messages=messages, tools=TOOLS, stream=False)  # type: ignore[arg-type]
    assert answer.choices[0].message.content == "It is Sunny, 21 C."
    assert answer.choices[0].message.tool_calls is None
    assert answer.choices[0].finish_reason == "stop"


@pytest.mark.parametrize("stream", [False, True])
def test_responses_agent_turn(client: openai.OpenAI, stream: bool) -> None:
    if stream:
        with client.responses.stream(model="qwen3", input="Weather in Paris?", tools=RESPONSES_TOOLS) as s:
            kinds = [event.type for event in s]
            response = s.get_final_response()
        assert kinds[0] == "response.created" and "response.function_call_arguments.done" in kinds
    else:
        response = client.responses.create(model="qwen3", input="Weather in Paris?", tools=RESPONSES_TOOLS)
    calls = [item for item in response.output if item.type == "function_call"]
    assert len(calls) == 1 and calls[0].name == "get_weather"
    assert json.loads(calls[0].arguments) == {"city": "Paris"}
    assert response.output_text == "Let me check."

    follow: Any = [
        {"role": "user", "content": "Weather in Paris?"},
        *[item.model_dump(exclude_none=True) for item in response.output if item.type != "reasoning"],
        {"type": "function_call_output", "call_id": calls[0].call_id, "output": "Sunny, 21 C"},
    ]
    answer = client.responses.create(model="qwen3", input=follow, tools=RESPONSES_TOOLS)
    assert answer.output_text == "It is Sunny, 21 C."
    assert not [item for item in answer.output if item.type == "function_call"]


def test_plain_question_without_tools_passes_cleanly(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(model="qwen3", messages=[{"role": "user", "content": "hi"}])
    assert completion.choices[0].message.content == "Hello! How can I help?"


def test_streamed_reasoning_text_and_call_equal_the_whole_answer(client: openai.OpenAI) -> None:
    """The model thinks in `<think>` before its call: streamed (most reasoning chunks take the
    per-chunk lane) and whole, the SDK accumulates the same reasoning, text and call."""
    messages: Any = [{"role": "user", "content": "What is the weather in Paris?"}]
    with client.chat.completions.stream(model="qwen3", messages=messages, tools=TOOLS) as s:  # type: ignore[arg-type]
        for _ in s:
            pass
        streamed = s.get_final_completion().choices[0].message
    whole = client.chat.completions.create(model="qwen3", messages=messages, tools=TOOLS).choices[0].message  # type: ignore[arg-type]
    for message in (streamed, whole):
        assert (message.model_extra or {}).get("reasoning_content") == "I need the weather tool."
        assert message.content == "Let me check."
        call = (message.tool_calls or [])[0]
        assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Paris"}
