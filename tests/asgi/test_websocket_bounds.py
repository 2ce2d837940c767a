"""WebSocket mode is bounded: the responses a socket keeps to continue from (and its turns
waiting) count against `limits.max_websocket_bytes`, sockets past `limits.max_websockets` are
refused, and a client that leaves mid-turn is one quiet log line, not a warning per event the
server goes on writing. The official SDK's `responses.connect()` against a real uvicorn."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openai import OpenAI
from websockets.exceptions import InvalidStatus

from tests.asgi.failing_app import host as streaming_host
from tests.asgi.test_websocket_mode import turn
from tests.asgi.ws_host import RecordingHost
from tests.store.redis_server import redis_server
from toolcall_middleware import ToolCallMiddleware
from toolcall_middleware._websocket import refuse
from toolcall_middleware.demo.run import serving

BOUND = 10_000  # bytes a socket keeps: two of the turns below, not three


def client_of(base: str) -> OpenAI:
    return OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)


def test_past_the_bound_the_longest_idle_lane_is_forgotten() -> None:
    host = RecordingHost()
    with serving(ToolCallMiddleware(host, dialect="hermes", limits={"max_websocket_bytes": BOUND})) as base:
        with client_of(base).responses.connect() as connection:
            ids = {}
            for lane in ("a", "b", "c"):  # each response holds its ~4 KB input (and the answer)
                connection.response.create(model="demo", input=lane * 4000, store=False, stream_id=lane)
                ids[lane] = turn(connection)[-1].response.id
            results = {}
            for lane in ("b", "c", "a"):
                connection.response.create(
                    model="demo", input="Go on.", store=False, stream_id=lane, previous_response_id=ids[lane]
                )
                results[lane] = turn(connection)[-1]
            # A continuation that makes lane b's conversation alone larger than the bound: it
            # completes, but nothing of it can be kept.
            longer = results["b"].response.id
            connection.response.create(
                model="demo", input="x" * 6000, store=False, stream_id="b", previous_response_id=longer
            )
            big = turn(connection)[-1].response.id
            connection.response.create(model="demo", input="Go on.", store=False, previous_response_id=big)
            after_big = turn(connection)[-1]
    forgotten = results["a"]
    assert (forgotten.type, forgotten.status, forgotten.error.code) == ("error", 400, "previous_response_not_found")
    assert forgotten.error.param == "previous_response_id" and ids["a"] in forgotten.error.message
    for lane in ("b", "c"):  # the lanes used since are kept, and continue with their whole history
        assert results[lane].type == "response.completed"
        assert results[lane].response.previous_response_id == ids[lane]
    assert "b" * 4000 in json.dumps(host.bodies[3]) and "c" * 4000 in json.dumps(host.bodies[4])
    assert (after_big.type, after_big.error.code) == ("error", "previous_response_not_found")


@contextlib.contextmanager
def store_url(kind: str, folder: Path) -> Iterator[str]:
    if kind == "sqlite":
        yield f"sqlite:///{folder / 'state.db'}"
        return
    with redis_server(user="user", password="s3cr3t") as url:
        yield url


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_a_forgotten_lane_stored_continues_from_the_store(kind: str, tmp_path: Path) -> None:
    """With `store` on, a response the socket forgot is the response store's: the continuation
    goes down the HTTP path and gets its whole history from there."""
    host = RecordingHost()
    with store_url(kind, tmp_path) as store:
        app = ToolCallMiddleware(host, dialect="hermes", store=store, limits={"max_websocket_bytes": BOUND})
        with serving(app) as base, client_of(base).responses.connect() as connection:
            ids = {}
            for lane in ("a", "b", "c"):
                connection.response.create(model="demo", input=lane * 4000, stream_id=lane)
                ids[lane] = turn(connection)[-1].response.id
            connection.response.create(model="demo", input="Go on.", stream_id="a", previous_response_id=ids["a"])
            continued = turn(connection)[-1]
    assert continued.type == "response.completed" and continued.response.previous_response_id == ids["a"]
    assert "a" * 4000 in host.last_text() and "Go on." in host.last_text()


def test_turns_waiting_count_against_the_bound() -> None:
    host = RecordingHost()
    host.hold = True  # the first turn runs until the socket closes: the next ones wait
    with serving(ToolCallMiddleware(host, dialect="hermes", limits={"max_websocket_bytes": BOUND})) as base:
        with client_of(base).responses.connect() as connection:
            connection.response.create(model="demo", input="Take your time.")
            assert host.entered.wait(10)
            for _ in range(3):  # 4 KB each: the third is past the bound
                connection.response.create(model="demo", input="w" * 4000)
            refused = turn(connection)[-1]
    assert (refused.type, refused.status, refused.error.code) == ("error", 429, "too_many_requests")
    assert f"Over {BOUND} bytes" in refused.error.message


def test_a_message_over_the_request_limit_is_refused_in_its_turn() -> None:
    limits = {"max_request_bytes": 2000, "max_websocket_bytes": 1000}
    with serving(ToolCallMiddleware(RecordingHost(), dialect="hermes", limits=limits)) as base:
        with client_of(base).responses.connect() as connection:
            connection.response.create(model="demo", input="Hi", store=False)
            connection.response.create(model="demo", input="w" * 3000)
            first, second = turn(connection), turn(connection)
            connection.response.create(model="demo", input="Still there?", store=False)
            fine = turn(connection)[-1]
    assert first[-1].type == "response.completed"  # its events whole, the refusal after them
    assert (second[-1].type, second[-1].status, second[-1].error.code) == ("error", 400, "request_too_large")
    assert fine.type == "response.completed"


def test_sockets_past_the_bound_are_refused_with_a_503() -> None:
    with serving(ToolCallMiddleware(RecordingHost(), dialect="hermes", limits={"max_websockets": 2})) as base:
        client = client_of(base)
        with client.responses.connect() as one, client.responses.connect() as two:
            with pytest.raises(InvalidStatus) as refused:
                with client.responses.connect() as three:
                    three.response.create(model="demo", input="Hi")
            for connection in (one, two):  # the open ones are served as ever
                connection.response.create(model="demo", input="Hi", store=False)
                assert turn(connection)[-1].type == "response.completed"
        response = refused.value.response
        assert response.status_code == 503 and response.headers["retry-after"] == "1"
        error = json.loads(response.body)["error"]
        assert error["code"] == "too_many_websockets" and "Over 2 WebSockets open" in error["message"]
        deadline = time.monotonic() + 10
        while True:  # once those closed, a socket is accepted again
            try:
                with client.responses.connect() as again:
                    again.response.create(model="demo", input="Hi", store=False)
                    assert turn(again)[-1].type == "response.completed"
                break
            except InvalidStatus:
                assert time.monotonic() < deadline
                time.sleep(0.05)


def test_a_client_gone_mid_turn_is_one_line(caplog: pytest.LogCaptureFixture) -> None:
    """The host streams ~40,000 events at once; the client resets its connection after two. The
    server used to go on writing every one, each a `socket.send() raised exception` warning."""
    caplog.set_level(logging.INFO)
    with serving(ToolCallMiddleware(streaming_host, dialect="hermes")) as base:
        with client_of(base).responses.connect() as connection:
            connection.response.create(model="demo", input="END:" + "word " * 40_000)
            assert connection.recv().type == "response.created"
            connection.recv()
            raw: Any = connection._connection.socket  # (the SDK's websockets connection's own socket)
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # a reset, not a close
            raw.close()
            deadline = time.monotonic() + 10
            while not [r for r in caplog.records if "client left" in r.getMessage()]:
                assert time.monotonic() < deadline, "the server never noticed the client leaving"
                time.sleep(0.05)
            time.sleep(0.5)  # (anything the server would still write, written)
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert not warnings, [r.getMessage() for r in warnings[:3]]
    [left] = [r for r in caplog.records if "client left" in r.getMessage()]
    assert left.levelno == logging.INFO and "/v1/responses" in left.getMessage()
    assert "running turn stopped" in left.getMessage()


@pytest.mark.parametrize("http_response", [True, False])
def test_a_refusal_is_a_503_where_the_server_can_send_one_else_a_close(http_response: bool) -> None:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    extensions = {"websocket.http.response": {}} if http_response else {}
    scope = {"type": "websocket", "path": "/v1/responses", "extensions": extensions}
    asyncio.run(refuse(scope, receive, send, "Over 1 WebSockets open: try again later."))
    if http_response:
        start, body = sent
        assert start["type"] == "websocket.http.response.start" and start["status"] == 503
        assert (b"retry-after", b"1") in start["headers"]
        assert json.loads(body["body"])["error"]["code"] == "too_many_websockets"
    else:
        assert sent == [{"type": "websocket.close", "code": 1013, "reason": "Over 1 WebSockets open: try again later."}]
