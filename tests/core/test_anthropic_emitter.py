"""The Anthropic Messages emitter against the official `anthropic` SDK: every streamed event and
every whole message validates against the SDK's own types, the SDK's client reads the SSE bytes
(`messages.stream()` and its final-message accumulator, `messages.create()` for whole bodies)
from a scripted endpoint, and for any event sequence the stream accumulates to the whole body."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping
from typing import Any

import anthropic
import httpx2
import pydantic
import pytest
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import Message, RawMessageStreamEvent
from anthropic.types.shared import ErrorResponse
from hypothesis import given, settings
from hypothesis import strategies as st

from toolcall_middleware import StreamParser, merge_events
from toolcall_middleware.core._events import (
    Event,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    TruncatedCall,
)
from toolcall_middleware.core._result import ParseResult, ToolCall
from toolcall_middleware.core.apis.messages import MessagesBuilder, MessagesStreamEmitter
from toolcall_middleware.core.apis.messages._emitter import anthropic_usage, message_id, tool_use_id
from toolcall_middleware.core.emitters import Upstream
from toolcall_middleware.core.framing.sse import encode_events

EVENT: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(RawMessageStreamEvent)
WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


def replay(events: list[dict[str, Any]]) -> Message:
    """Validate every event against the SDK's `RawMessageStreamEvent` and accumulate them with the
    SDK's own `accumulate_event`; check the frame order the SDK and the API guarantee."""
    assert events[0]["type"] == "message_start" and events[0]["message"]["content"] == []
    assert [e["type"] for e in events[-2:]] == ["message_delta", "message_stop"]
    snapshot = None
    bufs: dict[int, bytes] = {}
    open_index: int | None = None
    next_index = 0
    for event in events:
        typed = EVENT.validate_python(event)
        if event["type"] == "content_block_start":
            assert open_index is None and event["index"] == next_index
            open_index = event["index"]
        elif event["type"] == "content_block_delta":
            assert event["index"] == open_index
        elif event["type"] == "content_block_stop":
            assert event["index"] == open_index
            open_index, next_index = None, next_index + 1
        snapshot = accumulate_event(event=typed, current_snapshot=snapshot, json_bufs=bufs)
    assert open_index is None
    assert snapshot is not None
    return Message.model_validate(snapshot.model_dump())


def stream_of(events: list[Event], upstream: Upstream | None = None, **kw: Any) -> list[dict[str, Any]]:
    emitter = MessagesStreamEmitter(upstream or Upstream(model="m"), **kw)
    return emitter.start() + emitter.feed(events) + emitter.finish()


def client_for(handler: Callable[[httpx2.Request], httpx2.Response]) -> anthropic.Anthropic:
    transport = httpx2.MockTransport(handler)
    return anthropic.Anthropic(
        api_key="test", base_url="http://host.test", max_retries=0, http_client=httpx2.Client(transport=transport)
    )


def scripted_messages_endpoint(raw: str, *, dialect: str = "hermes", piece: int = 3) -> anthropic.Anthropic:
    """A `/v1/messages` endpoint whose model writes `raw`, parsed and emitted by our parts."""

    def handle(request: httpx2.Request) -> httpx2.Response:
        assert request.url.path == "/v1/messages"
        body = json.loads(request.content)
        tools = [{"type": "function", "function": {"name": t["name"]}} for t in body.get("tools", [])]
        parser = StreamParser(dialect, tools=tools or None)
        upstream = Upstream(model=body["model"], usage={"prompt_tokens": 11, "completion_tokens": 7})
        if body.get("stream"):
            emitter = MessagesStreamEmitter(upstream)
            events = emitter.start()
            for i in range(0, len(raw), piece):
                events += emitter.feed(parser.feed(raw[i : i + piece]))
            events += emitter.feed(parser.close()) + emitter.finish()
            return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=encode_events(events))
        result = merge_events(parser.feed(raw) + parser.close())
        return httpx2.Response(200, json=MessagesBuilder(upstream).build(result))

    return client_for(handle)


