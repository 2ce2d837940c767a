"""Reading an Anthropic Messages upstream: whole `message` bodies and SSE streams (split at every
byte), stop reasons and usage, real `tool_use` blocks as `UpstreamCall`s turned into parser events
that the OpenAI emitters deliver (replayed through the openai SDK), and detection."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from anthropic.types import Message

from tests.wire import replay_chat, replay_responses
from toolcall_middleware import StreamParser
from toolcall_middleware.core._detect import detect, kind_of, kind_of_route, reader_for
from toolcall_middleware.core._events import Event
from toolcall_middleware.core.apis.chat import ChatStreamEmitter
from toolcall_middleware.core.apis.messages import MessagesReader, NativeCalls
from toolcall_middleware.core.apis.responses import ResponsesStreamEmitter
from toolcall_middleware.core.framing.sse import SSEDecoder
from toolcall_middleware.core.inbound import (
    RawText,
    Unrecognized,
    UpstreamCall,
    UpstreamDone,
    UpstreamError,
    UpstreamMeta,
)
from toolcall_middleware.core.inbound._events import InboundEvent
from toolcall_middleware.core.policy import PolicyError, PolicyFilter

# What the API streams for a thinking + text + tool_use turn (the shape of its documented examples:
# a ping, a signature_delta, an empty first `partial_json`, usage split between start and delta).
STREAM: list[dict[str, Any]] = [
    {
        "type": "message_start",
        "message": {
            "id": "msg_01XYZ",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 25, "output_tokens": 1, "cache_read_input_tokens": 4},
        },
    },
    {"type": "ping"},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Weather: "}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "use the tool ✓"}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCgIYAh"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Checking "}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Paris."}},
    {"type": "content_block_stop", "index": 1},
    {
        "type": "content_block_start",
        "index": 2,
        "content_block": {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {}},
    },
    {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": ""}},
    {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": '{"city": "Pa'}},
    {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": 'ris"}'}},
    {"type": "content_block_stop", "index": 2},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {"output_tokens": 89},
    },
    {"type": "message_stop"},
]

WHOLE: dict[str, Any] = {
    "id": "msg_01XYZ",
    "type": "message",
    "role": "assistant",
    "model": "claude-x",
    "content": [
        {"type": "thinking", "thinking": "Weather: use the tool ✓", "signature": "EqQBCgIYAh"},
        {"type": "text", "text": "Checking Paris."},
        {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 25, "output_tokens": 89, "cache_read_input_tokens": 4},
}


def sse_bytes(events: list[dict[str, Any]]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e, ensure_ascii=False)}\n\n".encode() for e in events)


def read_stream(data: bytes, cuts: list[int]) -> list[InboundEvent]:
    decoder, reader = SSEDecoder(), MessagesReader()
    out: list[InboundEvent] = []
    bounds = [0, *cuts, len(data)]
    for a, b in itertools.pairwise(bounds):
        for event in decoder.feed(data[a:b]):
            assert event.data is not None
            out.extend(reader.feed(json.loads(event.data)))
    for event in decoder.flush():
        assert event.data is not None
        out.extend(reader.feed(json.loads(event.data)))
    return out + reader.flush()


def merged(events: list[InboundEvent]) -> dict[str, Any]:
    """Text per channel, the calls rebuilt from their pieces, and the rest, in order."""
    text: dict[str, str] = {"content": "", "reasoning": ""}
    calls: dict[int, dict[str, Any]] = {}
    other: list[Any] = []
    for e in events:
        if isinstance(e, RawText):
            text[e.channel] += e.text
        elif isinstance(e, UpstreamCall):
            call = calls.setdefault(e.index, {"id": e.id, "name": e.name, "arguments": "", "done": False})
            call["arguments"] += e.arguments
            call["done"] = call["done"] or e.done
        else:
            other.append(e)
    return {"text": text, "calls": calls, "other": other}


def test_the_sample_is_what_the_sdk_accepts() -> None:
    Message.model_validate(WHOLE)


def test_stream_reads_text_reasoning_calls_usage_and_end() -> None:
    events = read_stream(sse_bytes(STREAM), [])
    got = merged(events)
    assert got["text"] == {"content": "Checking Paris.", "reasoning": "Weather: use the tool ✓"}
    call = {"id": "toolu_01A", "name": "get_weather", "arguments": '{"city": "Paris"}', "done": True}
    assert got["calls"] == {0: call}
    meta, done = got["other"]
    assert meta == UpstreamMeta(kind="messages", id="msg_01XYZ", model="claude-x")
    assert isinstance(done, UpstreamDone) and done.complete and done.finish_reason == "tool_calls"
    assert done.usage == {"input_tokens": 25, "output_tokens": 89, "cache_read_input_tokens": 4}
    assert isinstance(events[0], UpstreamMeta) and events[-1] is done


def test_stream_split_at_every_byte_reads_the_same() -> None:
    data = sse_bytes(STREAM)
    whole = merged(read_stream(data, []))
    for cut in range(1, len(data)):
        assert merged(read_stream(data, [cut])) == whole
    assert merged(read_stream(data, list(range(1, len(data))))) == whole


def test_whole_message_reads_like_the_stream() -> None:
    reader = MessagesReader()
    events = reader.feed(WHOLE) + reader.flush()
    assert merged(events) == merged(read_stream(sse_bytes(STREAM), []))
    assert reader.has_native_tool_calls and reader.done


def test_text_only_upstream_has_no_native_calls() -> None:
    reader = MessagesReader()
    body = {**WHOLE, "content": [{"type": "text", "text": "<tool_call>raw</tool_call>"}], "stop_reason": "end_turn"}
    events = reader.feed(body)
    assert not reader.has_native_tool_calls
    assert [e for e in events if isinstance(e, RawText)] == [RawText("<tool_call>raw</tool_call>")]
    assert isinstance(events[-1], UpstreamDone) and events[-1].finish_reason == "stop"


@pytest.mark.parametrize(
    ("stop", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "tool_calls"),
        ("refusal", "content_filter"),
        ("model_context_window_exceeded", "length"),
    ],
)
def test_stop_reasons_map_to_finish_reasons(stop: str, finish: str) -> None:
    reader = MessagesReader()
    done = (reader.feed({**WHOLE, "stop_reason": stop}))[-1]
    assert isinstance(done, UpstreamDone) and done.finish_reason == finish


def test_stream_without_message_stop_is_incomplete() -> None:
    events = read_stream(sse_bytes(STREAM[:9]), [])
    done = events[-1]
    assert isinstance(done, UpstreamDone) and not done.complete and done.finish_reason is None


def test_error_event_and_unknown_objects() -> None:
    reader = MessagesReader()
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    out = reader.feed(STREAM[0]) + reader.feed(error) + reader.feed({"type": "something_new"}) + reader.feed(3)
    assert isinstance(out[1], UpstreamError) and out[1].message == "Overloaded" and out[1].type == "overloaded_error"
    assert out[2] == Unrecognized({"type": "something_new"}) and out[3] == Unrecognized(3)
    reader.feed(STREAM[-1])
    assert reader.feed({"type": "ping"}) == [Unrecognized({"type": "ping"})]  # nothing after the end


def test_tool_use_input_given_at_start_without_fragments() -> None:
    reader = MessagesReader()
    start = {**STREAM[11], "content_block": {**STREAM[11]["content_block"], "input": {"a": [1]}}}
    pieces = reader.feed(STREAM[0]) + reader.feed(start) + reader.feed(STREAM[15])
    calls = [p for p in pieces if isinstance(p, UpstreamCall)]
    assert calls == [
        UpstreamCall(0, id="toolu_01A", name="get_weather"),
        UpstreamCall(0, arguments='{"a": [1]}', done=True),
    ]


def test_server_tool_blocks_mark_the_answer_native() -> None:
    reader = MessagesReader()
    block = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}}
    events = reader.feed({**WHOLE, "content": [block]})
    assert reader.has_native_tool_calls and not any(isinstance(e, UpstreamCall | RawText) for e in events)


def test_detection_of_bodies_events_and_route() -> None:
    assert kind_of(WHOLE) == "messages"
    assert all(kind_of(e) == "messages" for e in STREAM if e["type"] != "ping")
    assert kind_of({"type": "error", "error": {"type": "api_error", "message": "x"}}) is None
    assert kind_of({"type": "message", "role": "user", "content": []}) is None  # a request message, not an answer
    assert kind_of_route("/v1/messages") == "messages"
    assert kind_of_route("/anthropic/v1/messages?beta=true") == "messages"
    assert kind_of_route("/v1/threads/t_1/messages") is None
    assert kind_of_route("/v1/chat/completions/chatcmpl-1/messages") is None
    assert detect(WHOLE, route="/v1/messages") == "messages"
    assert detect(WHOLE, route="/v1/chat/completions") is None
    assert detect(None, route="/v1/messages") == "messages"
    assert isinstance(reader_for("messages"), MessagesReader)


def _through_parser(events: list[InboundEvent]) -> list[Event]:
    """What the middleware does with an Anthropic upstream's events, by hand: raw text through the
    dialect parser, the upstream's own calls past it (after closing the parser, so text comes first),
    then all through the request's policy (which renumbers the calls 0, 1, 2…)."""
    tools = [{"type": "function", "function": {"name": "get_weather"}}]
    parser = StreamParser("hermes", tools=tools)
    native = NativeCalls(index_base=1000)
    out: list[Event] = []
    for e in events:
        if isinstance(e, RawText):
            out += parser.feed_reasoning(e.text) if e.channel == "reasoning" else parser.feed(e.text)
        elif isinstance(e, UpstreamCall):
            if e.name is not None:
                out += parser.close()
                parser = StreamParser("hermes")
            out += native.feed(e)
    policy = PolicyFilter(tools)
    judged = policy.feed([*out, *parser.close()]) + policy.close()
    assert all(not isinstance(e, PolicyError) for e in judged)
    return [e for e in judged if not isinstance(e, PolicyError)]


