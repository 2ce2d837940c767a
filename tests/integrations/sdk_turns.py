"""A full tool-call turn through the official openai SDK (call, tool result, answer), chat and
responses, streamed and whole: the same checks for every served example."""

from __future__ import annotations

import json
from typing import Any

import openai

TOOLS: Any = [
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


def chat_turn(client: openai.OpenAI, *, stream: bool) -> None:
    messages: list[Any] = [{"role": "user", "content": "What is the weather in Paris?"}]
    if stream:
        with client.chat.completions.stream(model="qwen3", messages=messages, tools=TOOLS) as s:
            kinds = [event.type for event in s]
            completion = s.get_final_completion()
        assert "tool_calls.function.arguments.done" in kinds
    else:
        completion = client.chat.completions.create(model="qwen3", messages=messages, tools=TOOLS)
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Let me check."
    call = (choice.message.tool_calls or [])[0]
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Paris"}

    messages.append(choice.message.model_dump(exclude_none=True, exclude={"parsed"}))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": "Sunny, 21 C"})
    if stream:
        with client.chat.completions.stream(model="qwen3", messages=messages, tools=TOOLS) as s:
            answer = s.get_final_completion()
    else:
        answer = client.chat.completions.create(model="qwen3", messages=messages, tools=TOOLS)
    assert answer.choices[0].message.content == "It is Sunny, 21 C."
    assert not answer.choices[0].message.tool_calls
    assert answer.choices[0].finish_reason == "stop"


def responses_turn(client: openai.OpenAI, *, stream: bool) -> None:
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
    if stream:
        with client.responses.stream(model="qwen3", input=follow, tools=RESPONSES_TOOLS) as s:
            answer = s.get_final_response()
    else:
        answer = client.responses.create(model="qwen3", input=follow, tools=RESPONSES_TOOLS)
    assert answer.output_text == "It is Sunny, 21 C."
    assert not [item for item in answer.output if item.type == "function_call"]
