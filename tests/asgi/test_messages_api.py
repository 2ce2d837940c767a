"""The Anthropic Messages API through the middleware, driven by the official SDKs in process.

- The `anthropic` SDK (`messages.create()`, `messages.stream()` and its final-message accumulator)
  through a full tool turn against a raw-output host: one that answers `/v1/messages` itself with
  raw text (native), and one that serves Chat Completions only (`messages-to-chat`).
- The `openai` SDK, chat and responses, against a host that speaks Anthropic Messages
  (`chat-to-messages`, `responses-to-messages`): raw text in `text` blocks, or real `tool_use`
  blocks, which become calls directly.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anthropic
import httpx
import httpx2
import openai
import pytest

from examples.chat_only_bridge import chat_only
from tests.hosts import anthropic_host
from toolcall_middleware import ToolCallMiddleware

T = TypeVar("T")

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
ANTHROPIC_TOOLS: Any = [{"name": "get_weather", "description": "Current weather in a city", "input_schema": SCHEMA}]
CHAT_TOOLS: Any = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather", "parameters": SCHEMA}}
]
RESPONSES_TOOLS: Any = [{"type": "function", "name": "get_weather", "description": "Weather", "parameters": SCHEMA}]


def run(make: Callable[[], Awaitable[T]]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(make(), 20)

    return asyncio.run(bounded())


def anthropic_client(app: Any) -> anthropic.AsyncAnthropic:
    # The anthropic SDK runs on `httpx2` (the same API, its own classes).
    http = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app))
    return anthropic.AsyncAnthropic(api_key="none", base_url="http://host.test", max_retries=0, http_client=http)


def openai_client(app: Any) -> openai.AsyncOpenAI:
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app))
    return openai.AsyncOpenAI(api_key="none", base_url="http://host.test/v1", max_retries=0, http_client=http)


MESSAGES_APPS = {
    "native": lambda: ToolCallMiddleware(anthropic_host(native=False), dialect="hermes"),
    "messages-to-chat": lambda: ToolCallMiddleware(chat_only, dialect="hermes", bridge="messages-to-chat"),
}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("host", sorted(MESSAGES_APPS))
def test_anthropic_sdk_full_tool_turn(host: str, stream: bool) -> None:
    client = anthropic_client(MESSAGES_APPS[host]())

    async def ask(messages: list[Any]) -> Any:
        if not stream:
            return await client.messages.create(model="qwen3", max_tokens=512, tools=ANTHROPIC_TOOLS, messages=messages)
        async with client.messages.stream(model="qwen3", max_tokens=512, tools=ANTHROPIC_TOOLS, messages=messages) as s:
            kinds = [event.type async for event in s]
            assert kinds[0] == "message_start" and "message_stop" in kinds
            return await s.get_final_message()

    messages: list[Any] = [{"role": "user", "content": "What is the weather in Paris?"}]
    first = run(lambda: ask(messages))
    assert first.stop_reason == "tool_use"
    assert [block.type for block in first.content] == ["thinking", "text", "tool_use"]
    assert first.content[1].text == "Let me check."
    call = first.content[2]
    assert call.name == "get_weather" and call.input == {"city": "Paris"} and call.id.startswith("toolu_")

    messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]})
    messages.append(
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "Sunny, 21 C"}]}
    )
    answer = run(lambda: ask(messages))
    assert answer.stop_reason == "end_turn"
    assert [block.type for block in answer.content] == ["thinking", "text"]
    assert answer.content[1].text == "It is Sunny, 21 C."


def test_anthropic_errors_are_anthropic_shaped() -> None:
    client = anthropic_client(MESSAGES_APPS["messages-to-chat"]())

    async def bad_role() -> Any:
        return await client.messages.create(
            model="qwen3",
            max_tokens=16,
            messages=[{"role": "tool", "content": "x"}],  # type: ignore[typeddict-item]
        )

    with pytest.raises(anthropic.BadRequestError) as info:
        run(bad_role)
    assert info.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "Invalid 'messages.0.role': expected 'user', 'assistant' or 'system'.",
        },
    }

    async def forced_but_not_called() -> Any:
        return await client.messages.create(
            model="qwen3",
            max_tokens=16,
            tools=[{"name": "lookup", "input_schema": SCHEMA}],
            tool_choice={"type": "tool", "name": "lookup"},
            messages=[{"role": "user", "content": "hi"}],  # the model answers with plain text
        )

    with pytest.raises(anthropic.InternalServerError) as failed:
        run(forced_but_not_called)
    assert failed.value.status_code == 502 and failed.value.response.headers["x-should-retry"] == "false"
    assert isinstance(failed.value.body, dict) and failed.value.body["type"] == "error"
    assert failed.value.body["error"]["type"] == "api_error"


# -- OpenAI clients in front of a host that speaks Anthropic Messages ---------------------------


def anthropic_upstream(native: bool) -> Any:
    return ToolCallMiddleware(
        anthropic_host(native=native),
        dialect="hermes",
        bridge={"chat-to-messages", "responses-to-messages"},
        forward_tools=native,  # a host that does tool calling itself is given the tools
    )


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("native", [False, True], ids=["raw-text-host", "tool-use-host"])
def test_openai_chat_against_an_anthropic_host(native: bool, stream: bool) -> None:
    client = openai_client(anthropic_upstream(native))

    async def ask(messages: list[Any]) -> Any:
        if not stream:
            return await client.chat.completions.create(model="qwen3", messages=messages, tools=CHAT_TOOLS)
        async with client.chat.completions.stream(model="qwen3", messages=messages, tools=CHAT_TOOLS) as s:
            async for _ in s:
                pass
            return await s.get_final_completion()

    messages: list[Any] = [{"role": "user", "content": "What is the weather in Paris?"}]
    first = run(lambda: ask(messages))
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content == "Let me check."
    call = (choice.message.tool_calls or [])[0]
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Paris"}
    if native:
        assert call.id == "toolu_host1"  # the host's own id is the call id

    messages.append(choice.message.model_dump(exclude_none=True, exclude={"parsed"}))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": "Sunny, 21 C"})
    answer = run(lambda: ask(messages)).choices[0]
    assert answer.message.content == "It is Sunny, 21 C." and answer.finish_reason == "stop"
    assert answer.message.tool_calls is None


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("native", [False, True], ids=["raw-text-host", "tool-use-host"])
def test_openai_responses_against_an_anthropic_host(native: bool, stream: bool) -> None:
    client = openai_client(anthropic_upstream(native))

    async def ask(items: list[Any]) -> Any:
        if not stream:
            return await client.responses.create(model="qwen3", input=items, tools=RESPONSES_TOOLS)
        async with client.responses.stream(model="qwen3", input=items, tools=RESPONSES_TOOLS) as s:
            kinds = [event.type async for event in s]
            assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
            return await s.get_final_response()

    items: list[Any] = [{"role": "user", "content": "What is the weather in Paris?"}]
    first = run(lambda: ask(items))
    assert first.output_text == "Let me check."
    call = first.output[-1]
    assert call.type == "function_call" and json.loads(call.arguments) == {"city": "Paris"}
    items += [item.model_dump(exclude_none=True) for item in first.output]
    items.append({"type": "function_call_output", "call_id": call.call_id, "output": "Sunny, 21 C"})
    answer = run(lambda: ask(items))
    assert answer.output_text == "It is Sunny, 21 C."
    assert not [item for item in answer.output if item.type == "function_call"]
