"""SSE keep-alive: a rewritten stream that goes quiet gets `: ping` comments between whole events.

On a real uvicorn, a host that stalls longer than the interval (while thinking, and in the middle of
a tool call the middleware holds back): the raw client sees the pings, every other block is a whole
event, and the openai SDK still accumulates the right answer. In process, with the ASGI harness:
no ping before the head, none in a buffered body, and the timer is gone when the request ends, is
given up, fails or loses its client."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.asgi.harness import (
    SSE_HEADERS,
    Receive,
    Recorder,
    body,
    chat_answer,
    chat_request,
    chat_stream,
    json_headers,
    request,
    run,
    scope,
    start,
)
from tests.servers import serve, uvicorn
from toolcall_middleware import ToolCallMiddleware
from toolcall_middleware._keepalive import PING_COMMENT, PING_EVENT, ping_for

TOOLS: Any = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather in a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
RESPONSES_TOOLS: Any = [{"type": "function", **TOOLS[0]["function"]}]


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    command, port = uvicorn("tests.hosts:keepalive_app")
    with serve(command, port) as url:
        yield url


def blocks(data: bytes) -> list[bytes]:
    return [b for b in data.split(b"\n\n") if b]


def test_raw_client_sees_pings_only_between_whole_events(base: str) -> None:
    payload = {"model": "qwen3", "messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": TOOLS}
    with httpx.stream("POST", base + "/v1/chat/completions", json={**payload, "stream": True}, timeout=20) as r:
        data = b"".join(r.iter_raw())
    parts = blocks(data)
    pings = [p for p in parts if p == b": ping"]
    assert len(pings) >= 2, data  # two stalls of 0.7 s at a 0.2 s interval
    for part in parts:
        if part != b": ping":
            assert part.startswith(b"data: "), part  # a ping never splits an event
            text = part[6:].decode()
            assert text == "[DONE]" or isinstance(json.loads(text), dict)
    assert parts[-1] == b"data: [DONE]"
    # A ping went out while the tool call was held back: after the text, before the call's chunk.
    call = next(i for i, p in enumerate(parts) if b'"tool_calls"' in p)
    last_text = max(i for i, p in enumerate(parts[:call]) if b'"content"' in p)
    assert any(parts[i] == b": ping" for i in range(last_text + 1, call))


def test_openai_sdk_still_accumulates_the_answer(base: str) -> None:
    client = openai.OpenAI(api_key="none", base_url=base + "/v1", max_retries=0)
    with client.chat.completions.stream(
        model="qwen3", messages=[{"role": "user", "content": "Weather in Paris?"}], tools=TOOLS
    ) as stream:
        for _ in stream:
            pass
        completion = stream.get_final_completion()
    message = completion.choices[0].message
    assert message.content == "Let me check." and completion.choices[0].finish_reason == "tool_calls"
    assert message.tool_calls and json.loads(message.tool_calls[0].function.arguments) == {"city": "Paris"}

    with client.responses.stream(model="qwen3", input="Weather in Paris?", tools=RESPONSES_TOOLS) as s:
        for _ in s:
            pass
        response = s.get_final_response()
    assert response.output_text == "Let me check."
    assert [item.type for item in response.output][-1] == "function_call"


def test_anthropic_clients_get_typed_pings_under_ping_events(base: str) -> None:
    payload = {
        "model": "qwen3",
        "max_tokens": 256,
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [{"name": "get_weather", "input_schema": TOOLS[0]["function"]["parameters"]}],
    }
    data = httpx.post(base + "/v1/messages", json={**payload, "stream": True}, timeout=20).content
    parts = blocks(data)
    assert parts.count(PING_EVENT.strip()) >= 2 and b": ping" not in parts
    assert all(p.startswith(b"event: ") for p in parts)  # whole events only, typed pings among them

    client = anthropic.Anthropic(api_key="none", base_url=base, max_retries=0)
    with client.messages.stream(**payload) as stream:
        kinds = [event.type for event in stream]
        message = stream.get_final_message()
    assert "message_stop" in kinds
    assert message.stop_reason == "tool_use" and message.content[-1].type == "tool_use"
    assert message.content[-1].input == {"city": "Paris"}


def test_no_ping_in_a_whole_json_answer(base: str) -> None:
    payload = {"model": "qwen3", "messages": [{"role": "user", "content": "hi"}]}
    response = httpx.post(base + "/v1/chat/completions", json=payload, timeout=20)
    assert response.status_code == 200
    assert b"ping" not in response.content
    assert response.json()["choices"][0]["message"]["content"] == "Hello! How can I help?"
    assert response.headers["content-length"] == str(len(response.content))


def test_off_means_no_ping() -> None:
    command, port = uvicorn("tests.hosts:no_keepalive_app")
    with serve(command, port) as url:
        payload = {"model": "qwen3", "messages": [{"role": "user", "content": "Weather in Paris?"}], "stream": True}
        data = httpx.post(url + "/v1/chat/completions", json=payload, timeout=20).content
    assert b": ping" not in data and data.endswith(b"data: [DONE]\n\n")


def test_which_ping_each_client_gets() -> None:
    assert ping_for("chat", frozenset({"ping_events"})) == PING_COMMENT
    assert ping_for("responses", frozenset({"ping_events"})) == PING_COMMENT
    assert ping_for("messages", frozenset()) == PING_COMMENT
    assert ping_for("messages", frozenset({"ping_events"})) == PING_EVENT


# -- in process: the harness drives the middleware message by message --------------------------


def stalling_app(messages: list[Any], stall_after: int, stall: float) -> Any:
    """A raw app that reads the request, sends `messages`, and sleeps `stall` s after message
    number `stall_after` and again after its last (an app that still cleans up)."""

    async def app(scope_: Any, receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        for n, message in enumerate(messages):
            await send(message)
            if n in (stall_after, len(messages) - 1):
                await asyncio.sleep(stall)

    return app


def no_task_added(before: set[asyncio.Task[Any]]) -> bool:
    return asyncio.all_tasks() <= before


def drive(app: Any, send: Recorder, receive: Receive | None = None) -> bool:
    """Run one request; return whether nothing but the test's own task was left running."""

    async def go() -> bool:
        before = asyncio.all_tasks()
        await app(scope(), receive or Receive([request(chat_request(stream=True))]), send)
        await asyncio.sleep(0.05)  # a leaked timer would have fired again by now
        return no_task_added(before)

    return bool(run(go()))


