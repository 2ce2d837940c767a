"""A call that never closes fails the response as soon as it passes `max_call_bytes`, and what
the middleware holds of it stays bounded however long the host writes (DESIGN.md: caps "enforced
as bytes arrive"). Through the real ASGI middleware, on the C lane and on the Python one.
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tests.asgi.harness import Receive, Recorder, call, chat_request, request, scope, sse_events
from toolcall_middleware import ToolCallMiddleware

LIMIT = 1 << 20
TOTAL = 20 << 20  # what the host writes into the call, never closing it
PIECE = 4096  # characters of arguments per SSE event
META = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "qwen3"}
OPENING = 'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "'


class EndlessCall:
    """A host app streaming a call whose arguments never end; it counts what it has written."""

    def __init__(self, piece: str) -> None:
        self.written = 0
        self.piece = piece

    def _event(self, content: str, first: bool = False) -> bytes:
        delta = {"role": "assistant", "content": content} if first else {"content": content}
        chunk = {**META, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        return b"data: " + json.dumps(chunk).encode() + b"\n\n"

    async def __call__(
        self, scope: Any, receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]
    ) -> None:
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        await send({"type": "http.response.body", "body": self._event(OPENING, first=True), "more_body": True})
        while self.written < TOTAL:
            # A new string each time (no event shares the last one's memory), as a host's are.
            content = self.piece[self.written % 7 :] + self.piece[: self.written % 7]
            await send({"type": "http.response.body", "body": self._event(content), "more_body": True})
            self.written += len(content)
        await send({"type": "http.response.body", "body": b"data: [DONE]\n\n", "more_body": False})


@pytest.mark.parametrize("filler", ["x", 'a\\"b c'], ids=["plain", "escaped"])
def test_an_endless_call_fails_at_the_limit_and_memory_stays_bounded(filler: str) -> None:
    host = EndlessCall((filler * PIECE)[:PIECE])
    app = ToolCallMiddleware(host, dialect="hermes", limits={"max_call_bytes": LIMIT})
    written_at_error: list[int] = []

    def on_send(recorder: Recorder, message: Any) -> None:
        if b"tool_arguments_too_large" in message.get("body", b"") and not written_at_error:
            written_at_error.append(host.written)

    send = Recorder(on_send)
    tracemalloc.start()
    try:
        call(app, scope(), Receive([request(chat_request(stream=True))]), send)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The error went out while the host sent the piece that took the call past the limit (the
    # call's body holds the start of its JSON too), not when the host's stream ended.
    assert written_at_error, "no error"
    assert written_at_error[0] <= LIMIT < written_at_error[0] + PIECE + len(OPENING)
    events = sse_events(send.body)
    errors = [e for e in events if isinstance(e, dict) and "error" in e]
    assert len(errors) == 1 and errors[0]["error"]["code"] == "tool_arguments_too_large"
    assert events[-1] == "[DONE]" and not any("tool_calls" in json.dumps(e) for e in events)
    # What was held of the call was let go: the peak is a few times the limit, not the 20 MB.
    assert peak < 4 * LIMIT, f"peak {peak} bytes"


def test_a_whole_answer_with_an_endless_call_fails_with_the_same_error() -> None:
    content = OPENING + "x" * (2 * LIMIT)
    answer = {**META, "object": "chat.completion"}
    answer["choices"] = [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "length"}]
    data = json.dumps(answer).encode()
    sent = [
        {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]},
        {"type": "http.response.body", "body": data, "more_body": False},
    ]

    async def host(scope: Any, receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]) -> None:
        while (await receive()).get("more_body"):
            pass
        for message in sent:
            await send(message)

    app = ToolCallMiddleware(host, dialect="hermes", limits={"max_call_bytes": LIMIT})
    send = Recorder()
    call(app, scope(), Receive([request(chat_request())]), send)
    assert send.status == 502  # the host's answer cannot be delivered (was a 500, which SDKs retry)
    assert (b"x-should-retry", b"false") in send.messages[0]["headers"]
    assert send.json()["error"]["code"] == "tool_arguments_too_large"


# -- the other held buffers: a buffered JSON answer, one SSE event ------------------------------


class Counting:
    """A `send` that keeps only a count of the body bytes (and the first few), not the bodies."""

    def __init__(self) -> None:
        self.size = 0
        self.start: Any = None
        self.head = b""

    async def __call__(self, message: Any) -> None:
        if message["type"] == "http.response.start":
            self.start = message
        elif message["type"] == "http.response.body":
            body = bytes(message.get("body", b""))
            if len(self.head) < 64:
                self.head += body[:64]
            self.size += len(body)


def _endless_host(head: bytes, filler: bytes, ctype: bytes) -> Any:
    async def host(scope: Any, receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]) -> None:
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", ctype)]})
        await send({"type": "http.response.body", "body": head, "more_body": True})
        for n in range(TOTAL // len(filler)):
            await send({"type": "http.response.body", "body": filler[n % 7 :] + filler[: n % 7], "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    return host


@pytest.mark.parametrize(
    ("stream", "limits"),
    [(False, {"max_response_bytes": LIMIT}), (True, {"max_sse_event_bytes": LIMIT})],
    ids=["json-body", "sse-event"],
)
def test_an_endless_body_or_event_passes_through_and_memory_stays_bounded(stream: bool, limits: dict[str, int]) -> None:
    head = b'data: {"choices": [{"delta": {"content": "' if stream else b'{"choices": [{"message": {"content": "'
    ctype = b"text/event-stream" if stream else b"application/json"
    app = ToolCallMiddleware(_endless_host(head, b"x" * 65536, ctype), dialect="hermes", limits=limits)
    send = Counting()
    tracemalloc.start()
    try:
        call(app, scope(), Receive([request(chat_request(stream=stream))]), send)  # type: ignore[arg-type]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Over its cap the body is the host's, byte for byte (DESIGN: pass through what is not ours).
    assert send.start["status"] == 200 and send.head.startswith(head) and send.size == len(head) + TOTAL
    assert peak < 4 * LIMIT, f"peak {peak} bytes"


def test_a_call_streaming_its_arguments_fails_at_the_limit_too() -> None:
    host = EndlessCall("x" * PIECE)
    app = ToolCallMiddleware(
        host, dialect="hermes", arguments_streaming="incremental", limits={"max_call_bytes": LIMIT}
    )
    written_at_error: list[int] = []

    def on_send(recorder: Recorder, message: Any) -> None:
        if b"tool_arguments_too_large" in message.get("body", b"") and not written_at_error:
            written_at_error.append(host.written)

    send = Recorder(on_send)
    call(app, scope(), Receive([request(chat_request(stream=True))]), send)
    assert written_at_error and written_at_error[0] <= LIMIT < written_at_error[0] + PIECE + len(OPENING)
    events = sse_events(send.body)
    assert [e["error"]["code"] for e in events if isinstance(e, dict) and "error" in e] == ["tool_arguments_too_large"]
    assert events[-1] == "[DONE]"
