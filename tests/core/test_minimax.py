"""The `minimax_m2` dialect: MiniMax-M2/M2.1/M2.5 `<invoke>` XML calls with schema-typed values.

There are no conformance fixtures for this format, so these samples carry the proof. They follow
MiniMax's tool-calling guide, its chat template (llama.cpp `unsloth-MiniMax-M2.jinja`) and the
SGLang/vLLM parsers. Every sample is parsed whole, streamed one character at a time and at random
splits, and all parses must agree; then the merged result is checked.
"""

from __future__ import annotations

import json
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

OPEN = "<minimax:tool_call>"
CLOSE = "</minimax:tool_call>"
M2: dict[str, Any] = {
    "model": "MiniMaxAI/MiniMax-M2",
    "thinking": None,
}  # the template ends the prompt with "<think>\n"
M2_NO_THINK: dict[str, Any] = {"model": "MiniMaxAI/MiniMax-M2", "thinking": False}

SCHEMAS: dict[str, dict[str, Any]] = {
    "search_web": {
        "query_list": {"type": "array", "items": {"type": "string"}},
        "query_tag": {"type": "array", "items": {"type": "string"}},
    },
    "get_weather": {"location": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    "set_alarm": {
        "hour": {"type": "integer"},
        "volume": {"type": "number"},
        "repeat": {"type": "boolean"},
        "label": {"type": ["string", "null"]},
        "zip": {"type": "string"},
        "options": {"type": "object"},
        "when": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
    },
    "write_file": {"path": {"type": "string"}, "content": {"type": "string"}},
    "run": {"command": {"type": "string"}},
}
TOOLS = function_tools(SCHEMAS)


def invoke(name: str, **params: str) -> str:
    """One call as the chat template writes it."""
    body = "".join(f'<parameter name="{k}">{v}</parameter>\n' for k, v in params.items())
    return f'<invoke name="{name}">\n{body}</invoke>\n'


def block(*invokes: str) -> str:
    return f"{OPEN}\n{''.join(invokes)}{CLOSE}"


def check(raw: str, **kwargs: Any) -> ParseResult:
    """The whole parse, after asserting that every stream of `raw` gives the same."""
    return check_streams(raw, seeds=range(3), **{**M2_NO_THINK, "tools": TOOLS, **kwargs})


def no_markers(*texts: str | None) -> bool:
    markers = (OPEN, CLOSE, "<invoke name=", "</invoke>", "<parameter name=", "</parameter>", "<think>", "</think>")
    return not any(m in (t or "") for t in texts for m in markers)


# -- model selection and reasoning ------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "dialect"),
    [
        ("MiniMaxAI/MiniMax-M2", "minimax_m2"),
        ("MiniMaxAI/MiniMax-M2.1", "minimax_m2"),
        ("MiniMaxAI/MiniMax-M2.5", "minimax_m2"),
        ("MiniMaxAI/MiniMax-M3", "minimax_m3"),  # its own namespaced framing
        ("mlx-community/MiniMax-M3-4bit", "minimax_m3"),
        ("minimax/minimax-m2:free", "minimax_m2"),
        ("minimax-m2.5:cloud", "minimax_m2"),
        ("unsloth/MiniMax-M2.1-GGUF", "minimax_m2"),
        ("mlx-community/MiniMax-M2-4bit", "minimax_m2"),
    ],
)
def test_model_selection(model: str, dialect: str) -> None:
    found = dialect_for_model(model)
    assert found is not None and found.name == dialect


@pytest.mark.parametrize("model", ["MiniMaxAI/MiniMax-M1-80k", "MiniMaxAI/MiniMax-Text-01"])
def test_other_minimax_models_are_not_m2(model: str) -> None:
    found = dialect_for_model(model)
    assert found is None or found.name != "minimax_m2"


