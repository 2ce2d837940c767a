"""`dialect="auto"`: the served model name first; else the first marker only one format writes."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from canitoolcall.fixtures import Fixture
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import check_streams, split_at, stream_parse
from tests.core.test_conformance import FIXTURES
from tests.core.test_table_formats import SAMPLES as TABLE
from toolcall_middleware import StreamParser, dialect_for_model, parse
from toolcall_middleware.core._events import TextDelta
from toolcall_middleware.core.dialects import Dialect, ParseContext, get_dialect, list_dialects
from toolcall_middleware.core.dialects._dialect import SharedMarker
from toolcall_middleware.core.dialects._rendering import CallToRender
from toolcall_middleware.core.dialects.auto import REASONING, SHARED, UNIQUE, AutoParser, detection_tables

WEATHER = {"city": "Paris"}
J = json.dumps(WEATHER)
DS = (
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
    + J
    + "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
)
DSML = (
    '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n'
    '<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n'
    "</｜DSML｜invoke>\n</｜DSML｜function_calls>"
)

# (expected dialect, raw output) - each writes one get_weather call after "Let me check."
SAMPLES = [
    ("hermes", 'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": ' + J + "}\n</tool_call>"),
    (
        "qwen3_coder",
        "Let me check.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "</function>\n</tool_call>",
    ),
    (
        "glm45",
        "Let me check.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
    ),
    ("glm47", "Let me check.<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>"),
    (
        "kimi_k2",
        "Let me check.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
        "<|tool_call_argument_begin|>" + J + "<|tool_call_end|><|tool_calls_section_end|>",
    ),
    ("deepseek_v31", "Let me check." + DS),
    ("deepseek_v32", "Let me check." + DSML),
    ("mistral", "Let me check.[TOOL_CALLS]get_weather[ARGS]" + J),
    ("llama_function", "Let me check.<function=get_weather>" + J + "</function>"),
    ("gemma4", 'Let me check.<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>'),
    (
        "minimax_m2",
        'Let me check.<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n'
        "</invoke>\n</minimax:tool_call>",
    ),
]


@pytest.mark.parametrize(("dialect", "raw"), SAMPLES, ids=[d for d, _ in SAMPLES])
def test_auto_finds_the_dialect_from_the_output(dialect: str, raw: str) -> None:
    named = parse(raw, dialect)
    assert [(c.name, json.loads(c.arguments)) for c in named.tool_calls] == [("get_weather", WEATHER)]
    auto = parse(raw, "auto", model="acme/unknown-model")
    assert auto == named
    assert stream_parse(list(raw), dialect="auto") == named


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(SAMPLES), st.lists(st.integers(min_value=0, max_value=400), max_size=12))
def test_auto_is_split_invariant(sample: tuple[str, str], cuts: list[int]) -> None:
    _, raw = sample
    pieces = split_at(raw, cuts)
    assert stream_parse(pieces, dialect="auto") == parse(raw, "auto")


def test_a_known_model_name_wins() -> None:
    assert StreamParser("auto", model="Qwen/Qwen3-8B").dialect.name == "hermes"
    assert StreamParser("auto", model="acme/unknown").dialect.name == "auto"
    assert StreamParser("auto").dialect.name == "auto"


def test_mentions_and_plain_text_stay_text() -> None:
    for text in ["plain text", "use <tool_call> tags", "a <function= mention", "<tool_call> and more words here"]:
        r = parse(text, "auto")
        assert r.content == text and r.tool_calls == []


def test_text_before_the_marker_streams_at_once() -> None:
    p = StreamParser("auto")
    assert [e.text for e in p.feed("Hello there, ")] == ["Hello there,"]  # type: ignore[union-attr]


# -- the formats of `formats.md`'s table ----------------------------------------------------------

# The marker each format's samples must hold for auto to read them as that format.
PICKED_BY = {
    "granite": "<|tool_call|>",
    "granite_20b_fc": "<function_call> {",
    "internlm2": "<|action_start|>",
    "jamba": "<tool_calls>[",
    "minimax_m1": "<tool_calls>\n{",
    "hunyuan_a13b": "<answer>\n<tool_calls>",
    "nemotron": "<TOOLCALL>",
    "cohere_command": "<|START_",
    "apertus": "<|tools_prefix|>",
    "longcat": "<longcat_tool_call>",
    "step3": "<｜tool_calls_begin｜>",
    "olmo3": "<function_calls>\n",
    "lfm2": "<|tool_call_start|>",
    "functiongemma": "<start_function_call>",
}
TABLE_CASES = [(d, raw) for d, _, raw, *_ in TABLE if d in PICKED_BY and PICKED_BY[d] in raw]


def test_every_detected_format_has_a_real_output() -> None:
    assert {d for d, _ in TABLE_CASES} == set(PICKED_BY)


@pytest.mark.parametrize(("dialect", "raw"), TABLE_CASES, ids=[d for d, _ in TABLE_CASES])
def test_auto_reads_a_real_output_as_its_dialect_does(dialect: str, raw: str) -> None:
    named = parse(raw, dialect)
    assert named.tool_calls or named.content  # (the sample is this format's)
    assert check_streams(raw, seeds=range(5), dialect="auto") == named


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(TABLE_CASES), st.lists(st.integers(min_value=0, max_value=10**6), max_size=30))
def test_auto_reads_a_real_output_as_its_dialect_does_at_any_split(sample: tuple[str, str], cuts: list[int]) -> None:
    dialect, raw = sample
    assert stream_parse(split_at(raw, cuts), dialect="auto") == parse(raw, dialect)


def written(dialect: str, prose: str, args: dict[str, str]) -> str:
    """Prose, then one get_weather call as the format's own renderer writes it."""
    renderer = get_dialect(dialect).renderer
    assert renderer is not None
    call = renderer.calls([CallToRender(id="call_0", name="get_weather", arguments=args)])
    if dialect == "hunyuan_a13b":  # (Hunyuan-A13B wraps its answer; the bare block is Jamba's)
        call = f"<answer>\n{call}\n</answer>"
    return prose + call


