"""WebSocket mode on /v1/responses, driven by the official SDK's `responses.connect()` against the
middleware on a real uvicorn on loopback: natively, and through the responses-to-chat bridge.
Every event the socket sends is validated against the SDK's server event types."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from openai import OpenAI
from openai.types.responses.responses_server_event import ResponsesServerEvent
from pydantic import TypeAdapter

from tests.asgi.harness import sse_events
from tests.asgi.ws_host import WEATHER, RecordingHost
from toolcall_middleware import ToolCallMiddleware
from toolcall_middleware.demo.run import serving

EVENTS: TypeAdapter[Any] = TypeAdapter(ResponsesServerEvent)
TERMINAL = ("response.completed", "response.incomplete", "response.failed", "error")


@pytest.fixture(params=["native", "bridge"])
def served(request: pytest.FixtureRequest) -> Iterator[tuple[OpenAI, RecordingHost]]:
    host = RecordingHost()
    options: dict[str, Any] = {"bridge": "responses-to-chat"} if request.param == "bridge" else {}
    with serving(ToolCallMiddleware(host, dialect="hermes", **options)) as base:
        yield OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0), host


def raw_turn(connection: Any) -> list[dict[str, Any]]:
    """The events of one turn as sent, up to its terminal event, each validated by the SDK's types."""
    events = []
    while True:
        data = json.loads(connection.recv_bytes())
        EVENTS.validate_python(data)
        events.append(data)
        if data["type"] in TERMINAL:
            return events


def turn(connection: Any) -> list[Any]:
    """The events of one turn, as the SDK's types."""
    return [EVENTS.validate_python(data) for data in raw_turn(connection)]


def answer_text(response: Any) -> str:
    return "".join(p.text for item in response.output if item.type == "message" for p in item.content)


def test_turns_continue_from_the_sockets_last_response_with_store_false(
    served: tuple[OpenAI, RecordingHost],
) -> None:
    client, host = served
    with client.responses.connect() as connection:
        connection.response.create(model="demo", input="Remember the code word: cobalt.", store=False)
        first = turn(connection)
        assert [e.type for e in first][:2] == ["response.created", "response.in_progress"]
        assert first[-1].type == "response.completed"
        one = first[-1].response
        connection.response.create(
            model="demo", input="What is the code word?", store=False, previous_response_id=one.id
        )
        second = turn(connection)
    two = second[-1].response
    assert second[-1].type == "response.completed" and two.previous_response_id == one.id
    assert two.id != one.id
    # The host saw the whole conversation: the first turn, its answer, the new input.
    seen = host.last_text()
    assert "cobalt" in seen and answer_text(one) in seen and "What is the code word?" in seen
    assert "previous_response_id" not in host.bodies[-1]


VARYING = ("id", "item_id", "call_id", "created_at", "completed_at")


def same_but_ids(value: Any) -> Any:
    """An event with what differs between two answers to the same request (ids, times) blanked."""
    if isinstance(value, dict):
        return {k: None if k in VARYING else same_but_ids(v) for k, v in value.items()}
    if isinstance(value, list):
        return [same_but_ids(v) for v in value]
    return value


@pytest.mark.parametrize("question", ["Hello there", "Weather in Paris and Rome?"])
def test_the_socket_gives_the_events_the_http_stream_gives(served: tuple[OpenAI, RecordingHost], question: str) -> None:
    client, _ = served
    request: Any = {"model": "demo", "input": question, "tools": [WEATHER]}
    streamed = httpx.post(f"{client.base_url}responses", json={**request, "stream": True}, timeout=30)
    over_http = [same_but_ids(event) for event in sse_events(streamed.content)]
    with client.responses.connect() as connection:
        connection.response.create(**request)
        over_socket = [same_but_ids(event) for event in raw_turn(connection)]
    assert over_socket == over_http and len(over_http) > 5


def test_a_tool_call_turn_then_its_output(served: tuple[OpenAI, RecordingHost]) -> None:
    client, host = served
    with client.responses.connect() as connection:
        connection.response.create(model="demo", input="Weather in Paris?", tools=[WEATHER], store=False)  # type: ignore[list-item]
        called = turn(connection)[-1].response
        calls = [item for item in called.output if item.type == "function_call"]
        assert [(c.name, json.loads(c.arguments)) for c in calls] == [("get_weather", {"city": "Paris"})]
        output = {"type": "function_call_output", "call_id": calls[0].call_id, "output": "sunny, 21 C"}
        connection.response.create(
            model="demo",
            input=[output],
            tools=[WEATHER],
            store=False,
            previous_response_id=called.id,  # type: ignore[list-item]
        )
        answered = turn(connection)[-1]
    assert answered.type == "response.completed"
    assert "sunny, 21 C" in answer_text(answered.response)
    assert "Weather in Paris?" in host.last_text()


