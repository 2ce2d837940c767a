"""Incremental argument streaming (`StreamParser(arguments_streaming="incremental")`).

- Every conformance fixture, at any split, merges to the whole-mode parse (arguments equal as
  JSON: JSON formats stream the model's own text of the arguments object), and every call's
  events are well formed: one start, fragments that concatenate to its end's arguments.
- Calls rendered from random names and arguments stream: the start goes out before the call's
  closing marker, fragments as the arguments arrive, and the result is the whole-mode one.
- What cannot stream honestly is not sent changed: a body only a repair reads, a repeated key.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from canitoolcall.fixtures import Fixture, load_fixtures
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import split_at
from toolcall_middleware import StreamParser, merge_events, parse
from toolcall_middleware.core._events import Event, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart
from toolcall_middleware.core._result import ParseResult
from toolcall_middleware.core.dialects import get_dialect, list_dialects
from toolcall_middleware.core.request import render_calls

FIXTURES = load_fixtures()
INCREMENTAL_DIALECTS = {name for name in list_dialects() if get_dialect(name).incremental}


def events_of(pieces: list[str], **kwargs: Any) -> list[Event]:
    parser = StreamParser(**kwargs)
    events: list[Event] = []
    for piece in pieces:
        events.extend(parser.feed(piece))
    return events + parser.close()


def well_formed(events: list[Event]) -> None:
    """Each call: one start, then its fragments, then at most one end holding their concatenation."""
    fragments: dict[int, list[str]] = {}
    ended: set[int] = set()
    for event in events:
        if isinstance(event, ToolCallStart):
            assert event.index not in fragments
            fragments[event.index] = []
        elif isinstance(event, ToolCallDelta):
            assert event.index not in ended
            fragments[event.index].append(event.arguments)
        elif isinstance(event, ToolCallEnd):
            assert event.index not in ended
            ended.add(event.index)
            assert "".join(fragments[event.index]) == event.arguments


def comparable(result: ParseResult) -> tuple[Any, ...]:
    calls = [(c.name, c.id, json.loads(c.arguments)) for c in result.tool_calls]
    return result.content, result.reasoning, result.truncated, calls


def fixture_options(fixture: Fixture) -> dict[str, Any]:
    return {
        "model": fixture.models[0],
        "tools": list(fixture.tools),
        "generation_prompt": fixture.generation_prompt,
        "thinking": fixture.thinking,
    }


def test_the_streaming_dialects_declare_it() -> None:
    streaming = {"hermes", "kimi_k2", "deepseek_v3", "deepseek_v31", "qwen3_coder", "minimax_m2", "seed_oss", "glm45"}
    assert streaming | {"glm47"} <= INCREMENTAL_DIALECTS


@pytest.mark.parametrize("dialect", sorted(set(list_dialects()) - {"auto"}))
def test_a_dialect_streams_its_own_call_early_exactly_when_declared_incremental(dialect: str) -> None:
    # The declaration is the behaviour: the call as the dialect's renderer writes it, fed one
    # character at a time, sends argument text before the second argument has arrived.
    raw = render_calls(dialect, [("call_1", "get_weather", '{"city": "Paris", "note": "a long rainy day"}')])
    parser = StreamParser(dialect=dialect, arguments_streaming="incremental")
    events: list[Event] = []
    early = False
    for position, char in enumerate(raw):
        events.extend(parser.feed(char))
        if position == raw.index("rainy"):
            early = any(isinstance(event, ToolCallDelta) and event.arguments for event in events)
    events.extend(parser.close())
    well_formed(events)
    assert merge_events(events) == parse(raw, dialect)
    assert early == get_dialect(dialect).incremental


def test_an_unknown_mode_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="arguments_streaming"):
        StreamParser("hermes", arguments_streaming="eager")  # type: ignore[arg-type]


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.id for f in FIXTURES])
def test_every_fixture_streamed_per_character_merges_to_the_whole_parse(fixture: Fixture) -> None:
    options = fixture_options(fixture)
    whole = parse(fixture.raw_output, **options)
    for pieces in ([fixture.raw_output], list(fixture.raw_output)):
        events = events_of(pieces, arguments_streaming="incremental", **options)
        well_formed(events)
        assert comparable(merge_events(events)) == comparable(whole)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(FIXTURES), st.lists(st.integers(min_value=0, max_value=10**6), max_size=40))
def test_any_split_of_any_fixture_streams_to_the_whole_parse(fixture: Fixture, cuts: list[int]) -> None:
    options = fixture_options(fixture)
    pieces = split_at(fixture.raw_output, cuts)
    events = events_of(pieces, arguments_streaming="incremental", **options)
    well_formed(events)
    incremental = merge_events(events)
    # Within incremental mode the merged events do not depend on the split at all.
    assert incremental == merge_events(events_of([fixture.raw_output], arguments_streaming="incremental", **options))
    assert comparable(incremental) == comparable(parse(fixture.raw_output, **options))
    assert merge_events(events_of(pieces, **options)) == parse(fixture.raw_output, **options)


# -- generated calls ------------------------------------------------------------------------

VALUE_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="\r\x00"), min_size=1, max_size=30
).filter(lambda v: v.strip() == v and "<" not in v and v.lower() != "null")  # (`null` is a null)
TEXT = st.text(alphabet="abc xyz.,!?", min_size=1, max_size=20).map(str.strip).filter(bool)
NAME = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
KEYS = st.lists(st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True), min_size=1, max_size=4, unique=True)
TRICKY_STRINGS = st.sampled_from(
    ["</tool_call>", '"}', "<|tool_call_end|>", "<｜tool▁call▁end｜>", "```", "{", "a\\b", "日本", "\n"]
)


@st.composite
def json_call(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    keys = draw(KEYS)
    values = st.one_of(st.integers(), st.booleans(), st.none(), VALUE_TEXT, TRICKY_STRINGS, st.lists(st.integers()))
    return draw(NAME), {k: draw(values) for k in keys}


@st.composite
def xml_call(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    return draw(NAME), {k: draw(VALUE_TEXT) for k in draw(KEYS)}


def spaced_json(args: dict[str, Any], compact: bool) -> str:
    return json.dumps(args, ensure_ascii=compact, separators=(",", ":") if compact else (", ", ": "))


def render(dialect: str, name: str, args: dict[str, Any], compact: bool) -> tuple[str, str]:
    """The raw text of one call, and the marker that closes it."""
    if dialect == "hermes":
        body = {"name": name, "arguments": args} if not compact else {"arguments": args, "name": name}
        return f"<tool_call>\n{json.dumps(body)}\n</tool_call>", "</tool_call>"
    if dialect == "longcat":
        body = {"name": name, "arguments": args}
        return f"<longcat_tool_call>{json.dumps(body)}</longcat_tool_call>", "</longcat_tool_call>"
    if dialect == "internlm2":
        body = {"name": name, "parameters": args}
        return f"<|action_start|><|plugin|>\n{json.dumps(body)}<|action_end|>", "<|action_end|>"
    if dialect == "step3":
        params = "".join(f'<steptml:parameter name="{k}">{v}</steptml:parameter>\n' for k, v in args.items())
        return (
            f'<｜tool_calls_begin｜>\n<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="{name}">\n'
            f"{params}</steptml:invoke><｜tool_call_end｜>\n<｜tool_calls_end｜>",
            "</steptml:invoke>",
        )
    if dialect in ("deepseek_v3", "deepseek_v31"):
        raw = spaced_json(args, compact)
        body = (
            f"function<｜tool▁sep｜>{name}\n```json\n{raw}\n```"
            if dialect == "deepseek_v3"
            else f"{name}<｜tool▁sep｜>{raw}"
        )
        return (
            f"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>{body}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            "<｜tool▁call▁end｜>",
        )
    if dialect == "kimi_k2":
        raw = spaced_json(args, compact)
        return (
            "<|tool_calls_section_begin|><|tool_call_begin|>"
            f"functions.{name}:0<|tool_call_argument_begin|>{raw}<|tool_call_end|><|tool_calls_section_end|>",
            "<|tool_call_end|>",
        )
    if dialect in ("glm45", "glm47"):
        sep = "\n" if dialect == "glm45" else ""
        params = "".join(f"{sep}<arg_key>{k}</arg_key>{sep}<arg_value>{v}</arg_value>" for k, v in args.items())
        return f"<tool_call>{name}{params}{sep}</tool_call>", "</tool_call>"
    if dialect == "minimax_m2":
        params = "".join(f'<parameter name="{k}">{v}</parameter>\n' for k, v in args.items())
        return f'<minimax:tool_call>\n<invoke name="{name}">\n{params}</invoke>\n</minimax:tool_call>', "</invoke>"
    params = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in args.items())
    section = "seed:tool_call" if dialect == "seed_oss" else "tool_call"
    return f"<{section}>\n<function={name}>\n{params}</function>\n</{section}>", "</function>"


def check_generated(dialect: str, before: str, call: tuple[str, dict[str, Any]], after: str, cuts: list[int]) -> None:
    name, args = call
    compact = len(cuts) % 2 == 1  # both spellings of the JSON body, chosen by hypothesis too
    raw_call, closer = render(dialect, name, args, compact)
    raw = f"{before}\n{raw_call}\n{after}"
    # Parameter values are text: a string schema keeps them so (glm would read `0` as a number).
    tools = {name: {"type": "object", "properties": {k: {"type": "string"} for k in args}}}
    whole = parse(raw, dialect, tools=tools)
    assert [(c.name, json.loads(c.arguments)) for c in whole.tool_calls] == [(name, args)]
    events = events_of(split_at(raw, cuts), dialect=dialect, tools=tools, arguments_streaming="incremental")
    well_formed(events)
    assert comparable(merge_events(events)) == comparable(whole)
    # Fed one character at a time: the start and fragments go out before the call's closing marker.
    parser = StreamParser(dialect, tools=tools, arguments_streaming="incremental")
    close_at = len(before) + 1 + raw_call.rindex(closer)  # a value may mention the marker too
    early: list[Event] = []
    for ch in raw[:close_at]:
        early.extend(parser.feed(ch))
    assert [e.name for e in early if isinstance(e, ToolCallStart)] == [name]
    fragments = [e for e in early if isinstance(e, ToolCallDelta)]
    if dialect == "hermes" and compact:
        assert len(fragments) == 1  # the arguments came before the name: held until it, then at once
    elif dialect in ("hermes", "kimi_k2", "deepseek_v3", "deepseek_v31", "longcat", "internlm2"):
        assert len(fragments) > 1  # the JSON text, piece by piece
    else:
        # One member per parameter whose end is certain: the last one's `</parameter>` is confirmed
        # only by the call's end (a value may mention `</parameter>`).
        assert len(fragments) == len(args) - 1
    assert "".join(e.text for e in early if isinstance(e, TextDelta)).strip() == before


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["hermes", "kimi_k2", "deepseek_v3", "deepseek_v31", "longcat", "internlm2"]),
    TEXT,
    json_call(),
    TEXT,
    st.lists(st.integers(min_value=0, max_value=10**6), max_size=30),
)
def test_generated_json_calls_stream_as_they_arrive(
    dialect: str, before: str, call: tuple[str, dict[str, Any]], after: str, cuts: list[int]
) -> None:
    check_generated(dialect, before, call, after, cuts)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["qwen3_coder", "minimax_m2", "seed_oss", "glm45", "glm47", "step3"]),
    TEXT,
    xml_call(),
    TEXT,
    st.lists(st.integers(min_value=0, max_value=10**6), max_size=30),
)
def test_generated_parameter_calls_stream_per_parameter(
    dialect: str, before: str, call: tuple[str, dict[str, Any]], after: str, cuts: list[int]
) -> None:
    check_generated(dialect, before, call, after, cuts)


# -- what cannot stream honestly ----------------------------------------------------------------


def starts_and_ends(events: list[Event]) -> tuple[list[str], list[str]]:
    return (
        [e.name for e in events if isinstance(e, ToolCallStart)],
        [e.arguments for e in events if isinstance(e, ToolCallEnd)],
    )


def test_json_arguments_keep_the_models_own_text() -> None:
    raw = '<tool_call>{"name": "f", "arguments": {"b":1,  "a": "x"}}</tool_call>'
    events = events_of(list(raw), dialect="hermes", arguments_streaming="incremental")
    assert starts_and_ends(events) == (["f"], ['{"b":1,  "a": "x"}'])
    assert parse(raw, "hermes").tool_calls[0].arguments == '{"b": 1, "a": "x"}'  # whole mode: as before


def test_arguments_before_the_name_are_held_until_the_name() -> None:
    raw = '<tool_call>{"arguments": {"city": "Paris"}, "name": "get_weather"}</tool_call>'
    parser = StreamParser("hermes", arguments_streaming="incremental")
    upto_name = raw.index('"get_weather"') + len('"get_weather"')
    early = [e for ch in raw[: upto_name - 1] for e in parser.feed(ch)]
    assert early == []
    assert parser.feed(raw[upto_name - 1]) == [
        ToolCallStart(0, None, "get_weather"),
        ToolCallDelta(0, '{"city": "Paris"}'),
    ]


def test_a_repaired_body_is_not_sent_changed() -> None:
    raw = '<tool_call>{"name": "f", "arguments": {\'a\': 1}}</tool_call>after'
    whole = parse(raw, "hermes", repair=True)
    assert [c.arguments for c in whole.tool_calls] == ['{"a": 1}']  # whole mode repairs it
    events = events_of(list(raw), dialect="hermes", repair=True, arguments_streaming="incremental")
    starts, ends = starts_and_ends(events)
    # The start (and what was streamed) went out; the repaired arguments never go out as if streamed.
    assert starts == ["f"] and ends == []
    assert merge_events(events).tool_calls == [] and merge_events(events).content == "after"


def test_a_repeated_parameter_is_not_sent_changed() -> None:
    params = "<parameter=a>\n1\n</parameter>\n<parameter=a>\n2\n</parameter>\n"
    raw = f"<tool_call>\n<function=f>\n{params}</function>\n</tool_call>"
    assert parse(raw, "qwen3_coder").tool_calls[0].arguments == '{"a": "2"}'
    events = events_of(list(raw), dialect="qwen3_coder", arguments_streaming="incremental")
    assert starts_and_ends(events) == (["f"], [])
    assert [e.arguments for e in events if isinstance(e, ToolCallDelta)] == ['{"a": "1"']


def test_a_call_that_breaks_after_its_start_leaves_its_text_as_in_whole_mode() -> None:
    raw = 'a<tool_call>{"name": "f", "arguments": {"x": 1}, oops}</tool_call>b'
    events = events_of(list(raw), dialect="hermes", arguments_streaming="incremental")
    assert starts_and_ends(events) == (["f"], [])
    assert merge_events(events) == parse(raw, "hermes")


def test_a_cut_off_call_never_ends() -> None:
    raw = "<tool_call>\n<function=run>\n<parameter=cmd>\nrm -rf /tmp/build\n</parameter>\n<parameter=cwd>\n/"
    events = events_of(list(raw), dialect="qwen3_coder", arguments_streaming="incremental")
    assert starts_and_ends(events) == (["run"], [])
    assert merge_events(events) == parse(raw, "qwen3_coder")


@pytest.mark.parametrize("dialect", sorted(set(list_dialects()) - INCREMENTAL_DIALECTS - {"auto"}))
def test_other_dialects_stay_whole_in_incremental_mode(dialect: str) -> None:
    # They opt out: their events are exactly the whole mode's.
    for fixture in FIXTURES:
        options = fixture_options(fixture)
        if StreamParser(**options).dialect.name != dialect:
            continue
        assert events_of([fixture.raw_output], arguments_streaming="incremental", **options) == events_of(
            [fixture.raw_output], **options
        )


def test_a_name_the_body_overrides_later_is_not_sent_changed() -> None:
    raw = '<tool_call>{"name": "f", "arguments": {"a": 1}, "name": "g"}</tool_call>'
    assert [c.name for c in parse(raw, "hermes").tool_calls] == ["g"]
    events = events_of(list(raw), dialect="hermes", arguments_streaming="incremental")
    assert starts_and_ends(events) == (["f"], [])
