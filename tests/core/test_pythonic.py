"""The `pythonic` dialect: `[f(a=1), g(b='x')]` (Llama 3.2 pythonic, Llama 4, ToolACE)."""

from __future__ import annotations

import json
import keyword
import random
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.conftest import calls, check_streams, random_splits, split_at, stream_parse
from toolcall_middleware import StreamParser, TextDelta, ToolCallEnd, dialect_for_model, parse
from toolcall_middleware.core._result import ParseResult
from toolcall_middleware.core.dialects.pythonic import PyScanner, Scan, calls_from_list

START, END, EOT = "<|python_start|>", "<|python_end|>", "<|eot|>"
MODEL = "meta-llama/Llama-4-Scout-17B-16E-Instruct"


def parse_all_ways(raw: str, model: str = MODEL) -> ParseResult:
    """The whole parse, after checking that a char-by-char and random-split stream agree."""
    return check_streams(raw, seeds=range(1, 6), model=model)


@pytest.mark.parametrize(
    "model",
    ["meta-llama/Llama-4-Scout-17B-16E-Instruct", "meta-llama/Llama-4-Maverick-17B-128E", "Team-ACE/ToolACE-8B"],
)
def test_model_name_selects_the_dialect(model: str) -> None:
    found = dialect_for_model(model)
    assert found is not None and found.name == "pythonic"


# -- calls ------------------------------------------------------------------------------------


def test_python_literals_become_json() -> None:
    raw = "[register(name='Doe', age=9, addr={'city': 'LA'}, role=None, ok=True, tags=('a', 'b'), x=-1.5)]"
    r = parse_all_ways(raw)
    assert calls(r) == [
        (
            "register",
            {"name": "Doe", "age": 9, "addr": {"city": "LA"}, "role": None, "ok": True, "tags": ["a", "b"], "x": -1.5},
        )
    ]
    assert r.content is None and r.finish_reason == "tool_calls"


def test_json_literals_are_read_too() -> None:
    assert calls(parse_all_ways("[f(a=true, b=null, c=[false])]")) == [("f", {"a": True, "b": None, "c": [False]})]


def test_parallel_calls_and_no_arguments() -> None:
    r = parse_all_ways("[get_weather(city='LA',metric='C'),get_time(),search(_limit=5,)]")
    assert calls(r) == [("get_weather", {"city": "LA", "metric": "C"}), ("get_time", {}), ("search", {"_limit": 5})]


@pytest.mark.parametrize(
    ("literal", "value"),
    [
        (r"'Martha\'s Vineyard'", "Martha's Vineyard"),
        (r"'\"cool\"'", '"cool"'),
        ("'''it's \"x\"'''", 'it\'s "x"'),
        ('""', ""),
        ("''", ""),
        ("'a' 'b'", "ab"),
        ("r'C:\\path'", "C:\\path"),
        ("'])}, g(b=1)'", "])}, g(b=1)"),
        ("'<|python_end|><|eot|>'", "<|python_end|><|eot|>"),
    ],
)
def test_strings_hold_anything(literal: str, value: str) -> None:
    r = parse_all_ways(f"[f(s={literal})]")
    assert calls(r) == [("f", {"s": value})]


def test_calls_after_prose_are_found_and_the_prose_kept() -> None:
    r = parse_all_ways("Let me check the weather. [get_weather(city='SF')]")
    assert calls(r) == [("get_weather", {"city": "SF"})]
    assert r.content == "Let me check the weather. "


def test_python_start_end_wrapper_and_layout_vanish() -> None:
    r = parse_all_ways(f"\n{START}[f(a=1)]{END}\n{EOT}")
    assert calls(r) == [("f", {"a": 1})] and r.content is None
    r = parse_all_ways("[f(a=1)]\n[g(b=2)]")
    assert calls(r) == [("f", {"a": 1}), ("g", {"b": 2})] and r.content is None