def test_native_calls_reach_openai_chat_clients() -> None:
    events = _through_parser(read_stream(sse_bytes(STREAM), [5, 77, 300]))
    emitter = ChatStreamEmitter(UpstreamMeta(kind="messages", model="claude-x").to_upstream())
    completion = replay_chat(emitter.feed(events) + emitter.finish())
    choice = completion.choices[0]
    assert choice.message.content == "Checking Paris." and choice.finish_reason == "tool_calls"
    assert choice.message.reasoning_content == "Weather: use the tool ✓"  # type: ignore[attr-defined]
    (call,) = choice.message.tool_calls or []
    assert call.id == "toolu_01A" and call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Paris"}


def test_native_calls_reach_openai_responses_clients() -> None:
    reader = MessagesReader()
    events = _through_parser(reader.feed(WHOLE))
    emitter = ResponsesStreamEmitter(UpstreamMeta(kind="messages", model="claude-x").to_upstream())
    response = replay_responses(emitter.start() + emitter.feed(events) + emitter.finish())
    kinds = [item.type for item in response.output]
    assert kinds == ["reasoning", "message", "function_call"]
    call = response.output[2]
    assert call.type == "function_call" and call.call_id == "toolu_01A"
    assert json.loads(call.arguments) == {"city": "Paris"}


def test_native_call_without_arguments_is_an_empty_object() -> None:
    native = NativeCalls()
    out = native.feed(UpstreamCall(0, id="toolu_1", name="ping")) + native.feed(UpstreamCall(0, done=True))
    assert [type(e).__name__ for e in out] == ["ToolCallStart", "ToolCallDelta", "ToolCallEnd"]
    assert out[-1].arguments == "{}"  # type: ignore[union-attr]
