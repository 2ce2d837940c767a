"""`rewrite_chat_request`: tools into the system prompt, tool history into the dialect's raw text."""

from __future__ import annotations

import copy
import json
import keyword
import typing
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionMessageParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.shared import ErrorObject
from pydantic import TypeAdapter

from toolcall_middleware import list_dialects, parse
from toolcall_middleware.core.apis.chat import rewrite_chat_request
from toolcall_middleware.core.request import NO_TOOLS, BadRequest

DIALECTS = [d for d in list_dialects() if d != "auto"]
INPUT = TypeAdapter(list[ChatCompletionMessageParam])
BY_ROLE: dict[str, Any] = {
    "system": ChatCompletionSystemMessageParam,
    "user": ChatCompletionUserMessageParam,
    "assistant": ChatCompletionAssistantMessageParam,
}
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def check_output(messages: list[dict[str, Any]]) -> None:
    """What the backend gets: system, user and assistant messages with text content only, each a
    valid OpenAI message with no field its role does not define."""
    for m in messages:
        cls = BY_ROLE[m["role"]]
        TypeAdapter(cls).validate_python(m)
        assert set(m) <= set(typing.get_type_hints(cls)), m
        assert isinstance(m["content"], str)
        assert "tool_calls" not in m and "function_call" not in m


def conversation() -> list[dict[str, Any]]:
    return [
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {
            "role": "assistant",
            "content": "Checking both.",
            "tool_calls": [
                {
                    "id": "call_p",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                },
                {
                    "id": "call_r",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_p", "content": "18C"},
        {"role": "tool", "tool_call_id": "call_r", "content": [{"type": "text", "text": "21C"}]},
        {"role": "assistant", "content": "Paris 18C, Rome 21C."},
        {"role": "user", "content": "Thanks"},
    ]


def test_hermes_rewrite_end_to_end() -> None:
    body = {
        "model": "qwen3",
        "messages": conversation(),
        "tools": [WEATHER, {"type": "custom", "custom": {"name": "x"}}],
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "temperature": 0.2,
    }
    INPUT.validate_python(body["messages"])
    before = copy.deepcopy(body)
    result = rewrite_chat_request(body, dialect="hermes")
    assert body == before  # the input is never mutated
    out = result.body
    assert set(out) == {"model", "messages", "temperature"}
    assert result.dropped_tool_types == ("custom",)
    assert result.calls_flattened == 2 and result.results_flattened == 2 and result.echoed_calls
    messages = out["messages"]
    check_output(messages)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert messages[0]["content"].startswith("Be brief.\n\n# Tools\n\nYou may call one or more functions")
    assert messages[0]["content"] == "Be brief.\n\n" + result.manifest
    assert messages[2]["content"] == (
        "Checking both.\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>'
    )
    assert messages[3]["content"] == "<tool_response>\n18C\n</tool_response>\n<tool_response>\n21C\n</tool_response>"
    assert messages[4:] == conversation()[5:]


def test_a_body_without_tools_or_tool_history_is_the_same_object() -> None:
    body = {"model": "m", "messages": [{"role": "developer", "content": "x"}, {"role": "user", "content": "hi"}]}
    for dialect in DIALECTS:
        result = rewrite_chat_request(body, dialect=dialect)
        assert result.body is body and not result.changed and result.manifest is None


def test_tool_history_alone_is_flattened_and_no_manifest_added() -> None:
    body = {"model": "m", "messages": conversation()[1:5]}
    result = rewrite_chat_request(body, dialect="glm47")
    assert result.changed and result.manifest is None
    messages = result.body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == (
        "Checking both.<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>"
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Rome</arg_value></tool_call>"
    )


def test_a_system_message_is_created_and_leading_ones_fold_into_it() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [WEATHER]}
    messages = rewrite_chat_request(body, dialect="hermes").body["messages"]
    assert messages[0]["role"] == "system" and messages[0]["content"].startswith("# Tools")
    body["messages"] = [
        {"role": "system", "content": [{"type": "text", "text": "A."}]},
        {"role": "developer", "content": "B."},
        {"role": "user", "content": "hi"},
        {"role": "developer", "content": "Later."},
    ]
    messages = rewrite_chat_request(body, dialect="hermes").body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "system"]
    assert messages[0]["content"].startswith("A.\n\nB.\n\n# Tools")
    assert messages[2] == {"role": "system", "content": "Later."}


def test_mistral_puts_its_tool_prompt_first() -> None:
    body = {
        "model": "m",
        "messages": [{"role": "system", "content": "Sys."}, {"role": "user", "content": "hi"}],
        "tools": [WEATHER],
    }
    system = rewrite_chat_request(body, dialect="mistral").body["messages"][0]["content"]
    assert system.startswith("You are a helpful assistant that can call tools.") and system.endswith("\n\nSys.")


def test_tool_choice_none_offers_nothing_and_says_so() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [WEATHER], "tool_choice": "none"}
    result = rewrite_chat_request(body, dialect="qwen3_coder")
    assert result.body["messages"][0] == {"role": "system", "content": NO_TOOLS}
    assert "get_weather" not in json.dumps(result.body)


