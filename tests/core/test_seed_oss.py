"""The `seed_oss` dialect: ByteDance Seed-OSS `<seed:tool_call>` XML calls and `<seed:think>` reasoning.

There are no conformance fixtures for this format, so these samples carry the proof. They follow
the Seed-OSS chat template (llama.cpp `ByteDance-Seed-OSS.jinja`) and the vLLM/SGLang parsers;
the three long samples are the model outputs of vLLM's own seed_oss tests. Every sample is parsed
whole, streamed one character at a time and at random splits, and all parses must agree.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import (
    calls,
    check_streams,
    content_around_calls,
    function_tools,
    random_splits,
    split_at,
    stream_parse,
)
from toolcall_middleware import StreamParser, ToolCallEnd, ToolCallStart, dialect_for_model, parse
from toolcall_middleware.core._result import ParseResult, merge_events

OPEN = "<seed:tool_call>"
CLOSE = "</seed:tool_call>"
SEED: dict[str, Any] = {"model": "ByteDance-Seed/Seed-OSS-36B-Instruct"}
# With a thinking budget of 0 the template opens the reasoning block itself.
BUDGET_0: dict[str, Any] = {**SEED, "generation_prompt": "<seed:bos>assistant\n<seed:think><seed:cot_budget_reflect>"}

SCHEMAS: dict[str, dict[str, Any]] = {
    "get_weather": {"location": {"type": "string"}, "unit": {"type": "string"}},
    "set_alarm": {
        "hour": {"type": "integer"},
        "volume": {"type": "number"},
        "repeat": {"type": "boolean"},
        "label": {"type": ["string", "null"]},
        "days": {"type": "array", "items": {"type": "string"}},
        "options": {"type": "object"},
        "note": {"type": "null"},
    },
    "write_file": {"path": {"type": "string"}, "content": {"type": "string"}},
    "run": {"command": {"type": "string"}},
}
TOOLS = function_tools(SCHEMAS)


def function(name: str, **params: str) -> str:
    body = "".join(f"<parameter={k}>{v}</parameter>\n" for k, v in params.items())
    return f"<function={name}>\n{body}</function>\n"


def call(name: str, **params: str) -> str:
    """One call as the chat template writes it: a block of its own."""
    return f"{OPEN}\n{function(name, **params)}{CLOSE}"


def check(raw: str, **kwargs: Any) -> ParseResult:
    """The whole parse, after asserting that every stream of `raw` gives the same."""
    return check_streams(raw, seeds=range(3), **{**SEED, "tools": TOOLS, **kwargs})


def no_markers(*texts: str | None) -> bool:
    markers = (OPEN, CLOSE, "<function=", "</function>", "<parameter=", "</parameter>", "<seed:think>", "</seed:think>")
    return not any(m in (t or "") for t in texts for m in markers)


# -- model selection and reasoning ------------------------------------------------------------


@pytest.mark.parametrize(
    "model",
    [
        "ByteDance-Seed/Seed-OSS-36B-Instruct",
        "ByteDance-Seed/Seed-OSS-36B-Base",
        "unsloth/Seed-OSS-36B-Instruct-GGUF",
        "seed-oss:36b",
        "bytedance/seed_oss_36b",
    ],
)
def test_model_selection(model: str) -> None:
    found = dialect_for_model(model)
    assert found is not None and found.name == "seed_oss"


def test_the_model_opens_its_own_reasoning_block() -> None:
    raw = "<seed:think>\nThe user said hello.\n</seed:think>\nHello!"
    assert check(raw) == ParseResult(content="Hello!", reasoning="The user said hello.")
    assert check(raw, thinking=True) == ParseResult(content="Hello!", reasoning="The user said hello.")
    assert check("Hello!") == ParseResult(content="Hello!", reasoning=None)
    # Only Seed's own tags mark reasoning.
    assert check("<think>x</think>Hi") == ParseResult(content="<think>x</think>Hi", reasoning=None)


def test_a_zero_budget_prompt_starts_inside_reasoning() -> None:
    raw = (
        "The current thinking budget is 0, so I will directly start answering the question."
        "</seed:cot_budget_reflect>\n</seed:think>\n" + call("get_weather", location="Barcelona, Spain")
    )
    result = check(raw, **BUDGET_0)
    assert result.reasoning == (
        "The current thinking budget is 0, so I will directly start answering the question.</seed:cot_budget_reflect>"
    )
    assert calls(result) == [("get_weather", {"location": "Barcelona, Spain"})] and result.content is None


# vLLM's seed_oss test outputs (tests/tool_parsers/test_seed_oss_tool_parser.py).
BUDGET_0_OUTPUT = (
    "<seed:think>\n</seed:cot_budget_reflect>\n</seed:cot_budget_reflect>\n"
    "The current thinking budget is 0, so I will directly start answering the question.\n</seed:think>\n"
    "<seed:tool_call>\n<function=get_weather>\n"
    "<parameter=location>Barcelona, Spain</parameter>\n</function>\n</seed:tool_call>"
)
BUDGET_512_THOUGHT = (
    "The user's current thinking budget is 512.</seed:cot_budget_reflect>\nLet me analyze the "
    "question. The user wants to know the weather in Barcelona, Spain. \n"
    "<seed:cot_budget_reflect>I have used 131 tokens, and there are 381 tokens remaining for use."
    "</seed:cot_budget_reflect>\n Since the unit isn't specified, the function will default to Celsius. "
    "\n<seed:cot_budget_reflect>I have used 257 tokens, and there are 255 tokens remaining for "
    "use.</seed:cot_budget_reflect>\n The unit parameter can be omitted since it's optional."
)
BUDGET_512_OUTPUT = (
    f"<seed:think>{BUDGET_512_THOUGHT}</seed:think>\n"
    "<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n</function>"
    "\n</seed:tool_call>"
)
DRAFT_THOUGHT = (
    "\nGot it, let's see. The user asked for the weather in Barcelona, Spain. "
    "Let me format the function call correctly. "
    "The format is <seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, "
    "Spain</parameter>\n<parameter=unit>celsius</parameter>\n</function>\n</seed:tool_call>. "
    'Wait, but does the unit parameter accept "celsius"? Let me go with that.'
)
DRAFT_OUTPUT = (
    f"<seed:think>{DRAFT_THOUGHT}</seed:think><seed:tool_call>\n<function=get_weather>\n<parameter=location>"
    "Barcelona, Spain</parameter>\n<parameter=unit>celsius</parameter>\n</function>\n</seed:tool_call>"
)


def test_budget_reflections_are_reasoning_text() -> None:
    result = check(BUDGET_512_OUTPUT)
    assert result.reasoning == BUDGET_512_THOUGHT and result.content is None
    assert calls(result) == [("get_weather", {"location": "Barcelona, Spain"})]
    zero = check(BUDGET_0_OUTPUT)
    assert zero.reasoning == (
        "</seed:cot_budget_reflect>\n</seed:cot_budget_reflect>\n"
        "The current thinking budget is 0, so I will directly start answering the question."
    )
    assert calls(zero) == [("get_weather", {"location": "Barcelona, Spain"})] and zero.content is None


def test_a_call_drafted_while_thinking_stays_reasoning_and_only_the_real_one_runs() -> None:
    result = check(DRAFT_OUTPUT)
    assert result.reasoning == DRAFT_THOUGHT.strip()
    assert calls(result) == [("get_weather", {"location": "Barcelona, Spain", "unit": "celsius"})]
    assert result.content is None
    # Cut off before `</seed:think>`: still only reasoning, no call.
    cut = check(DRAFT_OUTPUT[: DRAFT_OUTPUT.index("</seed:think>")])
    assert cut == ParseResult(content=None, reasoning=DRAFT_THOUGHT.strip())


# -- calls --------------------------------------------------------------------------------------


def test_one_block_per_call_as_the_template_writes_them() -> None:
    raw = "I'll check both.\n" + call("get_weather", location="Paris") + "\n" + call("get_weather", location="Rome")
    result = check(raw)
    assert calls(result) == [("get_weather", {"location": "Paris"}), ("get_weather", {"location": "Rome"})]
    assert result.content == "I'll check both." and result.finish_reason == "tool_calls"


def test_several_functions_in_one_block_are_handed_out_one_by_one() -> None:
    parser = StreamParser(**SEED, tools=TOOLS)
    first = parser.feed(f"{OPEN}\n" + function("run", command="ls"))
    assert [e.index for e in first if isinstance(e, ToolCallEnd)] == [0]
    second = parser.feed(function("run", command="pwd")[:-4])  # `</function>` not complete yet
    assert not any(isinstance(e, (ToolCallStart, ToolCallEnd)) for e in second)
    rest = parser.feed("on>\n" + CLOSE + "\nDone.") + parser.close()
    assert [e.index for e in rest if isinstance(e, ToolCallEnd)] == [1]
    merged = merge_events(first + second + rest)
    assert calls(merged) == [("run", {"command": "ls"}), ("run", {"command": "pwd"})]
    assert merged.content == "Done."


def test_a_function_without_the_section_token_is_a_call_too() -> None:
    result = check("Running.\n" + function("run", command="ls") + "\nDone.")
    assert calls(result) == [("run", {"command": "ls"})] and result.content == "Running.\nDone."
    closed = check(function("run", command="ls") + CLOSE)  # a stray section end goes with it
    assert calls(closed) == [("run", {"command": "ls"})] and closed.content is None


def test_a_call_without_parameters_has_empty_arguments() -> None:
    result = check(f"{OPEN}\n<function=list_files>\n</function>\n{CLOSE}")
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("list_files", "{}")]


def test_a_fenced_example_is_not_a_call() -> None:
    raw = "Like this:\n```\n" + call("run", command="ls") + "\n```"
    result = check(raw)
    assert result.tool_calls == [] and result.content == raw


# -- values and types -------------------------------------------------------------------------


def test_values_are_typed_by_the_schema_also_in_pythons_spelling() -> None:
    # The template writes non-string arguments with Jinja's `string` filter: Python's repr.
    raw = call(
        "set_alarm",
        hour="7",
        volume="0.5",
        repeat="True",
        label="None",
        days="['mon', 'tue']",
        options="{'snooze': False, 'tone': None}",
        note="None",
    )
    assert calls(check(raw)) == [
        (
            "set_alarm",
            {
                "hour": 7,
                "volume": 0.5,
                "repeat": True,
                "label": "None",  # a string is allowed, so the text stays
                "days": ["mon", "tue"],
                "options": {"snooze": False, "tone": None},
                "note": None,
            },
        )
    ]


def test_strings_stay_strings_and_unknown_parameters_are_text() -> None:
    raw = call("run", command="42") + call("other", n="3", x="null", obj="{'a': 1}")
    assert calls(check(raw)) == [("run", {"command": "42"}), ("other", {"n": "3", "x": None, "obj": "{'a': 1}"})]


def test_exactly_one_newline_on_each_side_of_a_value_is_layout() -> None:
    code = "    if x:\n        y()\n"
    raw = call("write_file", path="a.py", content=f"\n{code}\n")
    assert calls(check(raw)) == [("write_file", {"path": "a.py", "content": code})]
    assert calls(check(call("run", command="\n\nls\n\n"))) == [("run", {"command": "\nls\n"})]


def test_multi_line_values_as_the_system_prompt_shows_them() -> None:
    value = "This is the value for the second parameter\nthat can span\nmultiple lines"
    raw = f"{OPEN}\n<function=example_function_name>\n<parameter=example_parameter_1>value_1</parameter>\n"
    raw += f"<parameter=example_parameter_2>{value}</parameter>\n</function>\n{CLOSE}\n"
    assert calls(check(raw)) == [
        ("example_function_name", {"example_parameter_1": "value_1", "example_parameter_2": value})
    ]


@pytest.mark.parametrize(
    "value",
    [
        "a </parameter> b",
        "ends with </parameter>",
        "x </parameter>\n  then text",
        f"inline {OPEN} and {CLOSE} and </function> here",
        "<function=evil>",
        "<parameter=inline> is not at a line start",
        "</seed:think> and <seed:think>",
    ],
)
def test_markers_inside_a_value_stay_in_the_value(value: str) -> None:
    result = check("Writing.\n" + call("write_file", path="doc.md", content=value))
    assert calls(result) == [("write_file", {"path": "doc.md", "content": value})]
    assert result.content == "Writing." and result.truncated is None


def test_a_missing_closing_parameter_ends_at_the_next_line_start_marker() -> None:
    raw = f"{OPEN}\n<function=set_alarm>\n<parameter=hour>7\n<parameter=label>wake\n</function>\n{CLOSE}"
    assert calls(check(raw)) == [("set_alarm", {"hour": 7, "label": "wake"})]


def test_non_ascii_values_are_kept_as_written() -> None:
    result = check(call("get_weather", location="Bogotá, Colombia"))
    assert result.tool_calls[0].arguments == '{"location": "Bogotá, Colombia"}'


# -- malformed and truncated -------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        f"{OPEN}\nI would call something here.\n{CLOSE}",
        f"{OPEN}\n<function=ru<n>\n</function>\n{CLOSE}",
        f"{OPEN}\n<function=>\n</function>\n{CLOSE}",
        f"{OPEN}\n<function=run>\nthen:\n<parameter=command>ls</parameter>\n</function>\n{CLOSE}",
        f"{OPEN}\n<function=run>\n<parameter=command>ls</parameter>\n{CLOSE}",  # no </function>
        "use <function=name> to call a tool",  # a mention in prose
    ],
)
def test_malformed_calls_come_back_as_content(raw: str) -> None:
    result = check("Before.\n" + raw + "\nAfter.")
    assert result.tool_calls == [] and result.truncated is None and result.finish_reason == "stop"
    assert re.sub(r"\s", "", result.content or "") == re.sub(r"\s", "", "Before." + raw + "After.")


@pytest.mark.parametrize(
    "cut",
    [
        OPEN,
        f"{OPEN}\n<func",
        f"{OPEN}\n<function=ru",
        f"{OPEN}\n<function=run>\n<parameter=command>rm -rf /",
        f"{OPEN}\n<function=run>\n<parameter=command>rm -rf /tmp/build</parameter>",
        f"{OPEN}\n<function=run>\n<parameter=command>rm -rf /tmp/build</parameter>\n</func",
        "<function=run>\n<parameter=command>rm -rf /",
    ],
)
def test_output_cut_inside_a_call_is_truncated_never_a_call(cut: str) -> None:
    result = check("Working.\n" + cut)
    assert result.tool_calls == [] and result.finish_reason == "length"
    assert result.content == "Working." and result.truncated == cut


def test_every_cut_of_a_sample_keeps_only_the_calls_it_finished() -> None:
    raw = BUDGET_512_OUTPUT + "\n" + call("run", command="ls") + "\nDone."
    whole = calls(check(raw))
    assert len(whole) == 2
    ends = [m.end() for m in re.finditer("</function>", raw)]
    blocks = [(m.end(), raw.index(CLOSE, m.end()) + len(CLOSE)) for m in re.finditer(re.escape(OPEN), raw)]
    for n in range(len(raw) + 1):
        prefix = raw[:n]
        result = parse(prefix, **SEED, tools=TOOLS)
        assert stream_parse(list(prefix), **SEED, tools=TOOLS) == result
        assert calls(result) == whole[: sum(1 for e in ends if e <= n)], prefix
        assert no_markers(result.content)
        inside = any(a <= n < b for a, b in blocks) and not prefix.rstrip().endswith("</function>")
        assert (result.truncated is not None) == inside, prefix


# -- performance and properties ----------------------------------------------------------------


def test_long_arguments_stream_in_small_pieces() -> None:
    content = "line </parameter> x\n<param\n" * 8_000  # 200 KB of newlines and partial markers
    raw = call("write_file", path="big.txt", content=content)
    pieces = list(random_splits(raw, 7, max_size=6))
    result = stream_parse(pieces, **SEED, tools=TOOLS)
    assert calls(result) == [("write_file", {"path": "big.txt", "content": content[:-1]})]


SAMPLES = [
    BUDGET_0_OUTPUT,
    BUDGET_512_OUTPUT,
    DRAFT_OUTPUT,
    "Hi.\n\n" + call("set_alarm", hour="7", label="a </parameter> b") + "\n" + call("run", command="ls") + "\nBye.",
    "<function=run>\n<parameter=command>\npwd\n<parameter=x>\n1\n</function>\n</seed:tool_call>after",
    f"before{OPEN}<function=run><parameter=command>ls</parameter></function>{CLOSE}after",
    f"{OPEN}\n<function=run>\n<parameter=command>ls</parameter>\n{CLOSE} trailing",
    "Cut: " + call("run", command="ok")[:-20],
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SAMPLES), st.lists(st.integers(min_value=0, max_value=10**6), max_size=30), st.booleans())
def test_any_split_gives_the_whole_parse(raw: str, cuts: list[int], budget_0: bool) -> None:
    kwargs: dict[str, Any] = {**(BUDGET_0 if budget_0 else SEED), "tools": TOOLS}
    pieces = split_at(raw, cuts)
    assert stream_parse(pieces, **kwargs) == parse(raw, **kwargs)


TRICKY = st.sampled_from(
    ["<", "</", "<seed", "<function", "</function>", "<parameter", "</parameter", "</parameter>", "=", ">", " "]
)
WORDS = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="<`\r"), min_size=1, max_size=10)
TEXT = (
    st.lists(st.one_of(WORDS, TRICKY), max_size=6)
    .map("".join)
    .filter(lambda t: t.strip() == t and OPEN not in t and "<function=" not in t and "<seed:think>" not in t)
)
_CLOSES = re.compile(r"</parameter>[ \t\r\n]*(?:<parameter=|</function>|</seed:tool_call>)|\n<parameter=|\n</function>")
VALUE = (
    st.lists(st.one_of(WORDS, TRICKY, st.just("\n")), max_size=6)
    .map("".join)
    .filter(lambda v: v.strip("\n") == v and not _CLOSES.search(v))
)
NAME = st.from_regex(r"[a-z_][a-z0-9_.-]{0,12}", fullmatch=True)
CALL = st.tuples(NAME, st.dictionaries(NAME, VALUE, max_size=3))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(TEXT, st.lists(CALL, max_size=2)), min_size=1, max_size=4),
    st.lists(st.integers(min_value=0, max_value=10**6), max_size=30),
)
def test_round_trip_loses_and_invents_nothing(
    segments: list[tuple[str, list[tuple[str, dict[str, str]]]]], cuts: list[int]
) -> None:
    raw_parts: list[str] = []
    want_calls: list[tuple[str, Any]] = []
    for text, group in segments:
        raw_parts.append(text)
        for name, args in group:
            raw_parts.append("\n" + call(name, **args) + "\n")
            want_calls.append((name, {k: None if v.strip().lower() == "null" else v for k, v in args.items()}))
    raw = "".join(raw_parts)
    pieces = split_at(raw, cuts)
    for result in (parse(raw, "seed_oss"), stream_parse(pieces, dialect="seed_oss")):
        assert calls(result) == want_calls
        assert (result.content or "") == content_around_calls(segments, "\n")
        assert result.reasoning is None and result.truncated is None
