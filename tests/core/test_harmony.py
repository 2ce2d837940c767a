"""The `gpt_oss` dialect: harmony channels, recipients, calls, built-in tools, malformed headers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from canitoolcall.fixtures import load_fixtures
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import calls, check_streams, split_at, stream_parse
from toolcall_middleware import (
    ReasoningDelta,
    StreamParser,
    TextDelta,
    ToolCallEnd,
    ToolCallStart,
    TruncatedCall,
    dialect_for_model,
    parse,
)
from toolcall_middleware.core._result import ParseResult
from toolcall_middleware.core.dialects.harmony import HEADER_CAP, classify

MODEL = "openai/gpt-oss-20b"
ANALYSIS = "<|channel|>analysis<|message|>"
NEXT = "<|end|><|start|>assistant"


def call(name: str, args: str, *, where: str = "channel", ctype: str = " <|constrain|>json") -> str:
    """A call message as the model writes it after `<|start|>assistant`."""
    if where == "channel":
        return f"<|channel|>commentary to=functions.{name}{ctype}<|message|>{args}"
    return f" to=functions.{name}<|channel|>commentary{ctype}<|message|>{args}"


def parse_all_ways(raw: str, **kwargs: Any) -> ParseResult:
    """The whole parse, after checking that char-by-char and random-split streams agree."""
    kwargs.setdefault("model", MODEL)
    return check_streams(raw, seeds=range(1, 4), **kwargs)


# -- model names ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "model",
    ["openai/gpt-oss-20b", "openai/gpt-oss-120b", "gpt-oss:20b", "gpt-oss:120b", "unsloth/gpt-oss-20b-GGUF", "gpt_oss"],
)
def test_model_name_selects_gpt_oss(model: str) -> None:
    found = dialect_for_model(model)
    assert found is not None and found.name == "gpt_oss"
    assert found.reasoning is None  # the dialect splits reasoning itself


# -- channels ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw_call",
    [
        call("get_weather", '{"city": "Paris"}'),
        call("get_weather", '{"city": "Paris"}', ctype="<|constrain|>json"),
        call("get_weather", '{"city": "Paris"}', ctype=" json"),
        call("get_weather", '{"city": "Paris"}', ctype=""),
        call("get_weather", '{"city": "Paris"}', where="role"),
        call("get_weather", '{"city": "Paris"}', where="role", ctype=" json"),
        '<|channel|>analysis to=functions.get_weather<|message|>{"city": "Paris"}',
        ' to=functions.get_weather<|channel|>analysis <|constrain|>json<|message|>{"city": "Paris"}',
    ],
)
def test_header_variants_give_the_same_call(raw_call: str) -> None:
    r = parse_all_ways(raw_call)
    assert calls(r) == [("get_weather", {"city": "Paris"})]
    assert r.content is None and r.reasoning is None
    assert r.finish_reason == "tool_calls"
    # The same call after an analysis message, in a header of its own.
    r = parse_all_ways(ANALYSIS + "Think." + NEXT + raw_call + "<|call|>")
    assert r.reasoning == "Think."
    assert calls(r) == [("get_weather", {"city": "Paris"})]


def test_analysis_preamble_call_and_final() -> None:
    raw = (
        ANALYSIS
        + "Step 1.\nStep 2."
        + NEXT
        + "<|channel|>commentary<|message|>Checking — one moment. "
        + NEXT
        + call("search", '{"q": "café", "n": 3}')
        + "<|call|><|start|>assistant<|channel|>final<|message|>Found it."
    )
    r = parse_all_ways(raw)
    assert r.reasoning == "Step 1.\nStep 2."
    assert r.content == "Checking — one moment. Found it."
    assert calls(r) == [("search", {"q": "café", "n": 3})]


def test_final_only_and_unknown_channel_are_content() -> None:
    assert parse_all_ways("<|channel|>final<|message|>Hi 👋<|return|>").content == "Hi 👋"
    r = parse_all_ways("<|channel|>comment<|message|>some text<|end|>")
    assert r.content == "some text" and r.tool_calls == []


def test_output_without_any_header_is_content() -> None:
    assert parse_all_ways("Just text, no header.").content == "Just text, no header."
    assert parse_all_ways(" to").content == " to"  # held as a possible role header, then text
    assert parse_all_ways(" tomorrow").content == " tomorrow"


# What a host that decodes with `skip_special_tokens=True` sends: every marker gone.
STRIPPED = "analysisThe user greets us. Reply briefly.assistantfinalHello! How can I help?"


def test_output_with_its_special_tokens_stripped_is_read_back() -> None:
    result = parse_all_ways(STRIPPED)
    assert result == ParseResult(content="Hello! How can I help?", reasoning="The user greets us. Reply briefly.")
    assert parse_all_ways("analysis2 + 2 = 4.assistantfinal4") == ParseResult(content="4", reasoning="2 + 2 = 4.")
    # Cut off in its reasoning: reasoning so far, no content.
    assert parse_all_ways("analysisWe need the weather.") == ParseResult(content=None, reasoning="We need the weather.")


def test_stripped_reasoning_streams_holding_back_only_a_partial_final_marker() -> None:
    parser = StreamParser(model=MODEL)
    assert parser.feed("analys") == []  # may be the stripped analysis header
    assert parser.feed("isWe need ") == [ReasoningDelta("We need ")]
    assert parser.feed("nothing.assistantfi") == [ReasoningDelta("nothing.")]
    assert parser.feed("nalHi") == [TextDelta("Hi")]


@pytest.mark.parametrize(
    "text",
    ["analysis of the data shows a trend.", "analysis", "analysis: done", "analyses differ", "assistantfinal x"],
)
def test_prose_that_only_looks_stripped_stays_content(text: str) -> None:
    assert parse_all_ways(text) == ParseResult(content=text, reasoning=None)


def test_reasoning_and_content_stream_as_they_arrive() -> None:
    parser = StreamParser(model=MODEL)
    assert parser.feed(ANALYSIS + "The user ") == [ReasoningDelta("The user ")]
    assert parser.feed("asks <|e") == [ReasoningDelta("asks ")]  # only a partial end marker waits
    assert parser.feed("nd x <|ca") == [ReasoningDelta("<|end x <|ca")]  # <|call|> cannot end it
    assert parser.feed("ll|>") == [ReasoningDelta("ll|>")]
    assert parser.feed(NEXT + "<|channel|>final<|message|>Hel") == [TextDelta("Hel")]


# -- calls ------------------------------------------------------------------------------------


def test_sequential_calls_each_emitted_at_its_own_end() -> None:
    parser = StreamParser(model=MODEL)
    events = parser.feed(ANALYSIS + "x" + NEXT + call("a", '{"x": 1}') + "<|call|><|start|>assistant")
    assert [(e.index, e.arguments) for e in events if isinstance(e, ToolCallEnd)] == [(0, '{"x": 1}')]
    events = parser.feed(call("b", "{}", where="role")) + parser.close()
    assert [(e.index, e.name) for e in events if isinstance(e, ToolCallStart)] == [(1, "b")]
    assert [e.arguments for e in events if isinstance(e, ToolCallEnd)] == ["{}"]


def test_call_ended_by_end_token_or_by_a_new_header() -> None:
    r = parse_all_ways(call("a", '{"x": 1}') + "<|end|>")
    assert calls(r) == [("a", {"x": 1})]
    r = parse_all_ways(call("a", '{"x": 1}') + "<|start|>assistant<|channel|>final<|message|>ok")
    assert calls(r) == [("a", {"x": 1})]
    assert r.content == "ok"


def test_markers_inside_argument_values_and_reasoning_stay_text() -> None:
    value = "ends with <|call|>; header <|start|>assistant<|channel|>commentary to=functions.x<|message|>{}<|end|>"
    raw = ANALYSIS + "I must not write <|call|> or <|channel|>final." + NEXT + call("w", json.dumps({"s": value}))
    r = parse_all_ways(raw)
    assert r.reasoning == "I must not write <|call|> or <|channel|>final."
    assert calls(r) == [("w", {"s": value})]
    assert r.content is None


def test_truncated_call_is_reported_never_a_call_nor_content() -> None:
    raw = ANALYSIS + "Think." + NEXT + call("get_weather", '{"city": "Par')
    r = parse_all_ways(raw)
    assert r.tool_calls == [] and r.content is None
    assert r.reasoning == "Think."
    assert r.truncated == "<|start|>assistant" + call("get_weather", '{"city": "Par')
    assert r.finish_reason == "length"


def test_stray_header_without_message_is_not_a_call() -> None:
    header = "<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json"
    r = parse_all_ways(ANALYSIS + "Think.<|end|>" + header)
    assert r.tool_calls == [] and r.content is None
    assert r.reasoning == "Think." and r.truncated == header
    events = StreamParser(model=MODEL).feed(header)
    assert not any(isinstance(e, TruncatedCall) for e in events)  # only close() says so
    # A header of header words that breaks off is markup and vanishes (llama.cpp #21286).
    r = parse_all_ways("<|channel|>commentary to=assistant<|channel|>analysis<|message|>hm" + NEXT + "<|end|>")
    assert (r.content, r.reasoning, r.tool_calls) == (None, "hm", [])


def test_malformed_call_body_comes_back_as_content() -> None:
    raw = call("f", '{"a": 1,}') + "<|call|>"
    r = parse_all_ways(raw)
    assert r.tool_calls == []
    assert r.content == call("f", '{"a": 1,}') + "<|call|>"
    assert parse_all_ways(call("f", '["not", "an", "object"]') + "<|end|>").tool_calls == []
    r = parse_all_ways("<|channel|>commentary to=functions<|message|>{}")
    assert r.tool_calls == [] and r.content == "<|channel|>commentary to=functions<|message|>{}"


def test_garbled_headers_come_back_as_content() -> None:
    r = parse_all_ways("<|channel|>??<|end|><|start|>assistant" + ANALYSIS + "fine")
    assert (r.content, r.reasoning, r.tool_calls) == ("<|channel|>??<|end|>", "fine", [])
    r = parse_all_ways("<|channel|>final The answer is 42.<|end|>")
    assert r.content == "<|channel|>final The answer is 42.<|end|>"


def test_a_header_longer_than_the_cap_is_text() -> None:
    text = "word " * (HEADER_CAP // 5 + 20)
    r = parse_all_ways("<|channel|>" + text)
    assert r.content == "<|channel|>" + text and r.truncated is None


def test_built_in_tool_messages_are_dropped() -> None:
    raw = (
        ANALYSIS
        + "Run it."
        + NEXT
        + '<|channel|>commentary to=python <|constrain|>code<|message|>print("<|end|")<|call|>'
        + '<|start|>assistant<|channel|>analysis to=browser.search code<|message|>{"query": "x"}<|call|>'
        + "<|start|>assistant<|channel|>final<|message|>Done."
    )
    r = parse_all_ways(raw)
    assert (r.content, r.reasoning, r.tool_calls) == ("Done.", "Run it.", [])


def test_classify() -> None:
    assert classify("<|start|>assistant to=functions.f<|channel|>commentary json") == ("commentary", "functions.f")
    assert classify("<|channel|>commentary to=functions.f<|constrain|>json") == ("commentary", "functions.f")
    assert classify(" to=functions.f<|channel|>analysis") == ("analysis", "functions.f")
    assert classify("<|channel|>final") == ("final", None)
    assert classify('<|channel|>final {"answer": 1}') is None
    assert classify("<|channel|>commentary to=functions.f to=functions.g") is None


# -- split invariance -------------------------------------------------------------------------

SAMPLES = [f.raw_output for f in load_fixtures(families=("gpt-oss",))] + [
    ANALYSIS + "a <|call|> b" + NEXT + call("f", '{"s": "<|end|>"}') + "<|call|>" + call("g", "{}", where="role"),
    "<|channel|>??<|end|><|start|>assistant<|channel|>final<|message|>Hi<|return|>",
    "<|channel|>commentary to=python<|message|>x = '<|start|>'<|call|><|start|>assistant<|channel|>final<|message|>y",
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SAMPLES), st.lists(st.integers(min_value=0, max_value=10**6), max_size=40))
def test_any_split_gives_the_whole_parse(raw: str, cuts: list[int]) -> None:
    pieces = split_at(raw, cuts)
    assert stream_parse(pieces, model=MODEL) == parse(raw, model=MODEL)