def test_forward_tools_keeps_the_fields_and_inject_manifest_can_be_off() -> None:
    body = {
        "model": "m",
        "messages": conversation(),
        "tools": [WEATHER],
        "tool_choice": "required",
        "parallel_tool_calls": False,
    }
    kept = rewrite_chat_request(body, dialect="hermes", forward_tools=True).body
    assert kept["tools"] == [WEATHER] and kept["tool_choice"] == "required" and kept["parallel_tool_calls"] is False
    assert "# Tools" in kept["messages"][0]["content"]
    bare = rewrite_chat_request(body, dialect="hermes", inject_manifest=False)
    assert bare.manifest is None and bare.body["messages"][0] == {"role": "system", "content": "Be brief."}


def test_legacy_functions_and_function_messages() -> None:
    body = {
        "model": "m",
        "functions": [{"name": "get_weather", "parameters": {"type": "object", "properties": {}}}],
        "function_call": {"name": "get_weather"},
        "messages": [
            {"role": "user", "content": "Paris?"},
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            },
            {"role": "function", "name": "get_weather", "content": "18C"},
        ],
    }
    INPUT.validate_python(body["messages"])
    result = rewrite_chat_request(body, dialect="kimi_k2")
    assert result.tools.legacy and result.tools.choice.forced == "get_weather"
    assert set(result.body) == {"model", "messages"}
    messages = result.body["messages"]
    check_output(messages)
    assert "You must call the function `get_weather`" in messages[0]["content"]
    assert "Call at most one function in this response." in messages[0]["content"]
    assert messages[2]["content"] == (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
        '{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>'
    )
    assert messages[3] == {"role": "user", "content": "## Return of functions.get_weather:0\n18C"}


