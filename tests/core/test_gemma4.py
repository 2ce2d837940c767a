"""The `gemma4` dialect: `<|tool_call>call:NAME{key:<|"|>text<|"|>,n:3}<tool_call|>`.

Every sample is parsed whole, streamed one character at a time and at random splits, and all
parses must agree; then the merged result is checked.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import calls, check_streams, random_splits, split_at, stream_parse
from toolcall_middleware import StreamParser, ToolCallEnd, ToolCallStart, dialect_for_model, merge_events, parse
from toolcall_middleware.core._result import ParseResult
from toolcall_middleware.core.dialects.gemma4 import parse_arguments, read_header

OPEN = "<|tool_call>"
CLOSE = "<tool_call|>"
Q = '<|"|>'

NO_THINK = {"model": "google/gemma-4-31B-it", "generation_prompt": "<|turn>model\n<|channel>thought\n<channel|>"}
THINK = {"model": "google/gemma-4-31B-it", "generation_prompt": "<|turn>model\n", "thinking": True}


def s(text: str) -> str:
    """A string value in Gemma's notation."""
    return Q + text + Q


def call(name: str, body: str, close: bool = True) -> str:
    return f"{OPEN}call:{name}{{{body}}}" + (CLOSE if close else "")


def check(raw: str, **kwargs: Any) -> ParseResult:
    """The whole parse, after asserting that every stream of `raw` gives the same."""
    return check_streams(raw, seeds=range(4), **(kwargs or NO_THINK))


# -- calls and values ------------------------------------------------------------------------


def test_single_and_parallel_calls() -> None:
    r = check(call("get_weather", f"city:{s('Paris')},unit:{s('c')}"))
    assert calls(r) == [("get_weather", {"city": "Paris", "unit": "c"})]
    assert r.content is None and r.reasoning is None and r.finish_reason == "tool_calls"
    raw = call("get_time", "") + call("get-weather", f"city:{s('Oslo')}") + call("weather.get", "n:1")
    assert calls(check(raw)) == [("get_time", {}), ("get-weather", {"city": "Oslo"}), ("weather.get", {"n": 1})]


def test_bare_values_are_typed() -> None:
    body = "a:1e-05,b:-3,c:2.5,d:1e+21,e:true,f:false,g:null,h:[0,-0.5,1.5e-05],i:{j:{k:[]}},w:celsius"
    (_, args), *_ = calls(check(call("f", body)))
    assert args == {
        "a": 1e-05,
        "b": -3,
        "c": 2.5,
        "d": 1e21,
        "e": True,
        "f": False,
        "g": None,
        "h": [0, -0.5, 1.5e-05],
        "i": {"j": {"k": []}},
        "w": "celsius",  # an unquoted word is kept as text
    }
    assert type(args["b"]) is int and type(args["a"]) is float


def test_keys_with_spaces_quoted_keys_and_loose_separators() -> None:
    body = f"name:{s('Demo')}, connections:{{Basic LLM Chain:{{main:[[{{node:{s('X')}, index:0}}]]}}}}"
    body += f",{s('odd key')}:1, nested:[1, 2, {{inner:{s('v')}}}],"
    (_, args), *_ = calls(check(call("wf", body)))
    assert args == {
        "name": "Demo",
        "connections": {"Basic LLM Chain": {"main": [[{"node": "X", "index": 0}]]}},
        "odd key": 1,
        "nested": [1, 2, {"inner": "v"}],
    }


def test_strings_are_raw_text_and_may_hold_markers() -> None:
    text = 'def f():\n\treturn {"a": [1, 2]}, "x:y" \\ ' + f"{OPEN}call:g{{}}{CLOSE} and <channel|> too"
    path = "C:\\Users\\me.py"
    r = check(call("write_file", f"content:{s(text)},path:{s(path)}"))
    assert calls(r) == [("write_file", {"content": text, "path": path})]
    assert r.content is None


