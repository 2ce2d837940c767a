"""`responses_to_chat`: Responses requests (as Codex and the Agents SDK send them) become the Chat
Completions requests a chat-only host takes; the result is then a valid input of the chat rewrite."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolcall_middleware.core.apis.chat import rewrite_chat_request
from toolcall_middleware.core.request import BadRequest
from toolcall_middleware.core.request._bridge import responses_to_chat

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "Weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "strict": True,
}

CODEX_TOOLS: list[Any] = [
    WEATHER,
    {"type": "web_search"},
    {"type": "local_shell"},
    {"type": "custom", "name": "apply_patch", "format": {"type": "grammar", "syntax": "lark", "definition": "x"}},
]


def test_instructions_input_string_and_sampling_fields() -> None:
    body = {
        "model": "m",
        "instructions": "Be brief.",
        "input": "hi",
        "max_output_tokens": 50,
        "temperature": 0.2,
        "top_p": 0.9,
        "stream": True,
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "reasoning": {"effort": "low"},
        "metadata": {"a": "b"},
    }
    out = responses_to_chat(body).body
    assert out == {
        "model": "m",
        "temperature": 0.2,
        "top_p": 0.9,
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
        "max_tokens": 50,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def test_tool_turn_history_becomes_chat_tool_calls_and_tool_messages() -> None:
    body = {
        "model": "m",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris and Oslo?"}]},
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "xyz"},
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "Checking.", "annotations": []}],
            },
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_a",
                "name": "get_weather",
                "arguments": '{"city":"Paris"}',
            },
            {"type": "function_call", "call_id": "call_b", "name": "get_weather", "arguments": '{"city":"Oslo"}'},
            {"type": "function_call_output", "call_id": "call_a", "output": "Sunny"},
            {"type": "function_call_output", "call_id": "call_b", "output": [{"type": "input_text", "text": "Rain"}]},
        ],
        "tools": [WEATHER],
        "tool_choice": {"type": "function", "name": "get_weather"},
        "parallel_tool_calls": True,
    }
    bridged = responses_to_chat(body)
    assert bridged.dropped_items == ("reasoning",)
    out = bridged.body
    assert out["messages"] == [
        {"role": "user", "content": "Weather in Paris and Oslo?"},
        {
            "role": "assistant",
            "content": "Checking.",
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
        {"role": "tool", "tool_call_id": "call_b", "content": "Rain"},
    ]
    assert out["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather",
                "parameters": WEATHER["parameters"],
                "strict": True,
            },
        }
    ]
    assert out["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert out["parallel_tool_calls"] is True
    # What the chat rewrite then makes of it for a raw-text host: the calls and results as hermes text.
    flat = rewrite_chat_request(out, dialect="hermes").body
    text = json.dumps(flat["messages"])
    assert "<tool_call>" in text and "<tool_response>" in text and "Rain" in text
    assert "tools" not in flat and "get_weather" in flat["messages"][0]["content"]


def test_codex_tools_other_than_function_are_dropped_and_reported() -> None:
    body = {
        "model": "gpt-5-codex",
        "input": [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Rules."}]}],
        "tools": CODEX_TOOLS,
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "store": False,
    }
    bridged = responses_to_chat(body)
    assert bridged.dropped_tools == ("web_search", "local_shell", "custom")
    assert [t["function"]["name"] for t in bridged.body["tools"]] == ["get_weather"]
    assert bridged.body["tool_choice"] == "auto" and bridged.body["parallel_tool_calls"] is False
    assert bridged.body["messages"] == [{"role": "developer", "content": "Rules."}]


def test_only_hosted_tools_leave_no_tool_fields() -> None:
    body = {"model": "m", "input": "hi", "tools": [{"type": "web_search"}], "tool_choice": {"type": "web_search"}}
    bridged = responses_to_chat(body)
    assert bridged.dropped_tools == ("web_search",)
    assert not {"tools", "tool_choice", "parallel_tool_calls"} & set(bridged.body)


def test_hosted_and_custom_calls_keep_their_history() -> None:
    body = {
        "model": "m",
        "input": [
            {"role": "user", "content": "patch it"},
            {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": "*** Begin Patch"},
            {"type": "custom_tool_call_output", "call_id": "c1", "output": "done"},
            {
                "type": "local_shell_call",
                "id": "ls_1",
                "call_id": "c2",
                "status": "completed",
                "action": {"command": ["ls"]},
            },
            {"type": "local_shell_call_output", "id": "c2", "output": "a.txt"},
        ],
    }
    messages = responses_to_chat(body).body["messages"]
    assert messages[1]["tool_calls"] == [
        {"id": "c1", "type": "custom", "custom": {"name": "apply_patch", "input": "*** Begin Patch"}}
    ]
    assert messages[2] == {"role": "tool", "tool_call_id": "c1", "content": "done"}
    assert messages[3]["role"] == "assistant" and "local_shell_call" in messages[3]["content"]
    assert messages[4]["role"] == "user" and "a.txt" in messages[4]["content"]
    # The chat rewrite accepts it all (the custom call becomes a note, its output a tool result).
    flat = rewrite_chat_request(responses_to_chat(body).body, dialect="hermes").body
    assert "apply_patch" in json.dumps(flat)


def test_images_and_files_become_chat_parts() -> None:
    body = {
        "input": [
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "what is this"},
                    {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "low"},
                    {"type": "input_file", "file_id": "file_1", "filename": "a.pdf"},
                ],
            }
        ]
    }
    content = responses_to_chat(body).body["messages"][0]["content"]
    assert content == [
        {"type": "text", "text": "what is this"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA", "detail": "low"}},
        {"type": "file", "file": {"file_id": "file_1", "filename": "a.pdf"}},
    ]


def test_structured_output_and_allowed_tools() -> None:
    body = {
        "input": "x",
        "tools": [WEATHER],
        "tool_choice": {
            "type": "allowed_tools",
            "mode": "required",
            "tools": [{"type": "function", "name": "get_weather"}],
        },
        "text": {"format": {"type": "json_schema", "name": "out", "schema": {"type": "object"}, "strict": True}},
    }
    out = responses_to_chat(body).body
    assert out["tool_choice"] == {
        "type": "allowed_tools",
        "allowed_tools": {"mode": "required", "tools": [{"type": "function", "function": {"name": "get_weather"}}]},
    }
    assert out["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "out", "schema": {"type": "object"}, "strict": True},
    }


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"input": "x", "previous_response_id": "resp_1"}, "previous_response_id"),
        ({"input": "x", "conversation": "conv_1"}, "conversation"),
        ({"input": [{"type": "item_reference", "id": "msg_1"}]}, "input[0]"),
        ({"input": "x", "background": True}, "background"),
        ({"input": 3}, "input"),
        ({"input": [{"type": "function_call", "name": "f", "arguments": "{}"}]}, "input[0].call_id"),
        ({"input": [{"type": "function_call_output", "output": "x"}]}, "input[0].call_id"),
        ({"input": ["x"]}, "input[0]"),
        ({"input": "x", "tools": {"a": 1}}, "tools"),
        ({"input": "x", "instructions": 5}, "instructions"),
    ],
)
def test_what_the_bridge_cannot_carry_is_a_clear_400(body: dict[str, Any], param: str) -> None:
    with pytest.raises(BadRequest) as info:
        responses_to_chat(body)
    assert info.value.param == param
    assert param.split("[")[0] in info.value.message


def test_previous_response_id_error_says_why() -> None:
    with pytest.raises(BadRequest) as info:
        responses_to_chat({"input": "x", "previous_response_id": "resp_1"})
    assert "keeps no conversation state" in info.value.message
    assert info.value.body()["error"]["type"] == "invalid_request_error"


CALL_ID = st.text("abcdefghij0123456789", min_size=1, max_size=8)


@given(st.lists(st.tuples(CALL_ID, st.booleans(), st.text(max_size=20)), max_size=8))
def test_every_call_and_result_keeps_its_id_and_order(history: list[tuple[str, bool, str]]) -> None:
    """Property: function_call / function_call_output items, in any order, come out as tool calls
    and tool messages carrying the same ids in the same order, and nothing else is invented."""
    items: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for call_id, is_call, text in history:
        if is_call:
            items.append({"type": "function_call", "call_id": call_id, "name": "get_weather", "arguments": "{}"})
        else:
            items.append({"type": "function_call_output", "call_id": call_id, "output": text})
    messages = responses_to_chat({"input": items}).body["messages"]
    seen: list[tuple[str, bool, str]] = []
    for message in messages[1:]:
        if message["role"] == "assistant":
            assert message["tool_calls"], message
            seen.extend((c["id"], True, "") for c in message["tool_calls"])
        else:
            assert message["role"] == "tool"
            seen.append((message["tool_call_id"], False, message["content"]))
    assert seen == [(c, is_call, "" if is_call else t) for c, is_call, t in history]