TOOL_TURN = (
    "<think>Paris, so the tool.</think>Let me check.<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "Paris", "days": [1, 2]}}\n</tool_call>'
)
ANTHROPIC_TOOLS: list[Any] = [{"name": "get_weather", "input_schema": {"type": "object"}}]


def test_sdk_stream_accumulates_a_tool_turn() -> None:
    client = scripted_messages_endpoint(TOOL_TURN, dialect="hermes")
    seen: list[str] = []
    with client.messages.stream(
        model="qwen3", max_tokens=64, messages=[{"role": "user", "content": "Weather?"}], tools=ANTHROPIC_TOOLS
    ) as stream:
        for event in stream:
            seen.append(event.type)
        final = stream.get_final_message()
    assert [b.type for b in final.content] == ["thinking", "text", "tool_use"]
    thinking, text, call = final.content
    assert thinking.type == "thinking" and thinking.thinking == "Paris, so the tool."
    assert text.type == "text" and text.text == "Let me check."
    assert call.type == "tool_use" and call.name == "get_weather" and call.input == {"city": "Paris", "days": [1, 2]}
    assert call.id.startswith("toolu_") and len(call.id) == 30 and call.id[6:].isalnum()
    assert final.stop_reason == "tool_use" and final.stop_sequence is None
    assert final.usage.input_tokens == 11 and final.usage.output_tokens == 7
    assert final.id.startswith("msg_") and final.model == "qwen3"
    assert "input_json" in seen and "thinking" in seen  # the SDK's derived events fired


def test_sdk_create_reads_the_whole_message() -> None:
    client = scripted_messages_endpoint(TOOL_TURN, dialect="hermes")
    message = client.messages.create(
        model="qwen3", max_tokens=64, messages=[{"role": "user", "content": "Weather?"}], tools=ANTHROPIC_TOOLS
    )
    assert [b.type for b in message.content] == ["thinking", "text", "tool_use"]
    assert message.content[2].type == "tool_use" and message.content[2].input == {"city": "Paris", "days": [1, 2]}
    assert message.stop_reason == "tool_use" and message.usage.output_tokens == 7


def test_sdk_text_stream_and_end_turn() -> None:
    client = scripted_messages_endpoint("Hello, plain answer.")
    with client.messages.stream(model="m", max_tokens=8, messages=[{"role": "user", "content": "hi"}]) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "Hello, plain answer." and final.stop_reason == "end_turn"
    assert [b.type for b in final.content] == ["text"]


def test_cut_off_call_is_max_tokens_and_never_a_call() -> None:
    events = [TextDelta("Sure."), TruncatedCall('<tool_call>{"name": "get_weather", "argu')]
    final = replay(stream_of(events))
    assert final.stop_reason == "max_tokens" and [b.type for b in final.content] == ["text"]
    whole = MessagesBuilder(Upstream(model="m")).build(merge_events(events))
    assert Message.model_validate(whole).stop_reason == "max_tokens"


def test_upstream_length_is_max_tokens() -> None:
    final = replay(stream_of([TextDelta("abc")], Upstream(model="m", finish_reason="length")))
    assert final.stop_reason == "max_tokens"


def test_several_calls_get_their_own_blocks_and_ids() -> None:
    events: list[Event] = [
        ToolCallStart(0, None, "a"),
        ToolCallDelta(0, '{"x":'),
        ToolCallDelta(0, " 1}"),
        ToolCallEnd(0, '{"x": 1}'),
        ToolCallStart(1, "functions.b:1", "b"),
        ToolCallEnd(1, '{"y": "z"}'),  # no fragment: the end carries all of it
    ]
    out = stream_of(events)
    final = replay(out)
    assert [(b.type, getattr(b, "name", None), getattr(b, "input", None)) for b in final.content] == [
        ("tool_use", "a", {"x": 1}),
        ("tool_use", "b", {"y": "z"}),
    ]
    ids = [b.id for b in final.content if b.type == "tool_use"]
    assert len(set(ids)) == 2 and all(i.startswith("toolu_") for i in ids)
    starts = [e for e in out if e["type"] == "content_block_start"]
    assert [s["index"] for s in starts] == [0, 1] and all(s["content_block"]["input"] == {} for s in starts)