def test_unicode_survives() -> None:
    text = "こんにちは 🌸 مرحبا — naïve café 👩\u200d💻"
    r = check(call("translate", f"text:{s(text)}"))
    assert calls(r) == [("translate", {"text": text})]
    assert "こんにちは" in r.tool_calls[0].arguments  # not \\u-escaped


# -- the stop token may be cut ---------------------------------------------------------------


def test_a_call_is_complete_when_its_object_closes() -> None:
    r = check(call("f", "a:1", close=False))
    assert calls(r) == [("f", {"a": 1})] and r.content is None and r.truncated is None
    r = check(call("f", "a:1", close=False) + " \n" + CLOSE + " after")
    assert calls(r) == [("f", {"a": 1})] and r.content == " after"
    # What follows a complete call at the end of the output is content.
    r = check(call("f", "a:1", close=False) + "\n")
    assert calls(r) == [("f", {"a": 1})] and r.content == "\n"
    r = check(call("f", "a:1", close=False) + "<tool_ca")
    assert calls(r) == [("f", {"a": 1})] and r.content == "<tool_ca"


def test_each_call_is_emitted_when_its_object_closes() -> None:
    p = StreamParser(**NO_THINK)  # type: ignore[arg-type]
    events = p.feed(OPEN + "call:f{a:" + s("x}"))
    assert not any(isinstance(e, ToolCallStart) for e in events)
    events = p.feed("}")
    assert [type(e) for e in events if isinstance(e, (ToolCallStart, ToolCallEnd))] == [ToolCallStart, ToolCallEnd]
    rest = p.feed(CLOSE) + p.close()
    assert merge_events(events + rest).content is None


# -- truncated and malformed -----------------------------------------------------------------


@pytest.mark.parametrize(
    "cut",
    [OPEN, OPEN + "call:get", OPEN + "call:get_weather{city:" + Q + "Par", OPEN + "call:f{city:" + s("Paris")],
)
def test_truncated_call_is_never_a_call(cut: str) -> None:
    r = check("Hi " + cut)
    assert r.tool_calls == [] and r.content == "Hi " and r.truncated == cut
    assert r.finish_reason == "length"


def test_truncated_second_call_keeps_the_first() -> None:
    second = OPEN + "call:search{filters:{max:3,tags:[" + s("a") + "]},query:"
    r = check(call("get_weather", f"city:{s('Zürich')}") + second)
    assert calls(r) == [("get_weather", {"city": "Zürich"})] and r.truncated == second


@pytest.mark.parametrize(
    "bad",
    [
        OPEN + "call:bad_func no brace" + CLOSE,
        OPEN + "call:f{a:1" + CLOSE,  # the end marker before the object closed
        OPEN + "call:f{a:}" + CLOSE,
        OPEN + "call:f{a:1,,b:2}" + CLOSE,
        OPEN + "call:f{a:[1,2}]}" + CLOSE,
        OPEN + "call:f{a:1 " + s("x") + "}" + CLOSE,
        OPEN + "call:{a:1}" + CLOSE,
        OPEN + "get_weather{}" + CLOSE,
    ],
)
def test_malformed_call_is_content(bad: str) -> None:
    r = check(bad)
    assert r.tool_calls == [] and r.content == bad and r.truncated is None


def test_malformed_call_then_a_good_one() -> None:
    bad = OPEN + "call:f{a:1" + CLOSE
    r = check("Done. " + bad + " " + call("g", "") + "!")
    # The whitespace after `Done.` was held as layout; a malformed block gives it back.
    assert r.content == "Done. " + bad + " !" and calls(r) == [("g", {})]
    r = check("Use " + OPEN + " to call.")
    assert r.content == "Use " + OPEN + " to call." and r.tool_calls == []


def test_overlong_header_is_malformed_however_it_is_split() -> None:
    raw = OPEN + " " * 300 + "call:f{}"
    assert check(raw).content == raw
    raw = OPEN + "call:" + "n" * 300 + "{}"
    assert check(raw).content == raw
    # So is a `<tool_call|>` after a long run of whitespace: it is text, not the call's end.
    raw = call("f", "", close=False) + " " * 100 + CLOSE
    r = check(raw)
    assert calls(r) == [("f", {})] and r.content == " " * 100 + CLOSE


