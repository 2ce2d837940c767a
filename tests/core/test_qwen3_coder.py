"""The `qwen3_coder` dialect: Qwen3-Coder / Qwen3.5+ XML calls with schema-typed raw values.

Every sample is parsed whole, streamed one character at a time and at random splits, and all
parses must agree; then the merged result is checked.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import calls, check_streams, function_tools, random_splits, split_at, stream_parse
from toolcall_middleware import StreamParser, ToolCallEnd, ToolCallStart, dialect_for_model, parse
from toolcall_middleware.core._result import ParseResult

CODER = {"model": "Qwen/Qwen3-Coder-30B-A3B-Instruct"}
Q36 = {"model": "Qwen/Qwen3.6-35B-A3B"}  # the template opens <think> itself
Q36_NO_THINK = {"model": "Qwen/Qwen3.6-35B-A3B", "thinking": False}

SCHEMAS: dict[str, dict[str, Any]] = {
    "set_alarm": {
        "hour": {"type": "integer"},
        "volume": {"type": "number"},
        "repeat": {"type": "boolean"},
        "label": {"type": ["string", "null"]},
        "days": {"type": "array", "items": {"type": "string"}},
    },
    "write_file": {"path": {"type": "string"}, "content": {"type": "string"}},
    "run": {"command": {"type": "string"}},
}
TOOLS = function_tools(SCHEMAS)


def call(name: str, **params: str) -> str:
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items())
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


def check(raw: str, **kwargs: Any) -> ParseResult:
    """The whole parse, after asserting that every stream of `raw` gives the same."""
    return check_streams(raw, seeds=range(3), **{**CODER, "tools": TOOLS, **kwargs})


# -- model selection and reasoning ------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "dialect"),
    [
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3_coder"),
        ("Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", "qwen3_coder"),
        ("Qwen/Qwen3-Coder-Next", "qwen3_coder"),
        ("qwen3-coder:30b", "qwen3_coder"),
        ("Qwen/Qwen3.5-9B", "qwen3_coder"),
        ("qwen3.5:9b", "qwen3_coder"),
        ("Qwen/Qwen3.6-35B-A3B", "qwen3_coder"),
        ("Qwen/Qwen3.8-27B", "qwen3_coder"),
        ("qwen3.10-max", "qwen3_coder"),
        ("Qwen/Qwen3-8B", "hermes"),
        ("qwen3:8b", "hermes"),
        ("qwen3-8b", "hermes"),
        ("Qwen/Qwen3-235B-A22B-Thinking-2507", "hermes"),
        ("Qwen/Qwen3-Next-80B-A3B-Instruct", "hermes"),
        ("Qwen/Qwen2.5-7B-Instruct", "hermes"),
        ("Qwen/Qwen2.5-Coder-32B-Instruct", "hermes"),
    ],
)
def test_model_selection(model: str, dialect: str) -> None:
    found = dialect_for_model(model)
    assert found is not None and found.name == dialect


def test_qwen35_and_later_start_inside_reasoning_unless_thinking_is_off() -> None:
    raw = "Plan.\n</think>\n\nHello."
    assert check(raw, **Q36) == ParseResult(content="Hello.", reasoning="Plan.")
    off = check("Hello.", **Q36_NO_THINK)
    assert off == ParseResult(content="Hello.", reasoning=None)
    coder = check("Hello.", model="qwen3-coder:30b")  # Coder templates never open <think>
    assert coder == ParseResult(content="Hello.", reasoning=None)


def test_a_call_ends_unclosed_reasoning_but_a_mention_of_tool_call_does_not() -> None:
    raw = "I must not write <tool_call> in prose.\nNow:\n" + call("run", command="pwd")
    result = check(raw, **Q36)
    assert result.reasoning == "I must not write <tool_call> in prose.\nNow:"
    assert calls(result) == [("run", {"command": "pwd"})] and result.content is None


def test_markers_mentioned_in_reasoning_stay_reasoning() -> None:
    thought = "Maybe <tool_call> later; <function=run> is the tool, closed by </function>."
    result = check(f"<think>{thought}</think>\n\nDone.", **CODER)
    assert result == ParseResult(content="Done.", reasoning=thought)
    assert check(f"{thought}\n</think>\n\nDone.", **Q36) == ParseResult(content="Done.", reasoning=thought)


# -- values and types -------------------------------------------------------------------------


def test_values_are_typed_by_the_schema() -> None:
    raw = call("set_alarm", hour="7", volume="0.75", repeat="True", label="null", days='["mon", "tue"]')
    assert calls(check(raw)) == [
        ("set_alarm", {"hour": 7, "volume": 0.75, "repeat": True, "label": None, "days": ["mon", "tue"]})
    ]


def test_strings_stay_strings_and_unknown_parameters_are_strings() -> None:
    raw = call("write_file", path="02139", content='{"a": 1}', extra="42", gone="null")
    assert calls(check(raw)) == [("write_file", {"path": "02139", "content": '{"a": 1}', "extra": "42", "gone": None})]
    assert calls(check(call("unknown_tool", n="1"))) == [("unknown_tool", {"n": "1"})]


def test_exactly_one_newline_on_each_side_of_a_value_is_layout() -> None:
    raw = (
        "<tool_call>\n<function=write_file>\n"
        "<parameter=path>\n\n  indented\n\n</parameter>\n"
        "<parameter=content>no newlines</parameter>\n"
        "</function>\n</tool_call>"
    )
    assert calls(check(raw)) == [("write_file", {"path": "\n  indented\n", "content": "no newlines"})]


def test_empty_value_and_no_arguments() -> None:
    assert calls(check(call("write_file", path=""))) == [("write_file", {"path": ""})]
    result = check("<tool_call>\n<function=run>\n</function>\n</tool_call>")
    assert result.tool_calls[0].arguments == "{}"


def test_markers_inside_a_value_stay_in_the_value() -> None:
    value = "Close with </parameter> or </function>; then </tool_call>, <tool_call>, <parameter=x> and <function=y>."
    result = check(call("write_file", path="a.md", content=value) + "\nDone.")
    assert calls(result) == [("write_file", {"path": "a.md", "content": value})]
    assert result.content == "Done."


def test_closing_tag_followed_by_whitespace_then_text_is_value_text() -> None:
    raw = call("write_file", content="a</parameter>  \n\t b") + "\n" + call("run", command="x")
    assert calls(check(raw)) == [("write_file", {"content": "a</parameter>  \n\t b"}), ("run", {"command": "x"})]


def test_missing_closing_parameter_ends_at_the_next_line_start_marker() -> None:
    raw = "<tool_call>\n<function=set_alarm>\n<parameter=label>\ngym\n<parameter=hour>\n6\n</function>\n</tool_call>"
    assert calls(check(raw)) == [("set_alarm", {"label": "gym", "hour": 6})]


# -- blocks, text and quirks ------------------------------------------------------------------


def test_text_around_and_between_calls_keeps_its_words_and_drops_block_layout() -> None:
    raw = "Let me look.\n\n" + call("run", command="a") + "\nAnd:\n" + call("run", command="b") + "\n\nDone."
    result = check(raw)
    assert result.content == "Let me look.\nAnd:\n\nDone."  # the layout after a block sets the next text apart
    assert calls(result) == [("run", {"command": "a"}), ("run", {"command": "b"})]


def test_bare_function_without_tool_call_opener() -> None:
    raw = "Listing.\n\n<function=run>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>\nok"
    result = check(raw)
    assert calls(result) == [("run", {"command": "ls"})] and result.content == "Listing.\nok"
    bare = check("<function=run>\n<parameter=command>\nls\n</parameter>\n</function>")
    assert calls(bare) == [("run", {"command": "ls"})] and bare.truncated is None


def test_several_functions_in_one_block_are_several_calls() -> None:
    raw = (
        "<tool_call>\n<function=run>\n</function>\n"
        "<function=run>\n<parameter=command>\nx\n</parameter>\n</function>\n</tool_call>"
    )
    assert calls(check(raw)) == [("run", {}), ("run", {"command": "x"})]


def test_each_call_is_handed_out_at_its_own_end() -> None:
    parser = StreamParser(**CODER, tools=TOOLS)
    events = parser.feed("<tool_call>\n<function=run>\n<parameter=command>\nls\n</parameter>\n</function>")
    assert [type(e).__name__ for e in events] == ["ToolCallStart", "ToolCallDelta", "ToolCallEnd"]
    assert isinstance(events[0], ToolCallStart) and events[0].name == "run"
    assert isinstance(events[-1], ToolCallEnd) and json.loads(events[-1].arguments) == {"command": "ls"}
    assert parser.feed("\n</tool_call>") + parser.close() == []


def test_hermes_json_inside_tool_call_is_read_as_hermes() -> None:
    result = check('Sure.\n<tool_call>\n{"name": "run", "arguments": {"command": "ls"}}\n</tool_call>')
    assert calls(result) == [("run", {"command": "ls"})] and result.content == "Sure."


@pytest.mark.parametrize(
    "raw",
    [
        "Use <function=run> in prose.",
        "Qwen wraps calls in <tool_call> ... </tool_call> blocks.",
        "<tool_call>\n<function=run>\nnot a parameter\n</function>\n</tool_call>",
        "<function=\nrun>",
        "x <function=" + "a" * 300 + "> y",
        "<tool_call>\n<function=run>\n<parameter=>\n1\n</parameter>\n</function>\n</tool_call>",
    ],
)
def test_malformed_calls_come_back_as_content(raw: str) -> None:
    result = check(raw)
    assert result.tool_calls == [] and result.truncated is None
    assert result.content == raw


def test_fenced_example_is_not_a_call() -> None:
    raw = "Example:\n```\n" + call("run", command="rm -rf /") + "\n```"
    result = check(raw)
    assert result.tool_calls == [] and result.content == raw


# -- truncation -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        "<tool_call>",
        "<tool_call>\n<function=ru",
        "<tool_call>\n<function=run>\n<parameter=command>\nrm -rf /",
        "<tool_call>\n<function=run>\n<parameter=command>\nrm -rf /tmp/build\n</parameter>",
        "<tool_call>\n<function=run>\n<parameter=command>\nrm -rf /tmp/build\n</parameter>\n</func",
        "<function=run>\n<parameter=command>\nrm -rf /",
    ],
)
def test_output_cut_inside_a_call_is_truncated_never_a_call(raw: str) -> None:
    result = check("Working.\n" + raw)
    assert result.tool_calls == [] and result.finish_reason == "length"
    assert result.content == "Working." and result.truncated == raw


def test_a_complete_call_before_a_cut_one_is_kept() -> None:
    raw = call("run", command="ls") + "\n<tool_call>\n<function=run>\n<parameter=command>\nrm -rf /"
    result = check(raw)
    assert calls(result) == [("run", {"command": "ls"})] and result.truncated is not None


# -- performance and split invariance ----------------------------------------------------------


def test_long_arguments_stream_in_small_pieces() -> None:
    content = "line </parameter> x\n" * 10_000  # 200 KB, with close tags to hold back and reject
    raw = call("write_file", path="big.txt", content=content)
    pieces = list(random_splits(raw, 7, max_size=6))
    result = stream_parse(pieces, **CODER, tools=TOOLS)
    assert calls(result) == [("write_file", {"path": "big.txt", "content": content})]


SAMPLES = [
    "Hi.\n\n" + call("set_alarm", hour="7", label="a </parameter> b") + "\n" + call("run", command="ls") + "\nBye.",
    "<function=run>\n<parameter=command>\npwd\n<parameter=x>\n1\n</function>\n</tool_call>after",
    "Plan <tool_call> text.\n" + call("write_file", content="<tool_call>\n</function> x") + "\n",
    "before<tool_call><function=run><parameter=command>ls</parameter></function></tool_call>after",
    '<tool_call>\n{"name": "run", "arguments": {}}\n</tool_call>\n<tool_call>\n<function=run>\n</function>',
    "Cut: " + call("run", command="ok")[:-20],
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SAMPLES), st.lists(st.integers(min_value=0, max_value=10**6), max_size=30), st.booleans())
def test_any_split_gives_the_whole_parse(raw: str, cuts: list[int], thinking: bool) -> None:
    kwargs: dict[str, Any] = {**(Q36 if thinking else CODER), "tools": TOOLS}
    pieces = split_at(raw, cuts)
    assert stream_parse(pieces, **kwargs) == parse(raw, **kwargs)
