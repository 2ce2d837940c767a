"""`json_loads` reads what `json.loads` reads: the same value for any JSON, the same error for
anything else (the fast parser reads most, json's own decoder the rest)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from toolcall_middleware.core.framing import utf8
from toolcall_middleware.core.framing.utf8 import json_loads

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
    """Equal, with NaN equal to NaN and -0.0 apart from 0.0 (what a reader could tell apart)."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


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
