"""The DeepSeek dialects: V3/R1 and V3.1 special-token sections, V3.2 and V4/V4.1 DSML."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.conftest import calls, check_streams, random_splits, split_at, stream_parse
from toolcall_middleware import StreamParser, ToolCallEnd, TruncatedCall, dialect_for_model, parse
from toolcall_middleware.core._result import ParseResult

CALLS_BEGIN, CALLS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
CALL_BEGIN, CALL_END, SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"

V3 = "deepseek-ai/DeepSeek-V3-0324"
V31 = "deepseek-ai/DeepSeek-V3.1"
V32 = "deepseek-ai/DeepSeek-V3.2"
V4 = "deepseek-ai/DeepSeek-V4-Flash"
V41 = "deepseek-ai/DeepSeek-V4.1-Flash"


def v3_call(name: str, args: str) -> str:
    return f"{CALL_BEGIN}function{SEP}{name}\n```json\n{args}\n```{CALL_END}"


def v31_call(name: str, args: str) -> str:
    return f"{CALL_BEGIN}{name}{SEP}{args}{CALL_END}"


def dsml_param(name: str, value: Any, space: str = "") -> str:
    if isinstance(value, str):
        return f'<｜DSML｜{space}parameter name="{name}" string="true">{value}</｜DSML｜{space}parameter>'
    return f'<｜DSML｜{space}parameter name="{name}" string="false">{json.dumps(value)}</｜DSML｜{space}parameter>'


def dsml_invoke(name: str, args: dict[str, Any], space: str = "") -> str:
    params = "".join(dsml_param(k, v, space) + "\n" for k, v in args.items())
    return f'<｜DSML｜{space}invoke name="{name}">\n{params}</｜DSML｜{space}invoke>\n'


def dsml(tag: str, *invokes: str, space: str = "") -> str:
    return f"\n\n<｜DSML｜{space}{tag}>\n{''.join(invokes)}</｜DSML｜{space}{tag}>"


def parse_all_ways(raw: str, **kwargs: Any) -> ParseResult:
    """The whole parse, after checking that a char-by-char and random-split stream agree."""
    return check_streams(raw, seeds=range(1, 4), **kwargs)


# -- model names ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "dialect"),
    [
        ("deepseek-ai/DeepSeek-V3-0324", "deepseek_v3"),
        ("deepseek-ai/DeepSeek-V3", "deepseek_v3"),
        ("deepseek-v3:671b", "deepseek_v3"),
        ("deepseek-ai/DeepSeek-R1-0528", "deepseek_v3"),
        ("deepseek-r1:8b", "deepseek_v3"),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "deepseek_v3"),
        ("deepseek-ai/DeepSeek-V3.1", "deepseek_v31"),
        ("deepseek-ai/DeepSeek-V3.1-Terminus", "deepseek_v31"),
        ("deepseek-v3.1:671b", "deepseek_v31"),
        ("accounts/fireworks/models/deepseek-v3p1", "deepseek_v31"),
        ("deepseek-ai/DeepSeek-V3.2", "deepseek_v32"),
        ("deepseek-ai/DeepSeek-V3.2-Exp", "deepseek_v32"),
        ("deepseek-ai/DeepSeek-V4-Flash", "deepseek_v4"),
        ("deepseek-ai/DeepSeek-V4-Pro", "deepseek_v4"),
        ("deepseek-ai/DeepSeek-V4.1-Flash", "deepseek_v4"),
    ],
)
def test_model_name_selects_the_sub_format(model: str, dialect: str) -> None:
    found = dialect_for_model(model)
    assert found is not None and found.name == dialect


# -- V3 / R1 and V3.1 -------------------------------------------------------------------------


def test_v3_parallel_calls_with_text_around_them() -> None:
    raw = (
        "Checking both."
        + CALLS_BEGIN
        + v3_call("get_weather", '{"city": "Zürich"}')
        + "\n"
        + v3_call("search", '{"q": "café", "n": 3}')
        + CALLS_END
        + " Done."
    )
    r = parse_all_ways(raw, model=V3)
    assert calls(r) == [("get_weather", {"city": "Zürich"}), ("search", {"q": "café", "n": 3})]
    assert r.content == "Checking both. Done."
    assert r.finish_reason == "tool_calls"


def test_v3_pretty_printed_arguments_span_lines() -> None:
    args = json.dumps({"when": {"start": "09:00", "tags": ["a", "b"]}, "n": 1}, indent=2)
    r = parse_all_ways(CALLS_BEGIN + v3_call("plan", args) + CALLS_END, model=V3)
    assert calls(r) == [("plan", {"when": {"start": "09:00", "tags": ["a", "b"]}, "n": 1})]
    assert r.content is None


def test_v3_markers_and_fences_inside_a_string_value_stay_in_the_value() -> None:
    text = f"Use ```json\n{{}}\n``` or {CALL_END}{CALLS_END} tokens"
    raw = CALLS_BEGIN + v3_call("echo", json.dumps({"text": text}, ensure_ascii=False)) + CALLS_END
    r = parse_all_ways(raw, model=V3)
    assert calls(r) == [("echo", {"text": text})]
    assert r.content is None


def test_v31_calls_and_empty_arguments() -> None:
    raw = CALLS_BEGIN + v31_call("get_time", "{}") + v31_call("f", f'{{"s": "{SEP}"}}') + CALLS_END
    r = parse_all_ways(raw, model=V31, generation_prompt="<｜Assistant｜></think>")
    assert calls(r) == [("get_time", {}), ("f", {"s": SEP})]


def test_each_call_is_emitted_when_its_own_end_token_arrives() -> None:
    parser = StreamParser(model=V31)
    events = parser.feed(CALLS_BEGIN + v31_call("a", '{"x": 1}') + CALL_BEGIN + 'b<｜tool▁sep｜>{"y":')
    assert [e.arguments for e in events if isinstance(e, ToolCallEnd)] == ['{"x": 1}']
    events = parser.feed(" 2}" + CALL_END)
    assert [e.arguments for e in events if isinstance(e, ToolCallEnd)] == ['{"y": 2}']


def test_truncated_call_is_reported_never_a_call_nor_content() -> None:
    raw = CALLS_BEGIN + v31_call("a", '{"x": 1}') + CALL_BEGIN + 'b<｜tool▁sep｜>{"y": "Zür'
    r = parse_all_ways(raw, model=V31)
    assert calls(r) == [("a", {"x": 1})]
    assert r.content is None
    assert r.truncated == CALL_BEGIN + 'b<｜tool▁sep｜>{"y": "Zür'
    assert r.finish_reason == "length"
    events = StreamParser(model=V3).feed(CALLS_BEGIN + CALL_BEGIN + "function")
    assert not any(isinstance(e, TruncatedCall) for e in events)


def test_a_missing_section_end_after_whole_calls_is_not_a_truncation() -> None:
    r = parse_all_ways(CALLS_BEGIN + v31_call("a", "{}") + "\n", model=V31)
    assert calls(r) == [("a", {})]
    assert r.truncated is None and r.content is None


@pytest.mark.parametrize(
    "raw",
    [
        CALLS_BEGIN + v3_call("get_weather", '{"city": "Tokyo"') + CALLS_END,
        CALLS_BEGIN + f"function{SEP}get_weather\n```json\n{{}}\n```" + CALLS_END,
        CALLS_BEGIN + v3_call("get_weather", "[1, 2]") + CALLS_END,
        CALLS_BEGIN + f"{CALL_BEGIN}function{SEP}get weather\n```json\n{{}}\n```" + CALLS_END,
    ],
)
def test_malformed_section_comes_back_as_the_text_written(raw: str) -> None:
    r = parse_all_ways(raw, model=V3)
    assert r.tool_calls == []
    assert r.content == raw
    assert r.truncated is None


def test_a_malformed_call_next_to_a_good_one_is_content() -> None:
    bad = v31_call("broken", "{nope}")
    r = parse_all_ways(CALLS_BEGIN + v31_call("ok", "{}") + bad + CALLS_END, model=V31)
    assert calls(r) == [("ok", {})]
    assert r.content == bad


def test_a_section_in_a_code_fence_is_an_example_not_a_call() -> None:
    raw = "Example:\n```\n" + CALLS_BEGIN + v31_call("f", "{}") + CALLS_END + "\n```\nThat is all."
    r = parse_all_ways(raw, model=V31)
    assert r.tool_calls == []
    assert r.content == raw


# -- reasoning --------------------------------------------------------------------------------


def test_r1_template_prefills_think_unless_thinking_is_off() -> None:
    raw = "Weather needed.</think>" + CALLS_BEGIN + v3_call("w", "{}") + CALLS_END
    r = parse_all_ways(raw, model="deepseek-ai/DeepSeek-R1")
    assert r.reasoning == "Weather needed." and calls(r) == [("w", {})]
    assert parse("Hi", model="deepseek-ai/DeepSeek-R1", thinking=False).content == "Hi"
    # R1-0528 writes `<think>` itself; V3-0324 does not reason.
    assert parse("<think>a</think>b", model="deepseek-ai/DeepSeek-R1-0528").reasoning == "a"
    assert parse("Hi", model="deepseek-ai/DeepSeek-R1-0528").content == "Hi"
    assert parse("Hi", model=V3).content == "Hi"


@pytest.mark.parametrize("model", [V31, V32, V4])
def test_later_models_think_only_when_asked(model: str) -> None:
    assert parse("a</think>b", model=model, thinking=True).reasoning == "a"
    assert parse("plain", model=model).content == "plain"


@pytest.mark.parametrize(
    ("model", "section"),
    [
        (V31, CALLS_BEGIN + v31_call("w", "{}") + CALLS_END),
        (V32, dsml("function_calls", dsml_invoke("w", {}))),
        (V41, dsml("calls", dsml_invoke("w", {}, " "), space=" ")),
    ],
)
def test_a_call_section_ends_unclosed_reasoning(model: str, section: str) -> None:
    r = parse_all_ways("I will call w." + section, model=model, thinking=True)
    assert r.reasoning == "I will call w."
    assert calls(r) == [("w", {})]
    assert r.content is None


def test_a_mention_of_the_section_token_does_not_end_reasoning() -> None:
    raw = f"The token {CALLS_BEGIN} opens calls.</think>Hi"
    r = parse_all_ways(raw, model=V31, thinking=True)
    assert r.reasoning == f"The token {CALLS_BEGIN} opens calls."
    assert r.content == "Hi"


# -- DSML: V3.2, V4, V4.1 --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "tag", "space"),
    [(V32, "function_calls", ""), (V4, "tool_calls", ""), (V41, "calls", " ")],
)
def test_dsml_typed_parameters_and_parallel_calls(model: str, tag: str, space: str) -> None:
    args = {"path": "a<b>.py", "body": '  x = "1"\n\ty\n', "n": 3, "opts": {"k": [True, None]}}
    raw = "Doing it." + dsml(tag, dsml_invoke("write", args, space), dsml_invoke("noop", {}, space), space=space)
    r = parse_all_ways(raw + "\n\nAfter.", model=model)
    assert calls(r) == [("write", args), ("noop", {})]
    assert r.content == "Doing it.\n\nAfter."  # the layout after the section sets the text apart


def test_dsml_markup_inside_a_raw_string_value_is_text() -> None:
    text = 'Write <｜DSML｜invoke name="x"></｜DSML｜invoke></｜DSML｜function_calls> here'
    raw = dsml("function_calls", dsml_invoke("echo", {"text": text}))
    r = parse_all_ways(raw, model=V32)
    assert calls(r) == [("echo", {"text": text})]


def test_dsml_json_value_ends_outside_its_strings() -> None:
    value = {"note": "</｜DSML｜parameter> inside"}
    raw = dsml("tool_calls", dsml_invoke("f", {"v": value}))
    assert calls(parse_all_ways(raw, model=V4)) == [("f", {"v": value})]


def test_dsml_json_object_body_and_self_closing_invoke() -> None:
    raw = (
        "<｜DSML｜tool_calls>\n"
        '<｜DSML｜invoke name="f">\n{"a": "</｜DSML｜invoke>", "b": [1]}\n</｜DSML｜invoke>\n'
        '<｜DSML｜invoke name="submit"/>\n'
        "</｜DSML｜tool_calls>"
    )
    r = parse_all_ways(raw, model=V4)
    assert calls(r) == [("f", {"a": "</｜DSML｜invoke>", "b": [1]}), ("submit", {})]


def test_dsml_untyped_parameter_is_json_when_it_parses_else_text() -> None:
    raw = (
        '<｜DSML｜function_calls><｜DSML｜invoke name="f">'
        '<｜DSML｜parameter name="n">42</｜DSML｜parameter>'
        '<｜DSML｜parameter name="s">hello</｜DSML｜parameter>'
        "</｜DSML｜invoke></｜DSML｜function_calls>"
    )
    assert calls(parse_all_ways(raw, model=V32)) == [("f", {"n": 42, "s": "hello"})]


@pytest.mark.parametrize(
    "invoke",
    [
        '<｜DSML｜invoke name="f">\n<｜DSML｜parameter name="n" string="false">not json</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>",
        '<｜DSML｜invoke name="f">\nstray text\n</｜DSML｜invoke>',
        '<｜DSML｜invoke nome="f">\n</｜DSML｜invoke>',
        '<｜DSML｜invoke name="f">\n{"a": 1\n</｜DSML｜invoke>',
    ],
)
def test_dsml_malformed_invoke_comes_back_as_the_text_written(invoke: str) -> None:
    raw = "Text\n\n<｜DSML｜function_calls>\n" + invoke + "\n</｜DSML｜function_calls>"
    r = parse_all_ways(raw, model=V32)
    assert r.tool_calls == []
    assert r.content == raw
    assert r.truncated is None


def test_dsml_truncations() -> None:
    head = dsml("tool_calls", dsml_invoke("a", {"x": 1}))[: -len("</｜DSML｜tool_calls>")]
    for cut in (
        '<｜DSML｜invoke name="b">\n<｜DSML｜parameter name="q"',
        '<｜DSML｜invoke name="b">\n  ',
        "<｜DSML｜inv",
    ):
        r = parse_all_ways(head + cut, model=V4)
        assert calls(r) == [("a", {"x": 1})]
        assert r.content is None and r.finish_reason == "length"
        assert r.truncated == "\n" + cut  # with the layout after the first call
    r = parse_all_ways(head, model=V4)
    assert r.truncated is None and calls(r) == [("a", {"x": 1})]


# -- properties -------------------------------------------------------------------------------

TRICKY_VALUES = st.sampled_from(
    [CALL_END, CALLS_END, "</｜DSML｜invoke>", "<｜DSML｜parameter", '"}', "```", "\\", "  pad \n", "<think>"]
)
VALUES = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12), TRICKY_VALUES)
ARGS = st.dictionaries(st.from_regex(r"[a-z_]{1,6}", fullmatch=True), VALUES, max_size=3)
CALLS = st.lists(st.tuples(st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True), ARGS), max_size=3)
WORDS = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="<`｜"), min_size=1, max_size=10)
TEXT = (
    st.lists(st.one_of(WORDS, st.sampled_from(["<", "<｜", "<｜tool", "<｜DSML", "`", "\n"])), max_size=5)
    .map("".join)
    .filter(lambda t: "```" not in t and "<think>" not in t)
)
CUTS = st.lists(st.integers(min_value=0, max_value=10**6), max_size=30)


def render(fmt: str, calls_: list[tuple[str, dict[str, Any]]], pretty: bool) -> str:
    if fmt == "v3":
        body = [v3_call(n, json.dumps(a, indent=2 if pretty else None)) for n, a in calls_]
        return CALLS_BEGIN + "\n".join(body) + CALLS_END
    if fmt == "v31":
        return CALLS_BEGIN + "".join(v31_call(n, json.dumps(a)) for n, a in calls_) + CALLS_END
    space = " " if fmt == "v41" else ""
    tag = {"v32": "function_calls", "v4": "tool_calls", "v41": "calls"}[fmt]
    # A raw string value may hold anything but its own closing tag.
    clean = [(n, {k: v for k, v in a.items() if "</｜DSML｜" not in str(v)}) for n, a in calls_]
    return dsml(tag, *(dsml_invoke(n, a, space) for n, a in clean), space=space)


MODELS = {"v3": V3, "v31": V31, "v32": V32, "v4": V4, "v41": V41}


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(MODELS)), TEXT, CALLS, TEXT, st.booleans(), CUTS)
def test_round_trip_at_any_split(
    fmt: str, before: str, calls_: list[tuple[str, dict[str, Any]]], after: str, pretty: bool, cuts: list[int]
) -> None:
    section = render(fmt, calls_, pretty) if calls_ else ""
    raw = before + section + after
    whole = parse(raw, model=MODELS[fmt])
    assert stream_parse(split_at(raw, cuts), model=MODELS[fmt]) == whole
    if not calls_:
        assert whole.content == (raw or None)
        return
    # A backtick on the call's line before it may open an inline code span that a backtick after
    # it closes: the call is then an example, text (`test_inline_code.py`).
    assume("`" not in before.rpartition("\n")[2])
    if fmt in ("v32", "v4", "v41"):  # whitespace around a DSML section is layout
        ws = " \t\r\n"
        lead, trail = section[: len(section) - len(section.lstrip(ws))], section[len(section.rstrip(ws)) :]
        kept_before, kept_after = before.rstrip(ws), after.lstrip(ws)
        # ... and sets the text after it apart from a word before it (`BlockParser._set_apart`)
        layout = (trail + after)[: len(trail) + len(after) - len(kept_after)] or (before + lead)[len(kept_before) :]
        before, after = kept_before, (layout if kept_before and kept_after else "") + kept_after
        calls_ = [(n, {k: v for k, v in a.items() if "</｜DSML｜" not in str(v)}) for n, a in calls_]
    assert calls(whole) == calls_
    assert whole.content == ((before + after) or None)
    assert whole.truncated is None


def test_long_arguments_stream_in_small_pieces() -> None:
    big = 'line "q" \\ <｜tool▁call▁end｜> </｜DSML｜invoke>\n' * 4000  # ~200 KB
    cases = {
        V3: CALLS_BEGIN + v3_call("w", json.dumps({"c": big})) + CALLS_END,
        V31: CALLS_BEGIN + v31_call("w", json.dumps({"c": big})) + CALLS_END,
        V32: dsml("function_calls", dsml_invoke("w", {"c": big.replace("</｜DSML｜", "")})),
        V4: dsml("tool_calls", dsml_invoke("w", {"c": {"nested": big}})),
    }
    rng = random.Random(7)
    for model, raw in cases.items():
        pieces = list(random_splits(raw, rng, max_size=6))
        r = stream_parse(pieces, model=model)
        assert len(r.tool_calls) == 1 and r.content is None
