"""Anthropic Messages <-> Chat Completions request translation, for the bridges to and from
`/v1/messages`: each direction on a full tool turn, the field errors, and the round trip."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolcall_middleware.core.apis.chat import rewrite_chat_request
from toolcall_middleware.core.request import BadRequest
from toolcall_middleware.core.request._bridge import responses_to_chat
from toolcall_middleware.core.request._bridge_messages import DEFAULT_MAX_TOKENS, chat_to_messages, messages_to_chat

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
ANTHROPIC_TOOLS: list[Any] = [
    {"name": "get_weather", "description": "Weather", "input_schema": SCHEMA},
    {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
]


def anthropic_turn() -> dict[str, Any]:
    return {
        "model": "claude-x",
        "max_tokens": 256,
        "system": [{"type": "text", "text": "Be brief."}],
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "use the tool", "signature": "sig"},
                    {"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "Sunny"}]},
                    {"type": "text", "text": "And tomorrow?"},
                ],
            },
        ],
        "tools": ANTHROPIC_TOOLS,
        "tool_choice": {"type": "any", "disable_parallel_tool_use": True},
        "stop_sequences": ["END"],
        "temperature": 0.5,
        "stream": True,
        "metadata": {"user_id": "u1"},
    }


def test_messages_to_chat_on_a_tool_turn() -> None:
    bridged = messages_to_chat(anthropic_turn())
    assert bridged.dropped_tools == ("web_search_20250305",)
    assert bridged.dropped_items == ()  # the thinking is the assistant's reasoning_content
    assert bridged.body == {
        "model": "claude-x",
        "temperature": 0.5,
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": "Checking.",
                "reasoning_content": "use the tool",
                "tool_calls": [
                    {
                        "id": "toolu_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "toolu_1", "content": "Sunny"},
            {"role": "user", "content": "And tomorrow?"},
        ],
        "tools": [
            {"type": "function", "function": {"name": "get_weather", "description": "Weather", "parameters": SCHEMA}}
        ],
        "tool_choice": "required",
        "parallel_tool_calls": False,
        "max_tokens": 256,
        "stop": ["END"],
        "stream": True,
        "stream_options": {"include_usage": True},
        "user": "u1",
    }
    # The chat rewrite takes it as it is (for a raw host behind `messages-to-chat`).
    flat = rewrite_chat_request(bridged.body, dialect="hermes").body
    assert "<tool_response>" in json.dumps(flat["messages"])


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ({"type": "auto"}, {"tool_choice": "auto"}),
        ({"type": "none"}, {"tool_choice": "none"}),
        (
            {"type": "tool", "name": "get_weather"},
            {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}},
        ),
    ],
)
def test_messages_tool_choice(choice: dict[str, Any], expected: dict[str, Any]) -> None:
    body = {"messages": [{"role": "user", "content": "x"}], "tools": ANTHROPIC_TOOLS[:1], "tool_choice": choice}
    out = messages_to_chat(body).body
    assert {k: out[k] for k in expected} == expected and "parallel_tool_calls" not in out


def test_images_cross_both_ways() -> None:
    body = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
                    {"type": "text", "text": "what?"},
                ],
            }
        ]
    }
    chat = messages_to_chat(body).body
    assert chat["messages"][0]["content"][0] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,AAAA"},
    }
    back = chat_to_messages(chat).body
    assert back["messages"][0]["content"] == body["messages"][0]["content"]


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({}, "messages"),
        ({"messages": [{"role": "tool", "content": "x"}]}, "messages.0.role"),
        (
            {"messages": [{"role": "assistant", "content": [{"type": "tool_use", "name": "f", "input": {}}]}]},
            "messages.0.content.0.id",
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "tool_result", "content": "x"}]}]},
            "messages.0.content.0.tool_use_id",
        ),
        (
            {"messages": [], "tools": [{"name": "f", "input_schema": {}}], "tool_choice": {"type": "maybe"}},
            "tool_choice.type",
        ),
    ],
)
def test_messages_field_errors(body: dict[str, Any], param: str) -> None:
    with pytest.raises(BadRequest) as info:
        messages_to_chat(body)
    assert info.value.param == param


def test_chat_to_messages_on_a_tool_turn() -> None:
    chat = {
        "model": "m",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "developer", "content": "Use tools."},
            {"role": "user", "content": "Weather in Paris and Oslo?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                    },
                    {
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_a", "content": "Sunny"},
            {"role": "tool", "tool_call_id": "call_b", "content": [{"type": "text", "text": "Rain"}]},
        ],
        "tools": [
            {"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}},
            {"type": "custom", "custom": {"name": "x"}},
        ],
        "tool_choice": "required",
        "parallel_tool_calls": False,
        "max_completion_tokens": 100,
        "stop": "END",
        "stream": True,
    }
    bridged = chat_to_messages(chat)
    assert bridged.dropped_tools == ("custom",)
    assert bridged.body == {
        "model": "m",
        "system": "Be brief.\n\nUse tools.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Oslo?"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "call_a", "name": "get_weather", "input": {"city": "Paris"}},
                    {"type": "tool_use", "id": "call_b", "name": "get_weather", "input": {"city": "Oslo"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "call_a", "content": "Sunny"},
                    {"type": "tool_result", "tool_use_id": "call_b", "content": "Rain"},
                ],
            },
        ],
        "tools": [{"name": "get_weather", "input_schema": SCHEMA}],
        "tool_choice": {"type": "any", "disable_parallel_tool_use": True},
        "max_tokens": 100,
        "stop_sequences": ["END"],
        "stream": True,
    }


def test_max_tokens_is_always_set_and_bad_arguments_are_named() -> None:
    assert chat_to_messages({"messages": [{"role": "user", "content": "x"}]}).body["max_tokens"] == DEFAULT_MAX_TOKENS
    bad = {
        "messages": [{"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "[1]"}}]}]
    }
    with pytest.raises(BadRequest) as info:
        chat_to_messages(bad)
    assert info.value.param == "messages[0].tool_calls[0].function.arguments"


def test_responses_to_messages_composes() -> None:
    body = {
        "model": "m",
        "instructions": "Be brief.",
        "input": [
            {"role": "user", "content": "Weather?"},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city":"Oslo"}'},
            {"type": "function_call_output", "call_id": "call_1", "output": "Snow"},
        ],
        "tools": [{"type": "function", "name": "get_weather", "parameters": SCHEMA}, {"type": "web_search"}],
    }
    out = chat_to_messages(responses_to_chat(body).body).body
    assert out["system"] == "Be brief."
    assert [m["role"] for m in out["messages"]] == ["user", "assistant", "user"]
    assert out["messages"][2]["content"] == [{"type": "tool_result", "tool_use_id": "call_1", "content": "Snow"}]


CITY = st.text("abcdefghijklmnopqrstuvwxyz ", min_size=1, max_size=10)


@given(st.lists(st.lists(st.tuples(CITY, st.text(max_size=12)), min_size=1, max_size=3), max_size=4))
def test_chat_to_messages_and_back_keeps_every_call_and_result(turns: list[list[tuple[str, str]]]) -> None:
    """Property: a Chat tool history survives the trip to Anthropic and back: every call with its id,
    name and arguments, every result with its id and text, in order."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    n = 0
    for turn in turns:
        calls = []
        for city, _ in turn:
            calls.append(
                {
                    "id": f"call_{n}",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": json.dumps({"city": city})},
                }
            )
            n += 1
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        for call, (_, result) in zip(calls, turn, strict=True):
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    back = messages_to_chat(chat_to_messages({"messages": messages}).body).body["messages"]

    def history(ms: list[dict[str, Any]]) -> list[Any]:
        out: list[Any] = []
        for m in ms:
            for c in m.get("tool_calls") or []:
                out.append((c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])))
            if m["role"] == "tool":
                out.append((m["tool_call_id"], m["content"]))
        return out

    assert history(back) == history(messages)


