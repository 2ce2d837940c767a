"""`rewrite_messages_request`: an Anthropic Messages body for a raw `/v1/messages` host, in every
dialect: the manifest in `system`, `tool_use` / `tool_result` history as the dialect's raw text
(parsed back to the same calls), the same tool rules as the policy reads, field errors."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from anthropic.types import MessageParam
from anthropic.types.shared import ErrorResponse
from pydantic import TypeAdapter

from toolcall_middleware import list_dialects, parse
from toolcall_middleware.core.apis.chat import rewrite_chat_request
from toolcall_middleware.core.apis.messages._emitter import error_object
from toolcall_middleware.core.apis.messages._rewrite import rewrite_messages_request
from toolcall_middleware.core.request import NO_TOOLS, BadRequest
from toolcall_middleware.core.request._bridge_messages import messages_to_chat
from toolcall_middleware.core.request._render import render_reasoning
from toolcall_middleware.core.request._rewrite import Flattener

DIALECTS = [d for d in list_dialects() if d != "auto"]
MESSAGES = TypeAdapter(list[MessageParam])
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOLS: list[Any] = [
    {"name": "get_weather", "description": "Get the weather", "input_schema": SCHEMA},
    {"type": "web_search_20250305", "name": "web_search", "max_uses": 2},
]
OPENAI_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}]


def tool_turn(**extra: Any) -> dict[str, Any]:
    return {
        "model": "m",
        "max_tokens": 128,
        "system": "You are terse.",
        "messages": [
            {"role": "user", "content": "Weather in Paris and Oslo?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "two calls", "signature": ""},
                    {"type": "text", "text": "Checking both."},
                    {"type": "tool_use", "id": "toolu_A", "name": "get_weather", "input": {"city": "Paris"}},
                    {"type": "tool_use", "id": "toolu_B", "name": "get_weather", "input": {"city": "Oslo"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_A", "content": "Sunny, 21C"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_B",
                        "content": [{"type": "text", "text": "station offline"}],
                        "is_error": True,
                    },
                    {"type": "text", "text": "Which is warmer?"},
                ],
            },
        ],
        "tools": TOOLS,
        "tool_choice": {"type": "auto"},
        **extra,
    }


@pytest.mark.parametrize("dialect", DIALECTS)
def test_history_becomes_the_dialects_text(dialect: str) -> None:
    body = tool_turn()
    before = copy.deepcopy(body)
    result = rewrite_messages_request(body, dialect=dialect)
    assert body == before  # the input is never modified
    out = result.body
    assert "tools" not in out and "tool_choice" not in out and out["max_tokens"] == 128
    MESSAGES.validate_python(out["messages"])  # still a body the Messages API accepts
    user, assistant, results = out["messages"]
    assert user == body["messages"][0]
    assert isinstance(assistant["content"], str) and "Checking both." in assistant["content"]
    assert "two calls" not in assistant["content"]  # thinking is dropped
    parsed = parse(assistant["content"], dialect, tools=OPENAI_TOOLS)
    assert [(c.name, json.loads(c.arguments)) for c in parsed.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Oslo"}),
    ]
    blocks = results["content"]
    assert [b["type"] for b in blocks] == ["text", "text"] and blocks[1]["text"] == "Which is warmer?"
    assert "Sunny, 21C" in blocks[0]["text"] and "[error] station offline" in blocks[0]["text"]
    assert result.manifest is not None and result.manifest in out["system"] and "You are terse." in out["system"]
    assert "web_search" not in result.manifest
    assert result.calls_flattened == 2 and result.results_flattened == 2
    assert result.dropped_items == ("thinking",) and result.tools.dropped == ("web_search_20250305",)


@pytest.mark.parametrize("dialect", ["hermes", "kimi_k2", "qwen3_coder", "deepseek_v31", "gpt_oss", "mistral"])
def test_same_manifest_and_history_as_the_chat_rewrite(dialect: str) -> None:
    """The Anthropic request, rewritten, says what its Chat translation rewritten says: same tool
    rules (the policy reads the Chat view), same calls and results text."""
    body = tool_turn(tool_choice={"type": "any", "disable_parallel_tool_use": True})
    ours = rewrite_messages_request(body, dialect=dialect)
    chat = rewrite_chat_request(messages_to_chat(body).body, dialect=dialect)
    assert ours.manifest == chat.manifest
    assert ours.tools.choice == chat.tools.choice and ours.tools.parallel is False
    chat_texts = [m["content"] for m in chat.body["messages"] if m["role"] != "system"]
    assert ours.body["messages"][1]["content"] == chat_texts[1]
    assert ours.body["messages"][2]["content"][0]["text"] in chat_texts[2]


@pytest.mark.parametrize(
    ("choice", "mode", "forced"),
    [
        ({"type": "auto"}, "auto", None),
        ({"type": "any"}, "required", None),
        ({"type": "tool", "name": "get_weather"}, "required", "get_weather"),
        ({"type": "none"}, "none", None),
    ],
)
def test_tool_choice(choice: dict[str, Any], mode: str, forced: str | None) -> None:
    result = rewrite_messages_request(tool_turn(tool_choice=choice), dialect="hermes")
    assert result.tools.choice.mode == mode and result.tools.choice.forced == forced
    if mode == "none":
        assert result.manifest == NO_TOOLS
    if forced:
        assert result.manifest is not None and "get_weather" in result.manifest.split("\n\n")[-1]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_system_blocks_get_a_manifest_block(dialect: str) -> None:
    system = [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]
    result = rewrite_messages_request(tool_turn(system=system), dialect=dialect)
    block = {"type": "text", "text": result.manifest}
    first = Flattener(dialect).prepend_manifest  # the dialects whose templates put the tools first
    assert result.body["system"] == ([block, *system] if first else [*system, block])


def test_no_system_gets_one() -> None:
    body = tool_turn()
    del body["system"]
    result = rewrite_messages_request(body, dialect="hermes")
    assert result.body["system"] == result.manifest


def test_forward_tools_keeps_the_client_tools_only() -> None:
    result = rewrite_messages_request(tool_turn(), dialect="hermes", forward_tools=True)
    assert result.body["tools"] == [TOOLS[0]] and result.body["tool_choice"] == {"type": "auto"}
    naming_server = tool_turn(tool_choice={"type": "tool", "name": "get_weather"}, tools=[TOOLS[1], TOOLS[0]])
    assert rewrite_messages_request(naming_server, dialect="hermes", forward_tools=True).body["tools"] == [TOOLS[0]]
    only_server = {**tool_turn(tools=[TOOLS[1]]), "tool_choice": {"type": "tool", "name": "web_search"}}
    forwarded = rewrite_messages_request(only_server, dialect="hermes", forward_tools=True).body
    assert "tools" not in forwarded and "tool_choice" not in forwarded  # it forced a tool that went


def test_plain_body_is_untouched() -> None:
    body = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}
    result = rewrite_messages_request(body, dialect="hermes")
    assert result.body is body and not result.changed and result.manifest is None


def test_history_without_tools_is_still_flattened() -> None:
    body = tool_turn()
    del body["tools"], body["tool_choice"]
    result = rewrite_messages_request(body, dialect="hermes")
    assert result.changed and result.manifest is None and "system" in result.body
    assert "<tool_call>" in result.body["messages"][1]["content"]


def test_ids_match_between_calls_and_results() -> None:
    result = rewrite_messages_request(tool_turn(), dialect="kimi_k2")
    assistant = result.body["messages"][1]["content"]
    results = result.body["messages"][2]["content"][0]["text"]
    assert "functions.get_weather:0" in assistant and "functions.get_weather:1" in assistant
    assert "get_weather" in results and "toolu_A" not in assistant


@pytest.mark.parametrize(
    ("mutate", "param"),
    [
        (lambda b: b.pop("messages"), "messages"),
        (lambda b: b.update(messages="hi"), "messages"),
        (lambda b: b["messages"].append({"role": "tool", "content": "x"}), "messages.3.role"),
        (lambda b: b["messages"][0].update(content=3), "messages.0.content"),
        (lambda b: b["messages"][1]["content"][2].pop("id"), "messages.1.content.2.id"),
        (lambda b: b["messages"][1]["content"][3].update(input="{}"), "messages.1.content.3.input"),
        (lambda b: b["messages"][2]["content"][0].pop("tool_use_id"), "messages.2.content.0.tool_use_id"),
        (lambda b: b.update(system=5), "system"),
        (lambda b: b.update(tool_choice={"type": "tool"}), "tool_choice.name"),
        (lambda b: b.update(tool_choice={"type": "tool", "name": "nope"}), "tool_choice"),
    ],
)
def test_malformed_bodies_name_the_field(mutate: Any, param: str) -> None:
    body = tool_turn()
    mutate(body)
    with pytest.raises(BadRequest) as info:
        rewrite_messages_request(body, dialect="hermes")
    assert info.value.param == param
    wire = error_object(info.value.message, "invalid_request_error")
    assert ErrorResponse.model_validate(wire).error.type == "invalid_request_error"


def test_not_an_object() -> None:
    with pytest.raises(BadRequest):
        rewrite_messages_request([], dialect="hermes")


def running_loop() -> dict[str, Any]:
    """A tool loop still running: the user asked, the model thought and called, the result came."""
    body = tool_turn()
    body["messages"][2]["content"] = body["messages"][2]["content"][:2]  # only the results
    return body


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_running_loops_thinking_is_replayed_in_the_dialects_own_form(dialect: str) -> None:
    """The replayed reasoning reads back, with the dialect's own parser, as that turn's reasoning
    and the same calls: it is written as the model writes it."""
    result = rewrite_messages_request(running_loop(), dialect=dialect)
    assistant = result.body["messages"][1]["content"]
    parsed = parse(assistant, dialect, tools=OPENAI_TOOLS)
    has_syntax = render_reasoning(dialect, "x") != ""  # (a few dialects write no reasoning)
    assert parsed.reasoning == ("two calls" if has_syntax else None)
    assert [json.loads(c.arguments) for c in parsed.tool_calls] == [{"city": "Paris"}, {"city": "Oslo"}]


def test_system_turns_fold_into_system_keeping_blocks_and_marks() -> None:
    body = running_loop()
    body["system"] = [{"type": "text", "text": "Base.", "cache_control": {"type": "ephemeral"}}]
    body["messages"].insert(1, {"role": "system", "content": "Env: linux."})
    body["messages"].append({"role": "system", "content": [{"type": "text", "text": "Late."}]})
    out = rewrite_messages_request(body, dialect="hermes").body
    assert [m["role"] for m in out["messages"]] == ["user", "assistant", "user"]
    system = out["system"]
    assert system[:3] == [
        {"type": "text", "text": "Base.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Env: linux."},
        {"type": "text", "text": "Late."},
    ]
    assert "<tools>" in system[3]["text"]


def test_a_system_turn_alone_is_folded_without_tools() -> None:
    body = {
        "model": "m",
        "max_tokens": 9,
        "system": "Base.",
        "messages": [{"role": "user", "content": "hi"}, {"role": "system", "content": "Env."}],
    }
    result = rewrite_messages_request(body, dialect="hermes")
    assert result.changed and result.manifest is None
    assert result.body["system"] == "Base.\n\nEnv." and result.body["messages"] == [{"role": "user", "content": "hi"}]


def test_earlier_turns_thinking_and_redacted_thinking_are_dropped() -> None:
    body = tool_turn()  # the results turn also asks a new question: the loop that called is over
    body["messages"][1]["content"].insert(0, {"type": "redacted_thinking", "data": "xyz"})
    out = rewrite_messages_request(body, dialect="hermes")
    assert "two calls" not in json.dumps(out.body) and "xyz" not in json.dumps(out.body)
    assert out.dropped_items == ("redacted_thinking", "thinking")
