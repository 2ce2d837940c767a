"""Inbound readers: upstream Chat chunks and bodies, Responses events and objects, legacy completions
-> raw text by channel and choice, plus metadata. Every upstream object built here validates
against the official openai types first (except the shapes OpenAI's types do not have, which are
marked), and any split of the raw text comes back exactly, in order."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types import Completion
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent

from tests.wire import replay_responses
from toolcall_middleware import ReasoningDelta, StreamParser, TextDelta, merge_events
from toolcall_middleware.core._detect import detect, kind_of, kind_of_route, reader_for
from toolcall_middleware.core._result import ParseResult
from toolcall_middleware.core.apis.chat import ChatMessageBuilder, ChatReader
from toolcall_middleware.core.apis.completions import CompletionsReader
from toolcall_middleware.core.apis.responses import ResponsesReader, ResponsesStreamEmitter
from toolcall_middleware.core.framing.sse import SSEDecoder, encode_chat, encode_events
from toolcall_middleware.core.inbound import (
    DONE,
    InboundEvent,
    RawText,
    Reader,
    Unrecognized,
    UpstreamCall,
    UpstreamDone,
    UpstreamError,
    UpstreamMeta,
)

EVENT = pydantic.TypeAdapter[Any](ResponseStreamEvent)
T0 = 1_727_346_165


# -- builders of upstream objects (each validated against the openai types) ----------------------


def chunk(choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    obj = {
        "id": "chatcmpl-up",
        "object": "chat.completion.chunk",
        "created": T0,
        "model": "qwen3-8b",
        "system_fingerprint": "fp_up",
        "service_tier": "default",
        "choices": choices,
        **extra,
    }
    ChatCompletionChunk.model_validate(obj)
    return obj


def delta(index: int = 0, finish: str | None = None, **fields: Any) -> dict[str, Any]:
    return {"index": index, "delta": fields, "logprobs": None, "finish_reason": finish}


def usage_chunk() -> dict[str, Any]:
    return chunk([], usage={"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12})


def chat_body(messages: list[dict[str, Any]], finishes: list[str] | None = None) -> dict[str, Any]:
    finishes = finishes or ["stop"] * len(messages)
    body = {
        "id": "chatcmpl-whole",
        "object": "chat.completion",
        "created": T0,
        "model": "qwen3-8b",
        "choices": [
            {"index": i, "message": {"role": "assistant", **m}, "logprobs": None, "finish_reason": f}
            for i, (m, f) in enumerate(zip(messages, finishes, strict=True))
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
    }
    ChatCompletion.model_validate(body)
    return body


def completion(choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    obj = {"id": "cmpl-up", "object": "text_completion", "created": T0, "model": "gpt-3.5-turbo-instruct"}
    obj.update(choices=choices, **extra)
    # The SDK's `Completion` is the whole-body type (finish_reason required); its stream chunks carry
    # `finish_reason: null` until the end, and the SDK builds them without validating that field.
    Completion.model_validate(
        {**obj, "choices": [{**c, "finish_reason": c["finish_reason"] or "stop"} for c in choices]}
    )
    return obj


def ctext(text: str, index: int = 0, finish: str | None = None) -> dict[str, Any]:
    return {"index": index, "text": text, "logprobs": None, "finish_reason": finish}


def response_obj(status: str, output: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    body = {
        "id": "resp_up",
        "object": "response",
        "created_at": 1_756_000_000.5,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": "be brief",
        "model": "gpt-oss-20b",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}, "strict": False}],
        "metadata": {"k": "v"},
        "service_tier": "default",
        "usage": None,
        **extra,
    }
    Response.model_validate(body)
    return body


def r_usage() -> dict[str, Any]:
    return {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": 20,
        "output_tokens_details": {"reasoning_tokens": 5},
        "total_tokens": 30,
    }


def msg_item(text: str, status: str = "completed", item_id: str = "msg_1") -> dict[str, Any]:
    part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
    return {"id": item_id, "type": "message", "role": "assistant", "status": status, "content": [part]}


def rs_item(text: str, item_id: str = "rs_1") -> dict[str, Any]:
    return {"id": item_id, "type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": text}]}


def events(*objs: dict[str, Any]) -> list[dict[str, Any]]:
    """Number the events 0, 1, 2… and validate each against `ResponseStreamEvent`."""
    out = [{**o, "sequence_number": n} for n, o in enumerate(objs)]
    for event in out:
        EVENT.validate_python(event)
    return out


# -- helpers over reader output ------------------------------------------------------------------


def run(reader: Reader, objs: list[Any], *, flush: bool = True) -> list[InboundEvent]:
    out: list[InboundEvent] = []
    for obj in objs:
        out.extend(reader.feed(obj))
    if flush:
        out.extend(reader.flush())
    return out


def texts(out: list[InboundEvent], channel: str = "content", choice: int = 0) -> str:
    return "".join(e.text for e in out if isinstance(e, RawText) and e.channel == channel and e.choice == choice)


def one(out: list[InboundEvent], kind: type[Any]) -> Any:
    found = [e for e in out if isinstance(e, kind)]
    assert len(found) == 1, out
    return found[0]


def check_order(out: list[InboundEvent]) -> None:
    """The contract: one meta before any text and the end; one end, last; no empty text."""
    kinds = [type(e) for e in out if not isinstance(e, UpstreamError | Unrecognized)]
    assert kinds.count(UpstreamMeta) == 1 and kinds[0] is UpstreamMeta
    assert kinds.count(UpstreamDone) == 1 and kinds[-1] is UpstreamDone
    assert all(e.text for e in out if isinstance(e, RawText))


# -- Chat Completions ----------------------------------------------------------------------------


def test_chat_stream_text_meta_usage_and_done() -> None:
    objs = [
        chunk([delta(role="assistant", content="", refusal=None)]),
        chunk([delta(content="Hel")]),
        chunk([delta(content="lo")]),
        chunk([delta(finish="stop")]),
        usage_chunk(),
        DONE,
    ]
    out = run(ChatReader(), objs, flush=False)
    check_order(out)
    assert [e.text for e in out if isinstance(e, RawText)] == ["Hel", "lo"]
    meta = one(out, UpstreamMeta)
    assert (meta.kind, meta.id, meta.model, meta.created) == ("chat", "chatcmpl-up", "qwen3-8b", T0)
    assert (meta.system_fingerprint, meta.service_tier) == ("fp_up", "default")
    done = one(out, UpstreamDone)
    assert done.finish_reason == "stop" and done.complete
    assert done.usage == {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12}
    assert done.finish_reasons == {0: "stop"}


def test_chat_reasoning_fields_and_both_names() -> None:
    objs = [
        chunk([delta(role="assistant", reasoning_content="think ")]),
        chunk([delta(reasoning="more ")]),  # vLLM 0.19+, Ollama
        chunk([delta(reasoning_content="same", reasoning="same")]),  # a host sending both names
        chunk([delta(reasoning_content="r", content="c")]),  # both channels in one delta: reasoning first
        chunk([delta(content="!", finish="stop")]),
        DONE,
    ]
    out = run(ChatReader(), objs)
    assert texts(out, "reasoning") == "think more samer"
    assert texts(out) == "c!"
    raw = [(e.channel, e.text) for e in out if isinstance(e, RawText)]
    assert raw[-3:] == [("reasoning", "r"), ("content", "c"), ("content", "!")]


def test_chat_whole_raw_stream_in_the_reasoning_field_still_yields_the_call() -> None:
    """Some hosts put the whole raw output, tool-call tokens included, in `reasoning_content`."""
    raw = 'plan</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    objs: list[Any] = [chunk([delta(role="assistant")])]
    objs += [chunk([delta(reasoning_content=raw[i : i + 5])]) for i in range(0, len(raw), 5)]
    objs += [chunk([delta(finish="stop")]), DONE]
    out = run(ChatReader(), objs)
    assert texts(out, "reasoning") == raw and texts(out) == ""
    result = feed_parser(out, model="Qwen/Qwen3-8B")
    assert result.reasoning == "plan"
    assert [(c.name, json.loads(c.arguments)) for c in result.tool_calls] == [("get_weather", {"city": "Paris"})]


def feed_parser(out: list[InboundEvent], choice: int = 0, **kwargs: Any) -> ParseResult:
    parser = StreamParser(**kwargs)
    parsed = []
    for e in out:
        if isinstance(e, RawText) and e.choice == choice:
            parsed += parser.feed(e.text) if e.channel == "content" else parser.feed_reasoning(e.text)
    return merge_events(parsed + parser.close())


def test_chat_empty_deltas_and_nulls_give_no_text() -> None:
    objs = [
        chunk([delta(role="assistant", content=None)]),
        chunk([delta()]),
        chunk([delta(content="")]),
        chunk([delta(content=None, reasoning_content=None, tool_calls=[])]),  # `tool_calls: []` is no call
        chunk([delta(finish="length")]),
        DONE,
    ]
    reader = ChatReader()
    out = run(reader, objs)
    check_order(out)
    assert not [e for e in out if isinstance(e, RawText)]
    assert one(out, UpstreamDone).finish_reason == "length"
    assert not reader.has_native_tool_calls


def test_chat_n_greater_than_one_keeps_every_choice_apart() -> None:
    objs = [
        chunk([delta(0, role="assistant", content=""), delta(1, role="assistant", content="")]),
        chunk([delta(1, content="<tool_call>\n{")]),
        chunk([delta(0, content="Hi")]),
        chunk([delta(1, content='"name": "f", "arguments": {}}\n</tool_call>')]),
        chunk([delta(0, content=" there", finish="stop")]),
        chunk([delta(1, finish="stop")]),
        usage_chunk(),
        DONE,
    ]
    out = run(ChatReader(), objs)
    check_order(out)
    assert texts(out, choice=0) == "Hi there"
    assert feed_parser(out, choice=1, dialect="hermes").tool_calls[0].name == "f"
    done = one(out, UpstreamDone)
    assert done.finish_reasons == {0: "stop", 1: "stop"} and done.finish_reason == "stop"


def test_chat_whole_body_with_choices_reasoning_and_usage() -> None:
    body = chat_body(
        [{"content": "a", "reasoning_content": "r0"}, {"content": "b", "reasoning": "r1"}],
        ["stop", "length"],
    )
    out = run(ChatReader(), [body], flush=False)
    check_order(out)
    assert [(e.choice, e.channel, e.text) for e in out if isinstance(e, RawText)] == [
        (0, "reasoning", "r0"),
        (0, "content", "a"),
        (1, "reasoning", "r1"),
        (1, "content", "b"),
    ]
    done = one(out, UpstreamDone)
    assert done.finish_reasons == {0: "stop", 1: "length"} and done.usage == body["usage"]


def test_chat_content_part_lists() -> None:
    """Content as a list of parts: Mistral's API (magistral) writes reasoning as `thinking` parts.
    OpenAI's response types only have string content, so these bodies are checked without it."""
    parts = [
        {"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]},
        {"type": "text", "text": "one "},
        {"type": "image_url", "image_url": {"url": "data:,"}},
        {"type": "text", "text": "two"},
    ]
    body = chat_body([{"content": None}])
    body["choices"][0]["message"]["content"] = parts
    out = run(ChatReader(), [body])
    assert texts(out, "reasoning") == "hmm" and texts(out) == "one two"

    streamed = chunk([delta(role="assistant")])
    later = {
        **streamed,
        "choices": [delta(content=[{"type": "text", "text": "x"}, {"type": "thinking", "thinking": "y"}])],
    }
    reader = ChatReader()
    out = run(reader, [streamed, later, DONE])
    assert texts(out) == "x" and texts(out, "reasoning") == "y"
    refusal = {**streamed, "choices": [delta(content=[{"type": "refusal", "refusal": "no"}])]}
    reader = ChatReader()
    run(reader, [refusal])
    assert reader.has_refusal


@pytest.mark.parametrize(
    "message",
    [
        {
            "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
        },
        {"content": None, "function_call": {"name": "f", "arguments": "{}"}},
    ],
)
def test_chat_native_tool_calls_are_detected_in_bodies(message: dict[str, Any]) -> None:
    reader = ChatReader()
    run(reader, [chat_body([message], ["tool_calls"])])
    assert reader.has_native_tool_calls


def test_chat_native_tool_calls_are_detected_in_streams() -> None:
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": ""}}
    reader = ChatReader()
    reader.feed(chunk([delta(role="assistant", content="")]))
    assert not reader.has_native_tool_calls
    reader.feed(chunk([delta(tool_calls=[call])]))
    assert reader.has_native_tool_calls


def test_chat_refusal_field() -> None:
    reader = ChatReader()
    run(reader, [chunk([delta(role="assistant", refusal="I can't")]), DONE])
    assert reader.has_refusal


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            {"error": {"message": "bad", "type": "invalid_request_error", "code": "x", "param": "messages"}},
            ("bad", "invalid_request_error", "x", "messages"),
        ),
        (
            {"error": {"message": "overloaded", "code": 503, "type": "unavailable_error"}},
            ("overloaded", "unavailable_error", "503", None),
        ),
        ({"error": "context length exceeded"}, ("context length exceeded", None, None, None)),
    ],
)
def test_chat_error_objects_are_a_signal_not_text(obj: dict[str, Any], expected: tuple[Any, ...]) -> None:
    reader = ChatReader()
    out = run(reader, [chunk([delta(role="assistant", content="par")]), obj, DONE])
    error = one(out, UpstreamError)
    assert (error.message, error.type, error.code, error.param) == expected
    assert error.body == obj
    assert texts(out) == "par"  # the error carries no text
    assert kind_of(obj) is None and detect(obj, route="/v1/chat/completions") is None