def test_output_starts_inside_think_unless_thinking_is_off() -> None:
    raw = "The user wants the weather.\n</think>\n\nLet me check."
    assert check(raw, **M2) == ParseResult(content="Let me check.", reasoning="The user wants the weather.")
    assert check("Hello.", **M2_NO_THINK) == ParseResult(content="Hello.", reasoning=None)
    # The generation prompt decides when it is known: `<think>\n` open, or closed with thinking off.
    opened = check(raw, **M2, generation_prompt="]~b]ai\n<think>\n")
    assert opened.reasoning == "The user wants the weather." and opened.content == "Let me check."
    closed = check("Hello.", **M2, generation_prompt="]~b]ai\n<think>\n</think>\n\n")
    assert closed == ParseResult(content="Hello.", reasoning=None)
    # Named without a model, the output is read as it comes.
    assert check("Hello.", model=None, thinking=None, dialect="minimax_m2") == ParseResult(
        content="Hello.", reasoning=None
    )


def test_a_call_written_before_the_end_of_think_is_a_draft_and_stays_reasoning() -> None:
    # As SGLang and vLLM read it: reasoning ends only at `</think>`, so a drafted call never runs.
    draft = f"I will call it like this:\n{block(invoke('run', command='rm -rf /tmp/x'))}\nNo, ls first."
    result = check(f"{draft}\n</think>\n\n" + block(invoke("run", command="ls")), **M2)
    assert result.reasoning == draft
    assert calls(result) == [("run", {"command": "ls"})] and result.content is None
    # Never closed: all of it is reasoning, cut off.
    unclosed = check(draft, **M2)
    assert unclosed == ParseResult(content=None, reasoning=draft)


def test_a_call_drafted_inside_closed_reasoning_stays_reasoning() -> None:
    draft = 'Maybe <invoke name="run"> with <parameter name="command">ls</parameter>, then </invoke>.'
    result = check(f"{draft}\n</think>\n\nDone.", **M2)
    assert result == ParseResult(content="Done.", reasoning=draft)
    explicit = check(f"<think>\n{draft}\n</think>\n\nDone.")  # thinking off, but the model opened it
    assert explicit == ParseResult(content="Done.", reasoning=draft)


# -- whole samples -----------------------------------------------------------------------------

# MiniMax's tool-calling guide: two parallel searches in one block, values as JSON arrays.
GUIDE = (
    "The user asks about the latest announcements; search both.\n</think>\n\n"
    f"{OPEN}\n"
    '<invoke name="search_web">\n'
    '<parameter name="query_tag">["technology", "events"]</parameter>\n'
    '<parameter name="query_list">["\\"OpenAI\\" \\"latest\\" \\"release\\""]</parameter>\n'
    "</invoke>\n"
    '<invoke name="search_web">\n'
    '<parameter name="query_tag">["technology", "events"]</parameter>\n'
    '<parameter name="query_list">["\\"Gemini\\" \\"latest\\" \\"release\\""]</parameter>\n'
    "</invoke>\n"
    f"{CLOSE}"
)


def test_the_guide_sample_gives_two_parallel_calls_typed_by_the_schema() -> None:
    result = check(GUIDE, **M2)
    assert result.reasoning == "The user asks about the latest announcements; search both."
    assert result.content is None and result.finish_reason == "tool_calls"
    assert calls(result) == [
        ("search_web", {"query_tag": ["technology", "events"], "query_list": ['"OpenAI" "latest" "release"']}),
        ("search_web", {"query_tag": ["technology", "events"], "query_list": ['"Gemini" "latest" "release"']}),
    ]
    # Without a schema the same values are the model's text.
    untyped = check(GUIDE, **M2, tools=None)
    assert json.loads(untyped.tool_calls[0].arguments)["query_tag"] == '["technology", "events"]'


def test_text_around_a_block_keeps_its_words_and_drops_the_block_layout() -> None:
    raw = "Let me search for that.\n" + block(invoke("get_weather", location="Beijing")) + "\nThe weather will be..."
    result = check(raw)
    assert result.content == "Let me search for that.\nThe weather will be..."
    assert calls(result) == [("get_weather", {"location": "Beijing"})]


def test_several_blocks_and_calls_are_indexed_in_order() -> None:
    raw = (
        "First.\n"
        + block(invoke("run", command="ls"), invoke("run", command="pwd"))
        + "\nThen.\n"
        + block(invoke("get_weather", location="Paris", unit="celsius"))
    )
    result = check(raw)
    assert calls(result) == [
        ("run", {"command": "ls"}),
        ("run", {"command": "pwd"}),
        ("get_weather", {"location": "Paris", "unit": "celsius"}),
    ]
    assert result.content == "First.\nThen."


