"""Facts the engines' own parser suites assert (vLLM's `tests/tool_parsers`, SGLang's
`test/registered/unit/function_call`), as inputs and the calls they must give: each whole and
streamed at every split, so stream = whole holds for each of them too."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import calls, stream_parse
from toolcall_middleware import parse
from toolcall_middleware.core.result import ParseResult


def every_split(raw: str, **options: Any) -> ParseResult:
    """The whole parse of `raw`, after asserting that every two-piece split and the one-character
    stream give the same."""
    whole = parse(raw, **options)
    for i in range(len(raw) + 1):
        assert stream_parse([raw[:i], raw[i:]], **options) == whole, f"split at {i}"
    assert stream_parse(list(raw), **options) == whole
    return whole


# -- xlam: the call array pretty-printed --------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        '[\n  {"name": "get_weather", "arguments": {"city": "Paris"}}\n]',
        '[\n    {\n        "name": "get_weather",\n        "arguments": {"city": "Paris"}\n    }\n]',
        '[ {"name": "get_weather", "arguments": {"city": "Paris"}} ]',
        '[\r\n\t{"name": "get_weather", "arguments": {"city": "Paris"}}\r\n]',
    ],
)
def test_xlam_reads_a_pretty_printed_call_array(raw: str) -> None:
    result = every_split(raw, dialect="xlam")
    assert calls(result) == [("get_weather", {"city": "Paris"})]
    assert result.content is None


@pytest.mark.parametrize("raw", ["[ ] a checkbox", "[\nnot JSON]", "[\n", 'Use [\n  {"name": "f"}] here.'])
def test_xlam_a_spaced_bracket_that_opens_no_call_is_text(raw: str) -> None:
    result = every_split(raw, dialect="xlam")
    assert not result.tool_calls and result.content == raw and result.truncated is None


# -- gpt_oss: a call to a bare recipient ----------------------------------------------------------

BARE = '<|channel|>commentary to=get_weather <|constrain|>json<|message|>{"city": "Tokyo"}<|call|>'
WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


@pytest.mark.parametrize("raw", [BARE, BARE.removesuffix("<|call|>"), "<|start|>assistant" + BARE])
def test_gpt_oss_reads_a_bare_recipient_the_request_offers_as_its_call(raw: str) -> None:
    result = every_split(raw, dialect="gpt_oss", tools=WEATHER)
    assert calls(result) == [("get_weather", {"city": "Tokyo"})]
    assert result.content is None


def test_gpt_oss_a_bare_recipient_nobody_offered_is_text() -> None:
    """Nothing the model wrote is lost: the message comes back as it was written."""
    result = every_split(BARE, dialect="gpt_oss")
    assert not result.tool_calls
    assert result.content == BARE


def test_gpt_oss_still_drops_a_built_in_tool_message() -> None:
    raw = '<|channel|>analysis to=browser.search code<|message|>{"query": "x"}<|call|>'
    result = every_split(raw, dialect="gpt_oss", tools=WEATHER)
    assert not result.tool_calls and result.content is None