def test_chat_error_chunk_with_choices_is_an_error() -> None:
    """Our own error chunk (and vLLM's) carry `choices` next to `error`: openai-python raises on it."""
    obj = {**chunk([delta(finish="stop")]), "error": {"message": "boom", "type": "server_error"}}
    assert isinstance(one(ChatReader().feed(obj), UpstreamError), UpstreamError)


def test_chat_foreign_chunks_are_handed_back() -> None:
    azure = {
        "choices": [],
        "created": 0,
        "id": "",
        "model": "",
        "object": "",
        "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}],
    }
    reader = ChatReader()
    out = run(reader, [azure, chunk([delta(role="assistant", content="x", finish="stop")]), DONE, "late", [1]])
    assert [e.obj for e in out if isinstance(e, Unrecognized)] == [azure, "late", [1]]
    assert one(out, UpstreamMeta).id == "chatcmpl-up"  # the meta is not taken from the foreign chunk
    late = chunk([delta(content="after")])
    assert reader.feed(late) == [Unrecognized(late)]  # nothing follows the end: handed back, not dropped


def test_chat_stream_without_done_ends_incomplete_at_flush() -> None:
    reader = ChatReader()
    out = run(reader, [chunk([delta(role="assistant", content="cut")])])
    check_order(out)
    done = one(out, UpstreamDone)
    assert not done.complete and done.finish_reason is None and done.finish_reasons == {0: None}
    assert reader.flush() == []


