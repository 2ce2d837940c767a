"""The `poolside_v1` dialect: Poolside Laguna's GLM-style `<tool_call>f\\n<arg_key>…` calls.

The samples are the model outputs of vLLM's `poolside_v1` tests
(`tests/tool_parsers/test_poolside_v1_tool_parser.py`) and the wire format SGLang's
`PoolsideV1Detector` documents, with the calls they expect. Every sample is parsed whole,
streamed one character at a time and at random splits, and all parses must agree.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import calls, check_streams, function_tools
from toolcall_middleware import dialect_for_model, parse
from toolcall_middleware.core._result import ParseResult
from toolcall_middleware.core.request import render_calls

TOOLS = function_tools(
    {
        "write_file": {"content": {"type": "string"}, "mode": {"type": "integer"}},
        "get_weather": {"city": {"type": "string"}},
    }
)
POOLSIDE: dict[str, Any] = {"dialect": "poolside_v1", "tools": TOOLS}


def check(raw: str, **kwargs: Any) -> ParseResult:
    return check_streams(raw, seeds=range(3), **{**POOLSIDE, **kwargs})


@pytest.mark.parametrize("model", ["poolside/Laguna-XS.2", "poolside/laguna-s-2.1", "laguna-xs:latest"])
def test_model_selection(model: str) -> None:
    found = dialect_for_model(model)
    assert found is not None and found.name == "poolside_v1"


def test_a_string_value_keeps_its_whitespace() -> None:
    content = "    def f():\n        return 1\n"
    raw = f"<tool_call>write_file\n<arg_key>content</arg_key>\n<arg_value>{content}</arg_value>\n</tool_call>"
    assert calls(check(raw)) == [("write_file", {"content": content})]


def test_a_non_string_value_is_stripped_and_decoded() -> None:
    raw = (
        "<tool_call>write_file\n<arg_key>content</arg_key>\n<arg_value>hi</arg_value>\n"
        "<arg_key>mode</arg_key>\n<arg_value> 420 </arg_value>\n</tool_call>"
    )
    assert calls(check(raw)) == [("write_file", {"content": "hi", "mode": 420})]


@pytest.mark.parametrize(
    "raw",
    [
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>",
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
    ],
    ids=["no_newline_after_name", "newline_after_name"],
)
def test_both_layouts(raw: str) -> None:
    result = check(raw)
    assert calls(result) == [("get_weather", {"city": "Paris"})] and result.content is None


def test_a_whitespace_only_name_is_no_call() -> None:
    result = check("<tool_call>   </tool_call>")
    assert result.tool_calls == [] and result.content == "<tool_call>   </tool_call>"


def test_a_whitespace_padded_block_is_text_in_linear_time() -> None:
    # vLLM's regex once backtracked for minutes on this; the block machine reads it once.
    raw = "<tool_call>" + " " * 4096 + "<x</tool_call>"
    assert parse(raw, **POOLSIDE) == ParseResult(content=raw, reasoning=None)


def test_the_rendered_calls_are_the_wire_format() -> None:
    raw = render_calls("poolside_v1", [("call_1", "write_file", '{"content": "x = 1", "mode": 420}')])
    assert raw == (
        "<tool_call>write_file\n<arg_key>content</arg_key>\n<arg_value>x = 1</arg_value>\n"
        "<arg_key>mode</arg_key>\n<arg_value>420</arg_value>\n</tool_call>"
    )
    assert calls(check(raw)) == [("write_file", {"content": "x = 1", "mode": 420})]
