"""The `llama3_json` dialect: `<|python_tag|>{"name": …, "parameters": …}`, the tag optional."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.conftest import calls, check_streams, random_splits, split_at, stream_parse
from toolcall_middleware import StreamParser, TextDelta, ToolCallEnd, dialect_for_model, parse
from toolcall_middleware.core._result import ParseResult

TAG, EOM, EOT = "<|python_tag|>", "<|eom_id|>", "<|eot_id|>"
MODEL = "meta-llama/Llama-3.3-70B-Instruct"


def parse_all_ways(raw: str, model: str = MODEL) -> ParseResult:
    """The whole parse, after checking that a char-by-char and random-split stream agree."""
    return check_streams(raw, seeds=range(1, 6), model=model)


def call_json(name: str, args: dict[str, Any], key: str = "parameters") -> str:
    return json.dumps({"name": name, key: args}, ensure_ascii=False)


# -- model names ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "dialect"),
    [
        ("meta-llama/Llama-3.1-8B-Instruct", "llama3_json"),
        ("meta-llama/Llama-3.2-3B-Instruct", "llama3_json"),
        ("meta-llama/Llama-3.3-70B-Instruct", "llama3_json"),
        ("meta-llama/Meta-Llama-3.1-405B-Instruct-FP8", "llama3_json"),
        ("llama3.1:8b", "llama3_json"),
        ("llama3.2:3b", "llama3_json"),
        ("llama-3.3-70b-versatile", "llama3_json"),
        ("accounts/fireworks/models/llama-v3p1-70b-instruct", "llama3_json"),
        ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "pythonic"),
        ("llama4:scout", "pythonic"),
        ("NousResearch/Hermes-3-Llama-3.1-8B", "hermes"),
    ],
)
def test_model_name_selects_the_dialect(model: str, dialect: str) -> None:
    found = dialect_for_model(model)
    assert found is not None and found.name == dialect


@pytest.mark.parametrize("model", ["nvidia/Llama-3.1-Nemotron-70B-Instruct-HF", "Salesforce/Llama-xLAM-2-8b-fc-r"])
def test_llama_fine_tunes_with_their_own_format_are_not_taken(model: str) -> None:
    found = dialect_for_model(model)
    assert found is None or found.name != "llama3_json"


# -- calls ------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["parameters", "arguments"])
def test_bare_call_at_the_start(key: str) -> None:
    r = parse_all_ways(call_json("get_weather", {"city": "Zürich"}, key))
    assert calls(r) == [("get_weather", {"city": "Zürich"})]
    assert r.content is None and r.finish_reason == "tool_calls"


def test_tagged_call_after_text_keeps_the_text_as_written() -> None:
    r = parse_all_ways("Let me check. " + TAG + call_json("get_weather", {"city": "Tokyo"}) + EOM)
    assert calls(r) == [("get_weather", {"city": "Tokyo"})]
    assert r.content == "Let me check. "


def test_type_function_key_and_pretty_printing() -> None:
    body = json.dumps({"type": "function", "name": "songs", "parameters": {"n": "10"}}, indent=4)
    r = parse_all_ways(TAG + body)
    assert calls(r) == [("songs", {"n": "10"})]
    assert r.content is None


def test_parameters_first_and_arguments_as_a_json_string() -> None:
    r = parse_all_ways('{"parameters": {"a": 1}, "name": "f"}; {"name": "g", "arguments": "{\\"b\\": 2}"}')
    assert calls(r) == [("f", {"a": 1}), ("g", {"b": 2})]


@pytest.mark.parametrize("sep", ["; ", ";", " ; ", "\n", ";\n"])
def test_several_calls_joined(sep: str) -> None:
    raw = call_json("a", {"x": 1}) + sep + call_json("b", {})
    r = parse_all_ways(raw)
    assert calls(r) == [("a", {"x": 1}), ("b", {})]
    assert r.content is None
    tagged = parse_all_ways(TAG + call_json("a", {"x": 1}) + sep + TAG + call_json("b", {}) + EOM)
    assert calls(tagged) == calls(r) and tagged.content is None


def test_layout_whitespace_around_calls_vanishes_text_after_stays() -> None:
    r = parse_all_ways("\n  " + call_json("f", {}) + "\n" + EOT)
    assert calls(r) == [("f", {})] and r.content is None
    r = parse_all_ways(call_json("f", {}) + " and some text")
    assert calls(r) == [("f", {})] and r.content == " and some text"


def test_builtin_tool_call() -> None:
    r = parse_all_ways(TAG + 'brave_search.call(query="weather in SF, \\"today\\"")' + EOM)
    assert calls(r) == [("brave_search", {"query": 'weather in SF, "today"'})]
    r = parse_all_ways(TAG + "wolfram_alpha . call(query='2+2', exact=True, limit=None)")
    assert calls(r) == [("wolfram_alpha", {"query": "2+2", "exact": True, "limit": None})]


def test_markers_inside_a_string_value_stay_in_the_value() -> None:
    text = f"Start with {TAG}; end with {EOM} or {EOT}, like }}{{ and \\"
    for raw in (call_json("write", {"text": text}), "Ok. " + TAG + call_json("write", {"text": text})):
        r = parse_all_ways(raw)
        assert calls(r) == [("write", {"text": text})]


def test_stop_tokens_vanish() -> None:
    assert parse_all_ways("Paris." + EOT).content == "Paris."
    assert parse_all_ways(EOT).content is None


# -- not calls --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        '{"capital": "Paris", "country": "France"}',
        '{"a": 1} is a dict',
        "{}",
        '{"parameters": {}}',
        '{"name": "Bob", "age": 3}',
        '{"name": "f"}',
        '{"type": "other", "name": "f", "parameters": {}}',
        '{"name": 1, "parameters": {}}',
        '{"name": "f", "parameters": [1]}',
        "{ not json",
        'Sure: {"name": "f", "parameters": {}}',
        "Use `{}` or [1, 2].",
        "```json\n" + TAG + '{"name": "f", "parameters": {}}\n```',
    ],
)
def test_json_that_is_not_a_call_is_content_as_written(raw: str) -> None:
    r = parse_all_ways(raw)
    assert r.tool_calls == [] and r.truncated is None
    assert r.content == raw


@pytest.mark.parametrize(
    "raw",
    [TAG + '{"name": 1}', TAG + '{"a": 1}', TAG + "import math\nprint(math.pi)", TAG + "search.call(q=x)"],
)
def test_a_malformed_tagged_call_is_content_as_written(raw: str) -> None:
    r = parse_all_ways(raw + EOM)
    assert r.tool_calls == [] and r.truncated is None
    assert r.content == raw


def test_a_json_answer_streams_once_its_first_key_says_it_is_not_a_call() -> None:
    parser = StreamParser(model=MODEL)
    shown = ""
    for ch in '{"capital": "Paris", "note": "{\\"name\\": 1}"}':
        shown += "".join(e.text for e in parser.feed(ch) if isinstance(e, TextDelta))
    assert shown == '{"capital": "Paris", "note": "{\\"name\\": 1}"}'


def test_a_call_is_emitted_as_soon_as_its_object_closes() -> None:
    parser = StreamParser(model=MODEL)
    events = parser.feed(call_json("f", {"a": 1})[:-1])
    assert not [e for e in events if isinstance(e, ToolCallEnd)]
    events = parser.feed("}")
    assert [e.arguments for e in events if isinstance(e, ToolCallEnd)] == ['{"a": 1}']


# -- truncation -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        '{"name": "create_event", "parameters": {"title": "Standup", "n": 15,',
        '{"name"',
        TAG,
        TAG + '{"na',
        TAG + 'brave_search.call(query="x',
    ],
)
def test_an_unfinished_call_is_truncated_never_a_call_nor_content(raw: str) -> None:
    r = parse_all_ways(raw)
    assert r.tool_calls == [] and r.content is None
    assert r.truncated == raw and r.finish_reason == "length"


def test_complete_calls_before_a_truncated_one_are_kept() -> None:
    r = parse_all_ways(call_json("a", {}) + '; {"name": "b", "param')
    assert calls(r) == [("a", {})]
    assert r.truncated == '{"name": "b", "param'


@pytest.mark.parametrize("raw", ["{", '{"na', "{\n  "])
def test_an_undecided_brace_at_the_end_is_content(raw: str) -> None:
    r = parse_all_ways(raw)
    assert r.content == raw and r.truncated is None


# -- properties -------------------------------------------------------------------------------

VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.text(max_size=12),
    st.sampled_from([TAG, EOM, "}", '"}', "; {", "\\", "```"]),
)
ARGS = st.dictionaries(
    st.text(min_size=1, max_size=6), st.recursive(VALUES, lambda c: st.lists(c, max_size=3)), max_size=3
)
NAMES = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
CALLS = st.lists(st.tuples(NAMES, ARGS, st.sampled_from(["parameters", "arguments"])), max_size=3)
WORDS = st.text(alphabet=st.characters(codec="utf-8", exclude_characters='<`{"'), min_size=1, max_size=10)
TEXT = (
    st.lists(st.one_of(WORDS, st.sampled_from(["<", "<|", "<|python", "<|eo", "{", "}", "`", "\n", ";"])), max_size=5)
    .map("".join)
    .filter(lambda t: t.strip() == t and "```" not in t)
)
CUTS = st.lists(st.integers(min_value=0, max_value=10**6), max_size=30)
MARKERS = (TAG, EOM, EOT, "<|end_of_text|>", "<|eom|>", "<|eot|>", "<|python_start|>", "<|python_end|>")


@settings(max_examples=300, deadline=None)
@given(TEXT, CALLS, TEXT, st.booleans(), st.sampled_from(["; ", ";", "\n"]), CUTS)
def test_round_trip_at_any_split(
    before: str, calls_: list[tuple[str, dict[str, Any], str]], after: str, tagged: bool, sep: str, cuts: list[int]
) -> None:
    tagged = tagged or bool(before)  # without the tag a call is only one at the start
    section = (TAG if tagged else "") + sep.join(call_json(n, a, k) for n, a, k in calls_) if calls_ else ""
    if calls_ and after.startswith(("{", ";")):
        after = "x" + after  # a brace after a call may start another one
    assume(not any(m in before + after for m in MARKERS))
    raw = before + section + after
    whole = parse(raw, model=MODEL)
    assert stream_parse(split_at(raw, cuts), model=MODEL) == whole
    # A backtick on the call's line before it may open an inline code span that a backtick after
    # it closes (in `after` or a value): the call is then an example, text (`test_inline_code.py`).
    assume("`" not in before.rpartition("\n")[2])
    assert calls(whole) == [(n, a) for n, a, _ in calls_]
    assert whole.content == ((before + after) or None)
    assert whole.truncated is None


SAMPLES = [
    call_json("f", {"a": [1, {"b": "}"}]}) + "; " + call_json("g", {}, "arguments") + EOM,
    "Checking. " + TAG + call_json("f", {"q": TAG}) + EOM,
    '{"capital": "Paris", "x": {"y": "<|eot_id|>"}} and more',
    TAG + 'brave_search.call(query="a \\"b\\" c")' + EOM,
    TAG + "import math\nprint(1)" + EOM,
    '{"name": "create_event", "parameters": {"title": "Standup",',
]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(SAMPLES), CUTS)
def test_any_split_of_the_samples_gives_the_whole_parse(raw: str, cuts: list[int]) -> None:
    assert stream_parse(split_at(raw, cuts), model=MODEL) == parse(raw, model=MODEL)


def test_long_arguments_stream_in_small_pieces() -> None:
    big = 'line "q" \\ }{ <|python_tag|> <|eom_id|>\n' * 5000  # ~200 KB
    cases = [
        call_json("w", {"c": big}),
        TAG + call_json("w", {"c": {"nested": [big]}}),
        TAG + "brave_search.call(query=" + repr(big) + ")",
        json.dumps({"answer": big}),
    ]
    rng = random.Random(7)
    for raw in cases:
        pieces = list(random_splits(raw, rng, max_size=6))
        r = stream_parse(pieces, model=MODEL)
        assert len(r.tool_calls) == 1 or r.content == raw
