"""`rewrite_responses_request`: what Codex and the Agents SDK send, made plain for a raw-text model."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types.responses import ResponseInputItemParam, ResponseInputParam
from openai.types.responses.easy_input_message_param import EasyInputMessageParam
from openai.types.shared import ErrorObject
from pydantic import TypeAdapter

from toolcall_middleware import list_dialects, parse
from toolcall_middleware.core.apis.responses import rewrite_responses_request
from toolcall_middleware.core.request import BadRequest

DIALECTS = [d for d in list_dialects() if d != "auto"]
INPUT = TypeAdapter(ResponseInputParam)
EASY = TypeAdapter(EasyInputMessageParam)
ITEM = TypeAdapter(ResponseInputItemParam)
SHELL = {
    "type": "function",
    "name": "shell",
    "description": "Runs a shell command",
    "parameters": {"type": "object", "properties": {"command": {"type": "array", "items": {"type": "string"}}}},
    "strict": False,
}
# What Codex sends besides its function tools.
HOSTED = [
    {"type": "web_search"},
    {"type": "local_shell"},
    {"type": "custom", "name": "apply_patch", "description": "Patch files", "format": {"type": "text"}},
    {"type": "image_generation"},
    {"type": "file_search", "vector_store_ids": ["vs_1"]},
]


def codex_input() -> list[dict[str, Any]]:
    return [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Use the shell."}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "List files, twice."}]},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Need ls."}]},
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Listing.", "annotations": []}],
        },
        {"type": "function_call", "call_id": "call_1", "name": "shell", "arguments": '{"command": ["ls"]}'},
        {
            "type": "function_call",
            "id": "fc_2",
            "call_id": "call_2",
            "name": "shell",
            "arguments": '{"command": ["ls", "-a"]}',
            "status": "completed",
        },
        {"type": "function_call_output", "call_id": "call_2", "output": "a b .c"},
        {"type": "function_call_output", "call_id": "call_1", "output": "a b"},
        {"type": "message", "role": "user", "content": "Thanks"},
    ]


def check_items(items: list[Any]) -> None:
    for item in items:
        ITEM.validate_python(item)
        if (
            item.get("type", "message") == "message"
            and item["role"] in ("assistant", "user")
            and isinstance(item["content"], str)
        ):
            EASY.validate_python(item)
        assert item.get("type") not in ("function_call", "function_call_output", "reasoning")


def test_codex_conversation_on_qwen3_coder() -> None:
    body = {
        "model": "qwen3-coder",
        "instructions": "You are Codex.",
        "input": codex_input(),
        "tools": [SHELL, *HOSTED],
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "stream": True,
    }
    INPUT.validate_python(body["input"])
    before = copy.deepcopy(body)
    result = rewrite_responses_request(body, dialect="qwen3_coder")
    assert body == before
    out = result.body
    assert "tools" not in out and "tool_choice" not in out and "parallel_tool_calls" not in out
    assert out["stream"] is True and out["store"] is False
    assert result.dropped_tool_types == ("web_search", "local_shell", "custom", "image_generation", "file_search")
    assert result.dropped_items == ("reasoning",)
    assert result.echoed_calls and result.calls_flattened == 2 and result.results_flattened == 2
    assert out["instructions"].startswith("You are Codex.\n\n# Tools\n\nYou have access to the following functions:")
    assert "<name>shell</name>" in out["instructions"] and "apply_patch" not in out["instructions"]
    items = out["input"]
    check_items(items)
    assert items[0] == {**codex_input()[0], "role": "system"}
    assert items[1] == codex_input()[1]
    # The preamble and both calls are one assistant turn.
    assert items[2] == {
        "type": "message",
        "role": "assistant",
        "content": 'Listing.\n\n<tool_call>\n<function=shell>\n<parameter=command>\n["ls"]\n</parameter>\n'
        '</function>\n</tool_call>\n<tool_call>\n<function=shell>\n<parameter=command>\n["ls", "-a"]\n'
        "</parameter>\n</function>\n</tool_call>",
    }
    parsed = parse(items[2]["content"], "qwen3_coder", tools=[SHELL])
    assert [json.loads(c.arguments) for c in parsed.tool_calls] == [{"command": ["ls"]}, {"command": ["ls", "-a"]}]
    assert items[3] == {
        "type": "message",
        "role": "user",
        "content": "<tool_response>\na b .c\n</tool_response>\n<tool_response>\na b\n</tool_response>",
    }
    assert items[4] == codex_input()[-1]
    assert len(items) == 5


def test_outputs_are_matched_by_call_id_not_item_id() -> None:
    items = [
        {"type": "function_call", "id": "fc_x", "call_id": "call_x", "name": "get_time", "arguments": "{}"},
        {"type": "function_call_output", "id": "fco_x", "call_id": "call_x", "output": "noon"},
    ]
    body = {"model": "m", "input": items}
    out = rewrite_responses_request(body, dialect="gemma4").body["input"]
    assert out[1]["content"] == '<|tool_response>response:get_time{value:<|"|>noon<|"|>}<tool_response|>'
    out = rewrite_responses_request(body, dialect="kimi_k2").body["input"]
    assert out[0]["content"].count("functions.get_time:0") == 1
    assert out[1]["content"] == "## Return of functions.get_time:0\nnoon"
    out = rewrite_responses_request(body, dialect="llama3_json").body["input"]
    assert out[1]["content"] == "[function_call_output call_id=call_x name=get_time output=noon]"  # name: by call id


def test_string_input_is_kept_and_instructions_get_the_manifest() -> None:
    body = {"model": "m", "input": "What time is it?", "tools": [SHELL]}
    result = rewrite_responses_request(body, dialect="hermes")
    assert result.body["input"] == "What time is it?"
    assert result.body["instructions"] == result.manifest
    assert result.body["instructions"].startswith("# Tools\n\nYou may call one or more functions")


def test_a_body_without_tools_or_tool_history_is_the_same_object() -> None:
    for body in (
        {"model": "m", "input": "hi"},
        {"model": "m", "input": [{"role": "user", "content": "hi"}, {"type": "reasoning", "id": "r", "summary": []}]},
        {"model": "m", "previous_response_id": "resp_1"},
    ):
        for dialect in DIALECTS:
            result = rewrite_responses_request(body, dialect=dialect)
            assert result.body is body and not result.changed


def test_only_hosted_tools_leaves_no_manifest_but_removes_the_tools() -> None:
    body = {"model": "m", "input": "hi", "tools": HOSTED, "tool_choice": {"type": "web_search"}}
    result = rewrite_responses_request(body, dialect="hermes")
    assert result.body == {"model": "m", "input": "hi"}
    assert result.manifest is None and result.tools.ignored_choice == "web_search"


def test_assistant_messages_without_calls_stay_as_they_were() -> None:
    echoed = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Hello.", "annotations": []}],
    }
    body = {"model": "m", "input": [{"role": "user", "content": "hi"}, echoed], "tools": [SHELL]}
    assert rewrite_responses_request(body, dialect="hermes").body["input"][1] == echoed


def test_hosted_and_custom_calls_are_kept_as_notes() -> None:
    items = [
        {"type": "custom_tool_call", "call_id": "call_p", "name": "apply_patch", "input": "*** Begin Patch"},
        {"type": "custom_tool_call_output", "call_id": "call_p", "output": "Done"},
        {
            "type": "local_shell_call",
            "id": "lsh_1",
            "call_id": "call_s",
            "status": "completed",
            "action": {"type": "exec", "command": ["ls"], "env": {}},
        },
        {"type": "local_shell_call_output", "id": "call_s", "output": "a b"},
    ]
    INPUT.validate_python(items)
    out = rewrite_responses_request({"model": "m", "input": items}, dialect="hermes").body["input"]
    check_items(out)
    assert out[0]["content"] == (
        '[custom_tool_call {"call_id": "call_p", "name": "apply_patch", "input": "*** Begin Patch"}]'
    )
    assert out[1]["content"] == "<tool_response>\n[custom_tool_call_output] Done\n</tool_response>"
    assert out[2]["content"].startswith('[local_shell_call {"call_id": "call_s", "action": ')
    assert out[3]["content"] == "<tool_response>\n[local_shell_call_output] a b\n</tool_response>"


def test_outputs_with_parts_and_other_items() -> None:
    items = [
        {"type": "function_call", "call_id": "c1", "name": "look", "arguments": ""},
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": [
                {"type": "input_text", "text": "It shows a cat."},
                {"type": "input_image", "image_url": "https://x/cat.png", "detail": "auto"},
            ],
        },
        {"type": "item_reference", "id": "msg_0"},
    ]
    INPUT.validate_python(items)
    out = rewrite_responses_request({"model": "m", "input": items}, dialect="hermes").body["input"]
    assert out[0]["content"] == '<tool_call>\n{"name": "look", "arguments": {}}\n</tool_call>'
    assert out[1]["content"] == "<tool_response>\nIt shows a cat.\n[input_image: https://x/cat.png]\n</tool_response>"
    assert out[2] == {"type": "item_reference", "id": "msg_0"}


BAD: list[tuple[Any, str | None]] = [
    ("input", None),
    ({"input": 3}, "input"),
    ({"input": ["hi"]}, "input[0]"),
    ({"input": "x", "instructions": ["a"]}, "instructions"),
    ({"input": [{"type": "function_call", "call_id": "c", "arguments": "{}"}]}, "input[0].name"),
    ({"input": [{"type": "function_call", "name": "f", "arguments": "{}"}]}, "input[0].call_id"),
    ({"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "[]"}]}, "input[0].arguments"),
    ({"input": [{"type": "function_call_output", "output": "x"}]}, "input[0].call_id"),
    ({"input": "x", "tools": [{"type": "function", "description": "no name"}]}, "tools[0].name"),
    ({"input": "x", "tools": [SHELL], "tool_choice": {"type": "function", "name": "rm"}}, "tool_choice"),
]


@pytest.mark.parametrize(("body", "param"), BAD)
def test_malformed_bodies_are_bad_requests_naming_the_field(body: Any, param: str | None) -> None:
    with pytest.raises(BadRequest) as err:
        rewrite_responses_request(body, dialect="hermes")
    assert err.value.param == param
    error = ErrorObject.model_validate(err.value.body()["error"])
    assert error.type == "invalid_request_error" and error.param == param


# -- property: any echoed history, any dialect ------------------------------------------------------

ARGS = st.dictionaries(
    st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True),
    st.one_of(st.integers(), st.text(alphabet=st.characters(codec="utf-8", categories=["L", "N", "Zs"]), max_size=10)),
    max_size=3,
)
TEXTS = st.text(
    alphabet=st.characters(codec="utf-8", categories=["L", "N", "Zs"], include_characters=".,!?"), max_size=20
)


# Formats that write a string parameter bare, as its text: a value that reads `null` (any case) is
# a null there, as the engines read it (docs/dialects.md), so a string `null` comes back as one.
PARAMETER_FORMATS = {
    *("glm45", "glm47", "hunyuan_v3", "minicpm5", "minimax_m2", "minimax_m3", "poolside_v1", "seed_oss", "step3"),
}


def as_written(dialect: str, args: dict[str, Any]) -> dict[str, Any]:
    """The arguments a call carries once written in `dialect` and read back."""
    if dialect not in PARAMETER_FORMATS:
        return args
    return {k: None if isinstance(v, str) and v.strip().lower() == "null" else v for k, v in args.items()}


@st.composite
def histories(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[list[tuple[str, dict[str, Any]]]]]:
    items: list[dict[str, Any]] = [{"role": "user", "content": draw(TEXTS) or "go"}]
    turns = []
    for t in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            items.append({"type": "reasoning", "id": f"rs_{t}", "summary": []})
        if draw(st.booleans()):
            items.append(
                {
                    "type": "message",
                    "role": "assistant",
                    "id": f"msg_{t}",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": draw(TEXTS) or "ok", "annotations": []}],
                }
            )
        calls = [(f"tool_{t}_{k}", draw(ARGS)) for k in range(draw(st.integers(1, 3)))]
        turns.append(calls)
        for k, (name, args) in enumerate(calls):
            item = {"type": "function_call", "call_id": f"call_{t}_{k}", "name": name, "arguments": json.dumps(args)}
            if draw(st.booleans()):
                item["id"] = f"fc_{t}_{k}"
            items.append(item)
        for k in draw(st.permutations(range(len(calls)))):
            items.append({"type": "function_call_output", "call_id": f"call_{t}_{k}", "output": f"result {t} {k}"})
    return items, turns


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(DIALECTS), histories())
def test_any_echoed_history_flattens_to_messages_that_parse_back(
    dialect: str, history: tuple[list[dict[str, Any]], list[list[tuple[str, dict[str, Any]]]]]
) -> None:
    items, turns = history
    INPUT.validate_python(items)
    tools = [
        {
            "type": "function",
            "name": n,
            "parameters": {
                "type": "object",
                "properties": {k: {"type": "integer" if isinstance(v, int) else "string"} for k, v in a.items()},
            },
        }
        for turn in turns
        for n, a in turn
    ]
    result = rewrite_responses_request({"model": "m", "input": items, "tools": tools}, dialect=dialect)
    out = result.body["input"]
    check_items(out)
    assert [m["role"] for m in out] == ["user"] + ["assistant", "user"] * len(turns)
    for message, calls in zip(out[1::2], turns, strict=True):
        parsed = parse(message["content"], dialect, tools=tools)
        expected = [(name, as_written(dialect, args)) for name, args in calls]
        assert [(c.name, json.loads(c.arguments)) for c in parsed.tool_calls] == expected
    for t, (message, calls) in enumerate(zip(out[2::2], turns, strict=True)):
        assert all(f"result {t} {k}" in message["content"] for k in range(len(calls)))
    assert result.calls_flattened == result.results_flattened == sum(len(t) for t in turns)
    assert rewrite_responses_request(result.body, dialect=dialect).body is result.body


def test_forwarded_tools_lose_the_hosted_types() -> None:
    body = {
        "model": "m",
        "input": "hi",
        "tools": [SHELL, *HOSTED],
        "tool_choice": {"type": "web_search"},
        "parallel_tool_calls": False,
    }
    out = rewrite_responses_request(body, dialect="hermes", forward_tools=True).body
    assert out["tools"] == [SHELL] and "tool_choice" not in out and out["parallel_tool_calls"] is False
    assert "# Tools" in out["instructions"]
    out = rewrite_responses_request(
        {"model": "m", "input": "hi", "tools": HOSTED}, dialect="hermes", forward_tools=True
    )
    assert out.body == {"model": "m", "input": "hi"}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_echoed_string_null_reads_back_as_its_format_can_carry_it(dialect: str) -> None:
    """The example hypothesis found: a string argument `NULL` stays a string where the format can
    write it so (JSON, or qwen3_coder's JSON fallback), and is a null where it cannot."""
    args = {"a": "NULL", "b": 1}
    tools = [
        {
            "type": "function",
            "name": "t",
            "parameters": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}},
        }
    ]
    items = [
        {"role": "user", "content": "go"},
        {"type": "function_call", "call_id": "c", "name": "t", "arguments": json.dumps(args)},
        {"type": "function_call_output", "call_id": "c", "output": "result 0 0"},
    ]
    out = rewrite_responses_request({"model": "m", "input": items, "tools": tools}, dialect=dialect).body["input"]
    parsed = parse(out[1]["content"], dialect, tools=tools)
    want = {"a": None, "b": 1} if dialect in PARAMETER_FORMATS else args
    assert [json.loads(c.arguments) for c in parsed.tool_calls] == [want]
