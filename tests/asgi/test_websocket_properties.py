"""Properties of WebSocket mode, the socket driven in process (no server): whatever the host
says and however it splits its stream, the socket's events for a turn are the HTTP stream's
events for the same request, ids and times aside; nothing is lost or added on the way."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.asgi.harness import RESPONSES, Receive, Recorder, request, scope, sse_events
from tests.asgi.test_websocket_mode import same_but_ids
from tests.asgi.ws_host import WEATHER, RecordingHost
from toolcall_middleware import ToolCallMiddleware
from toolcall_middleware._websocket import ResponsesSocket
from toolcall_middleware.config import Limits
from toolcall_middleware.demo import DemoApp

WORDS = st.sampled_from(["Weather", "in", "Paris", "and", "Rome", "?", "hello", "tell", "me", "a", "joke", "été"])


async def over_http(app: Any, body: dict[str, Any]) -> list[Any]:
    sent = Recorder()
    raw = json.dumps({**body, "stream": True}).encode()
    await asyncio.wait_for(app(scope(RESPONSES), Receive([request(raw)]), sent), 10)
    return sse_events(sent.body)


async def over_socket(app: Any, body: dict[str, Any]) -> list[Any]:
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    for message in ({"type": "websocket.connect"}, {"type": "websocket.receive", "text": json.dumps(body)}):
        inbox.put_nowait(message)
    events: list[Any] = []

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "websocket.send":
            events.append(json.loads(message["text"]))
            if events[-1]["type"] in ("response.completed", "response.failed", "error"):
                inbox.put_nowait({"type": "websocket.disconnect", "code": 1000})

    ws_scope = {**scope(RESPONSES), "type": "websocket", "scheme": "ws"}
    await asyncio.wait_for(app(ws_scope, inbox.get, send), 10)
    return events


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    words=st.lists(WORDS, min_size=1, max_size=12),
    piece_size=st.integers(1, 40),
    tools=st.booleans(),
    dialect=st.sampled_from(["hermes", "qwen3_coder", "kimi_k2"]),
)
def test_the_socket_relays_the_http_stream(words: list[str], piece_size: int, tools: bool, dialect: str) -> None:
    app = ToolCallMiddleware(DemoApp(dialect, piece_size=piece_size), dialect=dialect)
    body: dict[str, Any] = {"model": "demo", "input": " ".join(words), **({"tools": [WEATHER]} if tools else {})}
    http = asyncio.run(over_http(app, body))
    socket = asyncio.run(over_socket(app, {"type": "response.create", **body}))
    assert [same_but_ids(e) for e in socket] == [same_but_ids(e) for e in http]
    assert socket[-1]["type"] == "response.completed"


TURNS = st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 3000), st.booleans()), min_size=1, max_size=8)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=TURNS, bound=st.integers(1000, 8000))
def test_a_socket_holds_at_most_its_bound_and_never_half_a_history(turns: list[Any], bound: int) -> None:
    """Whatever lanes and sizes the turns have: what the socket keeps is within
    `max_websocket_bytes` after every turn, and a continuation is served with its lane's whole
    history or refused as `previous_response_not_found`, never with part of it."""
    host = RecordingHost()
    app = ToolCallMiddleware(host, dialect="hermes")
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    ended: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "websocket.send":
            event = json.loads(message["text"])
            if event["type"] in ("response.completed", "response.failed", "error"):
                ended.put_nowait(event)

    ws_scope = {**scope(RESPONSES), "type": "websocket", "scheme": "ws"}
    socket = ResponsesSocket(app, ws_scope, inbox.get, send, limits=Limits(max_websocket_bytes=bound))

    async def drive() -> None:
        inbox.put_nowait({"type": "websocket.connect"})
        running = asyncio.create_task(socket.run())
        last: dict[str, tuple[str, str]] = {}  # lane -> (its last response id, the text that response saw)
        for n, (lane, size, go_on) in enumerate(turns):
            text = f"turn{n}:" + "x" * size
            body: dict[str, Any] = {"type": "response.create", "model": "demo", "input": text, "store": False}
            body["stream_id"] = lane
            if go_on and lane in last:
                body["previous_response_id"] = last[lane][0]
            message = json.dumps(body)
            inbox.put_nowait({"type": "websocket.receive", "text": message})
            event = await asyncio.wait_for(ended.get(), 10)
            assert sum(len(kept.items) for kept in socket.completed.values()) <= bound
            if event["type"] == "error" and event["error"]["code"] == "too_many_requests":
                assert len(message) > bound  # a turn larger than the bound is not even queued
                continue
            if event["type"] == "error":
                assert "previous_response_id" in body and event["error"]["code"] == "previous_response_not_found"
                last.pop(lane, None)
                continue
            assert event["type"] == "response.completed"
            seen = host.last_text()
            if "previous_response_id" in body:
                assert last[lane][1] in seen  # the whole history went to the host
            last[lane] = (event["response"]["id"], f"turn{n}:")
        inbox.put_nowait({"type": "websocket.disconnect", "code": 1000})
        await asyncio.wait_for(running, 10)

    asyncio.run(drive())