def test_kimi_ids_count_across_the_conversation_and_results_follow_them() -> None:
    def turn(ids: list[str]) -> list[dict[str, Any]]:
        calls = [{"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids]
        return [{"role": "assistant", "content": None, "tool_calls": calls}] + [
            {"role": "tool", "tool_call_id": i, "content": f"out {i}"} for i in reversed(ids)
        ]

    messages = [{"role": "user", "content": "go"}, *turn(["call_a", "call_b"]), *turn(["call_c"])]
    out = rewrite_chat_request({"model": "m", "messages": messages}, dialect="kimi_k2").body["messages"]
    assert [c.id for c in parse(out[1]["content"], "kimi_k2").tool_calls] == ["functions.f:0", "functions.f:1"]
    assert out[2]["content"] == "## Return of functions.f:1\nout call_b\n\n## Return of functions.f:0\nout call_a"
    assert [c.id for c in parse(out[3]["content"], "kimi_k2").tool_calls] == ["functions.f:2"]
    assert out[4]["content"] == "## Return of functions.f:2\nout call_c"


def test_gemma_results_are_named_by_their_call() -> None:
    messages = conversation()[1:5]
    out = rewrite_chat_request({"model": "m", "messages": messages}, dialect="gemma4").body["messages"]
    assert out[2]["content"] == (
        '<|tool_response>response:get_weather{value:<|"|>18C<|"|>}<tool_response|>'
        '<|tool_response>response:get_weather{value:<|"|>21C<|"|>}<tool_response|>'
    )


def test_a_custom_tool_call_stays_as_a_note() -> None:
    messages = [
        {"role": "user", "content": "patch it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_c", "type": "custom", "custom": {"name": "apply_patch", "input": "*** Begin Patch"}},
            ],
        },
        {"role": "tool", "tool_call_id": "call_c", "content": "Done"},
    ]
    INPUT.validate_python(messages)
    out = rewrite_chat_request({"model": "m", "messages": messages}, dialect="hermes").body["messages"]
    assert out[1]["content"] == "[custom_tool_call call_id=call_c name=apply_patch input=*** Begin Patch]"
    assert out[2]["content"] == "<tool_response>\nDone\n</tool_response>"


BAD: list[tuple[Any, str | None]] = [
    ([], None),
    ({"model": "m"}, "messages"),
    ({"messages": {"role": "user"}}, "messages"),
    ({"messages": ["hi"]}, "messages[0]"),
    ({"messages": [{"content": "hi"}]}, "messages[0].role"),
    (
        {"messages": [{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "f"}}]}]},
        "messages[0].tool_calls[0].id",
    ),
    (
        {
            "messages": [
                {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"arguments": "{}"}}]}
            ]
        },
        "messages[0].tool_calls[0].function.name",
    ),
    (
        {
            "messages": [
                {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{oops"}}]}
            ]
        },
        "messages[0].tool_calls[0].function.arguments",
    ),
    ({"messages": [{"role": "assistant", "tool_calls": "f"}]}, "messages[0].tool_calls"),
    ({"messages": [{"role": "tool", "content": "x"}]}, "messages[0].tool_call_id"),
    ({"messages": [{"role": "function", "content": "x"}]}, "messages[0].name"),
    ({"messages": [{"role": "tool", "tool_call_id": "c", "content": 5}]}, "messages[0].content"),
    ({"messages": [], "tools": [{"type": "function", "function": {}}]}, "tools[0].function.name"),
    (
        {"messages": [], "tools": [WEATHER], "tool_choice": {"type": "function", "function": {"name": "nope"}}},
        "tool_choice",
    ),
]


@pytest.mark.parametrize(("body", "param"), BAD)
def test_malformed_bodies_are_bad_requests_naming_the_field(body: Any, param: str | None) -> None:
    with pytest.raises(BadRequest) as err:
        rewrite_chat_request(body, dialect="hermes")
    assert err.value.param == param
    error = ErrorObject.model_validate(err.value.body()["error"])
    assert error.type == "invalid_request_error" and error.param == param
    if param is not None:
        assert param in error.message


# -- property: any conversation, any dialect --------------------------------------------------------

NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
ARGS = st.dictionaries(
    st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True),
    st.one_of(
        st.integers(),
        st.booleans(),
        st.text(alphabet=st.characters(codec="utf-8", categories=["L", "N", "Zs"]), max_size=12),
    ),
    max_size=3,
)
TEXTS = st.text(
    alphabet=st.characters(codec="utf-8", categories=["L", "N", "Zs"], include_characters=".,!?"), max_size=30
)


