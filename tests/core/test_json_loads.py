"""`json_loads` reads what `json.loads` reads: the same value for any JSON, the same error for
anything else (the fast parser reads most, json's own decoder the rest)."""

from __future__ import annotations

import json
import math
import sys
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from toolcall_middleware.core.framing import _utf8 as utf8
from toolcall_middleware.core.framing._utf8 import json_loads

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()  # lone surrogates included
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


def same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to NaN and -0.0 apart from 0.0 (what a reader could tell apart).

    It walks with a stack of its own, not by recursion (nor `==`, which recurses in C): the values
    compared may nest as deep as a Python's JSON decoder reads, which from 3.12 on is deeper than
    the recursion limit."""
    pending = [(a, b)]
    while pending:
        x, y = pending.pop()
        if isinstance(x, float) and isinstance(y, float):
            if not ((math.isnan(x) and math.isnan(y)) or (x == y and math.copysign(1, x) == math.copysign(1, y))):
                return False
        elif type(x) is not type(y):
            return False
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            pending.extend(zip(x, y, strict=True))
        elif isinstance(x, dict):
            if list(x) != list(y):
                return False
            pending.extend((x[k], y[k]) for k in x)
        elif x != y:
            return False
    return True


def outcome(loads: Any, text: str | bytes) -> tuple[str, Any]:
    try:
        return "value", loads(text)
    except Exception as error:  # the error's type and message are part of what is compared
        return type(error).__name__, str(error)


@given(values, st.booleans(), st.sampled_from([None, (",", ":")]), st.booleans())
@example({"a": "\ud800", "b": [1.5, -0.0, 10**25]}, False, None, False)
def test_any_json_reads_as_json_loads_reads_it(value: Any, ascii_only: bool, separators: Any, as_bytes: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, separators=separators)
    data: str | bytes = text.encode("utf-8", "surrogatepass") if as_bytes else text
    expected = json.loads(data)
    assert same(json_loads(data), expected)


@given(st.one_of(st.text(), st.binary()))
@example('{"a": 1} x')
@example("\ufeff{}")
@example(b"\xef\xbb\xbf{}")
@example('{"a": 1}'.encode("utf-16"))
@example("[" * 3000 + "]" * 3000)
@example('{"a": "\\ud83d\\ude00"}')
@example("NaN")
def test_any_text_gives_the_value_or_the_error_json_loads_gives(data: str | bytes) -> None:
    got, expected = outcome(json_loads, data), outcome(json.loads, data)
    assert got[0] == expected[0]
    assert same(got[1], expected[1]) if got[0] == "value" else got[1] == expected[1]


def test_the_fast_parser_reads_valid_utf8_json(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast parser is the one used for the usual input (a chunk, a request)."""
    calls: list[object] = []

    def slow(text: str | bytes) -> Any:
        calls.append(text)
        return json.loads(text)

    monkeypatch.setattr(utf8, "_json_loads", slow)
    assert json_loads(b'{"choices": [{"delta": {"content": "hi"}}]}') == {"choices": [{"delta": {"content": "hi"}}]}
    assert calls == []
    assert json_loads('{"a": "\\ud800"}') == {"a": "\ud800"}  # pydantic's parser refuses it: json's reads it
    assert calls == ['{"a": "\\ud800"}']


def test_values_nested_past_the_recursion_limit_compare() -> None:
    """`same` itself reads any depth a decoder may give it."""

    def nested(depth: int, leaf: Any) -> Any:
        value = leaf
        for _ in range(depth):
            value = [value]
        return value

    depth = sys.getrecursionlimit() * 5
    assert same(nested(depth, 1.0), nested(depth, 1.0))
    assert not same(nested(depth, 1.0), nested(depth, -1.0))
    assert not same(nested(depth, 1.0), nested(depth + 1, 1.0))
