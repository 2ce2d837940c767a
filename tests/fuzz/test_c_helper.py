"""The C helper's functions (`core/_scan.c`) against the Python reference, on random input.

`tests/core/test_request_body.py` holds the helper to Python on a client's bodies. Here the
shapes are loosened: `member_span` is compared with a line-for-line Python port of the C scan on
JSON bodies with random bytes flipped, inserted, cut or repeated. The sanitizer run
(`.ci/sanitize`) runs this module against an ASan/UBSan build.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.core.test_json_loads import outcome, same
from tests.core.test_request_body import body_text, members
from toolcall_middleware.core import _compiled as compiled
from toolcall_middleware.core import _memo as memo
from toolcall_middleware.core.request._body import read_request

from .profile import fuzz

native = compiled.native
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
    """`_scan.member_span`, in Python, step for step."""
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
    for kind in (bytearray, memoryview):  # bytes only (the caller reads a request's bytes)
        with pytest.raises(TypeError):
            native.member_span(kind(raw), name)


@fuzz(300)
@given(damaged_bodies())
def test_a_damaged_body_reads_the_same_with_and_without_the_helper(raw: bytes) -> None:
    memo.forget()
    with_c = outcome(read_request, raw)
    memo.forget()
    saved = compiled.native
    compiled.native = None
    try:
        without = outcome(read_request, raw)
    finally:
        compiled.native = saved
        memo.forget()
    assert with_c[0] == without[0]
    assert same(with_c[1], without[1]) if with_c[0] == "value" else with_c[1] == without[1]


def test_member_span_refuses_what_is_not_bytes() -> None:
    for raw, name in [("{}", b"tools"), (b"{}", "tools"), (None, b"x"), (1, b"x"), (bytearray(b"{}"), b"x")]:
        with pytest.raises(TypeError):
            native.member_span(raw, name)


@pytest.mark.skipif(not os.environ.get("TOOLCALL_EXPECT_HELPER"), reason="only in the sanitizer run (.ci/sanitize)")
def test_the_helper_is_the_build_the_run_expects() -> None:
    """`.ci/sanitize` builds the helper with ASan and UBSan: the tests must load that build."""
    assert native is not None
    assert native.__file__ == os.environ["TOOLCALL_EXPECT_HELPER"]
