"""The `minicpm5` dialect: MiniCPM 5's `<function name="f"><param name="k">v</param></function>` calls.

The samples are the model outputs of vLLM's `minicpm5` tests
(`tests/tool_parsers/test_minicpm5xml_tool_parser.py`) and the format SGLang's `MiniCPM5Detector`
reads, with the calls they expect; where vLLM drops the text around calls, it stays content
here (nothing the model wrote is lost). Every sample is parsed whole, streamed one character at a
time and at random splits, and all parses must agree.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import calls, check_streams, function_tools, stream_parse
from toolcall_middleware import dialect_for_model, parse
from toolcall_middleware.core._result import ParseResult
from toolcall_middleware.core.request import render_calls

TOOLS = function_tools(
    {
        "get_weather": {"city": {"type": "string"}, "date": {"type": "string"}},
        "sum_values": {"nums": {"type": "array"}, "exact": {"type": "boolean"}},
        "noop": {"note": {"type": "string"}},
    }
)
MINICPM: dict[str, Any] = {"dialect": "minicpm5", "tools": TOOLS}
SHANGHAI = {"city": "上海", "date": "2024-06-27"}


def check(raw: str, **kwargs: Any) -> ParseResult:
    return check_streams(raw, seeds=range(3), **{**MINICPM, **kwargs})


@pytest.mark.parametrize("model", ["openbmb/MiniCPM5-8B", "openbmb/MiniCPM-5-1B", "minicpm5:latest"])
def test_model_selection(model: str) -> None:
    found = dialect_for_model(model)
    assert found is not None and found.name == "minicpm5"


def test_no_tool_call() -> None:
    assert check("How can I help you?") == ParseResult(content="How can I help you?", reasoning=None)


def test_a_call_between_texts() -> None:
    raw = (
        'Intro before.\n<function name="get_weather"><param name="city">上海</param>'
        '<param name="date">2024-06-27</param></function>\nOutro after.\n'
    )
    result = check(raw)
    assert calls(result) == [("get_weather", SHANGHAI)]
    assert result.content == "Intro before.\nOutro after.\n"


def test_a_cdata_value_is_unwrapped() -> None:
    raw = (
        '<function name="get_weather"><param name="city"><![CDATA[北\n京]]></param>'
        '<param name="date">2024-06-27</param></function>\n'
    )
    assert calls(check(raw)) == [("get_weather", {"city": "北\n京", "date": "2024-06-27"})]


def test_values_are_typed() -> None:
    raw = (
        '<function name="sum_values"><param name="nums">[1, 2, 3]</param><param name="exact">true</param></function>\n'
    )
    assert calls(check(raw)) == [("sum_values", {"nums": [1, 2, 3], "exact": True})]


def test_several_calls_with_text_between() -> None:
    raw = (
        'Head\n<function name="get_weather"><param name="city">北京</param></function>\nTXT\n'
        '<function name="sum_values"><param name="nums">[7,8,9]</param>'
        '<param name="exact">false</param></function>\nTail\n'
    )
    result = check(raw)
    assert calls(result) == [("get_weather", {"city": "北京"}), ("sum_values", {"nums": [7, 8, 9], "exact": False})]
    assert result.content == "Head\nTXT\nTail\n"


def test_a_call_with_no_parameters() -> None:
    assert calls(check('<function name="noop"></function>\n')) == [("noop", {})]


def test_a_call_cut_off_is_truncated_never_a_call() -> None:
    result = parse('<function name="get_weather"><param name="city">北京</param>', **MINICPM)
    assert result.tool_calls == [] and result.truncated


@pytest.mark.parametrize(
    "raw",
    [
        '<function name="get_weather"><param>北京</param><param name="date">2024-06-27</param></function>\n',
        '<function name="get_weather"><param name="city">北京</param><param name="city">上海</param></function>\n',
    ],
    ids=["param_without_name", "duplicate_param"],
)
def test_what_is_not_a_call_is_text(raw: str) -> None:
    result = check(raw)
    assert result.tool_calls == [] and result.content == raw


def test_streamed_in_the_engines_chunks() -> None:
    chunks = [
        '<function name="get_weather">',
        '<param name="city">',
        '上海</param><param name="date">2024-06-27</param></function>\n',
    ]
    assert calls(stream_parse(chunks, **MINICPM)) == [("get_weather", SHANGHAI)]


def test_the_renderer_wraps_text_with_lines_or_markup_in_cdata() -> None:
    raw = render_calls("minicpm5", [("call_1", "get_weather", '{"city": "a\\n<b>", "date": "today"}')])
    assert raw == (
        '<function name="get_weather"><param name="city"><![CDATA[a\n<b>]]></param>'
        '<param name="date">today</param></function>'
    )
    assert calls(check(raw)) == [("get_weather", {"city": "a\n<b>", "date": "today"})]


def test_auto_reads_minicpm5_as_the_dialect_does() -> None:
    raw = 'Let me check.\n<function name="get_weather"><param name="city">上海</param></function>'
    assert check_streams(raw, seeds=range(3), dialect="auto", tools=TOOLS) == parse(raw, **MINICPM)
