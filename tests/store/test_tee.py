"""The tee reading an answer the pipeline passed on without writing it (the host's own: an answer
of ours is noted on the tee's hook instead, `test_own_answer.py`): split invariance (however the
bytes are chunked, the client gets the same bytes and the store the same record), nothing lost
(every event goes out, in order; only response objects change), and a stream equals its whole
answer once stored."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import split_at
from toolcall_middleware.core.framing.sse import SSEDecoder, encode_event
from toolcall_middleware.store._state import Echo
from toolcall_middleware.store._tee import Tee, Turn

ECHO = Echo("resp_ours", True, "resp_before", None)
DONE = {
    "id": "resp_host",
    "object": "response",
    "status": "completed",
    "store": False,
    "previous_response_id": None,
    "output": [
        {"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "Hé"}]}
    ],
}
EVENTS = [
    {"type": "response.created", "sequence_number": 0, "response": {**DONE, "status": "in_progress", "output": []}},
    {"type": "response.output_text.delta", "sequence_number": 1, "item_id": "msg_1", "delta": "H"},
    {"type": "response.output_text.delta", "sequence_number": 2, "item_id": "msg_1", "delta": "é\u2028"},
    {"type": "response.completed", "sequence_number": 3, "response": DONE},
]
STREAM = b": ping\n\n" + b"".join(encode_event(e) for e in EVENTS)


def run_tee(chunks: list[bytes], content_type: bytes) -> tuple[bytes, list[Any]]:
    sent: list[bytes] = []
    stored: list[Any] = []

    async def downstream(message: Any) -> None:
        if message["type"] == "http.response.body":
            sent.append(message.get("body", b""))

    async def finish(turn: Turn, response: dict[str, Any], events: Any) -> None:
        stored.append((response, events))

    async def work() -> None:
        tee = Tee(Turn("scope", ECHO, [], []), downstream, finish, max_kept_bytes=1 << 20)
        await tee.send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", content_type)]})
        for n, chunk in enumerate(chunks):
            await tee.send({"type": "http.response.body", "body": chunk, "more_body": n < len(chunks) - 1})

    asyncio.run(work())
    return b"".join(sent), stored


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    return split_at(data, cuts) or [b""]  # type: ignore[arg-type, return-value]  (bytes slice as str does)


@given(st.lists(st.integers(min_value=0), max_size=12))
def test_a_stream_in_any_pieces_gives_the_same_bytes_and_record(cuts: list[int]) -> None:
    whole, stored_whole = run_tee([STREAM], b"text/event-stream")
    pieces, stored_pieces = run_tee(split(STREAM, cuts), b"text/event-stream")
    assert pieces == whole and stored_pieces == stored_whole


def test_every_event_goes_out_in_order_with_only_the_response_objects_changed() -> None:
    out, stored = run_tee([STREAM], b"text/event-stream")
    decoder = SSEDecoder()
    events = [e for e in decoder.feed(out) if e.data is not None]
    assert [json.loads(e.data or "")["type"] for e in events] == [e["type"] for e in EVENTS]
    assert out.startswith(b": ping\n\n")
    assert encode_event(EVENTS[1]) in out and encode_event(EVENTS[2]) in out  # untouched, byte for byte
    final = json.loads(events[-1].data or "")["response"]
    assert final["id"] == "resp_ours" and final["store"] is True and final["previous_response_id"] == "resp_before"
    assert stored[0][0] == final and [json.loads(e)["sequence_number"] for e in stored[0][1]] == [0, 1, 2, 3]


@given(st.lists(st.integers(min_value=0), max_size=6))
def test_a_whole_answer_stores_what_its_stream_stores(cuts: list[int]) -> None:
    body = json.dumps(DONE).encode()
    out, stored = run_tee(split(body, cuts), b"application/json")
    _, streamed = run_tee([STREAM], b"text/event-stream")
    assert json.loads(out) == stored[0][0] == streamed[0][0]


@pytest.mark.parametrize("depth", [200, 1000])
def test_an_answer_nested_too_deep_passes_on_unstored_on_every_python(depth: int) -> None:
    """Deeper than `limits.max_depth` (128), as the pipeline reads it: no response, whatever
    depth the Python's JSON decoder reads (about 1,000 on 3.11, further from 3.12 on)."""
    deep = "[" * depth + "]" * depth
    whole = json.dumps({**DONE, "extra": "@deep@"}).replace('"@deep@"', deep).encode()
    assert run_tee([whole], b"application/json") == (whole, [])
    completed = encode_event({**EVENTS[-1], "response": {**DONE, "extra": "@deep@"}})
    stream = STREAM.replace(encode_event(EVENTS[-1]), completed.replace(b'"@deep@"', deep.encode()))
    sent, stored = run_tee([stream], b"text/event-stream")
    assert deep.encode() in sent and stored == []
