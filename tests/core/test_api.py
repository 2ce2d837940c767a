"""The public API: parse(), StreamParser, dialect selection by served model name, errors."""

from __future__ import annotations

import json

import pytest

import toolcall_middleware as tm
from tests.conftest import stream_parse
from toolcall_middleware import (
    ReasoningDelta,
    StreamParser,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    TruncatedCall,
    UnknownDialectError,
    list_dialects,
    parse,
)


@pytest.mark.parametrize(
    ("model", "dialect"),
    [
        ("Qwen/Qwen3-8B", "hermes"),
        ("qwen3:8b", "hermes"),
        ("Qwen/Qwen2.5-7B-Instruct", "hermes"),
        ("NousResearch/Hermes-3-Llama-3.1-8B", "hermes"),
        ("Qwen/QwQ-32B", "hermes"),
        ("Qwen/Qwen2.5-VL-7B-Instruct", "hermes"),
        ("Qwen/Qwen3-VL-8B-Instruct", "hermes"),
        ("kimi-k2-thinking", "kimi_k2"),
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3_coder"),
        ("qwen3-coder:30b", "qwen3_coder"),
        ("Qwen/Qwen3.5-9B", "qwen3_coder"),
        ("moonshotai/Kimi-K2.6", "kimi_k2"),
        ("kimi-k2-instruct", "kimi_k2"),
        ("moonshotai/Kimi-K2-Instruct-0905", "kimi_k2"),
        ("moonshotai/Kimi-K3", "kimi_k3"),
        ("deepseek-ai/DeepSeek-V3.1", "deepseek_v31"),
        ("deepseek-ai/DeepSeek-V3-0324", "deepseek_v3"),
        ("deepseek-r1:8b", "deepseek_v3"),
        ("deepseek-ai/DeepSeek-V3.2", "deepseek_v32"),
    ],
)
def test_dialect_selected_by_served_model_name(model: str, dialect: str) -> None:
    assert StreamParser(model=model).dialect.name == dialect
    assert tm.dialect_for_model(model) is tm.get_dialect(dialect)


def test_every_dialect_of_the_parsing_core_is_registered() -> None:
    expected = {
        "hermes",
        "qwen3_coder",
        "kimi_k2",
        "kimi_k3",
        "deepseek_v3",
        "deepseek_v31",
        "deepseek_v32",
        "deepseek_v4",
        "llama_function",
        "generic_json",
    }
    assert expected <= set(list_dialects())


@pytest.mark.parametrize(
    "model",
    [
        "moonshotai/Kimi-VL-A3B-Thinking",  # Kimi's vision model writes no Kimi K2 markup
        "moonshotai/Kimi-Dev-72B",
        "Qwen/Qwen-7B-Chat",  # Qwen 1 answers in ReAct text
        "Qwen/Qwen1.5-14B-Chat",
        "THUDM/glm-4-9b-chat",  # GLM-4's older format
        "google/gemma-3-27b-it",
        "meta-llama/Llama-2-7b-chat-hf",
    ],
)
def test_another_model_of_a_known_family_gets_detection_not_the_familys_format(model: str) -> None:
    assert tm.dialect_for_model(model) is tm.get_dialect("auto")
    react = 'Thought: I should look it up.\nAction: search\nAction Input: {"q": "weather"}'
    assert parse(react, model=model).content == react  # its own text, untouched
    hermes = 'Sure.\n<tool_call>\n{"name": "search", "arguments": {"q": "x"}}\n</tool_call>'
    result = parse(hermes, model=model)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("search", '{"q": "x"}')]


def test_unknown_model_is_a_clear_error_listing_the_dialects() -> None:
    with pytest.raises(UnknownDialectError) as info:
        parse("hi", model="acme/unknown-model-7b")
    message = str(info.value)
    assert "acme/unknown-model-7b" in message
    assert "hermes" in message and "kimi_k2" in message