def test_each_invoke_is_handed_out_at_its_own_end() -> None:
    parser = StreamParser(**M2_NO_THINK, tools=TOOLS)
    first = parser.feed(f"{OPEN}\n" + invoke("run", command="ls"))
    assert [type(e) for e in first if isinstance(e, (ToolCallStart, ToolCallEnd))] == [ToolCallStart, ToolCallEnd]
    assert [e.index for e in first if isinstance(e, ToolCallEnd)] == [0]
    second = parser.feed(invoke("run", command="pwd")[:-3])  # `</invoke>` not complete yet
    assert not any(isinstance(e, ToolCallStart) for e in second)
    rest = parser.feed("e>\n" + CLOSE) + parser.close()
    assert [e.index for e in rest if isinstance(e, ToolCallEnd)] == [1]
    assert calls(merge_events(first + second + rest)) == [("run", {"command": "ls"}), ("run", {"command": "pwd"})]


def test_a_call_without_parameters_has_empty_arguments() -> None:
    result = check(block('<invoke name="list_files">\n</invoke>\n'))
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("list_files", "{}")]


def test_a_block_without_its_closing_token_still_gives_its_calls() -> None:
    result = check(f"{OPEN}\n" + invoke("run", command="ls") + "All done.")
    assert calls(result) == [("run", {"command": "ls"})] and result.content == "All done."
    assert result.truncated is None


def test_an_empty_block_leaves_nothing() -> None:
    # The layout before the block goes with it; the line break after it stays, as nothing replaced it.
    assert check(f"Hi.\n{OPEN}\n{CLOSE}\nBye.") == ParseResult(content="Hi.\nBye.", reasoning=None)


def test_a_fenced_example_is_not_a_call() -> None:
    raw = "Write it like this:\n```\n" + block(invoke("run", command="ls")) + "\n```\n"
    result = check(raw)
    assert result.tool_calls == [] and result.content == raw


# -- names and values --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "head",
    [
        '<invoke name="run">\n<parameter name="command">',
        "<invoke name='run'>\n<parameter name='command'>",
        "<invoke name=run>\n<parameter name=command>",
        '<invoke name=" run ">\n<parameter name="command" >',
    ],
)
def test_names_may_be_double_quoted_single_quoted_or_bare(head: str) -> None:
    result = check(f"{OPEN}\n{head}ls -la</parameter>\n</invoke>\n{CLOSE}")
    assert calls(result) == [("run", {"command": "ls -la"})]


def test_values_are_typed_by_the_schema() -> None:
    raw = block(
        invoke(
            "set_alarm",
            hour="7",
            volume="0.75",
            repeat="true",
            label="null",
            zip="02139",
            options="{'snooze': True, 'tone': 'bell'}",
            when="null",
        )
    )
    assert calls(check(raw)) == [
        (
            "set_alarm",
            {
                "hour": 7,
                "volume": 0.75,
                "repeat": True,
                "label": None,
                "zip": "02139",
                "options": {"snooze": True, "tone": "bell"},
                "when": None,
            },
        )
    ]


def test_strings_stay_strings_and_unknown_parameters_are_text() -> None:
    raw = block(invoke("run", command="true"), invoke("unknown_tool", count="3", flag="null", obj='{"a": 1}'))
    assert calls(check(raw)) == [
        ("run", {"command": "true"}),
        ("unknown_tool", {"count": "3", "flag": None, "obj": '{"a": 1}'}),
    ]


def test_a_value_that_fits_no_type_is_kept_not_dropped() -> None:
    assert calls(check(block(invoke("set_alarm", hour="seven")))) == [("set_alarm", {"hour": "seven"})]


def test_newlines_around_a_value_are_layout_but_indentation_is_kept() -> None:
    code = "    def f():\n        return 1"
    raw = block(invoke("write_file", path="a.py", content=f"\n{code}\n\n"))
    assert calls(check(raw)) == [("write_file", {"path": "a.py", "content": code})]
    spaced = block(invoke("run", command="  echo hi  "))
    assert calls(check(spaced)) == [("run", {"command": "  echo hi  "})]


def test_non_ascii_values_are_kept_as_written() -> None:
    result = check(block(invoke("get_weather", location="北京 — Zürich")))
    assert result.tool_calls[0].arguments == '{"location": "北京 — Zürich"}'