@st.composite
def conversations(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[list[tuple[str, dict[str, Any]]]], list[str]]:
    """Messages with tool-call turns, the calls of each turn, and every tool output."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": draw(TEXTS) or "hi"}]
    turns: list[list[tuple[str, dict[str, Any]]]] = []
    outputs: list[str] = []
    for t in range(draw(st.integers(1, 3))):
        calls = [(f"{draw(NAMES)}_{t}_{k}", draw(ARGS)) for k in range(draw(st.integers(1, 3)))]
        ids = [f"call_{t}_{k}_{draw(st.from_regex(r'[A-Za-z0-9]{12}', fullmatch=True))}" for k in range(len(calls))]
        turns.append(calls)
        messages.append(
            {
                "role": "assistant",
                "content": draw(st.none() | TEXTS),
                "tool_calls": [
                    {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                    for i, (n, a) in zip(ids, calls, strict=True)
                ],
            }
        )
        for i in draw(st.permutations(ids)):
            output = f"output of {i}: {draw(TEXTS)}"
            outputs.append(output)
            messages.append({"role": "tool", "tool_call_id": i, "content": output})
        if draw(st.booleans()):
            messages.append({"role": "assistant", "content": draw(TEXTS) or "ok"})
            messages.append({"role": "user", "content": draw(TEXTS) or "more"})
    return messages, turns, outputs


def json_type(value: Any) -> str:
    return {bool: "boolean", int: "integer", str: "string"}[type(value)]


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(DIALECTS), conversations(), st.booleans())
def test_any_conversation_flattens_to_plain_messages_that_parse_back(
    dialect: str,
    convo: tuple[list[dict[str, Any]], list[list[tuple[str, dict[str, Any]]]], list[str]],
    with_tools: bool,
) -> None:
    messages, turns, outputs = convo
    # A Python keyword cannot be a pythonic call's argument name (`f(in=0)` is not Python): that
    # format cannot carry it at all (tests/core/test_request_render.py shows it breaking).
    assume(dialect != "pythonic" or not any(keyword.iskeyword(k) for turn in turns for _, a in turn for k in a))
    INPUT.validate_python(messages)
    tools = [
        {
            "type": "function",
            "function": {
                "name": n,
                "parameters": {"type": "object", "properties": {k: {"type": json_type(v)} for k, v in a.items()}},
            },
        }
        for turn in turns
        for n, a in turn
    ]
    body: dict[str, Any] = {"model": "m", "messages": messages}
    if with_tools:
        body["tools"] = tools
    before = copy.deepcopy(body)
    result = rewrite_chat_request(body, dialect=dialect)
    assert body == before
    out = result.body["messages"]
    check_output(out)
    assert result.calls_flattened == sum(len(t) for t in turns)
    assert result.results_flattened == len(outputs)
    # Every call-bearing assistant turn parses back to its calls, in order.
    assistants = [
        (m, o)
        for m, o in zip(
            [m for m in out if m["role"] == "assistant"],
            [o for o in messages if o["role"] == "assistant"],
            strict=True,
        )
    ]
    flattened = [m for m, original in assistants if original.get("tool_calls")]
    assert len(flattened) == len(turns)
    for message, calls in zip(flattened, turns, strict=True):
        parsed = parse(message["content"], dialect, tools=tools)
        assert [(c.name, json.loads(c.arguments)) for c in parsed.tool_calls] == calls
    # Consecutive results are one user message, and no output is lost.
    text = "\n".join(m["content"] for m in out if m["role"] == "user")
    assert all(o in text for o in outputs)
    assert len(out) == len(messages) - len(outputs) + len(turns) + (1 if with_tools else 0)
    assert (result.manifest is not None) is with_tools
    # What comes out holds no tools and no tool history: rewriting it again changes nothing.
    assert rewrite_chat_request(result.body, dialect=dialect).body is result.body


def test_empty_tool_calls_are_dropped_with_the_tools() -> None:
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello.", "tool_calls": []}]
    out = rewrite_chat_request({"model": "m", "messages": messages, "tools": [WEATHER]}, dialect="hermes")
    assert out.body["messages"][2] == {"role": "assistant", "content": "Hello."}