PROSE = st.text(alphabet="abc XYZ.,!?'\n\t", max_size=30)
VALUES = st.dictionaries(
    st.sampled_from(["city", "unit", "when"]), st.text(alphabet="abcdefg XYZ.,-'", min_size=1, max_size=20), max_size=3
)


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(sorted(PICKED_BY)),
    PROSE,
    VALUES,
    PROSE,
    st.lists(st.integers(min_value=0, max_value=500), max_size=12),
)
def test_auto_reads_each_format_after_any_prose_at_any_split(
    dialect: str, prose: str, args: dict[str, str], after: str, cuts: list[int]
) -> None:
    """Prose, a call, prose: `auto` gives what the format's own dialect gives, the separator
    between the two texts included (the dialect's parser is told the text `auto` sent)."""
    raw = written(dialect, prose, args) + after
    named = parse(raw, dialect)
    assert [(c.name, json.loads(c.arguments)) for c in named.tool_calls] == [("get_weather", args)]
    assert parse(raw, "auto") == named
    assert stream_parse(split_at(raw, cuts), dialect="auto") == named


@pytest.mark.parametrize(
    "raw",
    [
        'I will check now.\n<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>\nDone.',
        'I will check now. <tool_call>{"name": "f", "arguments": {}}</tool_call> Done.',
        'I will check now.\n<TOOLCALL>[{"name": "f", "arguments": {}}]</TOOLCALL>\nDone.',
    ],
)
def test_text_on_both_sides_of_a_detected_call_stays_apart(raw: str) -> None:
    """The text before the marker went out before the dialect was chosen: the text after the call
    is still set apart from it, as the dialect itself does (not `now.Done.`)."""
    got = check_streams(raw, seeds=range(5), dialect="auto")
    assert got.content is not None and got.content.startswith("I will check now.")
    assert got.content.endswith((" Done.", "\nDone.")) and [c.name for c in got.tool_calls] == ["f"]


