"""Once the client's stream has had its terminal event, nothing more is sent.

The middleware ends a stream itself when the model breaks a limit (here: a second call past
`max_calls=1`): an error in the client API's shape, which is its terminal event (Chat `[DONE]`
after the error chunk, Responses `response.failed`, Anthropic `error`). Whatever the host sends
after that (more text, more calls, events we cannot parse, its own end) used to follow it out. Now
the response ends at the terminal event and the rest of the host's body is read and dropped: the
host runs to its end. Property tests over random host events after the forced end, every client
API against every host API, whole and incremental arguments, any split of the host's bytes.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.asgi.harness import RESPONSE_BASE, SSE_HEADERS, Receive, Recorder, body, call, request, scope, start
from toolcall_middleware import ToolCallMiddleware

CALL = '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'
ROUTES = {"chat": "/v1/chat/completions", "responses": "/v1/responses", "messages": "/v1/messages"}
PAIRS = [
    ("chat", "chat"),
    ("responses", "responses"),
    ("messages", "messages"),
    ("responses", "chat"),
    ("messages", "chat"),
    ("chat", "messages"),
    ("responses", "messages"),
]


def sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return (head + "data: " + (data if isinstance(data, str) else json.dumps(data)) + "\n\n").encode()


def text_event(host: str, text: str) -> bytes:
    """One piece of the model's raw text in the host API's stream."""
    if host == "chat":
        choice = {"index": 0, "delta": {"content": text}, "finish_reason": None}
        return sse({"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [choice]})
    if host == "responses":
        delta = {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0}
        return sse({**delta, "delta": text}, "response.output_text.delta")
    return sse({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}})


def opening(host: str) -> list[bytes]:
    if host == "responses":
        created = {"type": "response.created", "response": {**RESPONSE_BASE, "status": "in_progress", "output": []}}
        return [sse(created, "response.created")]
    if host == "messages":
        message = {"id": "msg_host", "type": "message", "role": "assistant", "model": "m", "content": []}
        usage = {"input_tokens": 1, "output_tokens": 0}
        start_ = {"type": "message_start", "message": {**message, "stop_reason": None, "usage": usage}}
        block = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
        return [sse(start_, "message_start"), sse(block, "content_block_start")]
    return []


def closing(host: str) -> list[bytes]:
    """The host's own end of its stream."""
    if host == "chat":
        choice = {"index": 0, "delta": {}, "finish_reason": "stop"}
        chunk = {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [choice]}
        return [sse(chunk), b"data: [DONE]\n\n"]
    if host == "responses":
        done = {"type": "response.completed", "response": {**RESPONSE_BASE, "status": "completed", "output": []}}
        return [sse(done, "response.completed")]
    delta = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}}
    return [sse({"type": "content_block_stop", "index": 0}), sse(delta), sse({"type": "message_stop"})]


def later_event(host: str) -> st.SearchStrategy[bytes]:
    """Anything a host may send after our end."""
    texts = st.sampled_from(["more text", CALL, '<tool_call>\n{"name": "f", "argu', "</tool_call>", " "])
    return st.one_of(
        texts.map(lambda text: text_event(host, text)),
        st.sampled_from(
            [
                b"data: {garbage\n\n",
                b"data: [DONE]\n\n",
                b": ping\n\n",
                sse({"error": {"message": "host trouble", "type": "server_error"}}),
                *closing(host),
            ]
        ),
    )


def request_for(api: str) -> bytes:
    if api == "chat":
        tools: Any = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
        payload: dict[str, Any] = {"messages": [{"role": "user", "content": "x"}], "tools": tools}
    elif api == "responses":
        payload = {"input": "x", "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}]}
    else:
        tools = [{"name": "f", "input_schema": {"type": "object"}}]
        payload = {"max_tokens": 100, "messages": [{"role": "user", "content": "x"}], "tools": tools}
    return json.dumps({"model": "m", "stream": True, **payload}).encode()


def host_stream(host: str, later: list[bytes]) -> bytes:
    """The host's whole stream: text, two calls (one past `max_calls=1`: our end), then `later`."""
    forced = [text_event(host, "hi "), text_event(host, CALL), text_event(host, CALL)]
    return b"".join([*opening(host), *forced, *later])


def cut(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points) if b > a]


@st.composite
def forced_ends(draw: st.DrawFn) -> tuple[str, str, str, list[bytes]]:
    """A client API, a host API, the arguments' streaming, and the host's stream cut anywhere:
    text, two calls (our end), then random later events."""
    api, host = draw(st.sampled_from(PAIRS))
    streaming = draw(st.sampled_from(["whole", "incremental"]))
    later = draw(st.lists(later_event(host), max_size=8))
    cuts = draw(st.lists(st.integers(min_value=0), max_size=8))
    return api, host, streaming, cut(host_stream(host, later), cuts)


def terminal(api: str, event: bytes) -> bool:
    lines = [line[5:].strip() for line in event.split(b"\n") if line.startswith(b"data:")]
    data = b"\n".join(lines)
    if api == "chat":
        return data == b"[DONE]"
    try:
        kind = json.loads(data).get("type")
    except ValueError:
        return False
    if api == "responses":
        return kind in ("response.completed", "response.failed", "response.incomplete")
    return kind in ("message_stop", "error")