def test_empty_body_still_gives_meta_and_done() -> None:
    out = ChatReader().flush()
    check_order(out)
    assert out[0] == UpstreamMeta(kind="chat") and not one(out, UpstreamDone).complete


def test_chat_without_object_field_is_judged_by_shape() -> None:
    obj = {"id": "x", "model": "m", "created": T0, "choices": [{"index": 0, "delta": {"content": "hi"}}]}
    assert kind_of(obj) == "chat"
    assert texts(ChatReader().feed(obj)) == "hi"
    whole = {"id": "x", "model": "m", "created": T0, "choices": [{"index": 0, "message": {"content": "hey"}}]}
    assert kind_of(whole) == "chat" and texts(ChatReader().feed(whole)) == "hey"


def test_chat_through_the_sse_decoder() -> None:
    objs = [chunk([delta(role="assistant", content="a\u2028b")]), chunk([delta(content="c", finish="stop")])]
    data = encode_chat(objs, done=True)
    decoder, reader = SSEDecoder(), ChatReader()
    out: list[InboundEvent] = []
    for i in range(len(data)):  # one byte at a time
        for ev in decoder.feed(data[i : i + 1]):
            assert ev.data is not None
            out += reader.feed(ev.data if ev.data == DONE else json.loads(ev.data))
    out += reader.flush()
    assert texts(out) == "a\u2028bc" and one(out, UpstreamDone).complete


