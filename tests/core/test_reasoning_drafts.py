"""A call the model writes inside its reasoning: a draft when the reasoning closes after it, a
call when the output ends first (Kimi K2-Thinking, Qwen3.5 and DeepSeek call before closing).

In every family whose calls can appear inside reasoning, each output is parsed whole and at
every split (char by char and at random cuts), and must agree: nothing of a draft leaks into the
content, nothing of it is lost from the reasoning.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import check_streams
from toolcall_middleware import StreamParser, ToolCallStart, get_dialect
from toolcall_middleware.core import _reasoning as reasoning
from toolcall_middleware.core.request import render_calls

# Each family whose calls may stand inside `<think>`, by one of its dialects.
FAMILIES = [
    "hermes",
    "qwen3_coder",
    "glm45",
    "glm47",
    "kimi_k2",
    "deepseek_v3",
    "deepseek_v31",
    "deepseek_v32",
    "deepseek_v4",
    "minimax_m2",
    "seed_oss",
]
TOOLS: Any = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


def think(dialect: str) -> tuple[str, str]:
    syntax = get_dialect(dialect).reasoning
    assert syntax is not None
    return syntax.pairs[0]


def call(dialect: str, city: str = "Paris") -> str:
    return render_calls(dialect, [("call_1", "get_weather", json.dumps({"city": city}))])


@pytest.mark.parametrize("dialect", FAMILIES)
def test_a_call_drafted_in_reasoning_that_closes_later_stays_reasoning(dialect: str) -> None:
    opening, closing = think(dialect)
    thought = f"The user wants the weather. A call would read:\n{call(dialect)}\nbut I know it already."
    raw = f"{opening}{thought}{closing}\n\nIt is sunny in Paris."
    result = check_streams(raw, seeds=range(3), dialect=dialect, tools=TOOLS)
    assert result.tool_calls == [] and not result.truncated
    assert result.content == "It is sunny in Paris."
    assert result.reasoning == thought  # verbatim: the draft's markup is the model's reasoning


@pytest.mark.parametrize("dialect", FAMILIES)
def test_a_draft_then_the_real_call_after_the_reasoning(dialect: str) -> None:
    opening, closing = think(dialect)
    thought = f"Maybe {call(dialect)} would do."
    raw = f"{opening}{thought}{closing}\n\n{call(dialect, 'Lyon')}"
    result = check_streams(raw, seeds=range(3), dialect=dialect, tools=TOOLS)
    assert [(c.name, json.loads(c.arguments)) for c in result.tool_calls] == [("get_weather", {"city": "Lyon"})]
    assert result.reasoning == thought and not result.content


IMPLICIT = [d for d in FAMILIES if get_dialect(d).reasoning.implicit_ends]  # type: ignore[union-attr]


def test_the_families_that_call_before_closing_their_reasoning() -> None:
    assert IMPLICIT == [
        *("qwen3_coder", "glm45", "glm47", "kimi_k2"),
        *("deepseek_v3", "deepseek_v31", "deepseek_v32", "deepseek_v4"),
    ]


@pytest.mark.parametrize("dialect", IMPLICIT)
def test_a_call_before_the_reasoning_closes_is_a_call_when_the_output_ends(dialect: str) -> None:
    opening, _ = think(dialect)
    raw = f"{opening}I need the weather.\n\n{call(dialect)}"
    result = check_streams(raw, seeds=range(3), dialect=dialect, tools=TOOLS)
    assert [(c.name, json.loads(c.arguments)) for c in result.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert result.reasoning == "I need the weather." and not result.content


@pytest.mark.parametrize("dialect", ["qwen3_coder", "kimi_k2"])
def test_the_held_call_goes_out_at_the_end_of_the_output(dialect: str) -> None:
    opening, _ = think(dialect)
    parser = StreamParser(dialect, tools=TOOLS)
    events = parser.feed(f"{opening}I need the weather.\n{call(dialect)}")
    assert not any(isinstance(e, ToolCallStart) for e in events)  # a closing marker may still come
    assert any(isinstance(e, ToolCallStart) for e in parser.close())


def test_past_the_cap_the_held_call_is_a_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reasoning, "TENTATIVE_CAP", 200)
    filler = "x" * 300
    raw = f"<think>I need it.\n{call('qwen3_coder')}\n{filler}</think>\n\nDone."
    result = check_streams(raw, seeds=range(3), dialect="qwen3_coder", tools=TOOLS)
    assert [c.name for c in result.tool_calls] == ["get_weather"]  # the closing marker came too late
    assert result.reasoning == "I need it."
    assert result.content is not None and filler in result.content
