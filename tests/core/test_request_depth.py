"""How deep a body nests (`core._depth`), measured without recursion, and the 400 past the limit."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolcall_middleware.core import _memo as memo
from toolcall_middleware.core._depth import deeper, depth
from toolcall_middleware.core.request import BadRequest
from toolcall_middleware.core.request._errors import check_depth

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=30,
)


def reference_depth(value: Any) -> int:
    """The depth, recursively (the values here are shallow)."""
    if isinstance(value, dict):
        return 1 + max((reference_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((reference_depth(v) for v in value), default=0)
    return 0


@given(json_values, st.integers(min_value=0, max_value=8))
def test_depth_is_the_recursive_depth(value: Any, limit: int) -> None:
    assert depth(value) == reference_depth(value)
    assert deeper(value, limit) == (reference_depth(value) > limit)


@given(st.dictionaries(st.sampled_from(["model", "messages", "tools", "input"]), json_values), st.integers(2, 8))
def test_a_body_is_refused_exactly_when_it_nests_past_the_limit(body: dict[str, Any], limit: int) -> None:
    memo.forget()
    if "tools" in body:
        body["tools"] = memo.shared(body["tools"])  # as `read_request` gives them: measured once
    try:
        check_depth(body, limit)
        refused = None
    except BadRequest as error:
        refused = error
    assert (refused is not None) == (reference_depth(body) > limit)
    if refused is not None:
        assert refused.code == "nested_too_deep" and refused.param in body


def test_depth_at_ten_thousand_levels_needs_no_recursion() -> None:
    value: Any = 1
    for _ in range(10_000):
        value = {"a": [value]}
    assert depth(value) == 20_000 and deeper(value, 19_999) and not deeper(value, 20_000)
    with pytest.raises(BadRequest, match=r"at 'messages\.a\[0\]\.a\[0\]\.a\[0\]\.a\[0\]…'"):
        check_depth({"messages": value}, 128)