def test_meta_and_done_feed_the_emitters() -> None:
    out = run(ChatReader(), [chat_body([{"content": "hi"}], ["length"])])
    meta, done = one(out, UpstreamMeta), one(out, UpstreamDone)
    upstream = meta.to_upstream(done)
    assert (upstream.id, upstream.model, upstream.created, upstream.finish_reason) == (
        "chatcmpl-whole",
        "qwen3-8b",
        T0,
        "length",
    )
    body = ChatMessageBuilder(upstream).build(ParseResult(content="hi", reasoning=None))
    completion_ = ChatCompletion.model_validate(body)
    assert completion_.choices[0].finish_reason == "length" and completion_.usage is not None
    assert completion_.usage.total_tokens == 7
    bare = UpstreamMeta(kind="chat").to_upstream()
    assert bare.id.startswith("chatcmpl-") and bare.model == "unknown" and bare.created > T0


# -- legacy completions --------------------------------------------------------------------------


def test_completions_stream_with_choices_usage_and_done() -> None:
    objs = [
        completion([ctext("Hel", 0), ctext("A", 1)]),
        completion([ctext("lo", 0, "stop")]),
        completion([ctext("B", 1, "length")]),
        completion([], usage={"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}),
        DONE,
    ]
    out = run(CompletionsReader(), objs, flush=False)
    check_order(out)
    assert texts(out, choice=0) == "Hello" and texts(out, choice=1) == "AB"
    done = one(out, UpstreamDone)
    assert done.finish_reasons == {0: "stop", 1: "length"} and done.usage == {
        "prompt_tokens": 1,
        "completion_tokens": 2,
        "total_tokens": 3,
    }
    meta = one(out, UpstreamMeta)
    assert (meta.kind, meta.id, meta.model) == ("completions", "cmpl-up", "gpt-3.5-turbo-instruct")


def test_completions_whole_body() -> None:
    body = completion(
        [ctext("whole", 0, "stop")], usage={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    )
    reader = reader_for("completions", stream=False)
    out = reader.feed(body)
    check_order(out)
    assert texts(out) == "whole" and one(out, UpstreamDone).complete
    assert reader.flush() == []


def test_completions_errors_and_foreign_objects() -> None:
    out = run(CompletionsReader(), [{"error": {"message": "nope"}}, chunk([delta(content="x")]), DONE])
    assert one(out, UpstreamError).message == "nope"
    assert len([e for e in out if isinstance(e, Unrecognized)]) == 1


# -- Responses API -------------------------------------------------------------------------------


def stream_of(segments: list[tuple[str, str]], status: str = "completed") -> list[dict[str, Any]]:
    """A Responses stream as a raw-text host writes it: an item per run of one channel, one delta
    per segment (drawn by our emitter, replayed through the SDK's accumulator)."""
    emitter = ResponsesStreamEmitter(
        UpstreamMeta(kind="responses", id="resp_up", model="gpt-oss-20b", created=T0).to_upstream(
            UpstreamDone(finish_reason="length" if status == "incomplete" else "stop", usage=r_usage())
        )
    )
    out = emitter.start()
    for channel, text in segments:
        out += emitter.feed([TextDelta(text) if channel == "content" else ReasoningDelta(text)])
    out += emitter.finish()
    replay_responses(out)
    return out


def test_responses_stream_text_reasoning_and_meta() -> None:
    objs = stream_of([("reasoning", "th"), ("reasoning", "ink"), ("content", "Hel"), ("content", "lo")])
    reader = ResponsesReader()
    out = run(reader, objs, flush=False)
    check_order(out)
    assert [(e.channel, e.text) for e in out if isinstance(e, RawText)] == [
        ("reasoning", "th"),
        ("reasoning", "ink"),
        ("content", "Hel"),
        ("content", "lo"),
    ]  # each once, though the done events repeat it four times
    meta = one(out, UpstreamMeta)
    assert (meta.kind, meta.id, meta.model, meta.created, meta.created_at) == (
        "responses",
        "resp_up",
        "gpt-oss-20b",
        T0,
        float(T0),
    )
    assert meta.response is not None and meta.response["tool_choice"] == "auto"
    done = one(out, UpstreamDone)
    assert done.finish_reason == "stop" and done.complete and done.usage is not None
    assert done.usage["total_tokens"] == 30
    assert not reader.has_native_tool_calls


def test_responses_incomplete_maps_to_length() -> None:
    out = run(ResponsesReader(), stream_of([("content", "cut")], status="incomplete"))
    assert texts(out) == "cut" and one(out, UpstreamDone).finish_reason == "length"


@pytest.mark.parametrize(
    ("status", "details", "reason"),
    [
        ("completed", None, "stop"),
        ("incomplete", {"reason": "max_output_tokens"}, "length"),
        ("incomplete", {"reason": "content_filter"}, "content_filter"),
        ("cancelled", None, None),
    ],
)
def test_responses_whole_object_status_to_finish_reason(status: str, details: Any, reason: str | None) -> None:
    body = response_obj(status, [rs_item("why"), msg_item("ans")], incomplete_details=details, usage=r_usage())
    out = run(ResponsesReader(), [body], flush=False)
    check_order(out)
    assert [(e.channel, e.text) for e in out if isinstance(e, RawText)] == [("reasoning", "why"), ("content", "ans")]
    done = one(out, UpstreamDone)
    assert done.finish_reason == reason and done.usage == r_usage()
    meta = one(out, UpstreamMeta)
    assert meta.id == "resp_up" and meta.created_at == 1_756_000_000.5 and meta.created == 1_756_000_000
    assert meta.response is not None
    assert meta.response["instructions"] == "be brief" and meta.response["metadata"] == {"k": "v"}
    assert "output" not in meta.response and "usage" not in meta.response


def test_responses_whole_object_with_a_function_call_is_native() -> None:
    call = {
        "id": "fc_1",
        "type": "function_call",
        "call_id": "call_1",
        "name": "f",
        "arguments": "{}",
        "status": "completed",
    }
    reader = ResponsesReader()
    out = run(reader, [response_obj("completed", [msg_item("x"), call])])
    assert reader.has_native_tool_calls and one(out, UpstreamDone).finish_reason == "tool_calls"


def test_responses_stream_with_native_function_call_events() -> None:
    created = response_obj("in_progress", [])
    call = {
        "id": "fc_1",
        "type": "function_call",
        "call_id": "call_1",
        "name": "f",
        "arguments": "",
        "status": "in_progress",
    }
    objs = events(
        {"type": "response.created", "response": created},
        {"type": "response.output_item.added", "output_index": 0, "item": call},
    )
    reader = ResponsesReader()
    run(reader, objs, flush=False)
    assert reader.has_native_tool_calls
    reader = ResponsesReader()
    run(
        reader,
        events({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": "{"}),
    )
    assert reader.has_native_tool_calls


def test_responses_native_function_calls_come_out_as_upstream_calls_once() -> None:
    """The host's own call: its start (with the `call_id` the client answers with), the argument
    deltas, what the done values add, one end; the terminal response repeats nothing."""
    call = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "f", "arguments": ""}
    done = {**call, "arguments": '{"a": 12}', "status": "completed"}
    objs = events(
        {"type": "response.created", "response": response_obj("in_progress", [])},
        {"type": "response.output_item.added", "output_index": 0, "item": call},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": '{"a": 1'},
        {"type": "response.output_item.done", "output_index": 0, "item": done},
        {"type": "response.completed", "response": response_obj("completed", [done])},
    )
    out = run(ResponsesReader(), objs)
    calls = [e for e in out if isinstance(e, UpstreamCall)]
    assert calls == [
        UpstreamCall(index=0, id="call_1", name="f"),
        UpstreamCall(index=0, arguments='{"a": 1'),
        UpstreamCall(index=0, arguments="2}", done=True),
    ]
    assert one(out, UpstreamDone).finish_reason == "tool_calls"
    whole = [e for e in run(ResponsesReader(), [response_obj("completed", [done])]) if isinstance(e, UpstreamCall)]
    assert whole == [
        UpstreamCall(index=0, id="call_1", name="f"),
        UpstreamCall(index=0, arguments='{"a": 12}', done=True),
    ]


def test_chat_native_tool_calls_come_out_as_upstream_calls_ended_by_the_finish() -> None:
    """A host's streamed `tool_calls` (two calls, arguments in pieces; the legacy `function_call`
    too) and a whole message's: each call starts once with its id and name and ends once, at the
    choice's finish or, without one, at the end of the stream."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {"object": "chat.completion.chunk", "choices": [choice]}

    first = {"index": 0, "id": "call_a", "function": {"name": "f", "arguments": '{"x"'}}
    objs = [
        chunk({"role": "assistant", "tool_calls": [first]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "call_b", "function": {"name": "g", "arguments": "{}"}}]}),
        chunk({}, "tool_calls"),
    ]
    calls = [e for e in run(ChatReader(), objs) if isinstance(e, UpstreamCall)]
    assert calls == [
        UpstreamCall(index=0, id="call_a", name="f", arguments='{"x"'),
        UpstreamCall(index=0, arguments=": 1}"),
        UpstreamCall(index=1, id="call_b", name="g", arguments="{}"),
        UpstreamCall(index=0, done=True),
        UpstreamCall(index=1, done=True),
    ]
    cut = [e for e in run(ChatReader(), objs[:1]) if isinstance(e, UpstreamCall)]  # no finish, no [DONE]
    assert cut[-1] == UpstreamCall(index=0, done=True)
    legacy = [chunk({"function_call": {"name": "f", "arguments": ""}}), chunk({"function_call": {"arguments": "{}"}})]
    assert [e for e in run(ChatReader(), legacy) if isinstance(e, UpstreamCall)] == [
        UpstreamCall(index=0, name="f"),
        UpstreamCall(index=0, arguments="{}"),
        UpstreamCall(index=0, done=True),
    ]
    made = [{"id": "call_a", "function": {"name": "f", "arguments": "{}"}}]
    message = {"role": "assistant", "content": None, "tool_calls": made}
    whole = {"object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}
    assert [e for e in run(ChatReader(), [whole]) if isinstance(e, UpstreamCall)] == [
        UpstreamCall(index=0, id="call_a", name="f", arguments="{}", done=True)
    ]


def test_responses_text_only_in_done_events_or_final_output_is_read_once() -> None:
    """Hosts that skip deltas (litellm#27144's shape): the done values carry the text."""
    created = response_obj("in_progress", [])
    only_done = events(
        {"type": "response.created", "response": created},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**msg_item(""), "content": [], "status": "in_progress"},
        },
        {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": "He",
            "logprobs": [],
        },
        {
            "type": "response.output_text.done",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "text": "Hello",
            "logprobs": [],
        },
        {"type": "response.output_item.done", "output_index": 0, "item": msg_item("Hello")},
        {"type": "response.output_item.done", "output_index": 1, "item": rs_item("late", "rs_2")},
        {
            "type": "response.completed",
            "response": {
                **created,
                "status": "completed",
                "output": [msg_item("Hello"), rs_item("late", "rs_2"), msg_item("tail", item_id="msg_3")],
            },
        },
    )
    out = run(ResponsesReader(), only_done, flush=False)
    check_order(out)
    assert [(e.channel, e.text) for e in out if isinstance(e, RawText)] == [
        ("content", "He"),
        ("content", "llo"),
        ("reasoning", "late"),
        ("content", "tail"),
    ]


def test_responses_done_that_contradicts_its_deltas_does_not_undo_them() -> None:
    objs = events(
        {
            "type": "response.output_text.delta",
            "item_id": "m",
            "output_index": 0,
            "content_index": 0,
            "delta": "abc",
            "logprobs": [],
        },
        {
            "type": "response.output_text.done",
            "item_id": "m",
            "output_index": 0,
            "content_index": 0,
            "text": "xyz!",
            "logprobs": [],
        },
    )
    out = run(ResponsesReader(), objs)
    check_order(out)
    assert texts(out) == "abc" and not one(out, UpstreamDone).complete


def test_responses_events_keyed_by_item_id_when_output_index_is_missing() -> None:
    """A sloppy host: events with `item_id` only; the final output must not repeat the text."""
    reader = ResponsesReader()
    out = reader.feed({"type": "response.output_text.delta", "item_id": "msg_9", "delta": "hey"})
    out += reader.feed(
        {
            "type": "response.completed",
            "response": {"status": "completed", "output": [msg_item("hey", item_id="msg_9")]},
        }
    )
    assert texts(out) == "hey"


def test_responses_reasoning_summaries_are_reasoning() -> None:
    objs = events(
        {
            "type": "response.reasoning_summary_text.delta",
            "item_id": "rs_1",
            "output_index": 0,
            "summary_index": 0,
            "delta": "sum",
        },
        {
            "type": "response.reasoning_summary_text.done",
            "item_id": "rs_1",
            "output_index": 0,
            "summary_index": 0,
            "text": "summary",
        },
    )
    out = run(ResponsesReader(), objs)
    assert texts(out, "reasoning") == "summary"


@pytest.mark.parametrize(
    "obj",
    [
        {"type": "error", "code": "server_error", "message": "boom", "param": None},  # the SDK's flat type
        {"type": "error", "error": {"type": "server_error", "code": "server_error", "message": "boom", "param": None}},
    ],
)
def test_responses_error_events(obj: dict[str, Any]) -> None:
    if "error" not in obj:
        EVENT.validate_python({**obj, "sequence_number": 2})
    error = one(ResponsesReader().feed(obj), UpstreamError)
    assert (error.message, error.code) == ("boom", "server_error")


def test_responses_failed_gives_an_error_and_the_end() -> None:
    failed = response_obj("failed", [], error={"code": "server_error", "message": "the model crashed"})
    objs = events(
        {"type": "response.created", "response": response_obj("in_progress", [])},
        {"type": "response.failed", "response": failed},
    )
    out = run(ResponsesReader(), objs, flush=False)
    check_order(out)
    error = one(out, UpstreamError)
    assert (error.message, error.code) == ("the model crashed", "server_error")
    assert one(out, UpstreamDone).finish_reason == "error"


def test_responses_refusal_and_foreign_events() -> None:
    reader = ResponsesReader()
    out = run(
        reader,
        [
            {"type": "keepalive"},
            {"type": "response.refusal.delta", "item_id": "m", "output_index": 0, "content_index": 0, "delta": "no"},
        ],
    )
    assert reader.has_refusal and [e.obj for e in out if isinstance(e, Unrecognized)] == [{"type": "keepalive"}]


def test_responses_through_the_sse_decoder() -> None:
    data = encode_events(stream_of([("content", "x" * 50)]))
    decoder, reader = SSEDecoder(), ResponsesReader()
    out: list[InboundEvent] = []
    for i in range(0, len(data), 7):
        for ev in decoder.feed(data[i : i + 7]):
            assert ev.data is not None
            out += reader.feed(json.loads(ev.data))
    assert decoder.flush() == []
    out += reader.flush()
    assert texts(out) == "x" * 50 and one(out, UpstreamDone).complete


# -- detection -----------------------------------------------------------------------------------


def test_kind_of_objects() -> None:
    assert kind_of(chunk([])) == "chat"
    assert kind_of(chat_body([{"content": "x"}])) == "chat"
    assert kind_of(completion([ctext("x")])) == "completions"
    assert kind_of({"choices": [{"index": 0, "text": "x"}]}) == "completions"
    assert kind_of(response_obj("completed", [])) == "responses"
    assert kind_of(events({"type": "response.created", "response": response_obj("in_progress", [])})[0]) == "responses"
    for other in (
        {"object": "list", "data": []},  # /v1/models
        {"object": "embedding", "embedding": [0.1]},
        {"type": "message_start"},  # Anthropic
        {"choices": "nope"},
        {"object": "", "choices": []},  # Azure's filter chunk alone
        {"type": "error", "message": "x"},
        "text",
        None,
        [1, 2],
    ):
        assert kind_of(other) is None, other


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/v1/chat/completions", "chat"),
        ("/chat/completions/", "chat"),
        ("/openai/deployments/gpt/chat/completions?api-version=2024-10-21", "chat"),
        ("v1/completions", "completions"),
        ("/api/v1/responses", "responses"),
        ("/v1/responses/resp_123", None),
        ("/v1/chat/completions/chatcmpl-1/messages", None),
        ("/v1/embeddings", None),
        ("/v1/models", None),
        ("/", None),
        ("", None),
    ],
)
def test_kind_of_route(path: str, kind: str | None) -> None:
    assert kind_of_route(path) == kind


def test_detect_combines_object_and_route() -> None:
    body = chat_body([{"content": "x"}])
    assert detect(body) == "chat"
    assert detect(body, route="/v1/chat/completions") == "chat"
    assert detect(body, route="/v1/responses") is None  # answered something other than asked
    assert detect(body, route="/somewhere/else") == "chat"
    assert detect(route="/v1/responses") == "responses"
    assert detect({"object": "list", "data": []}, route="/v1/chat/completions") is None
    assert detect({"error": {"message": "x"}}, route="/v1/chat/completions") is None
    assert detect() is None


@pytest.mark.parametrize(
    ("kind", "cls"), [("chat", ChatReader), ("responses", ResponsesReader), ("completions", CompletionsReader)]
)
def test_reader_for(kind: Any, cls: type[Any]) -> None:
    reader = reader_for(kind)
    assert isinstance(reader, cls) and reader.kind == kind


# -- properties: any split of raw text comes back exactly, in order, by channel ------------------

TEXT = st.text(st.characters(codec="utf-8"), min_size=1, max_size=40)
SEGMENTS = st.lists(st.tuples(st.sampled_from(["content", "reasoning"]), TEXT), min_size=1, max_size=6)


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(points)]


def pieces_of(segments: list[tuple[str, str]], cuts: list[int]) -> list[tuple[str, str]]:
    return [(channel, p) for channel, text in segments for p in split(text, cuts) if p]


@settings(max_examples=200, deadline=None)
@given(SEGMENTS, st.lists(st.integers(0, 1000), max_size=10), st.sampled_from(["reasoning_content", "reasoning"]))
def test_chat_round_trip_any_split(segments: list[tuple[str, str]], cuts: list[int], field: str) -> None:
    pieces = pieces_of(segments, cuts)
    objs: list[Any] = [chunk([delta(role="assistant", content="")])]
    objs += [chunk([delta(0, None, **{("content" if ch == "content" else field): p})]) for ch, p in pieces]
    objs += [chunk([delta(finish="stop")]), usage_chunk(), DONE]
    out = run(ChatReader(), objs)
    check_order(out)
    assert [(e.channel, e.text) for e in out if isinstance(e, RawText)] == pieces
    # Streaming equals non-streaming: the same text in one whole body.
    content = "".join(p for ch, p in pieces if ch == "content")
    reasoning = "".join(p for ch, p in pieces if ch == "reasoning")
    whole = run(ChatReader(), [chat_body([{"content": content or None, field: reasoning or None}])])
    assert texts(whole) == texts(out) and texts(whole, "reasoning") == texts(out, "reasoning")


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), TEXT), min_size=1, max_size=8), st.lists(st.integers(0, 1000), max_size=6))
def test_chat_interleaved_choices_any_split(writes: list[tuple[int, str]], cuts: list[int]) -> None:
    objs: list[Any] = [chunk([delta(i, role="assistant", content="") for i in range(3)])]
    for choice, text in writes:
        objs += [chunk([delta(choice, content=p)]) for p in split(text, cuts) if p]
    objs += [chunk([delta(i, finish="stop") for i in range(3)]), DONE]
    out = run(ChatReader(), objs)
    for i in range(3):
        assert texts(out, choice=i) == "".join(t for c, t in writes if c == i)
    assert one(out, UpstreamDone).finish_reasons == {0: "stop", 1: "stop", 2: "stop"}