def test_calls_come_out_when_the_list_closes() -> None:
    parser = StreamParser(model=MODEL)
    events = parser.feed("[f(a=1), g(b=2)")
    assert not [e for e in events if isinstance(e, ToolCallEnd)]
    events = parser.feed("]")
    assert [e.arguments for e in events if isinstance(e, ToolCallEnd)] == ['{"a": 1}', '{"b": 2}']


# -- not calls --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        "How can I help you today?",
        "[1, 2, 3]",
        "[]",
        "See [the docs] and [this](http://x.y) or arr[i].",
        "[f(x)]",  # positional
        "[f(a=x)]",  # a name, not a literal
        "[f(a=1+1j)]",
        "[f(a={1, 2})]",
        "[f(a=1, a=2)]",
        "[f(**kw)]",
        "[os.path(a=1) + 1]",  # a dotted name is a call's name, but not in an expression
        "[f(a=1) is odd]",
        "[f(a==1)]",
        "[f(a=1)) ]",
        "```python\n[f(a=1)]\n```",
        "Note: [f(a=1), then prose",
    ],
)
def test_lists_that_are_not_calls_are_content_as_written(raw: str) -> None:
    r = parse_all_ways(raw)
    assert r.tool_calls == [] and r.truncated is None
    assert r.content == raw


def test_a_dotted_name_is_the_call_s_name() -> None:
    """Names are whatever the tool list says: `os.path(a=1)` is a call to `os.path` (as vLLM
    reads it), no longer text."""
    r = parse_all_ways("[os.path(a=1)]")
    assert [(c.name, c.arguments) for c in r.tool_calls] == [("os.path", '{"a": 1}')]


@pytest.mark.parametrize("mismatch", ["off", "read"])
def test_prose_brackets_are_decided_at_once(mismatch: str) -> None:
    parser = StreamParser(model=MODEL, dialect_mismatch=mismatch)  # type: ignore[arg-type]
    shown = ""
    for ch in "See [the docs] [x](y) [1]":
        shown += "".join(e.text for e in parser.feed(ch) if isinstance(e, TextDelta))
    # Watching for another dialect's calls, a `]` at the very end may begin MiniMax-M3's
    # `]<]minimax[>[` token: it waits for the next character, and only it.
    held = "]" if mismatch == "read" else ""
    assert shown + held == "See [the docs] [x](y) [1]"
    assert "".join(e.text for e in parser.feed(" [get") if isinstance(e, TextDelta)) == held + " "


def test_a_rejected_bracket_can_be_followed_by_a_real_list() -> None:
    r = parse_all_ways("[x [f(a=1)]")
    assert calls(r) == [("f", {"a": 1})] and r.content == "[x "


# -- truncation -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw", ['[get_weather(city="San Francisco"), get_weather(city="Seattle', "[f(", "[f(a='x'", "[f(a=1)", "[f(a=1),"]
)
def test_an_unfinished_call_list_is_truncated_and_keeps_no_call(raw: str) -> None:
    r = parse_all_ways(raw)
    assert r.tool_calls == [] and r.content is None
    assert r.truncated == raw and r.finish_reason == "length"


@pytest.mark.parametrize("raw", ["[", "see [", "[get_weather", "[ x"])
def test_an_undecided_bracket_at_the_end_is_content(raw: str) -> None:
    r = parse_all_ways(raw)
    assert r.content == raw and r.truncated is None


# -- the scanner ------------------------------------------------------------------------------


def test_scanner_reports_where_the_list_ends_or_fails() -> None:
    # The scanner starts after the `[`, which text mode consumed.
    assert PyScanner().feed("f(a=')]'), g()] tail") == (Scan.DONE, 15)
    assert PyScanner().feed("f(a=1) x]") == (Scan.REJECT, 7)
    scanner = PyScanner()
    assert not scanner.committed
    assert scanner.feed("f(a='''x'") == (Scan.MORE, 9)
    assert scanner.committed
    assert scanner.feed("'') ]") == (Scan.DONE, 5)  # the triple quote closes across the split
    assert calls_from_list("[f(a='''x''') ]") == calls_from_list("[f(a='x')]")


