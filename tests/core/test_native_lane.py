"""The C lane (`core/_lane.c`) is the Python lane, chunk for chunk and state for state.

Both are built over copies of the same machine and fed the same whole SSE events, in any order
and from any state: what they return, and what they leave in the machine (held whitespace, the
last characters seen) and in the template, must be the same after every event. The lane tests in
`test_fast_paths.py` hold both against the general path.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from toolcall_middleware.core import lane as lane_module
from toolcall_middleware.core.inbound.template import TextTemplate
from toolcall_middleware.core.parser import StreamParser
from toolcall_middleware.core.reasoning import ReasoningSplitter, ReasoningSyntax
from toolcall_middleware.core.textscan import HELD_WHITESPACE

pytestmark = pytest.mark.skipif(lane_module._native is None, reason="the C lane is not built here")

HEAD = b'data: {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"content": "'
TAIL = b'"}, "finish_reason": null}]}\n\n'
OUT = (b'data: {"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":', b"}}]}\n\n")
STATE = ("_held_ws", "_prev", "_last", "_after_call")


class Template:
    """A template the lane tells of a match through the attribute protocol (`TextTemplate` keeps
    `used` in a slot, which the C lane writes directly: the text lane tests use that one)."""

    used = False


class Writer:
    """A Responses client's side (`lane.Writer`): records what it is given."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, bytes]] = []

    def __call__(self, text: str, token: bytes) -> bytes:
        self.calls.append((text, token))
        return b"event: delta\ndata: " + token + b"\n\n"


TEXT = st.text(st.characters(codec="utf-8"), max_size=10)
# A string body written by hand, escapes and all, good or bad: what json's scanner reads of it
# (a pair of surrogate escapes joined, a lone one kept, a bad escape, a quote that ends it early).
ESCAPES = st.lists(
    st.sampled_from(
        [
            *["a", "é", " ", "\\n", "\\t", '\\"', "\\\\", "\\/", "\\b", "\\f", "\\r", "\\u00e9", "\\u0000"],
            *["\\ud83d", "\\ude00", "\\uD83D\\uDE00", "\\ud800x", "\\uDBFF\\uDFFF", "\\udc00"],
            *["\\uzz12", "\\u12", "\\x", '"', "\\"],
        ]
    ),
    max_size=6,
).map("".join)
# (and runs of whitespace longer than a holder holds: `HELD_WHITESPACE`)
LONG_WS = ["y" + " " * (HELD_WHITESPACE + 2), " " * (HELD_WHITESPACE + 1), "z" + "\n" * (HELD_WHITESPACE + 9)]
WORDS = st.sampled_from(
    ["word", "two words", "end. ", "x  ", " ", "  ", "café", "日本語 ", "é", "a\n", "<tool", "`", *LONG_WS]
)
PIECE = st.one_of(TEXT, WORDS, st.lists(st.one_of(TEXT, WORDS), max_size=3).map("".join))


@st.composite
def events(draw: Any) -> bytes:
    """A whole event as a host writes it, or one that is not the lane's at all."""
    kind = draw(st.sampled_from(["json", "json", "json", "ascii", "raw", "frame", "escapes"]))
    if kind == "raw":  # any bytes between the frame: bad UTF-8, control bytes, a quote
        return HEAD + draw(st.binary(max_size=12)) + TAIL
    if kind == "escapes":
        return HEAD + draw(ESCAPES).encode() + TAIL
    if kind == "frame":  # another shape, or a cut event
        return draw(st.sampled_from([HEAD + TAIL, HEAD, b"data: [DONE]\n\n", HEAD[:-1] + b'x"' + TAIL, b""]))
    text = draw(PIECE)
    body = json.dumps(text, ensure_ascii=kind == "ascii")[1:-1].encode("utf-8", "surrogatepass")
    return HEAD + body + TAIL


def _pair(build: Callable[[], Any]) -> tuple[Any, Any]:
    """The C lane and the Python lane over two copies of one machine (`build(...)` -> (machine, lane))."""
    native = build()
    saved = lane_module._native
    lane_module._native = None
    try:
        python = build()
    finally:
        lane_module._native = saved
    return native, python


Builder = Callable[[Any], tuple[Any, Any, Template]]  # (the client's side) -> (machine, lane, template)


def _compare(builder: Builder, raws: list[bytes], held: list[str], write: bool) -> None:
    writers = [Writer(), Writer()]
    outputs = iter(writers if write else [OUT, OUT])
    (m_c, lane_c, t_c), (m_py, lane_py, t_py) = _pair(lambda: builder(next(outputs)))
    assert type(lane_c).__name__ == "builtin_function_or_method"
    assert type(lane_py).__name__ == "function"
    for n, raw in enumerate(raws):
        if held and m_c is not None:  # any whitespace the general path may have left held
            m_c._held_ws = m_py._held_ws = held[n % len(held)]
        t_c.used = t_py.used = n % 3 == 0
        assert lane_c(raw) == lane_py(raw), raw
        assert t_c.used is t_py.used
        if m_c is not None:
            assert {k: getattr(m_c, k, None) for k in STATE} == {k: getattr(m_py, k, None) for k in STATE}
        assert writers[0].calls == writers[1].calls