def test_an_upstream_toolu_id_is_kept() -> None:
    assert tool_use_id("toolu_01AbC") == "toolu_01AbC"
    assert tool_use_id("call_123").startswith("toolu_") and tool_use_id(None) != tool_use_id(None)


def test_thinking_block_validates_without_a_signature_delta() -> None:
    out = stream_of([ReasoningDelta("hmm"), TextDelta("ok")])
    assert not any(e.get("delta", {}).get("type") == "signature_delta" for e in out)
    start = next(e for e in out if e["type"] == "content_block_start")
    assert start["content_block"] == {"type": "thinking", "thinking": "", "signature": ""}
    assert replay(out).content[0].type == "thinking"


def test_reasoning_can_be_left_out() -> None:
    final = replay(stream_of([ReasoningDelta("hidden"), TextDelta("shown")], reasoning=False))
    assert [b.type for b in final.content] == ["text"]
    whole = MessagesBuilder(Upstream(model="m"), reasoning=False).build(ParseResult("shown", "hidden"))
    assert [b["type"] for b in whole["content"]] == ["text"]


def test_empty_answer_still_a_valid_stream_and_message() -> None:
    final = replay(stream_of([]))
    assert final.content == [] and final.stop_reason == "end_turn"
    Message.model_validate(MessagesBuilder(Upstream(model="m")).build(ParseResult(None, None)))


def test_fail_is_an_error_event_the_sdk_raises() -> None:
    emitter = MessagesStreamEmitter(Upstream(model="m"))
    events = emitter.start() + emitter.feed([TextDelta("partial")]) + emitter.fail("tool 'x' is not offered")
    assert events[-1] == {"type": "error", "error": {"type": "api_error", "message": "tool 'x' is not offered"}}
    ErrorResponse.model_validate(events[-1])
    assert emitter.finish() == [] and emitter.feed([TextDelta("more")]) == []
    data = encode_events(events)

    def handle(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=data)

    client = client_for(handle)
    with pytest.raises(anthropic.APIStatusError, match="is not offered"):
        with client.messages.stream(model="m", max_tokens=8, messages=[{"role": "user", "content": "x"}]) as stream:
            stream.until_done()


def test_sse_frames_carry_event_lines() -> None:
    data = encode_events(stream_of([TextDelta("hi")]))
    frames = data.decode().split("\n\n")[:-1]
    for frame in frames:
        event_line, data_line = frame.split("\n")
        assert event_line.removeprefix("event: ") == json.loads(data_line.removeprefix("data: "))["type"]


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (None, (0, 0, 0)),
        ({"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14}, (10, 4, 0)),
        ({"prompt_tokens": 10, "completion_tokens": 4, "prompt_tokens_details": {"cached_tokens": 6}}, (4, 4, 6)),
        ({"input_tokens": 9, "output_tokens": 3, "input_tokens_details": {"cached_tokens": 2}}, (7, 3, 2)),
        (
            {"input_tokens": 5, "output_tokens": 2, "cache_read_input_tokens": 8, "cache_creation_input_tokens": 1},
            (5, 2, 8),
        ),
    ],
)
def test_usage_mapping(usage: Mapping[str, Any] | None, expected: tuple[int, int, int]) -> None:
    out = anthropic_usage(usage)
    assert (out["input_tokens"], out["output_tokens"], out["cache_read_input_tokens"]) == expected
    final = replay(stream_of([TextDelta("x")], Upstream(model="m", usage=usage)))
    assert (final.usage.input_tokens, final.usage.output_tokens, final.usage.cache_read_input_tokens) == expected


def test_message_ids() -> None:
    assert message_id("msg_abc") == "msg_abc"
    assert message_id("chatcmpl-XYZ") == "msg_XYZ"
    assert Upstream().id.startswith("chatcmpl-") and message_id(Upstream().id).startswith("msg_")


# -- stream == whole -----------------------------------------------------------------------

_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8)
_args = st.dictionaries(st.sampled_from(["a", "b", "city"]), st.integers() | st.text(max_size=5), max_size=3)