def test_pings_in_process_and_the_timer_ends_with_the_stream() -> None:
    stream = chat_stream()
    half = stream.index(b"\n\n", len(stream) // 2) + 2
    app = stalling_app([start(200, SSE_HEADERS), body(stream[:half], True), body(stream[half:])], 1, 0.35)
    send = Recorder()
    assert drive(ToolCallMiddleware(app, dialect="hermes", keepalive_interval=0.1), send)
    bodies = [bytes(m.get("body", b"")) for m in send.bodies]
    assert send.types[0] == "http.response.start"  # never a ping before the head
    assert bodies.count(PING_COMMENT) >= 2
    assert not send.bodies[-1].get("more_body") and bodies[-1] != PING_COMMENT
    rest = b"".join(b for b in bodies if b != PING_COMMENT)
    assert rest.endswith(b"data: [DONE]\n\n") and b"get_weather" in rest


def test_no_ping_while_a_buffered_body_is_held() -> None:
    answer = chat_answer()
    app = stalling_app([start(200, json_headers(answer)), body(answer[:20], True), body(answer[20:])], 1, 0.35)
    send = Recorder()
    assert drive(
        ToolCallMiddleware(app, dialect="hermes", keepalive_interval=0.1), send, Receive([request(chat_request())])
    )
    assert b"ping" not in send.body and send.json()["choices"][0]["message"]["tool_calls"]


def test_a_stream_given_up_midway_gets_no_more_pings() -> None:
    first = chat_stream()
    first = first[: first.index(b"\n\n") + 2]
    huge = b"data: " + b"x" * 400
    # An event over the cap: the exchange gives up and the rest passes through as it comes, so a
    # ping could split the event that is still open. The timer must stop.
    app = stalling_app([start(200, SSE_HEADERS), body(first, True), body(huge, True), body(b"\n\n")], 2, 0.35)
    send = Recorder()
    middleware = ToolCallMiddleware(app, dialect="hermes", keepalive_interval=0.1, limits={"max_sse_event_bytes": 250})
    assert drive(middleware, send)
    assert send.body.endswith(huge + b"\n\n") and PING_COMMENT not in send.body[send.body.index(huge) - 10 :]


def test_the_timer_ends_when_the_client_disconnects() -> None:
    stream = chat_stream()

    def gone_after_ping(recorder: Recorder, message: Any) -> None:
        if message.get("body") == PING_COMMENT:
            raise OSError("client disconnected")

    async def app(scope_: Any, receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        await send(start(200, SSE_HEADERS))
        await send(body(stream[:40], True))
        await asyncio.sleep(0.35)  # the ping fails meanwhile: the client is gone
        await send(body(stream[40:]))

    send = Recorder(on_send=gone_after_ping)
    assert drive(ToolCallMiddleware(app, dialect="hermes", keepalive_interval=0.1), send)
    pings = [m for m in send.bodies if m.get("body") == PING_COMMENT]
    assert len(pings) == 1  # the timer stopped at the first failed ping


def test_the_timer_ends_when_the_app_fails() -> None:
    stream = chat_stream()

    async def app(scope_: Any, receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        await send(start(200, SSE_HEADERS))
        await send(body(stream[:40], True))
        await asyncio.sleep(0.25)
        raise RuntimeError("the model server crashed")

    async def go() -> tuple[bool, int]:
        before = asyncio.all_tasks()
        send = Recorder()
        middleware = ToolCallMiddleware(app, dialect="hermes", keepalive_interval=0.1)
        with pytest.raises(RuntimeError):
            await middleware(scope(), Receive([request(chat_request(stream=True))]), send)
        await asyncio.sleep(0.25)
        pings = sum(1 for m in send.bodies if m.get("body") == PING_COMMENT)
        return no_task_added(before), pings

    clean, pings = run(go())
    assert clean and pings >= 1
