"""A call written inside inline code in prose is an example, as in a fenced block: never a call,
and the text stays as written (`core/_inline_code.py`).

A run of one or two backticks opens a span when a run of the same length closes it on the same
line within `SPAN_CAP` characters; otherwise the backticks are literal and a call after them is a
call. Each dialect whose calls can stand in prose, with its own call written on one line, parsed
whole, one character at a time and at every split hypothesis tries.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import check_streams, split_at, stream_parse
from toolcall_middleware import StreamParser, TextDelta, list_dialects, parse
from toolcall_middleware.core._inline_code import SPAN_CAP, code_span_end
from toolcall_middleware.core.request import render_calls

# Not here: calls that are only calls as the whole output or where the answer starts
# (`generic_json`, `xlam`); formats whose call needs a line break, which ends a span
# (`functionary_v3_2`'s recipient line, `deepseek_v3`'s JSON fence); harmony's channels, special
# tokens that structure the whole output and are never prose.
EXCLUDED = ("generic_json", "xlam", "functionary_v3_2", "deepseek_v3", "gpt_oss")
DIALECTS = [d for d in list_dialects() if d not in EXCLUDED]


def one_line_call(dialect: str) -> str:
    """The dialect's call as its renderer writes it, on one line (`auto`: a hermes call)."""
    raw = render_calls("hermes" if dialect == "auto" else dialect, [("call_1", "get_weather", '{"city": "Paris"}')])
    return raw.replace("\n", "")


def names(raw: str, dialect: str) -> list[str]:
    return [c.name for c in check_streams(raw, seeds=range(3), dialect=dialect).tool_calls]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_call_on_one_line_in_prose_is_a_call(dialect: str) -> None:
    # (what makes the tests below mean something: outside code, the same text is a call)
    assert names("Try " + one_line_call(dialect) + " now.", dialect) == ["get_weather"]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("ticks", ["`", "``"])
def test_a_call_in_inline_code_is_text_as_written(dialect: str, ticks: str) -> None:
    raw = f"Write {ticks}{one_line_call(dialect)}{ticks} to call it."
    result = check_streams(raw, seeds=range(5), dialect=dialect)
    assert result.tool_calls == []
    assert result.content == raw


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_unmatched_backtick_before_a_call_on_its_line_leaves_the_call(dialect: str) -> None:
    assert names("The ` key, then " + one_line_call(dialect) + "\nDone.", dialect) == ["get_weather"]
    # A run of two is closed only by a run of two: a single backtick after the call does not.
    assert names("A `` run " + one_line_call(dialect) + " and a ` tick.", dialect) == ["get_weather"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_call_after_a_closed_span_on_its_line_is_a_call(dialect: str) -> None:
    assert names("Run `ls -l` and `pwd`, then " + one_line_call(dialect) + " now.", dialect) == ["get_weather"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_span_ends_with_its_line(dialect: str) -> None:
    # The backtick on the next line closes nothing: the first one was literal.
    assert names("Try `" + one_line_call(dialect) + "\nthen ` this.", dialect) == ["get_weather"]


@pytest.mark.parametrize("dialect", ["hermes", "qwen3_coder", "kimi_k2", "pythonic", "llama3_json", "auto"])
def test_a_span_longer_than_the_cap_is_literal_backticks(dialect: str) -> None:
    call = one_line_call(dialect)
    # A span of `SPAN_CAP` characters is too long: the opening run is literal and the call a call.
    long = "`" + "x" * (SPAN_CAP - len(call) - 2) + call + "`"
    assert len(long) == SPAN_CAP
    assert names(long + " done.", dialect) == ["get_weather"]
    # One character shorter, the span closes within the cap: all of it is text.
    short = "`" + long[2:]
    result = check_streams(short + " done.", seeds=range(2), dialect=dialect)
    assert result.tool_calls == [] and result.content == short + " done."


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(DIALECTS),
    st.sampled_from(["`", "``"]),
    st.text(alphabet="ab `\n", max_size=12),
    st.text(alphabet="ab `\n", max_size=12),
    st.lists(st.integers(min_value=0, max_value=10**6), max_size=20),
)
def test_any_split_of_a_call_in_inline_code_is_the_whole_parse(
    dialect: str, ticks: str, before: str, after: str, cuts: list[int]
) -> None:
    raw = before + "Use " + ticks + one_line_call(dialect) + ticks + " " + after
    whole = parse(raw, dialect)
    assert stream_parse(split_at(raw, cuts), dialect=dialect) == whole
    if "`" not in before.rpartition("\n")[2]:  # (else `before` may pair with the first run)
        assert whole.tool_calls == [] and whole.content == raw


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab`\n", max_size=40), st.integers(min_value=0, max_value=40), st.sampled_from([1, 2]))
def test_a_span_decided_on_a_prefix_is_decided_the_same_on_the_whole(text: str, cut: int, size: int) -> None:
    raw = "`" * size + "c" + text
    whole = code_span_end(raw, 0, size, final=True)
    assert whole is not None
    for end in range(size, len(raw) + 1):
        early = code_span_end(raw[:end], 0, size, final=False)
        assert early is None or early == whole


def test_a_held_span_declines_the_fast_path_and_stays_bounded() -> None:
    parser = StreamParser("hermes")
    assert parser.feed("Use:`ls") == [TextDelta("Use:")]
    assert parser.take_plain(" -l") is None  # the span is open: the piece takes the general way
    assert parser.feed(" -l") == []
    assert parser.feed("` now") == [TextDelta("`ls -l` now")]
    assert parser.take_plain(" and then") == " and then"
    # An unclosed run holds at most `SPAN_CAP` characters of its line, however it arrives.
    parser = StreamParser("hermes")
    emitted = "".join(e.text for c in "`" + "y" * 2 * SPAN_CAP for e in parser.feed(c) if isinstance(e, TextDelta))
    assert emitted == ("`" + "y" * 2 * SPAN_CAP)[: len(emitted)]
    assert 2 * SPAN_CAP + 1 - len(emitted) <= SPAN_CAP


def test_backticks_inside_a_call_are_its_own() -> None:
    # A run inside a call's arguments opens no span, and a span before the call is closed first.
    raw = 'See `a` <tool_call>{"name": "f", "arguments": {"q": "`x"}}</tool_call> done.'
    result = check_streams(raw, seeds=range(3), dialect="hermes")
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("f", '{"q": "`x"}')]
