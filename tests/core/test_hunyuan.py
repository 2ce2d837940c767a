"""The `hunyuan_v3` dialect: Hunyuan 3's `<tool_calls><tool_call>f<tool_sep><arg_key>…` calls.

The samples are the model outputs of vLLM's `hy_v3` tests (`tests/tool_parsers/test_hy_v3_tool_parser.py`)
and the format SGLang's `hunyuan` detector reads, with the calls and content they expect. Every
sample is parsed whole, streamed one character at a time and at random splits, and all parses
must agree.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import calls, check_streams, function_tools
from toolcall_middleware import StreamParser, dialect_for_model, parse
from toolcall_middleware.core._result import ParseResult, merge_events

TOOLS = function_tools(
    {
        "get_current_date": {},
        "get_weather": {"city": {"type": "string"}, "date": {"type": "string"}},
        "set_alarm": {"hour": {"type": "integer"}, "loud": {"type": "boolean"}, "days": {"type": "array"}},
    }
)
HY3: dict[str, Any] = {"dialect": "hunyuan_v3", "tools": TOOLS}

ZERO_ARG_INLINE = "<tool_calls><tool_call>get_current_date<tool_sep></tool_call></tool_calls>"
ZERO_ARG_NEWLINE = "<tool_calls>\n<tool_call>get_current_date<tool_sep>\n</tool_call>\n</tool_calls>"
ARGS_SAME_LINE = (
    "<tool_calls><tool_call>get_weather<tool_sep><arg_key>city</arg_key><arg_value>Beijing"
    "</arg_value><arg_key>date</arg_key><arg_value>2026-03-30</arg_value></tool_call></tool_calls>"
)
ARGS_NEWLINES = (
    "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Beijing"
    "</arg_value>\n<arg_key>date</arg_key>\n<arg_value>2026-03-30</arg_value>\n</tool_call>\n</tool_calls>"
)
MULTIPLE = (
    "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Beijing"
    "</arg_value>\n<arg_key>date</arg_key>\n<arg_value>2026-03-30</arg_value>\n</tool_call>\n"
    "<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Hangzhou</arg_value>\n"
    "<arg_key>date</arg_key>\n<arg_value>2026-03-30</arg_value>\n</tool_call>\n</tool_calls>"
)
WEATHER = {"city": "Beijing", "date": "2026-03-30"}


def check(raw: str, **kwargs: Any) -> ParseResult:
    return check_streams(raw, seeds=range(3), **{**HY3, **kwargs})


@pytest.mark.parametrize("model", ["tencent/Hy3-preview", "tencent/Hunyuan-3", "hy3:latest"])
def test_model_selection(model: str) -> None:
    found = dialect_for_model(model)
    assert found is not None and found.name == "hunyuan_v3"


def test_hunyuan_a13b_keeps_its_own_dialect() -> None:
    found = dialect_for_model("tencent/Hunyuan-A13B-Instruct")
    assert found is not None and found.name == "hunyuan_a13b"


def test_no_tool_call() -> None:
    assert check("This is a plain response.") == ParseResult(content="This is a plain response.", reasoning=None)


@pytest.mark.parametrize("raw", [ZERO_ARG_INLINE, ZERO_ARG_NEWLINE], ids=["inline", "newline"])
def test_zero_argument_call(raw: str) -> None:
    result = check(raw)
    assert calls(result) == [("get_current_date", {})] and result.content is None


@pytest.mark.parametrize("raw", [ARGS_SAME_LINE, ARGS_NEWLINES], ids=["same_line", "newlines"])
def test_arguments(raw: str) -> None:
    assert calls(check(raw)) == [("get_weather", WEATHER)]


def test_content_before() -> None:
    result = check("Checking." + ZERO_ARG_NEWLINE)
    assert result.content == "Checking." and calls(result) == [("get_current_date", {})]


def test_several_calls_in_one_section() -> None:
    assert calls(check(MULTIPLE)) == [("get_weather", WEATHER), ("get_weather", {**WEATHER, "city": "Hangzhou"})]


def test_values_are_typed_by_the_schema_and_strings_without_one() -> None:
    raw = (
        "<tool_calls>\n<tool_call>set_alarm<tool_sep>\n<arg_key>hour</arg_key>\n<arg_value>7</arg_value>\n"
        "<arg_key>loud</arg_key>\n<arg_value>true</arg_value>\n<arg_key>days</arg_key>\n<arg_value>[1, 2]</arg_value>\n"
        "<arg_key>note</arg_key>\n<arg_value>42</arg_value>\n</tool_call>\n</tool_calls>"
    )
    assert calls(check(raw)) == [("set_alarm", {"hour": 7, "loud": True, "days": [1, 2], "note": "42"})]


@pytest.mark.parametrize(
    "raw",
    [
        "<tool_calls>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>"
        "\n</tool_calls>",  # no `<tool_sep>`
        "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n</tool_call>\n</tool_calls>",
        "<tool_calls> are what I write calls in.",
    ],
    ids=["no_separator", "key_without_value", "mention"],
)
def test_what_is_not_a_call_is_text(raw: str) -> None:
    result = check(raw, dialect_mismatch="off")
    assert result.tool_calls == [] and result.content is not None and "<tool_calls>" in result.content


def test_a_glm_call_in_a_section_is_read_as_glm_by_the_mismatch_watch() -> None:
    """Without `<tool_sep>` after its name the call is GLM 4.5's, not Hunyuan's: the watch for
    another dialect's calls (`dialect_mismatch`, on by default) reads it as such."""
    raw = "<tool_calls>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>"
    parser = StreamParser(**HY3)
    result = merge_events([*parser.feed(raw), *parser.close()])
    assert calls(result) == [("get_weather", {"city": "Paris"})] and parser.dialect_found == "glm45"


def test_a_call_cut_off_is_truncated_never_a_call() -> None:
    result = parse("<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Par", **HY3)
    assert result.tool_calls == [] and result.truncated


def test_reasoning_and_the_section_ending_an_open_think_block() -> None:
    result = check("<think>The user wants the date.</think>\n" + ZERO_ARG_NEWLINE)
    assert result.reasoning == "The user wants the date." and calls(result) == [("get_current_date", {})]
    opened = check("I should check the date.\n" + ZERO_ARG_NEWLINE, thinking=True)
    assert opened.reasoning == "I should check the date." and calls(opened) == [("get_current_date", {})]


@pytest.mark.parametrize("raw", [MULTIPLE, "Checking." + ZERO_ARG_NEWLINE], ids=["multiple", "content_before"])
def test_auto_reads_hunyuan_3_as_the_dialect_does(raw: str) -> None:
    assert check_streams(raw, seeds=range(3), dialect="auto", tools=TOOLS) == parse(raw, **HY3)
