"""The C helper's entry points (`core/_lane.c`) against the Python reference, on random input.

`tests/core/test_native_lane.py` and `tests/core/test_request_body.py` hold the helper to Python
on inputs shaped like a host's events and a client's bodies. Here the shapes are loosened: any
frame around the text (random head and tail bytes, cut short, repeated), any cap, any bytes
between them, events that are not the lane's at all; and for `member_span`, a line-for-line
Python port of the C scan, compared on JSON bodies with random bytes flipped, inserted, cut or
repeated. The sanitizer run (`.ci/sanitize`) runs this module against an ASan/UBSan build.
"""

from __future__ import annotations

import copy
import json
import os
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.core.test_json_loads import outcome, same
from tests.core.test_native_lane import DIALECTS, ESCAPES, HEAD, OUT, PIECE, TAIL, Template, _compare, _pair
from tests.core.test_request_body import body_text, members
from toolcall_middleware.core import lane as lane_module
from toolcall_middleware.core import memo
from toolcall_middleware.core.inbound.template import TextTemplate
from toolcall_middleware.core.parser import StreamParser
from toolcall_middleware.core.reasoning import ReasoningSplitter, ReasoningSyntax
from toolcall_middleware.core.request.body import read_request

from .profile import fuzz

native = lane_module._native
pytestmark = pytest.mark.skipif(native is None, reason="the C helper is not built here")

# -- member_span: the C scan and its Python port ---------------------------------------------------

_SPACE = b" \t\n\r"


def _skip_space(b: bytes, i: int) -> int:
    while i < len(b) and b[i] in _SPACE:
        i += 1
    return i


def _skip_string(b: bytes, i: int) -> tuple[int, bool]:
    """`b[i]` opens a string: (the index past its closing quote or -1, whether it held a backslash)."""
    start, n = i, len(b)
    i += 1
    while i < n:
        end = b.find(b'"', i)
        if end < 0:
            return -1, False
        before = end
        while b[before - 1] == 0x5C:  # (stops at the opening quote at the latest)
            before -= 1
        if (end - before) % 2 == 0:
            return end + 1, b"\\" in b[start + 1 : end]
        i = end + 1
    return -1, False


def _skip_value(b: bytes, i: int) -> int:
    n, c = len(b), b[i : i + 1]
    if c == b'"':
        return _skip_string(b, i)[0]
    if c in (b"{", b"["):
        depth = 0
        while i < n:
            c = b[i : i + 1]
            if c == b'"':
                i = _skip_string(b, i)[0]
                if i < 0:
                    return -1
                continue
            if c in (b"{", b"["):
                depth += 1
            elif c in (b"}", b"]"):
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return -1
    start = i
    while i < n and b[i : i + 1] not in (b",", b"}", b"]", b" ", b"\t", b"\n", b"\r"):
        i += 1
    return i if i > start else -1


def member_span(b: bytes, name: bytes) -> tuple[int, int] | None:
    """`_lane.member_span`, in Python, step for step."""
    n, found, ok = len(b), None, False
    i = _skip_space(b, 0)
    if i < n and b[i : i + 1] == b"{":
        i = _skip_space(b, i + 1)
        if i < n and b[i : i + 1] == b"}":
            ok = True
        while not ok and i < n and b[i : i + 1] == b'"':
            key_end, escaped = _skip_string(b, i)
            if key_end < 0 or escaped:
                break
            match = b[i + 1 : key_end - 1] == name
            i = _skip_space(b, key_end)
            if i >= n or b[i : i + 1] != b":":
                break
            i = _skip_space(b, i + 1)
            if i >= n:
                break
            value_end = _skip_value(b, i)
            if value_end < 0:
                break
            if match:
                found = (i, value_end)
            i = _skip_space(b, value_end)
            if i < n and b[i : i + 1] == b",":
                i = _skip_space(b, i + 1)
                continue
            if i < n and b[i : i + 1] == b"}":
                ok = True
            break
        if ok and _skip_space(b, i + 1) != n:
            ok = False
    return found if ok else None


SHARDS = st.sampled_from(
    [b'"', b"\\", b"{", b"}", b"[", b"]", b",", b":", b" ", b"\n", b"\xff", b"\x00", b"tools", b'"tools"']
)


