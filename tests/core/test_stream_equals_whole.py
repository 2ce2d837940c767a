"""Stream equals non-stream, as a client sees it: the same answer, streamed (any chunking) or
whole, gives a Responses client the same output items in the same order, and a Chat client the
same message (text, reasoning, calls, finish reason)."""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolcall_middleware.config import ToolCallConfig
from toolcall_middleware.core._exchange import Exchange, RouteMatch
from toolcall_middleware.core.framing.sse import SSEDecoder

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
META = {"id": "chatcmpl-1", "created": 7, "model": "m"}
WORDS = st.sampled_from(["Sure.", "I will check.", "Then", " done.", "a < b", "é", "\n", " "])
CALL = st.integers(min_value=0, max_value=99).map(
    lambda n: '<tool_call>\n{"name": "f", "arguments": {"n": ' + str(n) + "}}\n</tool_call>"
)
THINK = st.just("<think>\nhmm\n</think>\n")
RAW = st.lists(st.one_of(WORDS, CALL, THINK), min_size=1, max_size=8).map("".join)


def _exchange(api: str) -> Exchange:
    exchange = Exchange(ToolCallConfig(dialect="hermes"), RouteMatch(api, "chat"))  # type: ignore[arg-type]
    if api == "responses":
        request: dict[str, Any] = {"model": "m", "input": "x", "tools": [{"type": "function", "name": "f"}]}
    else:
        request = {"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": TOOLS}
    exchange.forward(json.dumps(request).encode())
    return exchange


def _whole(api: str, raw: str) -> dict[str, Any]:
    exchange = _exchange(api)
    message = {"role": "assistant", "content": raw}
    body = {**META, "object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    exchange.start("POST", 200, [(b"content-type", b"application/json")])
    out = exchange.feed(json.dumps(body).encode()) + exchange.end()
    result: dict[str, Any] = json.loads(out)
    return result


def _streamed(api: str, raw: str, cuts: list[int]) -> list[dict[str, Any]]:
    exchange = _exchange(api)
    exchange.start("POST", 200, [(b"content-type", b"text/event-stream")])
    points = sorted({c % (len(raw) + 1) for c in cuts} | {0, len(raw)})
    chunks = [{**META, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant"}}]}]
    for a, b in itertools.pairwise(points):
        delta = {"content": raw[a:b]}
        chunks.append({**META, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]})
    end = {"index": 0, "delta": {}, "finish_reason": "stop"}
    chunks.append({**META, "object": "chat.completion.chunk", "choices": [end]})
    data = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
    out = exchange.feed(data) + exchange.end()
    return [json.loads(e.data) for e in SSEDecoder().feed(out) if e.data and e.data != "[DONE]"]


_IDS = re.compile(r"^(call|fc|msg|rs|resp)_[A-Za-z0-9]+$")


def _shape(value: Any) -> Any:
    """`value` with its minted ids and timestamps blanked (they are random per response)."""
    if isinstance(value, dict):
        return {k: None if k in ("created_at", "completed_at") else _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    if isinstance(value, str) and _IDS.match(value):
        return value.split("_", 1)[0]
    return value


@settings(max_examples=200, deadline=None)
@given(RAW, st.lists(st.integers(min_value=0), max_size=10))
def test_a_responses_client_gets_the_same_items_streamed_and_whole(raw: str, cuts: list[int]) -> None:
    whole = _whole("responses", raw)
    final = _streamed("responses", raw, cuts)[-1]
    assert final["type"] in ("response.completed", "response.incomplete")
    assert _shape(final["response"]["output"]) == _shape(whole["output"])
    assert final["response"]["status"] == whole["status"]


@settings(max_examples=200, deadline=None)
@given(RAW, st.lists(st.integers(min_value=0), max_size=10))
def test_a_chat_client_gets_the_same_message_streamed_and_whole(raw: str, cuts: list[int]) -> None:
    whole = _whole("chat", raw)["choices"][0]
    content, reasoning, calls, finish = "", "", {}, None
    for chunk in _streamed("chat", raw, cuts):
        for choice in chunk["choices"]:
            delta = choice["delta"]
            content += delta.get("content") or ""
            reasoning += delta.get("reasoning_content") or ""
            for call in delta.get("tool_calls") or []:
                entry = calls.setdefault(call["index"], {"name": None, "arguments": ""})
                entry["name"] = entry["name"] or call.get("function", {}).get("name")
                entry["arguments"] += call.get("function", {}).get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    message = whole["message"]
    assert content == (message.get("content") or "")
    assert reasoning == (message.get("reasoning_content") or "")
    made = message.get("tool_calls") or []
    expected = [{"name": c["function"]["name"], "arguments": c["function"]["arguments"]} for c in made]
    assert [calls[i] for i in sorted(calls)] == expected
    assert finish == whole["finish_reason"]
