"""The model stopped by itself inside a call's markup, the host says (`finish_reason` `stop`).
A hermes body that is one whole call is that call (a stop sequence such as `</tool_call>` took
its end marker, which servers strip); a marker named in prose (no JSON object after it) is text,
with its layout; a body cut inside its JSON is still cut off. A host that says `length` (or
nothing) keeps the cut-off rule everywhere: never a call, never content."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import split_at
from toolcall_middleware import StreamParser
from toolcall_middleware.config import ToolCallConfig
from toolcall_middleware.core._events import ToolCallStart, TruncatedCall
from toolcall_middleware.core._exchange import Exchange, RouteMatch
from toolcall_middleware.core._result import merge_events
from toolcall_middleware.core.framing.sse import SSEDecoder

UNCLOSED = 'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
PROSE = "Write <tool_call> then JSON."
CUT = 'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa'


def _parse(raw: str, *, stopped: bool, pieces: list[str] | None = None) -> Any:
    parser = StreamParser("hermes")
    events = [e for piece in (pieces or [raw]) for e in parser.feed(piece)]
    return merge_events(events + parser.close(stopped=stopped))


def test_a_whole_call_without_its_end_marker_is_a_call_when_the_model_stopped() -> None:
    result = _parse(UNCLOSED, stopped=True)
    assert [(c.name, json.loads(c.arguments)) for c in result.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert result.content == "Checking." and result.truncated is None


def test_a_marker_named_in_prose_is_text_when_the_model_stopped() -> None:
    result = _parse(PROSE, stopped=True)
    assert result.content == PROSE and not result.tool_calls and result.truncated is None


@pytest.mark.parametrize("raw", [CUT, "Done. <tool_call>", "Done. <tool_call>\n"])
def test_a_body_cut_inside_its_json_is_cut_off_even_at_a_stop(raw: str) -> None:
    """A host may say `stop` at any end: a body that started as JSON (or is empty) and is not a
    whole call is still a call cut off, never markup in the content."""
    result = _parse(raw, stopped=True)
    assert not result.tool_calls and result.truncated is not None and "<tool_call>" not in result.content


@pytest.mark.parametrize("raw", [UNCLOSED, PROSE, CUT])
def test_cut_off_it_is_neither_a_call_nor_content(raw: str) -> None:
    result = _parse(raw, stopped=False)
    assert not result.tool_calls and result.truncated is not None
    assert "<tool_call>" not in result.content


def test_a_body_is_read_strictly_nothing_is_completed() -> None:
    """The repair pass would complete `{"a": 1` into an object: at a stop it must not."""
    parser = StreamParser("hermes", repair=True)
    events = parser.feed('<tool_call>{"name": "f", "arguments": {"a": 1}') + parser.close(stopped=True)
    assert not any(isinstance(e, ToolCallStart) for e in events)
    assert any(isinstance(e, TruncatedCall) for e in events)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from([UNCLOSED, PROSE, CUT, "a <tool_call>", "<tool_call>{}", 'x\n\n<tool_call>{"name": "f"}']),
    st.lists(st.integers(min_value=0), max_size=12),
    st.booleans(),
)
def test_any_split_gives_the_same_at_a_stop(raw: str, cuts: list[int], stopped: bool) -> None:
    assert _parse(raw, stopped=stopped, pieces=split_at(raw, cuts)) == _parse(raw, stopped=stopped)


def _exchange(raw: str, finish: str, *, stream: bool) -> dict[str, Any]:
    exchange = Exchange(ToolCallConfig(dialect="hermes"), RouteMatch("chat", "chat"))
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    request = {"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": tools, "stream": stream}
    exchange.forward(json.dumps(request).encode())
    meta = {"id": "c", "created": 1, "model": "m"}
    if not stream:
        exchange.start("POST", 200, [(b"content-type", b"application/json")])
        message = {"role": "assistant", "content": raw}
        body = {
            **meta,
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        }
        choice: dict[str, Any] = json.loads(exchange.feed(json.dumps(body).encode()) + exchange.end())["choices"][0]
        return {
            "content": choice["message"]["content"],
            "calls": choice["message"].get("tool_calls") or [],
            "finish": choice["finish_reason"],
        }
    exchange.start("POST", 200, [(b"content-type", b"text/event-stream")])
    chunks = [{"index": 0, "delta": {"role": "assistant", "content": raw[i : i + 5]}} for i in range(0, len(raw), 5)]
    chunks.append({"index": 0, "delta": {}, "finish_reason": finish})
    data = b"".join(
        b"data: " + json.dumps({**meta, "object": "chat.completion.chunk", "choices": [c]}).encode() + b"\n\n"
        for c in chunks
    )
    out = exchange.feed(data + b"data: [DONE]\n\n") + exchange.end()
    content, calls, reason = "", [], None
    for event in SSEDecoder().feed(out):
        if event.data and event.data != "[DONE]":
            for c in json.loads(event.data)["choices"]:
                content += c["delta"].get("content") or ""
                calls += c["delta"].get("tool_calls") or []
                reason = c.get("finish_reason") or reason
    return {"content": content or None, "calls": calls, "finish": reason}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_the_client_gets_the_call_a_stop_sequence_ended(stream: bool) -> None:
    got = _exchange(UNCLOSED, "stop", stream=stream)
    assert got["finish"] == "tool_calls" and got["content"] == "Checking."
    assert [c["function"]["name"] for c in got["calls"] if c["function"].get("name")] == ["get_weather"]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_the_client_gets_prose_that_names_a_marker_whole(stream: bool) -> None:
    got = _exchange(PROSE, "stop", stream=stream)
    assert got == {"content": PROSE, "calls": [], "finish": "stop"}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_host_that_says_length_keeps_the_cut_off_rule(stream: bool) -> None:
    got = _exchange(UNCLOSED, "length", stream=stream)
    assert got == {"content": "Checking.", "calls": [], "finish": "length"}