@st.composite
def damaged_bodies(draw: Any) -> bytes:
    """A JSON object with members (`tools` among them, sometimes twice), its bytes then flipped,
    inserted into, cut, or repeated in places."""
    raw = bytearray(body_text(draw(members), draw(st.integers(0, 2**16)), draw(st.booleans())))
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(raw)))
        action = draw(st.sampled_from(["flip", "insert", "cut", "repeat", "drop"]))
        if action == "flip" and at < len(raw):
            raw[at] = draw(st.integers(0, 255))
        elif action == "insert":
            raw[at:at] = draw(SHARDS | st.binary(max_size=4))
        elif action == "cut":
            del raw[at:]
        elif action == "repeat":
            raw[at:at] = raw[at : at + draw(st.integers(1, 16))]
        elif at < len(raw):
            del raw[at]
    return bytes(raw)


NAMES = st.sampled_from([b"tools", b"model", b"", b"t", b"tools\\", b'"', b"\xff"]) | st.binary(max_size=6)


@fuzz(400)
@given(damaged_bodies() | st.binary(max_size=64), NAMES)
@example(b'{"a":"\\\\"}', b"a")
@example(b'{"tools":[1]}  ', b"tools")
@example(b'{"tools":1e5,"tools":tru}', b"tools")
@example(b'{"":1}', b"")
def test_member_span_is_its_python_port(raw: bytes, name: bytes) -> None:
    span = native.member_span(raw, name)
    assert span == member_span(raw, name)
    if span is not None:
        start, end = span
        assert 0 <= start < end <= len(raw)
    for kind in (bytearray, memoryview):  # any buffer: the same scan
        assert native.member_span(kind(raw), name) == span


@fuzz(300)
@given(damaged_bodies())
def test_a_damaged_body_reads_the_same_with_and_without_the_helper(raw: bytes) -> None:
    memo.forget()
    with_c = outcome(read_request, raw)
    memo.forget()
    saved = lane_module._native
    lane_module._native = None
    try:
        without = outcome(read_request, raw)
    finally:
        lane_module._native = saved
        memo.forget()
    assert with_c[0] == without[0]
    assert same(with_c[1], without[1]) if with_c[0] == "value" else with_c[1] == without[1]


def test_member_span_refuses_what_is_no_buffer() -> None:
    for raw, name in [("{}", b"tools"), (b"{}", "tools"), (None, b"x"), (1, b"x")]:
        with pytest.raises(TypeError):
            native.member_span(raw, name)


# -- the text, reasoning and call-body lanes, on any frame and any bytes ---------------------------


@st.composite
def frames(draw: Any) -> tuple[bytes, bytes]:
    """The bytes around a text's string body: the usual Chat chunk's, or any."""
    kind = draw(st.sampled_from(["chat", "chat", "quoted", "any"]))
    if kind == "chat":
        return HEAD, TAIL
    head, tail = draw(st.binary(max_size=12)), draw(st.binary(max_size=12))
    return (head + b'"', b'"' + tail) if kind == "quoted" else (head, tail)


@st.composite
def raw_events(draw: Any, frame: tuple[bytes, bytes]) -> bytes:
    """An event for a lane framed by `frame`: its own shape, cut or padded, or any bytes."""
    head, tail = frame
    kind = draw(st.sampled_from(["text", "text", "escapes", "bytes", "cut", "padded", "any", "frame"]))
    if kind == "text":
        body = json.dumps(draw(PIECE), ensure_ascii=draw(st.booleans()))[1:-1].encode("utf-8", "surrogatepass")
        return head + body + tail
    if kind == "escapes":
        return head + draw(ESCAPES).encode() + tail
    if kind == "bytes":
        return head + draw(st.binary(max_size=16)) + tail
    if kind == "cut":
        whole = head + draw(PIECE).encode("utf-8", "surrogatepass") + tail
        return whole[: draw(st.integers(0, len(whole)))]
    if kind == "padded":
        return draw(st.binary(max_size=3)) + head + b"x" + tail + draw(st.binary(max_size=3))
    if kind == "frame":
        return draw(st.sampled_from([head + tail, head, tail, tail + head, head[:-1] + tail, head + tail[1:]]))
    return draw(st.binary(max_size=40))


CAPS = st.sampled_from([0, 1, 10, 40, 64, 100, 1 << 20])