def test_unknown_dialect_name_is_a_clear_error() -> None:
    with pytest.raises(UnknownDialectError, match="no_such_format"):
        parse("hi", "no_such_format")
    with pytest.raises(UnknownDialectError, match="dialect= or model="):
        StreamParser()


def test_dialect_name_wins_over_model() -> None:
    r = parse('<function=f>{"a": 1}</function>', "llama_function", model="Qwen/Qwen3-8B")
    assert [(c.name, c.arguments) for c in r.tool_calls] == [("f", '{"a": 1}')]


def test_parse_result_fields() -> None:
    r = parse(
        "<think>\nplan\n</think>\n\nChecking.\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        model="Qwen/Qwen3-8B",
    )
    assert r.content == "Checking."
    assert r.reasoning == "plan"
    assert len(r.tool_calls) == 1
    call = r.tool_calls[0]
    assert call.id is None and call.name == "get_weather" and call.arguments == '{"city": "Paris"}'
    assert r.finish_reason == "tool_calls"
    assert parse("", "hermes").content is None


def test_stream_events_in_order() -> None:
    p = StreamParser("hermes", generation_prompt="<|im_start|>assistant\n<think>\n")
    events = p.feed("Thinking.</think>Hi <tool_")
    events += p.feed('call>{"name": "f", "arguments": {}}</tool_call>')
    events += p.close()
    assert events == [
        ReasoningDelta("Thinking."),
        TextDelta("Hi"),
        ToolCallStart(index=0, id=None, name="f"),
        ToolCallDelta(index=0, arguments="{}"),
        ToolCallEnd(index=0, arguments="{}"),
    ]


def test_text_is_emitted_before_a_partial_marker_resolves() -> None:
    p = StreamParser("hermes")
    assert p.feed("Hello there <tool") == [TextDelta("Hello there")]
    assert p.feed("box> is a tag") == [TextDelta(" <toolbox> is a tag")]


def test_truncated_call_is_reported_and_is_not_a_call() -> None:
    r = parse('Checking.\n<tool_call>\n{"name": "run", "arguments": {"cmd": "rm -rf /tmp/bu', "hermes")
    assert r.tool_calls == []
    assert r.content == "Checking."
    assert r.truncated == '<tool_call>\n{"name": "run", "arguments": {"cmd": "rm -rf /tmp/bu'
    assert r.finish_reason == "length"
    p = StreamParser("hermes")
    events = p.feed('<tool_call>{"name": "run"') + p.close()
    assert events == [TruncatedCall('<tool_call>{"name": "run"')]


def test_malformed_call_comes_back_as_content() -> None:
    r = parse("Look: <tool_call>not json</tool_call> done", "hermes")
    assert r.tool_calls == []
    assert r.content == "Look: <tool_call>not json</tool_call> done"


def test_arguments_as_a_json_string_and_parameters_synonym() -> None:
    sentinel = '<tool_call>{"name":"toolName","arguments":"{\\"k\\":\\"v\\"}"}</tool_call>'
    assert parse(sentinel, "hermes").tool_calls[0].arguments == '{"k": "v"}'
    r = parse('<tool_call>{"name": "f", "parameters": {"a": [1, 2]}}</tool_call>', "hermes")
    assert r.tool_calls[0].arguments == '{"a": [1, 2]}'


def test_call_inside_closed_reasoning_or_code_fence_is_not_a_call() -> None:
    in_reasoning = '<think>I could write <tool_call>{"name": "f", "arguments": {}}</tool_call></think>No call.'
    r = parse(in_reasoning, "hermes")
    assert r.tool_calls == [] and r.content == "No call."
    assert r.reasoning == 'I could write <tool_call>{"name": "f", "arguments": {}}</tool_call>'
    fenced = 'Example:\n```\n<tool_call>{"name": "f", "arguments": {}}</tool_call>\n```\nThat is all.'
    r = parse(fenced, "hermes")
    assert r.tool_calls == [] and r.content == fenced
    after_fence = fenced + '\n<tool_call>{"name": "g", "arguments": {}}</tool_call>'
    assert [c.name for c in parse(after_fence, "hermes").tool_calls] == ["g"]