# Forms with no marker of their own: auto leaves them as text (their model names select them).
UNDETECTED = [
    '[{"name": "get_weather", "arguments": {"city": "Paris"}}]',  # xLAM, Granite without its token
    '<tool_call>[{"name": "get_weather", "arguments": {"city": "Paris"}}]',  # Granite 3.1-3.3 or xLAM
    'functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]',  # Phi-4-mini
    ' functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]',  # FireFunction v2
    'all\nLet me check.>>>get_weather\n{"city": "Paris"}',  # Functionary v3.2
    'get_weather\n{"city": "Paris"}',
    "Here is my thought process: none needed.\nHere is my response: Hi.",  # Granite's thinking
]


@pytest.mark.parametrize("raw", UNDETECTED)
def test_a_form_without_a_marker_of_its_own_stays_text(raw: str) -> None:
    result = check_streams(raw, seeds=range(3), dialect="auto")
    assert (result.content, result.tool_calls, result.reasoning) == (raw, [], None)


# Shared markers followed by what no format writes there: text, at once or after the lookahead.
MENTIONS = [
    "Wrap them in <tool_calls> tags.",
    "The <answer> tag holds the reply.",
    "<answer>\n<tool_calls> is how Hunyuan starts a call.",
    'Claude wrote <function_calls>\n<invoke name="f"></invoke></function_calls> once.',
    "Write <function_calls> and then the calls.",
    "Use <function_call> tags, not JSON.",
    "<tool_calls><tool_call>get_weather<tool_sep><arg_key>city</arg_key></tool_call></tool_calls>",  # Hunyuan V3
]


@pytest.mark.parametrize("raw", MENTIONS)
def test_a_shared_marker_named_in_prose_stays_text(raw: str) -> None:
    result = check_streams(raw, seeds=range(3), dialect="auto")
    assert (result.content, result.tool_calls) == (raw, [])


def test_a_shared_marker_followed_by_words_does_not_hold_them_back() -> None:
    p = StreamParser("auto")
    out = p.feed("Wrap them in <tool_calls> tags")
    assert "".join(e.text for e in out if isinstance(e, TextDelta)) == "Wrap them in <tool_calls> tags"


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.id for f in FIXTURES])
def test_no_conformance_fixture_is_taken_by_a_newer_format(fixture: Fixture) -> None:
    """The formats auto detected before the table's were added keep their outputs: no recorded
    output of theirs holds a newer format's marker where auto would stop."""
    machine = AutoParser(ParseContext())
    machine.feed(fixture.raw_output)
    machine.close()
    assert machine.chosen is None or machine.chosen not in PICKED_BY


def test_the_docs_list_every_marker_auto_detects() -> None:
    docs = Path(__file__).parents[2] / "docs" / "dialects.md"
    section = docs.read_text(encoding="utf-8").split("## What `auto` detects", 1)[1]
    for marker in (*UNIQUE, *SHARED):
        assert f"`{marker.replace('|', chr(92) + '|')}" in section, marker
    for name in {*UNIQUE.values(), *(g for look in SHARED.values() for g in look.pattern.groupindex)}:
        assert f"`{name}`" in section, name


def fixture_options(fixture: Fixture) -> dict[str, Any]:
    return {"tools": list(fixture.tools), "generation_prompt": fixture.generation_prompt, "thinking": fixture.thinking}


def fixture_dialect(fixture: Fixture) -> str:
    found = dialect_for_model(fixture.models[0])
    assert found is not None
    return found.name


