"""The state stores the answer the pipeline made from what the pipeline told it, not by reading
the answer's bytes back: the client's stream, the stored response and its replay are the same
however the host's answer is split, with the tee's SSE and JSON decoding out of reach (made to
fail). What the pipeline did not write (the host's own answer passed through, a keep-alive ping
between its events) the tee still reads itself, as before."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.asgi.harness import (
    RESPONSES,
    SSE_HEADERS,
    Receive,
    Recorder,
    body,
    json_headers,
    request,
    responses_answer,
    responses_request,
    responses_stream,
    run,
    scope,
    start,
)
from tests.conftest import split_at
from toolcall_middleware import ToolCallMiddleware
from toolcall_middleware.core._response_hook import ResponseHook
from toolcall_middleware.core.framing.sse import encode_event
from toolcall_middleware.store._base import StoreError
from toolcall_middleware.store._state import Echo
from toolcall_middleware.store._tee import Tee, Turn

TEXT = "Let me check the weather for you, é\u2028 and more."


def pieces(data: bytes, cuts: list[int]) -> list[bytes]:
    return split_at(data, cuts) or [b""]  # type: ignore[arg-type, return-value]  (bytes slice as str does)


def host(chunks: list[bytes], headers: list[tuple[bytes, bytes]]) -> Any:
    """A raw ASGI host that reads the request, then answers `chunks`, one message each."""

    async def app(scope_: Any, receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        await send(start(200, headers))
        for n, chunk in enumerate(chunks):
            await send(body(chunk, more=n < len(chunks) - 1))

    return app


async def ask(app: Any, path: str, data: bytes = b"", *, method: str = "POST", query: bytes = b"") -> Recorder:
    send = Recorder()
    receive = Receive([request(data)])
    asgi_scope = {**scope(path, method=method), "query_string": query}
    task = asyncio.ensure_future(app(asgi_scope, receive, send))
    try:
        await asyncio.wait_for(asyncio.shield(task), 5)
    finally:
        receive.disconnect()
        await task
    return send


@contextmanager
def no_reading_back() -> Iterator[None]:
    """The tee's own SSE and JSON decoding fail if anything calls them."""

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the tee decoded an answer the pipeline wrote")

    with mock.patch("toolcall_middleware.store._tee.SSEDecoder", refused):
        with mock.patch("toolcall_middleware.store._tee.decode_data", refused):
            yield


def final_response(stream: bytes) -> dict[str, Any]:
    last = [e for e in stream.split(b"\n\n") if e.strip()][-1]
    event = json.loads(last.split(b"\ndata: ", 1)[1])
    assert event["type"] == "response.completed"
    response: dict[str, Any] = event["response"]
    return response


@settings(deadline=None)  # (each example runs the middleware twice, on a machine it shares)
@given(st.lists(st.integers(min_value=0), max_size=10))
def test_a_stream_of_ours_is_stored_and_replayed_as_the_client_got_it(cuts: list[int]) -> None:
    app = ToolCallMiddleware(
        host(pieces(responses_stream(TEXT, piece=5), cuts), SSE_HEADERS), dialect="hermes", store="memory"
    )

    async def work() -> tuple[bytes, bytes, Any]:
        with no_reading_back():
            streamed = (await ask(app, RESPONSES, responses_request(stream=True))).body
        ident = final_response(streamed)["id"]
        replayed = (await ask(app, f"{RESPONSES}/{ident}", method="GET", query=b"stream=true")).body
        stored = (await ask(app, f"{RESPONSES}/{ident}", method="GET")).json()
        return streamed, replayed, stored

    streamed, replayed, stored = run(work())
    final = final_response(streamed)
    assert final["id"].startswith("resp_") and final["id"] != "resp_1" and final["store"] is True
    assert replayed == streamed  # every event, byte for byte
    assert stored == final


def test_each_backend_replays_a_stream_of_ours_byte_for_byte(store_url: str) -> None:
    """A real SQLite file, then a real `redis-server`: the same as the memory store above."""
    app = ToolCallMiddleware(
        host(pieces(responses_stream(TEXT, piece=5), [37, 400, 401]), SSE_HEADERS), dialect="hermes", store=store_url
    )

    async def work() -> tuple[bytes, bytes, Any]:
        with no_reading_back():
            streamed = (await ask(app, RESPONSES, responses_request(stream=True))).body
        ident = final_response(streamed)["id"]
        replayed = (await ask(app, f"{RESPONSES}/{ident}", method="GET", query=b"stream=true")).body
        return streamed, replayed, (await ask(app, f"{RESPONSES}/{ident}", method="GET")).json()

    streamed, replayed, stored = run(work())
    assert replayed == streamed and stored == final_response(streamed)