DIALECTS = ["hermes", "gemma4", "mistral", "kimi_k2", "deepseek_v32", "glm45", "llama_function", "qwen3_coder"]


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(DIALECTS),
    st.lists(events(), max_size=12),
    st.lists(st.sampled_from(["", " ", "\n", "  "])),
    st.booleans(),
)
@example("hermes", [HEAD + b"Hi " + TAIL, HEAD + b"there" + TAIL, HEAD + b"caf\xc3\xa9  " + TAIL], [], False)
@example("hermes", [HEAD + b"a\xff" + TAIL, HEAD + b"\xe6\x97\xa5 " + TAIL, HEAD + b"b" + TAIL], [" "], True)
@example("hermes", [HEAD + LONG_WS[0].encode() + TAIL, HEAD + b"    " + TAIL, HEAD + b"b" + TAIL], [], False)
def test_the_c_text_lane_is_the_python_one(dialect: str, raws: list[bytes], held: list[str], write: bool) -> None:
    def build(output: Any) -> tuple[Any, Any, Template]:
        parser = StreamParser(dialect)
        parser.feed("Hello")
        machine = copy.deepcopy(parser._tools)
        template = TextTemplate()
        made = machine.text_lane((HEAD, TAIL), output, 1 << 20, template)  # as the exchange builds it
        assert made is not None
        return machine, made, template

    _compare(build, raws, held, write)


@settings(max_examples=300, deadline=None)
@given(st.booleans(), st.lists(events(), max_size=12), st.lists(st.sampled_from(["", " ", "\n"])), st.booleans())
def test_the_c_reasoning_lane_is_the_python_one(
    with_splitter: bool, raws: list[bytes], held: list[str], write: bool
) -> None:
    def build(output: Any) -> tuple[Any, Any, Template]:
        splitter = ReasoningSplitter(ReasoningSyntax(), start_inside=True) if with_splitter else None
        if splitter is not None:
            splitter.feed("Let me see")
            assert splitter.lane_ready
        template = Template()
        return splitter, lane_module.reasoning_lane(splitter, (HEAD, TAIL), output, 1 << 20, template), template

    _compare(build, raws, held if with_splitter else [], write)


def test_the_c_lane_holds_as_much_whitespace_as_python() -> None:
    assert lane_module._native is not None
    assert lane_module._native.HELD_WHITESPACE == HELD_WHITESPACE


def test_the_c_lane_keeps_the_cap_and_the_frame() -> None:
    """An event over the cap, or no longer than its frame, is not the lane's."""
    parser = StreamParser("hermes")
    parser.feed("Hi")
    lane = lane_module.text_lane(parser._tools, (HEAD, TAIL), OUT, len(HEAD + TAIL) + 3, Template(), True)
    assert lane(HEAD + b"abc" + TAIL) == OUT[0] + b'"abc"' + OUT[1]
    assert lane(HEAD + b"abcd" + TAIL) is None
    assert lane(HEAD + TAIL) is None
    assert lane(bytearray(HEAD + b"abc" + TAIL)) == OUT[0] + b'"abc"' + OUT[1]  # not bytes: the Python lane's



BODY_PIECE = st.one_of(
    st.text(st.sampled_from('{}[]":,\\ ab1<>/é\n\t'), max_size=8),
    st.sampled_from(['"q": "a', '\\"', "\\\\", 'b"', "</tool_call>", "</", "tool_call>", '{"x": "<b>"}', "\\u00e9"]),
)


@st.composite
def body_events(draw: Any) -> bytes:
    """A piece of a call's body, as a host writes it (Go's JSON escapes `<`), or another event."""
    kind = draw(st.sampled_from(["ascii", "utf8", "go", "go", "raw", "escapes"]))
    if kind == "raw":
        return HEAD + draw(st.binary(max_size=10)) + TAIL
    if kind == "escapes":
        return HEAD + draw(ESCAPES).encode() + TAIL
    body = json.dumps(draw(BODY_PIECE), ensure_ascii=kind == "ascii")[1:-1]
    if kind == "go":
        body = body.replace("<", "\\u003c").replace(">", "\\u003e")
    return HEAD + body.encode("utf-8", "surrogatepass") + TAIL


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(["hermes", "llama_function"]),
    st.sampled_from(['{"name": "f", "arguments": {"a": "', '{"name": "f", ', '{"q": "x\\', '{"a": 1, ']),
    st.lists(body_events(), max_size=14),
)
def test_the_c_lane_inside_a_call_is_the_python_one(dialect: str, start: str, raws: list[bytes]) -> None:
    """The pieces a call's JSON body takes quietly (`JsonSegment.feed_inside`): the same answers,
    and the same string state and parts left in the segment."""
    opener = "<tool_call>\n" if dialect == "hermes" else "<function=f>"

    def build() -> tuple[Any, Any, Template]:
        parser = StreamParser(dialect)
        parser.feed("Sure. " + opener + (start if dialect == "hermes" else start[start.index("{") :]))
        machine = copy.deepcopy(parser._tools)
        template = TextTemplate()
        made = machine.text_lane((HEAD, TAIL), OUT, 1 << 20, template)
        assert made is not None
        return machine._block._body, made, template

    (seg_c, lane_c, t_c), (seg_py, lane_py, t_py) = _pair(build)
    assert type(lane_c).__name__ == "builtin_function_or_method"
    assert type(lane_py).__name__ == "function"
    for n, raw in enumerate(raws):
        t_c.used = t_py.used = n % 2 == 0
        got = lane_c(raw)
        assert got == lane_py(raw), raw
        assert t_c.used is t_py.used
        state_c = (seg_c._tracker.in_string, seg_c._tracker._skip, seg_c._tracker._carry, seg_c._parts)
        assert state_c == (seg_py._tracker.in_string, seg_py._tracker._skip, seg_py._tracker._carry, seg_py._parts)
        if got is None and raw.startswith(HEAD) and n % 3 == 0:
            # A piece the lane left: the general path feeds the segment (which may move it on).
            text = raw[len(HEAD) : -len(TAIL)].decode(errors="ignore")
            seg_c.feed(text)
            seg_py.feed(text)
