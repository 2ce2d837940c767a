"""Property: through a bridge, streamed equals whole. A Responses or Anthropic client in front of a
chat host gets the same answer (text, reasoning, calls) whether the host streams it, in any
chunking of its bytes, or answers with one body; and an Anthropic host's own `tool_use` blocks
reach a chat client the same way streamed and whole."""

from __future__ import annotations

import itertools
import json
from typing import Any

from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import Message, RawMessageStreamEvent
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletion
from openai.types.responses import Response
from pydantic import TypeAdapter

from tests.asgi.harness import chat_answer, chat_stream, sse_events
from tests.wire import replay_chat, replay_responses
from toolcall_middleware.config import ToolCallConfig
from toolcall_middleware.core._api import Api
from toolcall_middleware.core._exchange import Exchange, RouteMatch

SSE = [(b"content-type", b"text/event-stream")]
JSON = [(b"content-type", b"application/json")]
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
REQUESTS: dict[str, dict[str, Any]] = {
    "responses": {
        "model": "m",
        "input": "x",
        "tools": [{"type": "function", "name": "get_weather", "parameters": SCHEMA}],
    },
    "messages": {
        "model": "m",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "x"}],
        "tools": [{"name": "get_weather", "input_schema": SCHEMA}],
    },
}
EVENT = TypeAdapter[Any](RawMessageStreamEvent)

WORDS = st.sampled_from(
    [
        "It is ",
        "sunny",
        " <think>hm</think>",
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
        "\n",
        "ok.",
        "<",
        "é",
    ]
)


def exchange(api: Api, upstream: Api, stream: bool) -> Exchange:
    ex = Exchange(ToolCallConfig(dialect="hermes"), RouteMatch(api, upstream))
    ex.forward(json.dumps({**REQUESTS[api], "stream": stream}).encode())
    ex.start("POST", 200, SSE if stream else JSON)
    return ex


def cut(data: bytes, points: list[int]) -> list[bytes]:
    edges = sorted({0, len(data), *(p % (len(data) + 1) for p in points)})
    return [data[a:b] for a, b in itertools.pairwise(edges)]


def run(ex: Exchange, chunks: list[bytes]) -> bytes:
    return b"".join(ex.feed(c) for c in chunks) + ex.end()


def responses_view(response: Any) -> Any:
    calls = [(i.name, json.loads(i.arguments)) for i in response.output if i.type == "function_call"]
    reasoning = [c.text for i in response.output if i.type == "reasoning" for c in i.content or []]
    return response.output_text, calls, "".join(reasoning)


def messages_view(message: Message) -> Any:
    """Text, thinking and calls, each in order. (A whole message puts its text first, as a merged
    parse does; a stream keeps the blocks in the order the model wrote them.)"""
    text = "".join(b.text for b in message.content if b.type == "text")
    thinking = "".join(b.thinking for b in message.content if b.type == "thinking")
    calls = [(b.name, b.input) for b in message.content if b.type == "tool_use"]
    return text, thinking, calls, message.stop_reason


def accumulate(events: list[Any]) -> Message:
    snapshot: Any = None
    bufs: dict[int, bytes] = {}
    for event in events:
        snapshot = accumulate_event(event=EVENT.validate_python(event), current_snapshot=snapshot, json_bufs=bufs)
    assert isinstance(snapshot, Message)
    return snapshot


@settings(max_examples=60, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=8), st.lists(st.integers(0, 10_000), max_size=12), st.integers(1, 9))
def test_responses_to_chat_stream_equals_whole(words: list[str], points: list[int], piece: int) -> None:
    raw = "".join(words)
    streamed = replay_responses(
        sse_events(run(exchange("responses", "chat", True), cut(chat_stream(raw, piece), points)))
    )
    whole_body = json.loads(run(exchange("responses", "chat", False), [chat_answer(raw)]))
    assert responses_view(streamed) == responses_view(Response.model_validate(whole_body))


@settings(max_examples=60, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=8), st.lists(st.integers(0, 10_000), max_size=12), st.integers(1, 9))
def test_messages_to_chat_stream_equals_whole(words: list[str], points: list[int], piece: int) -> None:
    raw = "".join(words)
    streamed = accumulate(sse_events(run(exchange("messages", "chat", True), cut(chat_stream(raw, piece), points))))
    whole = Message.model_validate(json.loads(run(exchange("messages", "chat", False), [chat_answer(raw)])))
    assert messages_view(streamed) == messages_view(whole)


def anthropic_stream(text: str, calls: list[dict[str, Any]]) -> bytes:
    from tests.hosts import anthropic_events

    blocks = ([{"type": "text", "text": text}] if text else []) + [{"type": "tool_use", **c} for c in calls]
    events = anthropic_events(blocks, "tool_use" if calls else "end_turn", "m")
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def anthropic_whole(text: str, calls: list[dict[str, Any]]) -> bytes:
    blocks = ([{"type": "text", "text": text}] if text else []) + [{"type": "tool_use", **c} for c in calls]
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": blocks,
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 2},
    }
    return json.dumps(message).encode()


CITIES = st.lists(st.sampled_from(["Paris", "Oslo", "", 'a"b']), max_size=3)


@settings(max_examples=60, deadline=None)
@given(st.lists(WORDS, max_size=5), CITIES, st.lists(st.integers(0, 10_000), max_size=12))
def test_native_tool_use_reaches_a_chat_client_the_same_streamed_and_whole(
    words: list[str], cities: list[str], points: list[int]
) -> None:
    text = "".join(words)
    calls = [
        {"id": f"toolu_{n}", "name": "get_weather", "input": {"city": c} if c else {}} for n, c in enumerate(cities)
    ]
    request = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    request["tools"] = [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}]
    views: list[Any] = []
    for stream in (True, False):
        ex = Exchange(ToolCallConfig(dialect="hermes"), RouteMatch("chat", "messages"))
        ex.forward(json.dumps({**request, "stream": stream}).encode())
        ex.start("POST", 200, SSE if stream else JSON)
        body = cut(anthropic_stream(text, calls), points) if stream else [anthropic_whole(text, calls)]
        out = run(ex, body)
        if stream:
            message: Any = replay_chat([e for e in sse_events(out) if e != "[DONE]"]).choices[0].message
        else:
            message = ChatCompletion.model_validate(json.loads(out)).choices[0].message
        found = [
            (c.id if c.id.startswith("toolu_") else "parsed", c.function.name, json.loads(c.function.arguments))
            for c in message.tool_calls or []
        ]
        views.append((message.content or None, found))  # the accumulator starts content at ""
    assert views[0] == views[1]
    native = [(call_id, arguments) for call_id, _, arguments in views[0][1] if call_id != "parsed"]
    assert native == [(c["id"], c["input"]) for c in calls]  # the host's ids are the call ids