# -- markers inside values ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "a </parameter> b",  # a closing tag followed by text is value text
        "ends with </parameter>",  # ... also when the real one follows at once
        "x </parameter>\n  then more",
        'see <invoke name="other"> and <parameter name="k">',
        "inline </invoke> and </minimax:tool_call> and <minimax:tool_call>",
        'line one\n<parameter name="fake">not a parameter',  # no line-start leniency here
        "</think> and <think>",
        "</parameter",
    ],
)
def test_markers_inside_a_value_stay_in_the_value(value: str) -> None:
    result = check("Writing.\n" + block(invoke("write_file", path="doc.md", content=value)))
    assert calls(result) == [("write_file", {"path": "doc.md", "content": value})]
    assert result.content == "Writing." and result.truncated is None


# -- malformed and truncated -------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        f"{OPEN}\nI would call a tool here.\n{CLOSE}",  # prose where an invoke belongs
        f'{OPEN}\n<invoke name="ru<n">\n</invoke>\n{CLOSE}',  # `<` in a name
        f'{OPEN}\n<invoke name="run>\n</invoke>\n{CLOSE}',  # unbalanced quote
        f'{OPEN}\n<invoke name="">\n</invoke>\n{CLOSE}',  # empty name
        f'{OPEN}\n<invoke name="run">\nnow the command:\n<parameter name="command">ls</parameter>\n</invoke>\n{CLOSE}',
        f'{OPEN}\n<invoke name="run">\n<parameter name="command">ls</parameter>\n{CLOSE}',  # no </invoke>
        f'{OPEN}\n<invoke name="{"x" * 300}">\n</invoke>\n{CLOSE}',  # a "name" too long to be one
    ],
)
def test_malformed_calls_come_back_as_content(raw: str) -> None:
    result = check("Before.\n" + raw + "\nAfter.")
    assert result.tool_calls == [] and result.truncated is None
    assert result.finish_reason == "stop"
    # Nothing is lost: the words of the broken block are all in the content.
    assert re.sub(r"\s", "", result.content or "") == re.sub(r"\s", "", "Before." + raw + "After.")


def test_a_malformed_call_does_not_hide_the_calls_around_it() -> None:
    bad = '<invoke name="run">\noops\n'
    raw = block(invoke("run", command="ls")) + "\n" + f"{OPEN}\n{bad}" + "\n" + block(invoke("run", command="pwd"))
    result = check(raw)
    assert calls(result) == [("run", {"command": "ls"}), ("run", {"command": "pwd"})]
    assert result.content is not None and "oops" in result.content


@pytest.mark.parametrize(
    "cut",
    [
        OPEN,
        f"{OPEN}\n<inv",
        f'{OPEN}\n<invoke name="ru',
        f'{OPEN}\n<invoke name="run">\n<parameter name="command">rm -rf /',
        f'{OPEN}\n<invoke name="run">\n<parameter name="command">rm -rf /tmp/build</parameter>',
        f'{OPEN}\n<invoke name="run">\n<parameter name="command">rm -rf /tmp/build</parameter>\n</inv',
    ],
)
def test_output_cut_inside_a_call_is_truncated_never_a_call(cut: str) -> None:
    result = check("Working.\n" + cut)
    assert result.tool_calls == [] and result.finish_reason == "length"
    assert result.content == "Working." and result.truncated == cut


def test_every_cut_of_a_sample_keeps_only_the_calls_it_finished() -> None:
    raw = "Checking.\n" + block(invoke("run", command="ls"), invoke("get_weather", location="Paris")) + "\nDone."
    whole = calls(check(raw))
    ends = [m.end() for m in re.finditer("</invoke>", raw)]
    opened, closed = raw.index(OPEN) + len(OPEN), raw.index(CLOSE) + len(CLOSE)
    for n in range(len(raw) + 1):
        prefix = raw[:n]
        result = parse(prefix, **M2_NO_THINK, tools=TOOLS)
        assert stream_parse(list(prefix), **M2_NO_THINK, tools=TOOLS) == result
        assert calls(result) == whole[: sum(1 for e in ends if e <= n)], prefix
        assert no_markers(result.content, result.reasoning)
        # Cut inside the block, and not just after a finished call: the rest is a cut-off call.
        inside = opened <= n < closed and not prefix.rstrip().endswith("</invoke>")
        assert (result.truncated is not None) == inside, prefix
        assert result.finish_reason == ("length" if inside else "tool_calls" if result.tool_calls else "stop")


