"""An AG-UI run's input: checked as the protocol's own types (`ag_ui.core.RunAgentInput`) check
it, with the field at fault named, and translated into the Chat request a raw-output host gets."""

from __future__ import annotations

import copy
from typing import Any

import pydantic
import pytest
from ag_ui.core import RunAgentInput

from toolcall_middleware.core.apis.agui._request import CONTEXT_HEADING, STATE_HEADING, check_run_input, run_to_chat
from toolcall_middleware.core.request._errors import BadRequest

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
RUN: dict[str, Any] = {
    "threadId": "t",
    "runId": "r",
    "state": {},
    "messages": [
        {"id": "s", "role": "system", "content": "Be brief."},
        {"id": "u", "role": "user", "content": "Weather in Paris?"},
        {
            "id": "a",
            "role": "assistant",
            "content": "Checking.",
            "toolCalls": [
                {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
            ],
        },
        {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "Sunny"},
    ],
    "tools": [{"name": "get_weather", "description": "The weather", "parameters": SCHEMA}],
    "context": [],
    "forwardedProps": {},
}


def with_(path: list[Any], value: Any) -> dict[str, Any]:
    """RUN with the value at `path` replaced (`...`: removed)."""
    body = copy.deepcopy(RUN)
    target: Any = body
    for key in path[:-1]:
        target = target[key]
    if value is ...:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return body


BAD = [
    (["threadId"], ..., "threadId"),
    (["threadId"], 3, "threadId"),
    (["runId"], None, "runId"),
    (["messages"], ..., "messages"),
    (["messages"], {}, "messages"),
    (["tools"], {}, "tools"),
    (["context"], "x", "context"),
    (["parentRunId"], 7, "parentRunId"),
    (["messages", 1, "role"], "robot", "messages[1].role"),
    (["messages", 1, "id"], ..., "messages[1].id"),
    (["messages", 0, "content"], ..., "messages[0].content"),
    (["messages", 1, "content"], [{"type": "text"}], "messages[1].content[0].text"),
    (["messages", 2, "toolCalls", 0, "function", "name"], ..., "messages[2].toolCalls[0].function.name"),
    (
        ["messages", 2, "toolCalls", 0, "function", "arguments"],
        {"city": "Paris"},
        "messages[2].toolCalls[0].function.arguments",
    ),
    (["messages", 3, "toolCallId"], ..., "messages[3].toolCallId"),
    (["tools", 0, "description"], ..., "tools[0].description"),
    (["context"], [{"description": "d"}], "context[0].value"),
]


def test_a_valid_run_passes_both_checks() -> None:
    RunAgentInput.model_validate(RUN)
    check_run_input(RUN)


@pytest.mark.parametrize(("path", "value", "param"), BAD)
def test_a_run_the_protocol_refuses_is_refused_naming_the_field(path: list[Any], value: Any, param: str) -> None:
    body = with_(path, value)
    with pytest.raises(pydantic.ValidationError):
        RunAgentInput.model_validate(body)
    with pytest.raises(BadRequest) as refused:
        check_run_input(body)
    assert refused.value.param == param
    assert param in refused.value.message


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (["parentRunId"], "r0"),
        (["state"], ...),
        (["state"], None),
        (["messages", 2, "content"], None),
        (["messages", 3, "error"], "timed out"),
        (["messages", 1, "content"], [{"type": "text", "text": "hi"}]),
        (["tools", 0, "parameters"], ...),
        (["forwardedProps"], None),
        (["forwardedProps"], ...),
        (["tools"], ...),
        (["context"], ...),
    ],
)
def test_what_the_protocol_accepts_is_accepted(path: list[Any], value: Any) -> None:
    body = with_(path, value)
    RunAgentInput.model_validate(body)
    check_run_input(body)


def test_a_run_becomes_a_streamed_chat_request() -> None:
    chat = run_to_chat(RUN).body
    assert chat == {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": "Checking.",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "Sunny"},
        ],
        "stream": True,
        "tools": [
            {
                "type": "function",
                "function": {"name": "get_weather", "description": "The weather", "parameters": SCHEMA},
            }
        ],
    }


def test_context_and_state_are_told_to_the_model_in_the_system_message() -> None:
    body = {**RUN, "context": [{"description": "The user's name", "value": "Ada"}], "state": {"unit": "C"}}
    system = run_to_chat(body).body["messages"][0]
    assert system == {
        "role": "system",
        "content": f"Be brief.\n\n{CONTEXT_HEADING}\n- The user's name: Ada\n{STATE_HEADING}\n" + '{"unit": "C"}',
    }
    no_system = {**body, "messages": RUN["messages"][1:]}
    first = run_to_chat(no_system).body["messages"][0]
    assert first["role"] == "system" and first["content"].startswith(CONTEXT_HEADING)


def test_forwarded_props_carry_the_request_fields() -> None:
    props = {"toolChoice": "required", "parallel_tool_calls": False, "model": "qwen3", "maxTokens": 64, "other": 1}
    chat = run_to_chat({**RUN, "forwardedProps": props}).body
    assert chat["tool_choice"] == "required" and chat["parallel_tool_calls"] is False
    assert chat["model"] == "qwen3" and chat["max_tokens"] == 64 and "other" not in chat


def test_the_frontends_own_messages_are_left_out() -> None:
    messages = [
        *RUN["messages"],
        {"id": "r", "role": "reasoning", "content": "thinking"},
        {"id": "x", "role": "activity", "activityType": "progress", "content": {"done": 1}},
        {
            "id": "u2",
            "role": "user",
            "content": [
                {"type": "text", "text": "And"},
                {"type": "audio", "source": {"type": "url", "value": "http://a"}},
            ],
        },
    ]
    bridged = run_to_chat({**RUN, "messages": messages})
    assert bridged.dropped_items == ("reasoning", "activity")
    assert bridged.body["messages"][-1] == {
        "role": "user",
        "content": [{"type": "text", "text": "And"}, {"type": "text", "text": "[audio]"}],
    }


def test_a_tool_error_is_the_results_text() -> None:
    body = with_(["messages", 3, "error"], "timed out")
    assert run_to_chat(body).body["messages"][3]["content"] == "timed out"