@settings(max_examples=150, deadline=None)
@given(SEGMENTS, st.lists(st.integers(0, 1000), max_size=10))
def test_responses_round_trip_any_split(segments: list[tuple[str, str]], cuts: list[int]) -> None:
    pieces = pieces_of(segments, cuts)
    objs = stream_of(pieces)
    out = run(ResponsesReader(), objs, flush=False)
    check_order(out)
    assert [(e.channel, e.text) for e in out if isinstance(e, RawText)] == pieces
    # The final response alone (a whole body) gives the same text by channel.
    final = Response.model_validate(objs[-1]["response"]).model_dump(mode="json", exclude_none=True)
    whole = run(ResponsesReader(), [final])
    assert texts(whole) == texts(out) and texts(whole, "reasoning") == texts(out, "reasoning")


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(TEXT, st.integers(0, 40), st.booleans()), min_size=1, max_size=5),
    st.lists(st.integers(0, 1000), max_size=10),
)
def test_responses_any_mix_of_deltas_and_done_values_reads_each_text_once(
    parts: list[tuple[str, int, bool]], cuts: list[int]
) -> None:
    """Per item, the host sends any prefix as deltas, the text's `.done` or not, and the whole
    text in the final response: each text is read exactly once. An item whose `.done` came is
    whole in its place; what only the final response holds can only come at the end, in order."""
    objs: list[dict[str, Any]] = [{"type": "response.created", "response": response_obj("in_progress", [])}]
    items, expected, late = [], [], []
    for n, (text, sent, with_done) in enumerate(parts):
        item_id = f"msg_{n}"
        where = {"item_id": item_id, "output_index": n, "content_index": 0, "logprobs": []}
        streamed = split(text, cuts)[:sent]
        objs += [{"type": "response.output_text.delta", "delta": p, **where} for p in streamed]
        if with_done:
            objs.append({"type": "response.output_text.done", "text": text, **where})
            expected.append(text)
        else:
            expected.append("".join(streamed))
            late.append(text[len("".join(streamed)) :])
        items.append(msg_item(text, item_id=item_id))
    objs.append({"type": "response.completed", "response": response_obj("completed", items)})
    out = run(ResponsesReader(), events(*objs), flush=False)
    check_order(out)
    assert texts(out) == "".join(expected + late)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), TEXT), min_size=1, max_size=6), st.lists(st.integers(0, 1000), max_size=8))
def test_completions_round_trip_any_split(writes: list[tuple[int, str]], cuts: list[int]) -> None:
    objs: list[Any] = []
    for choice, text in writes:
        objs += [completion([ctext(p, choice)]) for p in split(text, cuts) if p]
    objs += [completion([ctext("", 0, "stop"), ctext("", 1, "length")]), DONE]
    out = run(CompletionsReader(), objs)
    check_order(out)
    for i in range(2):
        assert texts(out, choice=i) == "".join(t for c, t in writes if c == i)
    assert one(out, UpstreamDone).finish_reasons == {0: "stop", 1: "length"}


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda c: (
            st.lists(c, max_size=3)
            | st.dictionaries(
                st.sampled_from(
                    [
                        "object",
                        "type",
                        "choices",
                        "delta",
                        "message",
                        "content",
                        "text",
                        "error",
                        "response",
                        "output",
                        "index",
                        "usage",
                    ]
                ),
                c,
                max_size=4,
            )
        ),
        max_leaves=12,
    )
)
def test_any_json_never_raises_and_keeps_the_contract(obj: Any) -> None:
    for reader in (ChatReader(), ResponsesReader(), CompletionsReader()):
        out = run(reader, [obj, obj])
        check_order(out)
