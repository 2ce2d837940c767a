"""The `mistral` dialect: v3 arrays and v11 `name[ARGS]{json}` calls after `[TOOL_CALLS]`."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from canitoolcall.fixtures import load_fixtures
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.conftest import calls, check_streams, random_splits, split_at, stream_parse
from toolcall_middleware import StreamParser, TextDelta, parse
from toolcall_middleware.core._result import ParseResult, ToolCall
from toolcall_middleware.core.dialects import dialect_for_model
from toolcall_middleware.core.dialects.auto import SHARED, UNIQUE

MODEL = "mistralai/Mistral-Small-3.2-24B-Instruct-2506"


def both(raw: str, **kwargs: Any) -> ParseResult:
    """The whole parse, after checking that a one-character stream gives the same."""
    return check_streams(raw, seeds=(), **{"model": MODEL, **kwargs})


# -- v11 ---------------------------------------------------------------------------------------


def test_v11_calls_with_text_before_and_after() -> None:
    r = both('Let me check.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]get_time[ARGS]{}\nDone.')
    assert r.content == "Let me check.\nDone."
    assert calls(r) == [("get_weather", {"city": "Paris"}), ("get_time", {})]
    assert r.tool_calls[1].arguments == "{}"
    assert r.finish_reason == "tool_calls"


def test_v11_without_args_marker() -> None:
    r = both('[TOOL_CALLS]f{"a": 1}[TOOL_CALLS]g {"b": [1, 2]}')
    assert r.content is None
    assert calls(r) == [("f", {"a": 1}), ("g", {"b": [1, 2]})]


def test_v11_call_id_is_kept() -> None:
    r = both('[TOOL_CALLS]f[CALL_ID]a1B2c3D4e[ARGS]{"a": 1}[TOOL_CALLS]g[CALL_ID]000000002{}')
    assert r.tool_calls == [
        ToolCall(name="f", arguments='{"a": 1}', id="a1B2c3D4e"),
        ToolCall(name="g", arguments="{}", id="000000002"),
    ]


def test_v11_markers_and_brackets_inside_a_value_stay_inside() -> None:
    value = 'Calls look like [TOOL_CALLS]f[ARGS]{"a": 1}] }{ ]["\\'
    r = both("[TOOL_CALLS]write[ARGS]" + json.dumps({"content": value}) + " tail")
    assert calls(r) == [("write", {"content": value})]
    assert r.content == " tail"


# -- v3 ----------------------------------------------------------------------------------------


def test_v3_array_with_ids() -> None:
    raw = 'Hi[TOOL_CALLS] [{"name": "f", "arguments": {"a": "]"}, "id": "a1B2c3D4e"}, {"arguments": {}, "name": "g"}]'
    r = both(raw, model="mistralai/Mistral-7B-Instruct-v0.3")
    assert r.content == "Hi"
    assert r.tool_calls == [
        ToolCall(name="f", arguments='{"a": "]"}', id="a1B2c3D4e"),
        ToolCall(name="g", arguments="{}", id=None),
    ]


def test_v3_each_item_is_handed_out_when_it_closes() -> None:
    parser = StreamParser(model="mistral-nemo:12b")
    events = parser.feed('[TOOL_CALLS] [{"name": "f", "arguments": {}}, {"name": "g", ')
    assert [type(e).__name__ for e in events] == ["ToolCallStart", "ToolCallDelta", "ToolCallEnd"]


def test_v3_malformed_item_is_content() -> None:
    r = both('[TOOL_CALLS] [{"name": "f", "arguments": {}}, {"nam": 1}] x')
    assert calls(r) == [("f", {})]
    assert r.content == ', {"nam": 1}] x'


# -- reasoning ---------------------------------------------------------------------------------


def test_think_block_then_call() -> None:
    raw = '[THINK]Maybe [TOOL_CALLS]f[ARGS]{"a": 1}?[/THINK][TOOL_CALLS]f[ARGS]{"a": 2}'
    r = both(raw, model="mistralai/Magistral-Small-2509", generation_prompt="[/INST]", thinking=True)
    assert r.reasoning == 'Maybe [TOOL_CALLS]f[ARGS]{"a": 1}?'
    assert r.content is None
    assert calls(r) == [("f", {"a": 2})]


def test_plain_think_tags() -> None:
    r = both("<think>hmm</think>Answer.", model="magistral-small-2506")
    assert (r.reasoning, r.content) == ("hmm", "Answer.")


# -- truncated and malformed -------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    ['[TOOL_CALLS]write[ARGS]{"content": "rm -rf /', "[TOOL_CALLS]", "[TOOL_CALLS]f[ARG", '[TOOL_CALLS] [{"name": "f"'],
)
def test_truncated_call_is_neither_call_nor_content(raw: str) -> None:
    r = both("Text." + raw)
    assert r.tool_calls == []
    assert r.content == "Text."
    assert r.truncated == raw
    assert r.finish_reason == "length"


@pytest.mark.parametrize(
    "raw",
    [
        "[TOOL_CALLS] not json at all",
        '[TOOL_CALLS]f[ARGS]{"a": }',
        "[TOOL_CALLS]f[ARGX]{}",
        '[TOOL_CALLS] [{"nam": 1}]',
        '[TOOL_CALLS]{"no": "name"}',
        "The [TOOL_CALLS] token is special.",
    ],
)
def test_malformed_call_is_content(raw: str) -> None:
    r = both(raw)
    assert r.tool_calls == []
    assert r.content == raw
    assert r.truncated is None


# -- model selection ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "model",
    [
        "mistralai/Mistral-7B-Instruct-v0.3",
        "mistralai/Mixtral-8x22B-Instruct-v0.1",
        "mistralai/Magistral-Small-2509",
        "mistralai/Devstral-Small-2507",
        "mistralai/Ministral-3-14B-Reasoning-2512",
        "codestral-22b",
        "mistral-small3.2:24b",
        "mistral-nemo:12b",
    ],
)
def test_model_selects_mistral(model: str) -> None:
    dialect = dialect_for_model(model)
    assert dialect is not None and dialect.name == "mistral"


# -- linear ------------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["v11", "v3"])
def test_long_arguments_stream_in_small_pieces(form: str) -> None:
    args = {"content": 'x\\"]}{[TOOL_CALLS]' * 12_000}
    if form == "v11":
        raw = "[TOOL_CALLS]write[ARGS]" + json.dumps(args)
    else:
        raw = "[TOOL_CALLS] [" + json.dumps({"name": "write", "arguments": args}) + "]"
    pieces = list(random_splits(raw, 7, max_size=6))
    r = stream_parse(pieces, model=MODEL)
    assert calls(r) == [("write", args)]


# -- properties --------------------------------------------------------------------------------

SAMPLES: list[tuple[str, dict[str, Any]]] = [
    (f.raw_output, {"model": f.models[0], "generation_prompt": f.generation_prompt, "thinking": f.thinking})
    for f in load_fixtures(families=("mistral",))
] + [
    ('a[TOOL_CALLS]f[CALL_ID]a1B2c3D4e[ARGS]{"s": "[TOOL_CALLS]]}"} b[TOOL_CALLS]g{}', {"model": MODEL}),
    ('[TOOL_CALLS] [{"name": "f", "arguments": {}}, {"nam": 1}, 42] c', {"model": MODEL}),
    ("[THINK]x [TOOL_CALLS] y", {"model": "magistral"}),
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SAMPLES), st.lists(st.integers(min_value=0, max_value=10**6), max_size=40))
def test_any_split_gives_the_whole_parse(sample: tuple[str, dict[str, Any]], cuts: list[int]) -> None:
    raw, options = sample
    assert stream_parse(split_at(raw, cuts), **options) == parse(raw, **options)


TEXT = st.lists(
    st.one_of(
        st.text(st.characters(codec="utf-8", exclude_characters="["), max_size=8),
        st.sampled_from(["[", "[TOOL", "[ARGS]", "]", "{", '"', "\n", " ", "[CALL_ID]"]),
    ),
    max_size=6,
).map("".join)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=12), st.sampled_from(["[TOOL_CALLS]", "]}"])
)
ARGS = st.dictionaries(st.text(max_size=6), st.recursive(SCALARS, lambda c: st.lists(c, max_size=3)), max_size=3)
STRAY_TOKENS = re.compile(r"\[ARGS\]|\[CALL_ID\]")  # outside a call, the tokens are dropped
CALL = st.tuples(st.from_regex(r"[a-z_][a-z0-9_]{0,10}", fullmatch=True), ARGS)


def render(form: str, batch: list[tuple[str, dict[str, Any]]]) -> str:
    if form == "v3":
        return "[TOOL_CALLS] " + json.dumps([{"name": n, "arguments": a} for n, a in batch])
    marker = "[ARGS]" if form == "v11" else ""
    return "".join(f"[TOOL_CALLS]{n}{marker}{json.dumps(a)}" for n, a in batch)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["v3", "v11", "v11-bare"]),
    st.lists(st.tuples(TEXT, st.lists(CALL, max_size=2)), min_size=1, max_size=4),
    st.lists(st.integers(min_value=0, max_value=10**6), max_size=30),
)
def test_round_trip_loses_and_invents_nothing(
    form: str, segments: list[tuple[str, list[tuple[str, dict[str, Any]]]]], cuts: list[int]
) -> None:
    raw_parts, want_text, want_calls = [], [], []
    run = ""  # the text between two calls
    for text, batch in segments:
        raw_parts.append(text)
        run += text
        if batch:
            assume("[TOOL_CALLS]" not in run)
            want_text.append(STRAY_TOKENS.sub("", run))  # a stray special token is markup: dropped
            run = ""
            raw_parts.append(render(form, batch))
            want_calls.extend(batch)
    assume("[TOOL_CALLS]" not in run)
    want_text.append(STRAY_TOKENS.sub("", run))
    raw = "".join(raw_parts)
    assume("think" not in raw.lstrip(" \t\r\n")[:8].lower())  # an opening reasoning marker is reasoning
    assume("```" not in raw)  # the text may open a code fence, which makes the calls after it examples
    whole = parse(raw, "mistral")
    assert stream_parse(split_at(raw, cuts), dialect="mistral") == whole
    # Backticks around a call on its line make it inline code, an example (`test_inline_code.py`).
    assume("`" not in raw)
    assert calls(whole) == want_calls
    assert (whole.content or "") == "".join(want_text)
    assert whole.reasoning is None and whole.truncated is None


FOREIGN = (*UNIQUE, *SHARED)  # the markers of the formats a watch for another dialect looks for


def _reasoning_start(held: str) -> bool:
    return held.startswith("<") and any(m.startswith(held) for m in ("<think>", "</think>"))


def _foreign_start(held: str) -> bool:
    return any(m.startswith(held) or held.startswith(m) for m in FOREIGN)


@pytest.mark.parametrize("mismatch", ["off", "read"])
@settings(max_examples=200, deadline=None)
@given(text=st.text(st.characters(codec="ascii", exclude_characters="[`")), seed=st.integers(min_value=0, max_value=99))
def test_plain_text_is_not_delayed(text: str, seed: int, mismatch: str) -> None:
    assume(not text.lstrip(" \t\r\n").startswith("<think>"))  # that opens reasoning: not plain text
    parser = StreamParser("mistral", dialect_mismatch=mismatch)  # type: ignore[arg-type]
    fed, emitted = "", ""
    for piece in random_splits(text, seed):
        fed += piece
        emitted += "".join(e.text for e in parser.feed(piece) if isinstance(e, TextDelta))
        # Only leading whitespace and a possible `<think>` opening at the very start are held back,
        # and elsewhere the start of a possible reasoning marker (`ReasoningInText`: a stray
        # `</think>` is dropped) at the end; looking for another dialect's calls, also what may
        # start another format's marker, and the text from one on (`dialect_mismatch`).
        held = fed[len(emitted) :]
        assert fed.startswith(emitted)
        marker_start = _reasoning_start(held)
        if mismatch == "read":
            # The watch reads only what the parser gave: it may hold the start of a foreign marker
            # while the parser holds, behind it, the start of a reasoning marker.
            marker_start = marker_start or any(
                _foreign_start(held[:cut]) and (cut == len(held) or _reasoning_start(held[cut:]))
                for cut in range(1, len(held) + 1)
            )
        assert emitted == fed or (not emitted and "<think>".startswith(held.lstrip(" \t\r\n"))) or marker_start
    emitted += "".join(e.text for e in parser.close() if isinstance(e, TextDelta))
    assert emitted == text