# -- properties -------------------------------------------------------------------------------

IDENT = st.from_regex(r"[a-z_][a-z0-9_]{0,7}", fullmatch=True).filter(lambda s: not keyword.iskeyword(s))
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(["'''", '"""', "])}", "\\", "<|eot|>", "\n", "'", '"']),
)
VALUES = st.recursive(
    SCALARS,
    lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.text(max_size=4), c, max_size=2)),
    max_leaves=6,
)
CALLS = st.lists(st.tuples(IDENT, st.dictionaries(IDENT, VALUES, max_size=3)), max_size=3)
WORDS = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="[<`("), min_size=1, max_size=10)
TEXT = (
    st.lists(st.one_of(WORDS, st.sampled_from(["[", "[1, 2]", "[see]", "[x](y)", "<|", "<|eo", "`", "\n"])), max_size=5)
    .map("".join)
    .filter(lambda t: t.strip() == t and "```" not in t)
)
CUTS = st.lists(st.integers(min_value=0, max_value=10**6), max_size=30)
MARKERS = ("<|eot|>", "<|eom|>", "<|eot_id|>", "<|eom_id|>", "<|end_of_text|>", START, END, "<|python_tag|>")


def render(calls_: list[tuple[str, dict[str, Any]]], spaced: bool) -> str:
    sep = ", " if spaced else ","
    return "[" + sep.join(f"{n}({sep.join(f'{k}={v!r}' for k, v in a.items())})" for n, a in calls_) + "]"


@settings(max_examples=300, deadline=None)
@given(TEXT, CALLS, TEXT, st.booleans(), st.booleans(), CUTS)
def test_round_trip_at_any_split(
    before: str, calls_: list[tuple[str, dict[str, Any]]], after: str, spaced: bool, wrapped: bool, cuts: list[int]
) -> None:
    section = render(calls_, spaced) if calls_ else ""
    if section and wrapped:
        section = START + section + END
    assume(not any(m in before + after for m in MARKERS))
    raw = before + section + after
    whole = parse(raw, model=MODEL)
    assert stream_parse(split_at(raw, cuts), model=MODEL) == whole
    # A backtick on the call's line before it may open an inline code span that a backtick after
    # it closes (in `after` or a value): the call is then an example, text (`test_inline_code.py`).
    assume("`" not in before.rpartition("\n")[2])
    assert calls(whole) == [(n, json.loads(json.dumps(a))) for n, a in calls_]
    assert whole.content == ((before + after) or None)
    assert whole.truncated is None


SAMPLES = [
    "Checking. [get_weather(city='SF', days=[1, 2]), get_time(tz=\"UTC\")] Done.",
    f"{START}[f(s='''a ' b''', t=r'\\d')]{END}{EOT}",
    "See [the docs] or [1, 2] and [f(x)] then [g(a=None)]",
    "[get_weather(city='San Francisco'), get_weather(city='Seat",
    "```\n[f(a=1)]\n```",
]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(SAMPLES), CUTS)
def test_any_split_of_the_samples_gives_the_whole_parse(raw: str, cuts: list[int]) -> None:
    assert stream_parse(split_at(raw, cuts), model=MODEL) == parse(raw, model=MODEL)


def test_long_arguments_stream_in_small_pieces() -> None:
    big = "line 'q' \"d\" \\ ])} <|eot|>\n" * 7000  # ~200 KB
    cases = [
        "[write(text=" + repr(big) + ")]",
        "[write(text='''" + big.replace("'", "") + "''')]",
        "[write(n=" + repr(list(range(30000))) + ")]",
        "see [x] and [y](z) " * 10000,
    ]
    rng = random.Random(7)
    for raw in cases:
        pieces = list(random_splits(raw, rng, max_size=6))
        r = stream_parse(pieces, model=MODEL)
        assert len(r.tool_calls) == 1 or r.content == raw