def test_generation_prompt_and_thinking_decide_where_reasoning_starts() -> None:
    out = "plan</think>answer"
    assert parse(out, "hermes", generation_prompt="<|im_start|>assistant\n<think>\n").reasoning == "plan"
    closed = "<|im_start|>assistant\n<think>\n\n</think>\n\n"
    assert parse(out, "hermes", generation_prompt=closed).reasoning is None
    assert parse("plan</think>answer", model="Qwen/Qwen3-4B-Thinking-2507").reasoning == "plan"
    assert parse("plan</think>answer", model="Qwen/Qwen3-4B-Thinking-2507", thinking=False).reasoning is None


def test_reasoning_channel_text_stays_reasoning() -> None:
    p = StreamParser("hermes")
    events = p.feed_reasoning("thinking hard") + p.feed("The answer.") + p.close()
    assert events == [ReasoningDelta("thinking hard"), TextDelta("The answer.")]


def test_feed_after_close_is_an_error() -> None:
    p = StreamParser("hermes")
    p.close()
    with pytest.raises(RuntimeError):
        p.feed("x")


def test_reasoning_channel_keeps_text_around_a_section_as_reasoning() -> None:
    section = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}"
        "<|tool_call_end|><|tool_calls_section_end|>"
    )
    p = StreamParser(model="moonshotai/Kimi-K2.6", thinking=True)
    events = p.feed_reasoning("Before. " + section + " after.") + p.feed("The answer.") + p.close()
    result = tm.merge_events(events)
    assert result.reasoning == "Before. after."
    assert result.content == "The answer."
    assert [(c.id, c.name) for c in result.tool_calls] == [("functions.f:0", "f")]


def test_a_repeated_opening_tag_after_a_prefilled_one_is_markup() -> None:
    prefilled = "<|im_start|>assistant\n<think>\n"
    r = parse("<think>\nPlan.\n</think>\n\nHi", "hermes", generation_prompt=prefilled)
    assert r.reasoning == "Plan." and r.content == "Hi"
    assert parse("<thinking> is a tag</think>Hi", "hermes", generation_prompt=prefilled).reasoning == (
        "<thinking> is a tag"
    )
    assert parse("<thin", "hermes", generation_prompt=prefilled).reasoning == "<thin"


@pytest.mark.parametrize(
    ("dialect", "raw"),
    [
        ("hermes", 'Hi <tool_call>{"name": "f", "arguments": {"a": True, "b": [1, 2,],}}</tool_call>'),
        (
            "kimi_k2",
            "Hi<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>"
            "{'a': True, 'b': [1, 2,],}<|tool_call_end|><|tool_calls_section_end|>",
        ),
        ("mistral", "Hi[TOOL_CALLS]f[ARGS]{'a': True, 'b': [1, 2,],}"),
        ("llama_function", "Hi<function=f>{'a': True, 'b': [1, 2,],}</function>"),
    ],
)
def test_repair_is_one_safe_opt_in_pass(dialect: str, raw: str) -> None:
    assert parse(raw, dialect).tool_calls == []  # by default an almost-JSON body is text
    repaired = parse(raw, dialect, repair=True)
    assert [(c.name, json.loads(c.arguments)) for c in repaired.tool_calls] == [("f", {"a": True, "b": [1, 2]})]
    assert repaired.content is not None and repaired.content.startswith("Hi")
    assert stream_parse(list(raw), dialect=dialect, repair=True) == repaired


def test_repair_never_completes_a_cut_value() -> None:
    raw = '<tool_call>{"name": "run", "arguments": {"cmd": "rm -rf /tmp/bu"</tool_call>'
    r = parse(raw, "hermes", repair=True)
    assert r.tool_calls == [] and r.content == raw