def assert_ends_at_its_terminal_event(api: str, data: bytes) -> None:
    events = [e for e in data.replace(b"\r\n", b"\n").split(b"\n\n") if e.strip()]
    ends = [n for n, e in enumerate(events) if terminal(api, e)]
    assert ends == [len(events) - 1], f"terminal events at {ends} of {len(events)}: {events[-3:]}"
    assert b"host trouble" not in data and b"garbage" not in data


def middleware(app: Any, api: str, host: str, streaming: str) -> ToolCallMiddleware:
    bridge = {} if api == host else {"bridge": f"{api}-to-{host}"}
    return ToolCallMiddleware(
        app, dialect="hermes", arguments_streaming=streaming, limits={"max_calls": 1}, keepalive_interval=None, **bridge
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forced_ends())
def test_nothing_follows_the_terminal_event_in_asgi(case: tuple[str, str, str, list[bytes]]) -> None:
    api, host, streaming, pieces = case
    sent: list[int] = []

    async def app(scope_: Any, receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        await send(start(200, SSE_HEADERS))
        for piece in pieces:
            await send(body(piece, True))
            sent.append(len(piece))
        await send(body(b""))
        sent.append(0)

    client = Recorder()
    call(middleware(app, api, host, streaming), scope(ROUTES[api]), Receive([request(request_for(api))]), client)
    assert_ends_at_its_terminal_event(api, client.body)  # (`body` checks: nothing after the final message)
    assert len(sent) == len(pieces) + 1  # the host ran to its end: its body was read, and dropped
    assert not client.bodies[-1].get("more_body", False)


@pytest.mark.parametrize(("api", "host"), PAIRS)
def test_the_response_ends_at_the_terminal_event_not_when_the_host_stops(api: str, host: str) -> None:
    """The client's response is complete as soon as our error went out: it does not wait for the
    host, which goes on writing (here, ten more calls) until its own end."""
    later = [text_event(host, CALL)] * 10 + closing(host)
    seen_at_end: list[int] = []

    async def app(scope_: Any, receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        await send(start(200, SSE_HEADERS))
        for piece in [*opening(host), text_event(host, CALL), text_event(host, CALL), *later]:
            await send(body(piece, True))
        seen_at_end.append(len(client.messages))
        await send(body(b""))

    client = Recorder()
    call(middleware(app, api, host, "whole"), scope(ROUTES[api]), Receive([request(request_for(api))]), client)
    assert_ends_at_its_terminal_event(api, client.body)
    assert seen_at_end == [len(client.messages)]  # the final body had gone before the host ended
    assert b"more than 1 tool calls" in client.body  # the error that ended it


# -- a failure found at the end ------------------------------------------------------------------

# Pieces of the model's text, some of them in the reasoning channel: a call the reasoning breaks
# off becomes content, and with incremental arguments what the rules hold (its text, calls after
# it) goes out when the host's stream ends, where the call over `max_calls` fails the answer.
PIECES = ["hi ", CALL, '<tool_call>\n{"name": "f', '", "argumen', 'ts": {"a": 1}}\n</tool_call>', "plain", "\n"]
BROKEN_OFF = [
    ("content", 'hi <tool_call>\n{"name": "f'),
    ("reasoning_content", '", "argumen'),
    ("content", 'ts": {"a": 1}}\n</tool_call>' + CALL),
    ("content", "plain\n" + CALL),
]


def chat_piece(channel: str, text: str) -> bytes:
    choice = {"index": 0, "delta": {channel: text}, "finish_reason": None}
    return sse({"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [choice]})


@st.composite
def ends_with_held_calls(draw: st.DrawFn) -> tuple[str, str, list[tuple[str, str]], list[int]]:
    api = draw(st.sampled_from(["chat", "responses", "messages"]))
    streaming = draw(st.sampled_from(["whole", "incremental"]))
    channels = st.sampled_from(["content", "content", "content", "reasoning_content"])
    pieces = draw(st.lists(st.tuples(channels, st.sampled_from(PIECES)), min_size=1, max_size=8))
    return api, streaming, pieces, draw(st.lists(st.integers(min_value=0), max_size=6))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(("chat", "incremental", BROKEN_OFF, [531, 559]))
@example(("responses", "incremental", BROKEN_OFF, []))
@given(ends_with_held_calls())
def test_nothing_follows_a_failure_found_at_the_end(case: tuple[str, str, list[tuple[str, str]], list[int]]) -> None:
    """The rules' verdict on the whole answer comes when the host's stream ends, after what they
    still hold: that goes out first, then the error, the terminal event (a content chunk and a
    call used to follow Chat's `[DONE]`)."""
    api, streaming, pieces, cuts = case
    data = b"".join([*(chat_piece(c, t) for c, t in pieces), *closing("chat")])
    script = [start(200, SSE_HEADERS), *(body(p, True) for p in cut(data, cuts)), body(b"")]
    client = Recorder()

    async def app(scope_: Any, receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        for message in script:
            await send(message)

    call(middleware(app, api, "chat", streaming), scope(ROUTES[api]), Receive([request(request_for(api))]), client)
    assert_ends_at_its_terminal_event(api, client.body)
