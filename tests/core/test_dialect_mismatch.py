"""`dialect_mismatch`: a complete call in another dialect's own markup, where the dialect in force
finds none, is read as that dialect's (`"read"`), or only noticed (`"warn"`), at every split."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import check_streams, split_at, stream_parse
from tests.core.test_auto import SAMPLES
from toolcall_middleware import StreamParser, parse
from toolcall_middleware.core._events import Event, TextDelta, ToolCallEnd
from toolcall_middleware.core._result import merge_events

HERMES = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"  # selects llama3_json
# Dialects in force for the samples of other formats (each finds no call in them).
IN_FORCE = ["llama3_json", "hermes", "mistral", "qwen3_coder", "pythonic", "kimi_k2", "deepseek_v3"]
CASES = [(force, found, raw) for force in IN_FORCE for found, raw in SAMPLES if found != force]


def found_by(raw: str, dialect: str, mode: str = "read", **kwargs: Any) -> tuple[Any, str | None]:
    """The whole parse of `raw` and the dialect the watch found."""
    parser = StreamParser(dialect, dialect_mismatch=mode, **kwargs)  # type: ignore[arg-type]
    events = parser.feed(raw) + parser.close()
    return merge_events(events), parser.dialect_found


def test_a_llama_model_that_writes_hermes_tags_makes_a_call() -> None:
    raw = "Let me check.\n" + HERMES
    assert parse(raw, model=LLAMA, dialect_mismatch="off").tool_calls == []
    result = check_streams(raw, seeds=range(10), model=LLAMA)
    assert result.content == "Let me check.\n"  # (the layout of the dialect in force: no text waits)
    assert [(c.name, json.loads(c.arguments)) for c in result.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert found_by(raw, "llama3_json")[1] == "hermes"


@pytest.mark.parametrize(("force", "found", "raw"), CASES, ids=[f"{f}-reads-{d}" for f, d, _ in CASES])
def test_each_detected_format_is_read_under_another_dialect(force: str, found: str, raw: str) -> None:
    if parse(raw, force, dialect_mismatch="off").tool_calls:
        pytest.skip(f"{force} reads this output itself")
    result, dialect = found_by(raw, force)
    assert dialect == found
    assert result.tool_calls == parse(raw, found).tool_calls
    assert check_streams(raw, seeds=range(3), dialect=force) == result


def test_warn_only_notices() -> None:
    raw = "Let me check.\n" + HERMES
    result, dialect = found_by(raw, "llama3_json", "warn")
    assert dialect == "hermes"
    assert result == parse(raw, "llama3_json", dialect_mismatch="off")
    assert check_streams(raw, seeds=range(5), dialect="llama3_json", dialect_mismatch="warn") == result


def test_off_looks_for_nothing() -> None:
    raw = "Let me check.\n" + HERMES
    result, dialect = found_by(raw, "llama3_json", "off")
    assert dialect is None and result.tool_calls == [] and result.content == raw


@pytest.mark.parametrize(
    "raw",
    [
        "Write `" + HERMES.replace("\n", " ") + "` to call a tool.",
        "Like this:\n```\n" + HERMES + "\n```\nthat is all.",
        "I will use <tool_call> tags when I need them.",
        'Cut off: <tool_call>\n{"name": "get_weather", "argu',
        '<tool_call>{"name": "get_weather", "arguments": {"city": }</tool_call> broken',
        "[TOOL_CALLS] is how Mistral starts its calls.",
    ],
)
def test_what_is_no_complete_call_is_the_text_as_it_came(raw: str) -> None:
    result, dialect = found_by(raw, "llama3_json")
    assert dialect is None
    assert result == parse(raw, "llama3_json", dialect_mismatch="off")
    assert check_streams(raw, seeds=range(5), dialect="llama3_json") == result


def test_the_dialect_found_reads_the_rest_and_calls_are_numbered_in_order() -> None:
    second = HERMES.replace("Paris", "Rome")
    raw = f"One.\n{HERMES}\nTwo.\n{second}\n<|python_tag|>" + '{"name": "get_time", "parameters": {}}'
    result = check_streams(raw, seeds=range(10), dialect="llama3_json")
    assert [c.name for c in result.tool_calls] == ["get_weather", "get_weather", "get_time"]
    assert json.loads(result.tool_calls[1].arguments) == {"city": "Rome"}


def test_a_call_of_the_dialect_in_force_first_ends_the_watch() -> None:
    raw = '<|python_tag|>{"name": "get_time", "parameters": {}}'
    # (llama3_json reads a python_tag call to the end of the output: text after it is its own)
    result, dialect = found_by(raw, "llama3_json")
    assert dialect is None and [c.name for c in result.tool_calls] == ["get_time"]
    raw = "[TOOL_CALLS]get_time[ARGS]{}" + "\n" + HERMES
    result, dialect = found_by(raw, "mistral")
    assert dialect is None
    assert result == parse(raw, "mistral", dialect_mismatch="off")


def test_text_before_the_marker_streams_at_once_and_the_call_waits_for_its_end() -> None:
    parser = StreamParser("llama3_json")
    assert parser.feed("Let me check. ") == [TextDelta("Let me check. ")]
    assert parser.feed(HERMES[:-4]) == []
    events = parser.feed(HERMES[-4:])
    assert isinstance(events[-1], ToolCallEnd)


def test_the_held_text_is_bounded_by_the_call_limit() -> None:
    raw = "Hi <tool_call>\n{" + "x" * 300 + "\nmore text after"
    for limit in (10, 50, 200, 1000):
        whole, dialect = found_by(raw, "llama3_json", max_call_chars=limit)
        assert dialect is None and whole.content == raw
        parser = StreamParser("llama3_json", max_call_chars=limit)
        held = 0
        for char in raw:
            out = parser.feed(char)
            held = 0 if out else held + 1
            # (what goes with the marker counts in the limit; a marker is held while it may be one)
            assert held <= max(limit, len(" <tool_call>\n{")) + 1


@pytest.mark.parametrize("limit", [60, 70, 80, 90, 100, 120])
def test_a_call_at_the_limit_is_decided_the_same_at_every_split(limit: int) -> None:
    raw = "Hi " + HERMES + " and the rest of the answer."
    whole = found_by(raw, "llama3_json", max_call_chars=limit)
    for cut in range(len(raw) + 1):
        parser = StreamParser("llama3_json", max_call_chars=limit)
        events = parser.feed(raw[:cut]) + parser.feed(raw[cut:]) + parser.close()
        assert (merge_events(events), parser.dialect_found) == whole
    assert stream_parse(list(raw), dialect="llama3_json", max_call_chars=limit) == whole[0]


# -- properties ---------------------------------------------------------------------------------

PROSE = st.text(alphabet="ab `\n<>{}[]", max_size=30)
PARTS = st.sampled_from([HERMES, *(raw for _, raw in SAMPLES), "`", "```\n", " <tool_call> ", "[TOOL_CALLS]"])


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(IN_FORCE),
    st.sampled_from(["read", "warn", "off"]),
    st.lists(st.one_of(PROSE, PARTS), min_size=1, max_size=5),
    st.lists(st.integers(min_value=0, max_value=10**6), max_size=20),
)
def test_any_split_gives_the_whole_parse(force: str, mode: str, parts: list[str], cuts: list[int]) -> None:
    raw = "".join(parts)
    whole = found_by(raw, force, mode)
    parser = StreamParser(force, dialect_mismatch=mode)  # type: ignore[arg-type]
    events: list[Event] = []
    for piece in split_at(raw, cuts):
        events += parser.feed(piece)
    events += parser.close()
    assert (merge_events(events), parser.dialect_found) == whole


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(IN_FORCE), st.lists(st.one_of(PROSE, PARTS), min_size=1, max_size=5))
def test_only_a_complete_call_found_changes_the_output(force: str, parts: list[str]) -> None:
    raw = "".join(parts)
    read, found = found_by(raw, force)
    off = parse(raw, force, dialect_mismatch="off")
    warned, noticed = found_by(raw, force, "warn")
    assert warned == off and noticed == found
    if found is None:
        assert read == off
    else:
        assert len(read.tool_calls) > len(off.tool_calls)


@pytest.mark.parametrize("force", ["llama3_json", "mistral", "kimi_k2"])
def test_incremental_arguments_give_the_same_calls_at_every_split(force: str) -> None:
    raw = "Checking.\n" + HERMES + "\nand " + HERMES.replace("Paris", "Rome")
    whole = parse(raw, force)
    for cut in range(len(raw) + 1):
        parser = StreamParser(force, arguments_streaming="incremental")
        events = parser.feed(raw[:cut]) + parser.feed(raw[cut:]) + parser.close()
        assert merge_events(events) == whole and parser.dialect_found == "hermes"
    assert [json.loads(c.arguments)["city"] for c in whole.tool_calls] == ["Paris", "Rome"]
