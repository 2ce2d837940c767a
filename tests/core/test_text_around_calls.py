"""Text on both sides of a call keeps a separator: prose, a call, prose must not come out as one
run-on sentence ("Checking now.I'll report back.").

The rule (`BlockParser._set_apart`): the first text after a call that came after a word starts
with the layout whitespace the model wrote around the call (after it, else before it), which the
formats that write calls on lines of their own drop with the call's markup. Where the model wrote
none around the call, the texts stay as written (CanIToolCall's `bug-coder-text-after-call`), and
formats that keep that whitespace as text keep it. Each dialect's call as its own renderer writes
it, parsed whole, char by char and at random splits.
"""

from __future__ import annotations

import pytest

from tests.conftest import check_streams
from toolcall_middleware import list_dialects
from toolcall_middleware.core.request import render_calls

# Calls that are only calls at the start of the output (`xlam`, `generic_json`), or that the
# format cannot write after text, are not "text, call, text".
DIALECTS = [d for d in list_dialects() if d not in ("auto", "generic_json", "xlam")]


def call(dialect: str) -> str:
    return render_calls(dialect, [("call_1", "get_weather", '{"city": "Paris"}')])


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("layout", ["\n", "\n\n", " "])
def test_text_before_and_after_a_call_stays_apart(dialect: str, layout: str) -> None:
    raw = "Checking now." + layout + call(dialect) + layout + "I'll report back."
    result = check_streams(raw, seeds=range(3), dialect=dialect)
    assert [c.name for c in result.tool_calls] == ["get_weather"]
    # The layout once (it went with the call's markup) or on both sides (kept as text).
    assert result.content in (
        "Checking now." + layout + "I'll report back.",
        f"Checking now.{layout * 2}I'll report back.",
    )


@pytest.mark.parametrize("dialect", DIALECTS)
def test_without_layout_the_texts_stay_as_written(dialect: str) -> None:
    result = check_streams("Checking now." + call(dialect) + "Done.", seeds=range(3), dialect=dialect)
    assert [c.name for c in result.tool_calls] == ["get_weather"]
    assert result.content == "Checking now.Done."


@pytest.mark.parametrize("dialect", ["hermes", "qwen3_coder", "glm45", "minimax_m2", "seed_oss", "deepseek_v32"])
def test_one_separator_after_a_run_of_calls_and_none_at_the_edges(dialect: str) -> None:
    two = render_calls(dialect, [("call_1", "a", "{}"), ("call_2", "b", "{}")])
    result = check_streams("First.\n" + two + "\nThen.", seeds=range(3), dialect=dialect)
    assert [c.name for c in result.tool_calls] == ["a", "b"]
    assert result.content == "First.\nThen."
    # A call first or last: nothing to set apart.
    assert check_streams(call(dialect) + "\nAfter.", seeds=range(2), dialect=dialect).content == "After."
    assert check_streams("Before.\n" + call(dialect), seeds=range(2), dialect=dialect).content == "Before."
