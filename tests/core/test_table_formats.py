"""The formats of `formats.md`'s table added as dialects after the first twenty: the JSON ones
(`granite`, `granite_20b_fc`, `jamba`, `nemotron`, `hunyuan_a13b`, `phi4_mini`,
`firefunction_v2`, `minimax_m1`, `cohere_command`, `apertus`, `longcat`, `internlm2`, `xlam`),
the Python ones (`olmo3`, `lfm2`), `functiongemma`, `step3`, `functionary_v3_2`, and the Kimi-VL
thinking markers (read by `auto`).

There are no conformance fixtures for these formats, so these samples carry the proof. Each is
written as the model writes it (the engines' parser tests, the models' chat templates and cards),
selected by its served model name, parsed whole, streamed one character at a time and at random
splits, and all parses must agree. Malformed blocks come back as their text; output cut off
inside a block is never a call and never content.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import calls, check_streams, split_at, stream_parse
from toolcall_middleware import dialect_for_model, parse

WEATHER = {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}
W = '{"city": "Dallas", "state": "TX", "unit": "fahrenheit"}'
TIME = '{"timezone": "America/Chicago"}'

# (dialect, served model, raw output, content, reasoning, calls)
Sample = tuple[str, str, str, str | None, str | None, list[tuple[str, Any]]]
SAMPLES: list[Sample] = [
    # Granite 3.0: the `<|tool_call|>` token, then one JSON array (vLLM granite tests).
    (
        "granite",
        "ibm-granite/granite-3.0-8b-instruct",
        f'<|tool_call|>[{{"name": "get_current_weather", "arguments": {W}}}]',
        None,
        None,
        [("get_current_weather", WEATHER)],
    ),
    # Granite 3.1-3.3: the literal tag, two calls, an argument that holds `]` and `}`.
    (
        "granite",
        "ibm-granite/granite-3.3-8b-instruct",
        '<tool_call>[{"name": "get_current_weather", "arguments": ' + W + "}, "
        '{"name": "run", "arguments": {"code": "print([1, {2}])"}}]',
        None,
        None,
        [("get_current_weather", WEATHER), ("run", {"code": "print([1, {2}])"})],
    ),
    # Granite 3.2/3.3 thinking in plain text, then an answer.
    (
        "granite",
        "granite3.3:8b",
        "Here is my thought process: The user greets me.\nHere is my response: Hello! How can I help?",
        "Hello! How can I help?",
        "The user greets me.",
        [],
    ),
    # Text before the call is content (vLLM requires the array first; nothing is lost here).
    (
        "granite",
        "ibm-granite/granite-3.1-8b-instruct",
        f'Let me check.\n<|tool_call|>[{{"name": "get_current_weather", "arguments": {W}}}]',
        "Let me check.",
        None,
        [("get_current_weather", WEATHER)],
    ),
    # Granite 3.0 decoded with special tokens skipped: the bare array (vLLM reads it too).
    (
        "granite",
        "ibm-granite/granite-3.0-8b-instruct",
        f'[{{"name": "get_current_weather", "arguments": {W}}}]',
        None,
        None,
        [("get_current_weather", WEATHER)],
    ),
    # granite-20b-functioncalling: one object per `<function_call>` (vLLM granite_20b_fc tests).
    (
        "granite_20b_fc",
        "ibm-granite/granite-20b-functioncalling",
        f'<function_call> {{"name": "get_current_weather", "arguments": {W}}}\n'
        f'<function_call> {{"name": "get_current_time", "arguments": {TIME}}}',
        None,
        None,
        [("get_current_weather", WEATHER), ("get_current_time", {"timezone": "America/Chicago"})],
    ),
    # Jamba 1.5: the array on lines of its own, after a space (vLLM jamba tests).
    (
        "jamba",
        "ai21labs/AI21-Jamba-1.5-Mini",
        f' <tool_calls>[\n    {{"name": "get_current_weather", "arguments": {W}}}\n]</tool_calls>',
        None,
        None,
        [("get_current_weather", WEATHER)],
    ),
    (
        "jamba",
        "ai21labs/AI21-Jamba-Mini-1.7",
        "Sure, checking both.\n"
        f'<tool_calls>[{{"name": "get_current_weather", "arguments": {W}}}, '
        f'{{"name": "get_current_time", "arguments": {TIME}}}]</tool_calls>',
        "Sure, checking both.",
        None,
        [("get_current_weather", WEATHER), ("get_current_time", {"timezone": "America/Chicago"})],
    ),
    # Nemotron-Nano-9B-v2: the template opens `<think>\n`; the calls after `</think>`.
    (
        "nemotron",
        "nvidia/NVIDIA-Nemotron-Nano-9B-v2",
        "The user wants the weather in Dallas.\n</think>\n\n"
        f'<TOOLCALL>[{{"name": "get_current_weather", "arguments": {W}}}]</TOOLCALL>',
        None,
        "The user wants the weather in Dallas.",
        [("get_current_weather", WEATHER)],
    ),
    (
        "nemotron",
        "nvidia/Llama-3.3-Nemotron-Super-49B-v1",
        f'<TOOLCALL>[{{"name": "get_current_weather", "arguments": {W}}}, '
        f'{{"name": "get_current_time", "arguments": {TIME}}}]</TOOLCALL>',
        None,
        None,
        [("get_current_weather", WEATHER), ("get_current_time", {"timezone": "America/Chicago"})],
    ),
    # Hunyuan-A13B: reasoning, then the answer wrapper around the calls (vLLM hunyuan tests).
    (
        "hunyuan_a13b",
        "tencent/Hunyuan-A13B-Instruct",
        "<think>\n用户想知道达拉斯的天气。\n</think>\n<answer>\n"
        f'<tool_calls>[{{"name": "get_current_weather", "arguments": {W}}}]</tool_calls>\n</answer>',
        None,
        "用户想知道达拉斯的天气。",
        [("get_current_weather", WEATHER)],
    ),
    (
        "hunyuan_a13b",
        "tencent/Hunyuan-A13B-Instruct",
        "<think>\nA greeting.\n</think>\n<answer>\n助手：你好！有什么可以帮你？\n</answer>",
        "助手：你好！有什么可以帮你？",
        "A greeting.",
        [],
    ),
    # Phi-4-mini: `functools[…]` and no closing marker (vLLM phi4mini tests); `]` inside a value.
    (
        "phi4_mini",
        "microsoft/Phi-4-mini-instruct",
        f'functools[{{"name": "get_current_weather", "arguments": {W}}}, '
        '{"name": "run", "arguments": {"code": "a[0]"}}]',
        None,
        None,
        [("get_current_weather", WEATHER), ("run", {"code": "a[0]"})],
    ),
    # FireFunction v2: ` functools[…]` (llama.cpp FIREFUNCTION_V2).
    (
        "firefunction_v2",
        "fireworks-ai/llama-3-firefunction-v2",
        f' functools[{{"name": "get_current_weather", "arguments": {W}}}]',
        None,
        None,
        [("get_current_weather", WEATHER)],
    ),
    # MiniMax-M1: one JSON object a line inside `<tool_calls>` (vLLM minimax tests).
    (
        "minimax_m1",
        "MiniMaxAI/MiniMax-M1-80k",
        "<think>\nTwo lookups.\n</think>\n\n<tool_calls>\n"
        f'{{"name": "get_current_weather", "arguments": {W}}}\n'
        f'{{"name": "get_current_time", "arguments": {TIME}}}\n</tool_calls>',
        None,
        "Two lookups.",
        [("get_current_weather", WEATHER), ("get_current_time", {"timezone": "America/Chicago"})],
    ),
    # Command R7B: the plan as thinking, the action list (llama.cpp COMMAND_R7B tests).
    (
        "cohere_command",
        "CohereForAI/c4ai-command-r7b-12-2024",
        "<|START_THINKING|>I will look up the weather in Dallas.<|END_THINKING|>"
        '<|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "get_current_weather", "parameters": '
        + W
        + "}\n]<|END_ACTION|>",
        None,
        "I will look up the weather in Dallas.",
        [("get_current_weather", WEATHER)],
    ),
    # Command A: the answer in its response section.
    (
        "cohere_command",
        "CohereLabs/command-a-reasoning-08-2025",
        "<|START_THINKING|>Simple greeting.<|END_THINKING|><|START_RESPONSE|>Hello! How can I help you today?"
        "<|END_RESPONSE|>",
        "Hello! How can I help you today?",
        "Simple greeting.",
        [],
    ),
    # Apertus: single-key call objects (vLLM apertus tests).
    (
        "apertus",
        "swiss-ai/Apertus-8B-Instruct-2509",
        "<|inner_prefix|>Two tools.<|inner_suffix|>"
        f'<|tools_prefix|>[{{"get_current_weather": {W}}}, {{"get_current_time": {TIME}}}]<|tools_suffix|>',
        None,
        "Two tools.",
        [("get_current_weather", WEATHER), ("get_current_time", {"timezone": "America/Chicago"})],
    ),
    # LongCat-Flash-Chat (vLLM longcat tests).
    (
        "longcat",
        "meituan-longcat/LongCat-Flash-Chat",
        f'<longcat_tool_call>{{"name": "get_current_weather", "arguments": {W}}}</longcat_tool_call>\n'
        f'<longcat_tool_call>{{"name": "get_current_time", "arguments": {TIME}}}</longcat_tool_call>',
        None,
        None,
        [("get_current_weather", WEATHER), ("get_current_time", {"timezone": "America/Chicago"})],
    ),
    # InternLM2.5 (vLLM internlm2 tests), and the spaced opener SGLang's interns1 reads.
    (
        "internlm2",
        "internlm/internlm2_5-7b-chat",
        f'I\'ll check.<|action_start|><|plugin|>\n{{"name": "get_current_weather", "parameters": {W}}}<|action_end|>',
        "I'll check.",
        None,
        [("get_current_weather", WEATHER)],
    ),
    (
        "internlm2",
        "internlm/Intern-S1",
        "<think>\nNeed the weather.\n</think>\n<|action_start|> <|plugin|>\n"
        f'{{"name": "get_current_weather", "arguments": {W}}}<|action_end|>',
        None,
        "Need the weather.",
        [("get_current_weather", WEATHER)],
    ),
    # xLAM-2: the bare array as the whole answer, after reasoning, in a fence, after [TOOL_CALLS].
    (
        "xlam",
        "Salesforce/Llama-xLAM-2-8b-fc-r",
        f'[{{"name": "get_current_weather", "arguments": {W}}}, {{"name": "get_current_time", "arguments": {TIME}}}]',
        None,
        None,
        [("get_current_weather", WEATHER), ("get_current_time", {"timezone": "America/Chicago"})],
    ),
    (
        "xlam",
        "Salesforce/xLAM-2-32b-fc-r",
        f'<think>Weather lookup.</think>\n[{{"name": "get_current_weather", "arguments": {W}}}]',
        None,
        "Weather lookup.",
        [("get_current_weather", WEATHER)],
    ),
    (
        "xlam",
        "Salesforce/xLAM-2-3b-fc-r",
        f'I will call the tool.\n```json\n[{{"name": "get_current_weather", "arguments": {W}}}]\n```',
        "I will call the tool.",
        None,
        [("get_current_weather", WEATHER)],
    ),
    (
        "xlam",
        "Salesforce/xLAM-2-1b-fc-r",
        f'[TOOL_CALLS][{{"name": "get_current_weather", "arguments": {W}}}]',
        None,
        None,
        [("get_current_weather", WEATHER)],
    ),
    (
        "xlam",
        "Salesforce/Llama-xLAM-2-70b-fc-r",
        "See [1] and [2]: no tool is needed.",
        "See [1] and [2]: no tool is needed.",
        None,
        [],
    ),
    # Olmo 3: one Python call a line, JSON literals allowed (vLLM olmo3 tests).
    (
        "olmo3",
        "allenai/Olmo-3-7B-Instruct",
        "<function_calls>\nget_current_weather(city='Dallas', state='TX', unit='fahrenheit')\n"
        'get_current_time(timezone="America/Chicago", dst=true, offset=null)\n</function_calls>',
        None,
        None,
        [
            ("get_current_weather", WEATHER),
            ("get_current_time", {"timezone": "America/Chicago", "dst": True, "offset": None}),
        ],
    ),
    # LFM2: a Python list, the answer right after the end marker (vLLM/SGLang lfm2 tests).
    (
        "lfm2",
        "LiquidAI/LFM2-1.2B",
        '<|tool_call_start|>[get_current_weather(city="Dallas", state="TX", unit="fahrenheit")]<|tool_call_end|>'
        "Checking the weather in Dallas.",
        "Checking the weather in Dallas.",
        None,
        [("get_current_weather", WEATHER)],
    ),
    # LFM2 asked for JSON tool calls writes a JSON array between the same markers.
    (
        "lfm2",
        "LiquidAI/LFM2.5-1.2B-Instruct",
        f'<|tool_call_start|>[{{"name": "get_current_weather", "arguments": {W}}}]<|tool_call_end|>',
        None,
        None,
        [("get_current_weather", WEATHER)],
    ),
    # FunctionGemma: `<escape>` strings, bare numbers and booleans (vLLM functiongemma tests).
    (
        "functiongemma",
        "google/functiongemma-270m-it",
        "<start_function_call>call:get_current_weather{city:<escape>Dallas<escape>,state:<escape>TX<escape>,"
        "unit:<escape>fahrenheit<escape>}<end_function_call>"
        "<start_function_call>call:set_volume{level:7,mute:false}<end_function_call>",
        None,
        None,
        [("get_current_weather", WEATHER), ("set_volume", {"level": 7, "mute": False})],
    ),
    # Step3: the template opens `<think>`; steptml calls after `</think>` (vLLM step3 tests).
    (
        "step3",
        "stepfun-ai/step3",
        "The user wants the weather.</think>\n<｜tool_calls_begin｜>\n<｜tool_call_begin｜>function<｜tool_sep｜>"
        '<steptml:invoke name="get_current_weather">\n<steptml:parameter name="city">Dallas</steptml:parameter>\n'
        '<steptml:parameter name="state">TX</steptml:parameter>\n'
        '<steptml:parameter name="unit">fahrenheit</steptml:parameter>\n</steptml:invoke><｜tool_call_end｜>\n'
        "<｜tool_calls_end｜>",
        None,
        "The user wants the weather.",
        [("get_current_weather", WEATHER)],
    ),
    # Functionary v3.2: the first recipient line without `>>>` (llama.cpp FUNCTIONARY_V3_2 tests).
    (
        "functionary_v3_2",
        "meetkai/functionary-medium-v3.2",
        f"all\nLet me check that for you.>>>get_current_weather\n{W}>>>get_current_time\n{TIME}",
        "Let me check that for you.",
        None,
        [("get_current_weather", WEATHER), ("get_current_time", {"timezone": "America/Chicago"})],
    ),
    (
        "functionary_v3_2",
        "meetkai/functionary-small-v3.2",
        f"get_current_weather\n{W}",
        None,
        None,
        [("get_current_weather", WEATHER)],
    ),
    (
        "functionary_v3_2",
        "meetkai/functionary-small-v3.2",
        "all\nHello! How can I help you today?",
        "Hello! How can I help you today?",
        None,
        [],
    ),
]


@pytest.mark.parametrize("sample", SAMPLES, ids=[f"{s[0]}-{i}" for i, s in enumerate(SAMPLES)])
def test_a_real_output_parses_the_same_whole_and_at_every_split(sample: Sample) -> None:
    dialect, model, raw, content, reasoning, expected = sample
    assert dialect_for_model(model) is not None and dialect_for_model(model).name == dialect  # type: ignore[union-attr]
    result = check_streams(raw, seeds=range(5), model=model)
    assert (result.content, result.reasoning, calls(result)) == (content, reasoning, expected)
    assert result.truncated is None


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SAMPLES), st.lists(st.integers(min_value=0, max_value=10**6), max_size=30))
def test_any_split_gives_the_whole_parse(sample: Sample, cuts: list[int]) -> None:
    model, raw = sample[1], sample[2]
    assert stream_parse(split_at(raw, cuts), model=model) == parse(raw, model=model)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SAMPLES), st.data())
def test_output_cut_off_anywhere_never_gives_a_call_it_did_not_finish(sample: Sample, data: st.DataObject) -> None:
    """A prefix of a sample gives a prefix of its calls, and never a call that differs."""
    model, raw = sample[1], sample[2]
    end = data.draw(st.integers(min_value=0, max_value=len(raw)))
    whole = calls(parse(raw, model=model))
    cut = parse(raw[:end], model=model)
    assert calls(cut) == whole[: len(cut.tool_calls)]
    assert stream_parse(list(raw[:end]), model=model) == cut


# (dialect, raw): not this format's calls; the text comes back as written.
MALFORMED = [
    ("granite", '<|tool_call|>{"name": "f", "arguments": {}}'),  # not an array
    ("granite", '<tool_call>[{"name": "f", "arguments": {}}, 3]'),  # an item that is not a call
    ("granite", "<|tool_call|>[]"),
    ("granite", 'The list [{"a": 1}] is data.'),  # a bracket after text is text
    ("granite_20b_fc", '<function_call> ["f"]'),
    ("jamba", '<tool_calls>[{"name": "f", "arguments": {}}]</tool_call>'),  # the wrong end marker
    ("jamba", '<tool_calls>[{"name": "f", "arguments": {"a": 1,}}]</tool_calls>'),  # broken JSON
    ("nemotron", '<TOOLCALL>[{"arguments": {}}]</TOOLCALL>'),  # no name
    ("hunyuan_a13b", '<tool_calls>[{"name": "f", "arguments": [1]}]</tool_calls>'),  # arguments not an object
    ("phi4_mini", "Use functools[1, 2] for that."),
    ("firefunction_v2", 'functools["f"]'),
    ("minimax_m1", '<tool_calls>\n{"name": "f", "arguments": {}}\nnot json\n</tool_calls>'),
    ("cohere_command", '<|START_ACTION|>[{"tool_call_id": "0", "name": "f"}]<|END_ACTION|>'),
    ("apertus", '<|tools_prefix|>[{"f": {}, "g": {}}]<|tools_suffix|>'),  # two keys: not one call
    ("longcat", "<longcat_tool_call>not json</longcat_tool_call>"),
    ("internlm2", "<|action_start|><|plugin|>\n[1]<|action_end|>"),
    ("xlam", '```json\n{"a": 1}\n```'),  # a fence that holds no call
    ("xlam", 'Use [{"name": "f", "arguments": {}}] like this.'),  # an array inside prose is an example
    ("olmo3", "<function_calls>\nprint('hi'); x = 1\n</function_calls>"),
    ("lfm2", "<|tool_call_start|>[f(1, 2)]<|tool_call_end|>"),  # positional arguments
    ("functiongemma", "<start_function_call>call:f{a:<escape>x}<end_function_call>"),
    ("functionary_v3_2", "Hi>>>f\nnot json"),
]


@pytest.mark.parametrize(("dialect", "raw"), MALFORMED)
def test_a_malformed_block_is_text_as_written(dialect: str, raw: str) -> None:
    for result in (parse(raw, dialect), stream_parse(list(raw), dialect=dialect)):
        assert result.tool_calls == []
        assert result.content == raw
        assert result.truncated is None


# (dialect, raw): the output ends inside a call.
CUT_OFF = [
    ("granite", '<|tool_call|>[{"name": "f", "arguments": {"a": "x'),
    ("granite_20b_fc", '<function_call> {"name": "f", "arguments": {'),
    ("jamba", '<tool_calls>[{"name": "f", "arguments": {}}]'),  # no end marker yet
    ("jamba", '<tool_calls>[{"name": "f", "arguments": {}}]</tool_ca'),
    ("nemotron", '<TOOLCALL>[{"name": "f", "arguments": {"a": "]</TOOLCALL>'),
    ("hunyuan_a13b", '<answer>\n<tool_calls>[{"name": "f"'),
    ("phi4_mini", 'functools[{"name": "f", "arguments": {}}'),
    ("firefunction_v2", ' functools[{"name": "f"'),
    ("minimax_m1", '<tool_calls>\n{"name": "f", "arguments": {}}\n'),
    ("cohere_command", '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "f", "parameters": {}}]'),
    ("apertus", '<|tools_prefix|>[{"f": {"a": 1}}'),
    ("longcat", '<longcat_tool_call>{"name": "f", "arguments": {}}'),
    ("internlm2", '<|action_start|><|plugin|>\n{"name": "f", "parameters": {}}'),
    ("xlam", '[{"name": "f", "arguments": {"a": '),
    ("olmo3", "<function_calls>\nf(a='x')\n"),
    ("lfm2", "<|tool_call_start|>[f(a="),
    ("functiongemma", "<start_function_call>call:f{a:<escape>x<escape>}"),
    ("step3", '<｜tool_calls_begin｜>\n<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="f">\n'),
    ("functionary_v3_2", 'f\n{"a": '),
]


@pytest.mark.parametrize(("dialect", "raw"), CUT_OFF)
def test_output_cut_off_inside_a_call_is_truncated_never_a_call_or_content(dialect: str, raw: str) -> None:
    for result in (parse(raw, dialect), stream_parse(list(raw), dialect=dialect)):
        assert result.tool_calls == []
        assert result.content is None
        assert result.truncated is not None


@pytest.mark.parametrize(
    ("model", "dialect"),
    [
        ("ibm-granite/granite-3.0-2b-instruct", "granite"),
        ("ibm-granite/granite-3.2-8b-instruct", "granite"),
        ("granite3.1-dense:8b", "granite"),
        ("ibm-granite/granite-4.0-h-small", "hermes"),  # Granite 4 writes hermes blocks
        ("ibm-granite/granite-20b-functioncalling", "granite_20b_fc"),
        ("ai21labs/AI21-Jamba-Large-1.6", "jamba"),
        ("nvidia/NVIDIA-Nemotron-Nano-12B-v2", "nemotron"),
        ("nvidia/Llama-3.1-Nemotron-Nano-8B-v1", "nemotron"),
        ("tencent/Hunyuan-A13B-Instruct-FP8", "hunyuan_a13b"),
        ("microsoft/Phi-4-mini-instruct", "phi4_mini"),
        ("phi4-mini:3.8b", "phi4_mini"),
        ("fireworks-ai/firefunction-v2", "firefunction_v2"),
        ("MiniMaxAI/MiniMax-M1-40k", "minimax_m1"),
        ("MiniMaxAI/MiniMax-M2", "minimax_m2"),
        ("CohereLabs/c4ai-command-a-03-2025", "cohere_command"),
        ("command-r7b:7b", "cohere_command"),
        ("swiss-ai/Apertus-70B-Instruct-2509", "apertus"),
        ("meituan-longcat/LongCat-Flash-Chat-FP8", "longcat"),
        ("internlm/internlm2_5-20b-chat", "internlm2"),
        ("internlm/Intern-S1-mini", "internlm2"),
        ("Salesforce/Llama-xLAM-2-8b-fc-r", "xlam"),  # not llama3_json
        ("allenai/Olmo-3-32B-Think", "olmo3"),
        ("olmo-3:7b", "olmo3"),
        ("LiquidAI/LFM2-8B-A1B", "lfm2"),
        ("google/functiongemma-270m-it", "functiongemma"),
        ("google/gemma-4-31b-it", "gemma4"),
        ("stepfun-ai/step3-fp8", "step3"),
        ("meetkai/functionary-small-v3.2", "functionary_v3_2"),
        ("meetkai/functionary-small-v3.1", "llama_function"),  # v3.1's `<function=f>` form
    ],
)
def test_the_served_model_name_selects_the_format(model: str, dialect: str) -> None:
    found = dialect_for_model(model)
    assert found is not None and found.name == dialect


def test_kimi_vl_thinking_markers_are_reasoning() -> None:
    """Kimi-VL-Thinking and k1.5 think in `◁think▷…◁/think▷` (SGLang's `kimi` reasoning parser) and
    have no tool format of their own: detection (`auto`) reads their markers."""
    raw = "◁think▷The user greets me; no tool is needed.◁/think▷Hello! How can I help?"
    result = check_streams(raw, seeds=range(5), dialect="auto")
    assert (result.content, result.reasoning) == ("Hello! How can I help?", "The user greets me; no tool is needed.")
    call = '◁think▷Weather.◁/think▷<tool_call>\n{"name": "get_current_weather", "arguments": ' + W + "}\n</tool_call>"
    result = check_streams(call, seeds=range(5), dialect="auto")
    assert (result.reasoning, calls(result)) == ("Weather.", [("get_current_weather", WEATHER)])