def test_faults_are_error_events_and_the_socket_stays_usable(served: tuple[OpenAI, RecordingHost]) -> None:
    client, host = served
    with client.responses.connect() as connection:
        connection.send_raw("{not json")
        bad_json = turn(connection)[-1]
        connection.send_raw(json.dumps({"type": "session.update"}))
        unknown = turn(connection)[-1]
        connection.response.create(model="demo", input="Hi", store=False, previous_response_id="resp_nowhere")
        missing = turn(connection)[-1]
        connection.send_raw(json.dumps({"type": "response.create", "model": "demo", "input": "Hi", "background": True}))
        background = turn(connection)[-1]
        connection.send_raw(json.dumps({"type": "response.create", "input": [{"type": "message"}]}))
        malformed = turn(connection)[-1]  # the HTTP path's own 400, as an event
        connection.response.create(model="demo", input="Still there?")
        fine = turn(connection)[-1]
    assert (bad_json.type, bad_json.status, bad_json.error.code) == ("error", 400, "invalid_json")
    assert (unknown.status, unknown.error.code, unknown.error.param) == (400, "invalid_type", "type")
    assert "session.update" in unknown.error.message
    assert (missing.status, missing.error.code) == (400, "previous_response_not_found")
    assert missing.error.param == "previous_response_id" and "resp_nowhere" in missing.error.message
    assert (background.status, background.error.param) == (400, "background")
    assert (malformed.status, malformed.error.type, malformed.error.param) == (
        400,
        "invalid_request_error",
        "input[0].role",
    )
    assert fine.type == "response.completed"
    assert len(host.bodies) == 1  # only the last turn reached the host


def test_a_failed_continuation_forgets_the_response_it_continued(served: tuple[OpenAI, RecordingHost]) -> None:
    client, _ = served
    with client.responses.connect() as connection:
        connection.response.create(model="demo", input="Remember: ember.", store=False)
        first = turn(connection)[-1].response
        stray = {"type": "function_call_output", "call_id": "call_nowhere", "output": "?"}
        connection.response.create(model="demo", input=[stray], store=False, previous_response_id=first.id)
        failed = turn(connection)[-1]
        connection.response.create(model="demo", input="Go on.", store=False, previous_response_id=first.id)
        retried = turn(connection)[-1]
    assert (failed.type, failed.status, failed.error.param) == ("error", 400, "input[0].call_id")
    assert "call_nowhere" in failed.error.message
    assert (retried.type, retried.error.code) == ("error", "previous_response_not_found")


def test_turns_sent_at_once_run_in_order(served: tuple[OpenAI, RecordingHost]) -> None:
    client, host = served
    with client.responses.connect() as connection:
        for word in ("first", "second", "third"):
            connection.response.create(model="demo", input=f"Reply with exactly: {word}", store=False)
        turns = [turn(connection) for _ in range(3)]
    for events in turns:
        ids = {e.response.id for e in events if hasattr(e, "response")}
        assert len(ids) == 1 and events[-1].type == "response.completed"  # no turn's events mixed in
    seen = [json.dumps(body) for body in host.bodies]
    assert [next(w for w in ("first", "second", "third") if w in s) for s in seen] == ["first", "second", "third"]


def test_a_stream_id_is_echoed_and_a_lane_continues_its_own_last_response(
    served: tuple[OpenAI, RecordingHost],
) -> None:
    client, host = served
    with client.responses.connect() as connection:
        connection.response.create(model="demo", input="Lane A: alpha.", store=False, stream_id="a")
        a = turn(connection)
        connection.response.create(model="demo", input="Lane B: beta.", store=False, stream_id="b")
        turn(connection)
        a_id = a[-1].response.id
        connection.response.create(model="demo", input="And A?", store=False, stream_id="a", previous_response_id=a_id)
        again = turn(connection)
    assert {e.stream_id for e in a} == {"a"} and again[-1].type == "response.completed"
    assert "alpha" in host.last_text() and "beta" not in host.last_text()


def test_the_client_leaving_stops_the_running_turn() -> None:
    host = RecordingHost()
    host.hold = True
    with serving(ToolCallMiddleware(host, dialect="hermes")) as base:
        client = OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
        with client.responses.connect() as connection:
            connection.response.create(model="demo", input="Take your time.")
            assert host.entered.wait(10)
        assert host.cancelled.wait(10)  # the host's work was cancelled with the socket
        time.sleep(0.1)


def test_a_host_failing_mid_turn_fails_that_turn_only() -> None:
    from tests.asgi.failing_app import host as breaking_host

    with serving(ToolCallMiddleware(breaking_host, dialect="hermes")) as base:
        client = OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
        with client.responses.connect() as connection:
            connection.response.create(model="demo", input="Some text, then the host breaks")
            broken = turn(connection)
            connection.response.create(model="demo", input="END:This one ends.")
            fine = turn(connection)
    text = "".join(e.delta for e in broken if e.type == "response.output_text.delta")
    assert broken[-1].type == "response.failed" and text == "Some text, then the host breaks"
    assert fine[-1].type == "response.completed"


async def echo_app(scope: Any, receive: Any, send: Any) -> None:
    """A host with WebSockets of its own: it echoes one message."""
    if scope["type"] != "websocket":
        return
    await receive()  # websocket.connect
    await send({"type": "websocket.accept"})
    message = await receive()
    await send({"type": "websocket.send", "text": f"{scope['path']}: {message.get('text')}"})
    await send({"type": "websocket.close", "code": 1000})


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/ws/live"])
def test_a_websocket_on_another_route_is_the_apps(path: str) -> None:
    from websockets.sync.client import connect

    with serving(ToolCallMiddleware(echo_app, dialect="hermes")) as base:
        with connect(base.replace("http", "ws") + path, open_timeout=5) as socket:
            socket.send("hi")
            assert socket.recv(timeout=5) == f"{path}: hi"