@given(
    st.lists(st.tuples(st.text(min_size=1, max_size=12), st.sampled_from(["text", "system", "thinking"])), max_size=6)
)
def test_system_turns_and_reasoning_survive_the_trip_to_chat_and_back(parts: list[tuple[str, str]]) -> None:
    """Property: an Anthropic conversation with system turns anywhere and thinking in assistant
    turns keeps, through Chat and back, every system text in order at the front of `system` and
    every assistant turn's reasoning in its thinking block."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    system: list[str] = ["Base."]
    reasoning: list[str] = []
    for text, kind in parts:
        if kind == "system":
            messages.append({"role": "system", "content": [{"type": "text", "text": text}]})
            system.append(text)
        else:
            blocks: list[Any] = [{"type": "text", "text": "answer"}]
            if kind == "thinking":
                blocks.insert(0, {"type": "thinking", "thinking": text, "signature": ""})
                reasoning.append(text)
            messages += [{"role": "assistant", "content": blocks}, {"role": "user", "content": "more"}]
    back = chat_to_messages(messages_to_chat({"system": "Base.", "messages": messages}).body).body
    assert back["system"] == "\n\n".join(system)
    thought = [b["thinking"] for m in back["messages"] for b in m["content"] if b["type"] == "thinking"]
    assert thought == reasoning


@pytest.mark.parametrize(
    ("thinking", "kwargs"),
    [
        ({"type": "enabled", "budget_tokens": 2048}, {"enable_thinking": True, "thinking": True}),
        ({"type": "adaptive", "display": "updates"}, {"enable_thinking": True, "thinking": True}),
        ({"type": "disabled"}, {"enable_thinking": False, "thinking": False}),
    ],
)
def test_thinking_becomes_the_chat_templates_switch(thinking: Any, kwargs: Any) -> None:
    body = {"messages": [{"role": "user", "content": "x"}], "thinking": thinking}
    assert messages_to_chat(body).body["chat_template_kwargs"] == kwargs


@pytest.mark.parametrize(
    ("fields", "max_tokens", "thinking"),
    [
        ({"chat_template_kwargs": {"enable_thinking": True}}, 8192, {"type": "enabled", "budget_tokens": 4096}),
        ({"chat_template_kwargs": {"enable_thinking": False}}, 8192, {"type": "disabled"}),
        ({"reasoning_effort": "high"}, 8192, {"type": "enabled", "budget_tokens": 8191}),
        ({"reasoning_effort": "low"}, 8192, {"type": "enabled", "budget_tokens": 1024}),
        ({"reasoning_effort": "minimal"}, 8192, {"type": "disabled"}),
        ({"reasoning_effort": "medium"}, 1000, None),  # no budget fits under max_tokens
        ({}, 8192, None),
    ],
)
def test_the_chat_thinking_switch_becomes_anthropic_thinking(fields: Any, max_tokens: int, thinking: Any) -> None:
    body = {"messages": [{"role": "user", "content": "x"}], "max_tokens": max_tokens, "user": "u", **fields}
    out = chat_to_messages(body).body
    assert out.get("thinking") == thinking and out["metadata"] == {"user_id": "u"}


def test_output_config_and_sampling_fields_for_a_chat_host() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    body = {
        "messages": [{"role": "user", "content": "x"}],
        "output_config": {"effort": "low", "format": {"type": "json_schema", "schema": schema}},
        "top_k": 20,
        "service_tier": "standard_only",
        "container": "c",
        "context_management": {"edits": []},
        "mcp_servers": [{"type": "url", "url": "https://m.example", "name": "m"}],
    }
    bridged = messages_to_chat(body)
    assert bridged.body == {
        "messages": [{"role": "user", "content": "x"}],
        "top_k": 20,
        "reasoning_effort": "low",
        "response_format": {"type": "json_schema", "json_schema": {"name": "output", "schema": schema}},
    }
    assert bridged.dropped_tools == ("mcp_servers",)


def test_tool_result_media_and_documents_for_a_chat_host() -> None:
    png = {"type": "base64", "media_type": "image/png", "data": "AAAA"}
    pdf = {"type": "base64", "media_type": "application/pdf", "data": "JVBE"}
    result = {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [
            {"type": "text", "text": "two files"},
            {"type": "image", "source": png},
            {"type": "document", "source": pdf, "title": "spec.pdf"},
            {"type": "document", "source": {"type": "url", "url": "https://d.example/a.pdf"}},
            {"type": "tool_reference", "tool_name": "WebFetch"},
        ],
    }
    body = {"messages": [{"role": "user", "content": [result, {"type": "text", "text": "look"}]}]}
    tool, attachments, user = messages_to_chat(body).body["messages"]
    assert tool == {"role": "tool", "tool_call_id": "toolu_1", "content": "two files\n[tool_reference: WebFetch]"}
    assert attachments["role"] == "user" and attachments["content"][1:] == [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        {"type": "file", "file": {"filename": "spec.pdf", "file_data": "data:application/pdf;base64,JVBE"}},
        {"type": "text", "text": "[document: https://d.example/a.pdf]"},
    ]
    assert user == {"role": "user", "content": "look"}