@settings(deadline=None)
@given(st.lists(st.integers(min_value=0), max_size=6))
def test_a_whole_answer_of_ours_is_stored_as_the_client_got_it(cuts: list[int]) -> None:
    answer = responses_answer(TEXT)
    app = ToolCallMiddleware(host(pieces(answer, cuts), json_headers(answer)), dialect="hermes", store="memory")

    async def work() -> tuple[Recorder, Any]:
        with no_reading_back():
            got = await ask(app, RESPONSES, responses_request())
        return got, (await ask(app, f"{RESPONSES}/{got.json()['id']}", method="GET")).json()

    got, stored = run(work())
    assert got.header(b"content-length") == [str(len(got.body)).encode()]
    response = got.json()
    assert response["id"] != "resp_1" and response["store"] is True
    assert stored == response


def test_a_host_answer_passed_through_is_read_and_stored_with_our_id() -> None:
    """Over `max_response_bytes` the pipeline passes the host's JSON on as it came: the tee reads it."""
    answer = responses_answer(TEXT)
    app = ToolCallMiddleware(
        host([answer], json_headers(answer)), dialect="hermes", store="memory", limits={"max_response_bytes": 100}
    )

    async def work() -> tuple[Any, Any]:
        got = (await ask(app, RESPONSES, responses_request())).json()
        return got, (await ask(app, f"{RESPONSES}/{got['id']}", method="GET")).json()

    got, stored = run(work())
    assert got["id"] != "resp_1" and got["store"] is True
    assert got["output"] == json.loads(answer)["output"]  # the host's own answer, not rewritten
    assert stored == got


def test_an_answer_noted_then_given_up_on_a_bug_of_ours_stores_what_the_client_got() -> None:
    """Our rewriting fails after the answer told the state its response (a bug of ours): the host's
    answer goes out as it came, and the state stores that one, not the response it was told of."""
    answer = responses_answer(TEXT)
    app = ToolCallMiddleware(host([answer], json_headers(answer)), dialect="hermes", store="memory")
    noted: list[dict[str, Any]] = []

    def broken(self: ResponseHook, response: dict[str, Any]) -> None:
        noted.append(response)
        self.response = response
        raise RuntimeError("a bug after the answer was noted")

    async def work() -> tuple[Any, Any]:
        with mock.patch.object(ResponseHook, "answered", broken):
            got = (await ask(app, RESPONSES, responses_request())).json()
        return got, (await ask(app, f"{RESPONSES}/{got['id']}", method="GET")).json()

    got, stored = run(work())
    assert noted and noted[0]["output"] != got["output"]  # ours was the rewritten one
    assert got["output"] == json.loads(answer)["output"]  # the host's own answer went out
    assert got["id"] != "resp_1" and stored == got


def test_pings_between_the_events_of_ours_go_out_and_are_not_kept() -> None:
    """A slow host: the keep-alive's pings go out between the pipeline's events, through the tee."""
    chunks = pieces(responses_stream(TEXT, piece=20), [200, 400])

    async def slow(scope_: Any, receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        await send(start(200, SSE_HEADERS))
        for n, chunk in enumerate(chunks):
            await asyncio.sleep(0.15)
            await send(body(chunk, more=n < len(chunks) - 1))

    app = ToolCallMiddleware(slow, dialect="hermes", store="memory", keepalive_interval=0.05)

    async def work() -> tuple[bytes, bytes]:
        with mock.patch("toolcall_middleware.store._tee.decode_data", side_effect=AssertionError):
            streamed = (await ask(app, RESPONSES, responses_request(stream=True))).body
        ident = final_response(streamed)["id"]
        return streamed, (await ask(app, f"{RESPONSES}/{ident}", method="GET", query=b"stream=true")).body

    streamed, replayed = run(work())
    assert b": ping\n\n" in streamed
    assert replayed == streamed.replace(b": ping\n\n", b"")


def test_a_store_failure_at_the_end_puts_the_error_event_in_the_terminal_events_place() -> None:
    hook_events = [
        {"type": "response.created", "sequence_number": 0, "response": {"id": "x", "status": "in_progress"}},
        {"type": "response.output_text.delta", "sequence_number": 1, "delta": "Hi"},
        {"type": "response.completed", "sequence_number": 2, "response": {"id": "x", "status": "completed"}},
    ]
    sent: list[bytes] = []

    async def downstream(message: Any) -> None:
        if message["type"] == "http.response.body":
            sent.append(message["body"])

    async def finish(turn: Turn, response: dict[str, Any], events: Any) -> None:
        raise StoreError("over the store's limit")

    async def work() -> ResponseHook:
        tee = Tee(Turn("scope", Echo("resp_ours", True, None, None), [], []), downstream, finish, max_kept_bytes=1000)
        await tee.send(start(200, SSE_HEADERS))
        data = tee.hook.encode(hook_events)
        await tee.send(body(data))
        return tee.hook

    run(work())
    [out] = sent
    assert out.startswith(encode_event(hook_events[0]) + encode_event(hook_events[1]))
    error = json.loads(out.split(b"\n\n")[2].split(b"\ndata: ", 1)[1])
    assert error["type"] == "error" and error["code"] == "store_unavailable" and error["sequence_number"] == 2
    assert b"response.completed" not in out