@st.composite
def event_sequences(draw: st.DrawFn) -> list[Event]:
    """Parser-shaped event sequences: text and reasoning runs, complete calls (their arguments
    in arbitrary fragments), maybe a cut-off call at the end."""
    events: list[Event] = []
    calls = 0
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["text", "reasoning", "call"]))
        if kind == "text":
            events.append(TextDelta(draw(_text)))
        elif kind == "reasoning":
            events.append(ReasoningDelta(draw(_text)))
        else:
            arguments = json.dumps(draw(_args))
            cuts = sorted(draw(st.sets(st.integers(1, max(1, len(arguments) - 1)), max_size=4)))
            events.append(ToolCallStart(calls, None, draw(st.sampled_from(["f", "get_weather", "g_2"]))))
            bounds = [0, *cuts, len(arguments)]
            events.extend(ToolCallDelta(calls, arguments[a:b]) for a, b in itertools.pairwise(bounds) if a < b)
            events.append(ToolCallEnd(calls, arguments))
            calls += 1
    if draw(st.booleans()):
        events.append(TruncatedCall("<tool_call>{"))
    return events


def _blocks(message: Message) -> list[tuple[str, Any]]:
    """Each block's substance; adjacent text (or thinking) blocks merged, as the whole builder has
    one of each (a stream alternating text and reasoning has several)."""
    out: list[tuple[str, Any]] = []
    for block in message.content:
        if block.type == "tool_use":
            out.append(("tool_use", (block.name, block.input)))
        elif block.type in ("text", "thinking"):
            value = block.text if block.type == "text" else block.thinking
            out.append((block.type, value))
    return out


@settings(max_examples=150, deadline=None)
@given(event_sequences())
def test_stream_accumulates_to_the_whole_message(events: list[Event]) -> None:
    streamed = replay(stream_of(events))
    whole = Message.model_validate(MessagesBuilder(Upstream(model="m")).build(merge_events(events)))
    assert streamed.stop_reason == whole.stop_reason
    s_blocks, w_blocks = _blocks(streamed), _blocks(whole)
    for kind in ("text", "thinking"):
        joined = "".join(v for k, v in s_blocks if k == kind)
        assert joined == "".join(v for k, v in w_blocks if k == kind)
    assert [v for k, v in s_blocks if k == "tool_use"] == [v for k, v in w_blocks if k == "tool_use"]
    if any(isinstance(e, ToolCallEnd) for e in events):
        assert streamed.stop_reason == "tool_use"
    elif events and isinstance(events[-1], TruncatedCall):
        assert streamed.stop_reason == "max_tokens"
    else:
        assert streamed.stop_reason == "end_turn"


def test_whole_builder_message_validates() -> None:
    result = ParseResult("Answer", "thought", [ToolCall("f", '{"a": 1}', "toolu_keep"), ToolCall("g", "")])
    body = MessagesBuilder(Upstream(model="m", usage={"prompt_tokens": 3, "completion_tokens": 2})).build(result)
    message = Message.model_validate(body)
    assert body["type"] == "message" and body["role"] == "assistant" and body["stop_sequence"] is None
    assert [b.type for b in message.content] == ["thinking", "text", "tool_use", "tool_use"]
    assert body["content"][2]["id"] == "toolu_keep" and body["content"][3]["input"] == {}
    assert message.usage.input_tokens == 3 and message.stop_reason == "tool_use"


def test_streamed_parser_output_matches_the_sdk_on_every_dialect_sample() -> None:
    samples = {
        "hermes": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>',
        "mistral": '[TOOL_CALLS]get_weather[ARGS]{"city": "Oslo"}',
        "kimi_k2": "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
        '{"city": "Oslo"}<|tool_call_end|><|tool_calls_section_end|>',
    }
    for dialect, raw in samples.items():
        parser = StreamParser(dialect, tools=WEATHER)
        events = [e for ch in raw for e in parser.feed(ch)] + parser.close()
        final = replay(stream_of(events))
        call = final.content[-1]
        assert call.type == "tool_use" and call.input == {"city": "Oslo"}, dialect
        assert final.stop_reason == "tool_use"