# -- text around calls -----------------------------------------------------------------------


def test_text_around_calls() -> None:
    r = check("Some text before " + call("f", "") + " after")
    assert r.content == "Some text before  after" and calls(r) == [("f", {})]
    # Whitespace between a finished sentence, or a call, and the next call is layout.
    r = check("Let me check the weather for you. " + call("f", "") + "\n" + call("g", ""))
    assert r.content == "Let me check the weather for you." and calls(r) == [("f", {}), ("g", {})]
    r = check("One.  Two. " + call("f", "") + "Three.")
    assert r.content == "One.  Two. Three."  # the layout space after the call sets "Three." apart
    r = check("Trailing. \n")
    assert r.content == "Trailing. \n"


def test_a_call_inside_a_fence_is_an_example() -> None:
    fenced = "```\n" + call("f", "") + "\n```"
    r = check(fenced)
    assert r.content == fenced and calls(r) == []
    r = check(fenced + "\n" + call("g", ""))
    assert calls(r) == [("g", {})]


# -- reasoning -------------------------------------------------------------------------------


def test_thought_channel_is_reasoning_without_its_label() -> None:
    raw = "<|channel>thought\nI need London.\n<channel|>" + call("get_weather", f"city:{s('London')}") + "Ok."
    r = check(raw, **THINK)
    assert r.reasoning == "I need London." and r.content == "Ok."
    assert calls(r) == [("get_weather", {"city": "London"})]
    r = check("<|channel>thought\nLine1\nLine2<channel|>Answer", **THINK)
    assert r.reasoning == "Line1\nLine2" and r.content == "Answer"
    r = check("<|channel>thought\nThe user wants the current weather", **THINK)
    assert r.reasoning == "The user wants the current weather" and r.content is None


def test_thinking_off_prompt_closes_the_channel() -> None:
    r = check("Hello! <|channel>thought\nx<channel|>")
    assert r.content == "Hello! <|channel>thought\nx<channel|>" and r.reasoning is None
    r = check("Hi.", model="gemma4:31b", generation_prompt="")
    assert r.content == "Hi." and r.reasoning is None


# -- helpers and selection -------------------------------------------------------------------


def test_read_header() -> None:
    assert read_header("") is None
    assert read_header("cal") is None
    assert read_header("call:get_weather") is None
    assert read_header("call:get_weather {") == ("get_weather", 18)
    assert read_header("\ncall:a.b-c{x") == ("a.b-c", 12)
    assert read_header("call:a b") is False
    assert read_header("<|tool_call>") is False


def test_parse_arguments() -> None:
    assert parse_arguments("{}") == {}
    assert parse_arguments("{ a : 1 , }") == {"a": 1}
    assert parse_arguments('{"k":1}') == {"k": 1}
    assert parse_arguments("{a:1e999,b:" + "9" * 5000 + "}") == {"a": "1e999", "b": "9" * 5000}
    assert parse_arguments("{a:1} x") is None
    assert parse_arguments("{a:" + "[" * 5000 + "]" * 5000 + "}") is None  # too deep: malformed


@pytest.mark.parametrize(
    ("model", "selected"),
    [
        ("google/gemma-4-31B-it", True),
        ("google/gemma-4-26B-A4B-it", True),
        ("unsloth/gemma-4-E4B-it-GGUF", True),
        ("gemma4:31b", True),
        ("gemma4", True),
        ("google/gemma-3-4b-it", False),
        ("google/medgemma-4b-it", False),
        ("google/functiongemma-270m-it", False),
    ],
)
def test_model_selection(model: str, selected: bool) -> None:
    dialect = dialect_for_model(model)
    assert (dialect is not None and dialect.name == "gemma4") is selected


