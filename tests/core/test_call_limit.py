"""`max_call_chars`: every dialect lets go of a call that never closes as it passes the limit
(`OversizedCall`, once), keeps nothing of the output after it, and the policy stage fails the
response with the error a closed call over the limit gets. Below the limit nothing changes."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import split_at
from tests.core import adversarial
from toolcall_middleware import StreamParser, list_dialects
from toolcall_middleware.core._events import OversizedCall, TextDelta, ToolCallDelta, ToolCallStart
from toolcall_middleware.core._result import merge_events
from toolcall_middleware.core.policy import PolicyError, PolicyFilter
from toolcall_middleware.core.policy._errors import TOOL_ARGUMENTS_TOO_LARGE

LIMIT = 256 * 1024
PIECE = 4096


def _opening(dialect: str) -> str:
    openers, head, _, _ = adversarial.SHAPES[dialect]
    return openers[0] + head + ('"' if head.endswith(("{", ": ")) else "")


@pytest.mark.parametrize("dialect", list_dialects())
def test_an_endless_call_is_let_go_at_the_limit(dialect: str) -> None:
    parser = StreamParser(dialect, max_call_chars=LIMIT, thinking=False)
    events = parser.feed(_opening(dialect))
    fed, at = 0, None
    tracemalloc.start()
    try:
        for n in range(16 * LIMIT // PIECE):
            new = parser.feed(str(n % 10) * PIECE)  # (a new string each time: none is shared)
            fed += PIECE
            if at is None and any(isinstance(e, OversizedCall) for e in new):
                at = fed
            events += new
        events += parser.close()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert at is not None and LIMIT - len(_opening(dialect)) < at <= LIMIT + PIECE
    assert sum(isinstance(e, OversizedCall) for e in events) == 1
    assert not any(isinstance(e, TextDelta) and "0000" in e.text for e in events)  # nothing of it is text
    assert peak < 3 * LIMIT, f"peak {peak} bytes"


def test_the_policy_fails_the_response_as_for_a_closed_call_over_the_limit() -> None:
    policy = PolicyFilter([{"type": "function", "function": {"name": "f"}}])
    out = policy.feed([TextDelta("Hi"), OversizedCall(LIMIT + 1), TextDelta("lost")])
    assert out[0] == TextDelta("Hi")
    assert isinstance(out[1], PolicyError) and out[1].code == TOOL_ARGUMENTS_TOO_LARGE
    assert len(out) == 2 and policy.close() == []


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(list_dialects()), st.data())
def test_a_limit_not_reached_changes_nothing(dialect: str, data: st.DataObject) -> None:
    openers, head, end, inner = adversarial.SHAPES[dialect]
    units = data.draw(st.lists(st.sampled_from([*openers, head, end, *inner, "x", '"', "}", " ", "\n"]), max_size=30))
    text = "".join(units)
    cuts = data.draw(st.lists(st.integers(min_value=0, max_value=10**6), max_size=8))

    def run(limit: int | None) -> object:
        parser = StreamParser(dialect, max_call_chars=limit)
        events = [e for piece in split_at(text, cuts) for e in parser.feed(piece)] + parser.close()
        return merge_events(events)

    assert run(len(text) + 1) == run(None)


def test_a_call_streaming_its_arguments_fails_at_once_when_let_go() -> None:
    policy = PolicyFilter([{"type": "function", "function": {"name": "f"}}], streaming="incremental")
    out = policy.feed([TextDelta("Hi"), ToolCallStart(0, None, "f"), ToolCallDelta(0, '{"a": "')])
    assert [type(e) for e in out] == [TextDelta, ToolCallStart, ToolCallDelta]
    out = policy.feed([OversizedCall(LIMIT + 1)])
    assert len(out) == 1 and isinstance(out[0], PolicyError) and out[0].code == TOOL_ARGUMENTS_TOO_LARGE
    assert policy.close() == []