# Formats whose recorded outputs auto reads, every one, as the format's own dialect does.
READ_WHOLE = {"mistral", "deepseek_v3", "deepseek_v31", "deepseek_v32", "glm45"}
WHOLE_FIXTURES = [f for f in FIXTURES if fixture_dialect(f) in READ_WHOLE]


@pytest.mark.parametrize("fixture", WHOLE_FIXTURES, ids=[f.id for f in WHOLE_FIXTURES])
def test_auto_reads_a_recorded_output_as_its_dialect_does(fixture: Fixture) -> None:
    named = parse(fixture.raw_output, model=fixture.models[0], **fixture_options(fixture))
    assert check_streams(fixture.raw_output, seeds=range(2), dialect="auto", **fixture_options(fixture)) == named


# Reasoning markers of formats auto detects, which open recorded outputs: auto splits them off too.
OPENING_REASONING = [
    f for f in FIXTURES if f.raw_output.lstrip().startswith(("[THINK]", "<|channel>thought", "<seed:think>"))
]


@pytest.mark.parametrize("fixture", OPENING_REASONING, ids=[f.id for f in OPENING_REASONING])
def test_auto_splits_the_reasoning_of_a_detected_format(fixture: Fixture) -> None:
    named = parse(fixture.raw_output, model=fixture.models[0], **fixture_options(fixture))
    auto = parse(fixture.raw_output, "auto", **fixture_options(fixture))
    assert named.reasoning and auto.reasoning == named.reasoning
    assert auto.tool_calls == named.tool_calls


def test_the_reasoning_of_the_table_formats_is_split_off() -> None:
    for opener, closer in (
        ("<|START_THINKING|>", "<|END_THINKING|>"),
        ("<|inner_prefix|>", "<|inner_suffix|>"),
        ("<longcat_think>", "</longcat_think>"),
        ("<seed:think>", "</seed:think>"),
    ):
        result = check_streams(f"{opener}Just a greeting.{closer}Hello!", seeds=range(3), dialect="auto")
        assert (result.reasoning, result.content) == ("Just a greeting.", "Hello!")


def test_auto_reads_the_markers_each_dialect_declares() -> None:
    """No table of formats lives in `auto`: a marker picks the dialect that declares it."""
    registered = [get_dialect(name) for name in list_dialects() if name != "auto"]
    assert UNIQUE == {marker: d.name for d in registered for marker in d.markers}
    assert set(SHARED) == {shared.marker for d in registered for shared in d.shared_markers}
    assert {pair for d in registered for pair in d.detected_reasoning} <= set(REASONING.pairs)
    assert get_dialect("auto").reasoning is REASONING
    for marker, look in SHARED.items():
        assert set(look.pattern.groupindex) == {
            d.name for d in registered if any(shared.marker == marker for shared in d.shared_markers)
        }


def test_a_declared_marker_picks_its_dialect() -> None:
    tag = Dialect(name="tagged", description="", machine=AutoParser, markers=("<<call>>",))
    braced = Dialect(
        name="braced", description="", machine=AutoParser, shared_markers=(SharedMarker("<call>", r" *\{", r"\{"),)
    )
    bracketed = Dialect(
        name="bracketed", description="", machine=AutoParser, shared_markers=(SharedMarker("<call>", r" *\[", r"\["),)
    )
    unique, shared = detection_tables([tag, braced, bracketed])
    assert unique == {"<<call>>": "tagged"}
    look = shared["<call>"]
    assert look.decide("<call> {", 6, final=False) == "braced"
    assert look.decide("<call>[", 6, final=False) == "bracketed"
    assert look.decide("<call> and more", 6, final=False) is False  # `a` starts neither
    assert look.decide("<call> ", 6, final=False) is None  # undecided until more comes
    with pytest.raises(ValueError, match="tagged and again"):
        detection_tables([tag, replace(tag, name="again")])
    with pytest.raises(ValueError, match="both"):
        detection_tables([braced, replace(tag, markers=("<call>",))])