def test_large_arguments_stream_in_small_pieces() -> None:
    text = "x{},:<|\n" * 25_000  # 200 KB with brackets, separators and marker-like text
    raw = call("write", f"content:{s(text)},n:[{','.join(['1'] * 2000)}]")
    pieces = list(random_splits(raw, 7, max_size=6))
    r = stream_parse(pieces, **NO_THINK)
    assert calls(r) == [("write", {"content": text, "n": [1] * 2000})]


# -- split invariance ------------------------------------------------------------------------

SAMPLES = [
    call("get_weather", f"city:{s('Paris')},unit:{s('c')}") + "Let me check.",
    "Checking. " + call("f", f"a:{s('x,y} ' + Q[:3])}", close=False),
    "<|channel>thought\nPlan.\n<channel|>" + call("f", "n:-1.5e-05,o:{a:[1,null]}") + call("g", ""),
    "Text <" + OPEN + "call:bad name" + CLOSE + " " + call("h", f"k with space:{s(CLOSE)}"),
    "```\n" + call("f", "") + "\n``` " + OPEN + "call:cut{a:" + Q + "Par",
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SAMPLES), st.booleans(), st.lists(st.integers(min_value=0, max_value=10**6), max_size=40))
def test_any_split_gives_the_whole_parse(raw: str, thinking: bool, cuts: list[int]) -> None:
    kwargs = THINK if thinking else NO_THINK
    assert stream_parse(split_at(raw, cuts), **kwargs) == parse(raw, **kwargs)


# -- round trip: render random text and calls the way the template does, parse them back -------


def render(value: Any) -> str:
    """A value in Gemma's notation, as the chat template writes it."""
    if isinstance(value, str):
        return s(value)
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return str(value)  # Python formatting: 1e-05, 1e+21
    if isinstance(value, list):
        return "[" + ",".join(render(v) for v in value) + "]"
    return "{" + ",".join(f"{k}:{render(v)}" for k, v in value.items()) + "}"


TRICKY = st.sampled_from([OPEN, CLOSE, "<|channel>", "<channel|>", "{", "}", "[", ",", ":", "<|", '<|"|', "\n", " "])
STRINGS = st.lists(st.one_of(st.text(max_size=8), TRICKY), max_size=5).map("".join).filter(lambda t: Q not in t)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), STRINGS)
KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_ ]{0,8}[A-Za-z0-9_]|[A-Za-z_]", fullmatch=True)
VALUES = st.recursive(SCALARS, lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(KEYS, c, max_size=3)))
ROUND_CALL = st.tuples(
    st.from_regex(r"[a-z_][a-z0-9_.\-]{0,12}", fullmatch=True), st.dictionaries(KEYS, VALUES, max_size=4)
)
WORDS = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="<`"), min_size=1, max_size=12)
TEXT = st.lists(st.one_of(WORDS, st.sampled_from(["<", "<tool", "<|tool_call", "{", "}", "\n", " ", "."])), max_size=6)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(TEXT.map("".join), st.lists(ROUND_CALL, max_size=2)), min_size=1, max_size=3),
    st.lists(st.integers(min_value=0, max_value=10**6), max_size=30),
)
def test_round_trip_loses_and_invents_nothing(
    segments: list[tuple[str, list[tuple[str, dict[str, Any]]]]], cuts: list[int]
) -> None:
    raw_parts: list[str] = []
    want_calls: list[tuple[str, Any]] = []
    for text, seg_calls in segments:
        text = text.strip()  # whitespace next to a call may be layout; keep text unambiguous
        raw_parts.append(text)
        for name, args in seg_calls:
            raw_parts.append(f"{OPEN}call:{name}{render(args)}{CLOSE}")
            want_calls.append((name, args))
    raw = "".join(raw_parts)
    want_text = "".join(text.strip() for text, _ in segments)
    for result in (parse(raw, "gemma4"), stream_parse(split_at(raw, cuts), dialect="gemma4")):
        assert calls(result) == want_calls
        assert (result.content or "") == want_text
        assert result.reasoning is None and result.truncated is None