# -- performance and properties ----------------------------------------------------------------


def test_long_arguments_stream_in_small_pieces() -> None:
    content = "line </parameter> x <param\n" * 8_000  # 200 KB, with close tags to hold back and reject
    raw = block(invoke("write_file", path="big.txt", content=content.rstrip("\n")))
    pieces = list(random_splits(raw, 7, max_size=6))
    result = stream_parse(pieces, **M2_NO_THINK, tools=TOOLS)
    assert calls(result) == [("write_file", {"path": "big.txt", "content": content.rstrip("\n")})]


SAMPLES = [
    GUIDE,
    "Hi.\n\n" + block(invoke("set_alarm", hour="7", label="a </parameter> b"), invoke("run", command="ls")) + "\nBye.",
    f"Plan {OPEN} text.\n" + block(invoke("write_file", content=f"{OPEN}\n</invoke> x")) + "\n",
    f"before{OPEN}<invoke name=run><parameter name=command>ls</parameter></invoke>{CLOSE}after",
    f'{OPEN}\n<invoke name="run">\n<parameter name="command">ls</parameter>\n{CLOSE} trailing',
    "Cut: " + block(invoke("run", command="ok"))[:-25],
    "thinking </think> done\n" + block(invoke("run", command="x")),
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SAMPLES), st.lists(st.integers(min_value=0, max_value=10**6), max_size=30), st.booleans())
def test_any_split_gives_the_whole_parse(raw: str, cuts: list[int], thinking: bool) -> None:
    kwargs: dict[str, Any] = {**(M2 if thinking else M2_NO_THINK), "tools": TOOLS}
    pieces = split_at(raw, cuts)
    assert stream_parse(pieces, **kwargs) == parse(raw, **kwargs)


# Text and values that are tricky for the scanner: partial markers, quotes, whitespace.
TRICKY = st.sampled_from(["<", "</", "<minimax", "</parameter", "</parameter>", "<invoke", "</invoke>", '"', "'", " "])
WORDS = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="<`\r"), min_size=1, max_size=10)
TEXT = (
    st.lists(st.one_of(WORDS, TRICKY), max_size=6)
    .map("".join)
    .filter(lambda t: t.strip() == t and OPEN not in t and "<think>" not in t and "</think>" not in t)
)
_CLOSES = re.compile(r"</parameter>[ \t\r\n]*(?:<parameter name=|</invoke>|</minimax:tool_call>)")
VALUE = (
    st.lists(st.one_of(WORDS, TRICKY, st.just("\n")), max_size=6)
    .map("".join)
    .filter(lambda v: v.strip("\n") == v and not _CLOSES.search(v))
)
NAME = st.from_regex(r"[a-z_][a-z0-9_.-]{0,12}", fullmatch=True)
CALL = st.tuples(NAME, st.dictionaries(NAME, VALUE, max_size=3))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(TEXT, st.lists(CALL, max_size=3)), min_size=1, max_size=4),
    st.lists(st.integers(min_value=0, max_value=10**6), max_size=30),
)
def test_round_trip_loses_and_invents_nothing(
    segments: list[tuple[str, list[tuple[str, dict[str, str]]]]], cuts: list[int]
) -> None:
    raw_parts: list[str] = []
    want_calls: list[tuple[str, Any]] = []
    for text, group in segments:
        raw_parts.append(text)
        if group:
            raw_parts.append("\n" + block(*(invoke(n, **args) for n, args in group)) + "\n")
            want_calls.extend(
                (n, {k: None if v.strip() == "null" else v for k, v in args.items()}) for n, args in group
            )
    raw = "".join(raw_parts)
    pieces = split_at(raw, cuts)
    for result in (parse(raw, "minimax_m2"), stream_parse(pieces, dialect="minimax_m2")):
        assert calls(result) == want_calls
        assert (result.content or "") == content_around_calls(segments, "\n")
        assert result.reasoning is None and result.truncated is None