@fuzz(200)
@given(
    st.sampled_from(DIALECTS),
    frames().flatmap(lambda f: st.tuples(st.just(f), st.lists(raw_events(f), max_size=12))),
    CAPS,
    st.lists(st.sampled_from(["", " ", "\n", "  ", "\t"])),
    st.booleans(),
)
def test_the_c_text_lane_on_any_frame_and_bytes_is_the_python_one(
    dialect: str, case: tuple[tuple[bytes, bytes], list[bytes]], cap: int, held: list[str], write: bool
) -> None:
    frame, raws = case

    def build(output: Any) -> tuple[Any, Any, Template]:
        parser = StreamParser(dialect)
        parser.feed("Hello")
        machine = copy.deepcopy(parser._tools)
        template = TextTemplate()
        made = machine.text_lane(frame, output, cap, template)
        assert made is not None
        return machine, made, template

    _compare(build, raws, held, write)


@fuzz(200)
@given(
    st.booleans(),
    frames().flatmap(lambda f: st.tuples(st.just(f), st.lists(raw_events(f), max_size=12))),
    CAPS,
    st.lists(st.sampled_from(["", " ", "\n"])),
    st.booleans(),
)
def test_the_c_reasoning_lane_on_any_frame_and_bytes_is_the_python_one(
    with_splitter: bool, case: tuple[tuple[bytes, bytes], list[bytes]], cap: int, held: list[str], write: bool
) -> None:
    frame, raws = case

    def build(output: Any) -> tuple[Any, Any, Template]:
        splitter = ReasoningSplitter(ReasoningSyntax(), start_inside=True) if with_splitter else None
        if splitter is not None:
            splitter.feed("Let me see")
        template = Template()
        return splitter, lane_module.reasoning_lane(splitter, frame, output, cap, template), template

    _compare(build, raws, held if with_splitter else [], write)


@fuzz(200)
@given(
    st.sampled_from(['{"name": "f", "arguments": {"a": "', '{"name": "f", ', '{"q": "x\\', "{"]),
    frames().flatmap(lambda f: st.tuples(st.just(f), st.lists(raw_events(f), max_size=14))),
    CAPS,
)
def test_the_c_call_body_lane_on_any_frame_and_bytes_is_the_python_one(
    start: str, case: tuple[tuple[bytes, bytes], list[bytes]], cap: int
) -> None:
    frame, raws = case

    def build() -> tuple[Any, Any, Template]:
        parser = StreamParser("hermes")
        parser.feed("Sure. <tool_call>\n" + start)
        machine = copy.deepcopy(parser._tools)
        template = TextTemplate()
        made = machine.text_lane(frame, OUT, cap, template)
        assert made is not None
        return machine._block._body, made, template

    (seg_c, lane_c, t_c), (seg_py, lane_py, t_py) = _pair(build)
    assert type(lane_c).__name__ == "builtin_function_or_method"
    for n, raw in enumerate(raws):
        t_c.used = t_py.used = n % 2 == 0
        assert lane_c(raw) == lane_py(raw), raw
        assert t_c.used is t_py.used
        state_c = (seg_c._tracker.in_string, seg_c._tracker._skip, seg_c._tracker._carry, seg_c._parts)
        assert state_c == (seg_py._tracker.in_string, seg_py._tracker._skip, seg_py._tracker._carry, seg_py._parts)


@pytest.mark.parametrize("raw", [bytearray(HEAD + b"abc" + TAIL), memoryview(HEAD + b"abc" + TAIL), "text", 7, None])
def test_the_c_lanes_take_what_is_no_bytes_as_the_python_ones_do(raw: Any) -> None:
    """A lane is given bytes; anything else is the Python lane's to answer (or refuse), unchanged."""

    def build() -> tuple[Any, Any, Template]:
        parser = StreamParser("hermes")
        parser.feed("Hi")
        machine = copy.deepcopy(parser._tools)
        return machine, lane_module.text_lane(machine, (HEAD, TAIL), OUT, 1 << 20, Template(), True), Template()

    (_, lane_c, _), (_, lane_py, _) = _pair(build)
    assert outcome(lane_c, raw)[0] == outcome(lane_py, raw)[0]


@pytest.mark.skipif(not os.environ.get("TOOLCALL_EXPECT_LANE"), reason="only in the sanitizer run (.ci/sanitize)")
def test_the_helper_is_the_build_the_run_expects() -> None:
    """`.ci/sanitize` builds the helper with ASan and UBSan: the tests must load that build."""
    assert native is not None
    assert native.__file__ == os.environ["TOOLCALL_EXPECT_LANE"]
