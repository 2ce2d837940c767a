"""Emitters: every output validates against the official openai types and replays through its
stream accumulators to the same text and calls as the parse; whole bodies validate too."""

from __future__ import annotations

import json
from typing import Any

import pytest
from canitoolcall.fixtures import load_fixtures
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletion
from openai.types.responses import Response

from tests.conftest import random_splits
from tests.wire import replay_chat, replay_responses
from toolcall_middleware import (
    ReasoningDelta,
    StreamParser,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    TruncatedCall,
    merge_events,
)
from toolcall_middleware.core._result import ParseResult
from toolcall_middleware.core.apis.agui import AGUIEmitter
from toolcall_middleware.core.apis.chat import ChatMessageBuilder, ChatStreamEmitter
from toolcall_middleware.core.apis.responses import ResponsesBuilder, ResponsesStreamEmitter
from toolcall_middleware.core.emitters import Upstream

SAMPLES = load_fixtures(families=("qwen3-hermes", "qwen3-xml", "kimi", "deepseek"))


def parse_events(fixture: Any, seed: int) -> list[list[Any]]:
    """The parser's events for a fixture streamed at random splits, one list per delta."""
    parser = StreamParser(
        model=fixture.models[0],
        tools=list(fixture.tools),
        generation_prompt=fixture.generation_prompt,
        thinking=fixture.thinking,
    )
    batches = [parser.feed(p) for p in random_splits(fixture.raw_output, seed)]
    batches.append(parser.close())
    return batches


def args_of(arguments: str) -> Any:
    return json.loads(arguments)


def expected_finish(result: ParseResult) -> str:
    return "tool_calls" if result.tool_calls else ("length" if result.truncated else "stop")


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(SAMPLES), st.integers(min_value=0, max_value=10**6), st.booleans())
def test_chat_stream_replays_through_the_sdk_accumulator(fixture: Any, seed: int, usage: bool) -> None:
    batches = parse_events(fixture, seed)
    result = merge_events(e for batch in batches for e in batch)
    emitter = ChatStreamEmitter(Upstream(model="m", id="chatcmpl-1", created=1), include_usage=usage)
    chunks = [c for batch in batches for c in emitter.feed(batch)] + emitter.finish()

    roles = [c["choices"][0]["delta"].get("role") for c in chunks if c["choices"]]
    assert roles[0] == "assistant" and roles.count("assistant") == 1
    finishes = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]]
    assert finishes[:-1] == [None] * (len(finishes) - 1)
    assert finishes[-1] == expected_finish(result)
    if usage:
        assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] == 0

    snapshot = replay_chat(chunks)
    message = snapshot.choices[0].message
    assert (message.content or None) == result.content
    assert getattr(message, "reasoning_content", None) == result.reasoning
    calls = message.tool_calls or []
    assert [(c.function.name, args_of(c.function.arguments)) for c in calls] == [
        (c.name, args_of(c.arguments)) for c in result.tool_calls
    ]
    ids = [c.id for c in calls]
    assert len(set(ids)) == len(ids) and all(ids)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(SAMPLES), st.integers(min_value=0, max_value=10**6))
def test_responses_stream_replays_through_the_sdk_accumulator(fixture: Any, seed: int) -> None:
    batches = parse_events(fixture, seed)
    result = merge_events(e for batch in batches for e in batch)
    emitter = ResponsesStreamEmitter(Upstream(model="m"), request={"tools": list(fixture.tools)})
    events = emitter.start() + [e for batch in batches for e in emitter.feed(batch)] + emitter.finish()
    final = replay_responses(events)

    assert final.status == ("incomplete" if result.truncated and not result.tool_calls else "completed")
    text = "".join(p.text for item in final.output if item.type == "message" for p in item.content)
    assert (text or None) == result.content
    reasoning = "".join(c.text for item in final.output if item.type == "reasoning" for c in item.content or [])
    assert (reasoning or None) == result.reasoning
    calls = [item for item in final.output if item.type == "function_call"]
    assert [(c.name, args_of(c.arguments)) for c in calls] == [
        (c.name, args_of(c.arguments)) for c in result.tool_calls
    ]
    assert all(c.id and c.id.startswith("fc_") and c.call_id and c.call_id != c.id for c in calls)
    # every done item equals the final output, in order
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert done == events[-1]["response"]["output"]


@pytest.mark.parametrize("fixture", SAMPLES[::7], ids=[f.id for f in SAMPLES[::7]])
def test_whole_bodies_validate(fixture: Any) -> None:
    parser = StreamParser(
        model=fixture.models[0],
        tools=list(fixture.tools),
        generation_prompt=fixture.generation_prompt,
        thinking=fixture.thinking,
    )
    result = merge_events(parser.feed(fixture.raw_output) + parser.close())
    body = ChatMessageBuilder(Upstream(model="m")).build(result)
    completion = ChatCompletion.model_validate(body)
    assert body["choices"][0]["message"]["content"] == result.content
    if result.tool_calls:
        assert completion.choices[0].finish_reason == "tool_calls"
        assert [c.function.name for c in completion.choices[0].message.tool_calls or []] == [
            c.name for c in result.tool_calls
        ]
    else:
        assert "tool_calls" not in body["choices"][0]["message"]
    response = Response.model_validate(ResponsesBuilder(Upstream(model="m")).build(result))
    assert [i.name for i in response.output if i.type == "function_call"] == [c.name for c in result.tool_calls]


def test_first_delta_of_a_call_only_answer() -> None:
    emitter = ChatStreamEmitter(Upstream(model="m"))
    chunks = (
        emitter.feed([ToolCallStart(0, None, "f"), ToolCallDelta(0, '{"a": 1}'), ToolCallEnd(0, '{"a": 1}')])
        + emitter.finish()
    )
    first = chunks[0]["choices"][0]["delta"]
    assert first["role"] == "assistant" and first["content"] is None
    frag = first["tool_calls"][0]
    assert frag["index"] == 0 and frag["type"] == "function" and frag["function"] == {"name": "f", "arguments": ""}
    assert frag["id"].startswith("call_") and len(frag["id"]) == 29
    assert chunks[1]["choices"][0]["delta"] == {"tool_calls": [{"index": 0, "function": {"arguments": '{"a": 1}'}}]}
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_model_id_is_kept_and_reasoning_field_is_configurable() -> None:
    events = [
        ReasoningDelta("hm"),
        ToolCallStart(0, "functions.f:0", "f"),
        ToolCallDelta(0, "{}"),
        ToolCallEnd(0, "{}"),
    ]
    chunks = ChatStreamEmitter(Upstream(model="m"), reasoning_field="both").feed(events)
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "reasoning_content": "hm", "reasoning": "hm"}
    assert chunks[1]["choices"][0]["delta"]["tool_calls"][0]["id"] == "functions.f:0"
    dropped = ChatStreamEmitter(Upstream(model="m"), reasoning_field="none").feed([ReasoningDelta("hm")])
    assert dropped == []


def test_truncated_answer_finishes_with_length() -> None:
    emitter = ChatStreamEmitter(Upstream(model="m"))
    chunks = emitter.feed([TextDelta("Let me"), TruncatedCall("<tool_call>{")]) + emitter.finish()
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"
    r = ResponsesStreamEmitter(Upstream(model="m"))
    events = r.feed([TextDelta("Let me"), TruncatedCall("<tool_call>{")]) + r.finish()
    final = replay_responses(events)
    assert final.status == "incomplete" and final.incomplete_details is not None


def test_legacy_function_call_stream_and_whole() -> None:
    events = [TextDelta(""), ToolCallStart(0, None, "f"), ToolCallDelta(0, '{"x": 2}'), ToolCallEnd(0, '{"x": 2}')]
    emitter = ChatStreamEmitter(Upstream(model="m"), legacy_functions=True)
    chunks = emitter.feed(events) + emitter.finish()
    snapshot = replay_chat(chunks)
    assert snapshot.choices[0].message.function_call.name == "f"
    assert snapshot.choices[0].message.function_call.arguments == '{"x": 2}'
    assert snapshot.choices[0].finish_reason == "function_call"
    result = merge_events(events)
    body = ChatMessageBuilder(Upstream(model="m"), legacy_functions=True).build(result)
    message = ChatCompletion.model_validate(body).choices[0].message
    assert message.function_call is not None and message.function_call.name == "f"
    assert message.tool_calls is None and body["choices"][0]["finish_reason"] == "function_call"


def test_error_chunk_and_failed_response() -> None:
    emitter = ChatStreamEmitter(Upstream(model="m"))
    chunk = emitter.error("arguments of get_weather do not match its schema")[0]
    assert chunk["choices"][0]["finish_reason"] == "error"
    assert chunk["error"]["message"].startswith("arguments of get_weather")
    r = ResponsesStreamEmitter(Upstream(model="m"))
    events = r.feed([TextDelta("hi")]) + r.fail("bad call")
    final = replay_responses(events)
    assert final.status == "failed" and final.error is not None and final.error.code == "server_error"


def test_usage_is_passed_through() -> None:
    upstream = Upstream(model="m", usage={"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12})
    emitter = ChatStreamEmitter(upstream, include_usage=True)
    chunks = emitter.feed([TextDelta("hi")]) + emitter.finish()
    assert chunks[-1]["usage"] == {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12}
    body = ResponsesBuilder(upstream).build(ParseResult(content="hi", reasoning=None))
    assert body["usage"]["input_tokens"] == 7 and body["usage"]["output_tokens"] == 5
    assert body["usage"]["input_tokens_details"] == {"cached_tokens": 0, "cache_write_tokens": 0}


# -- compatibility profiles -------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(SAMPLES), st.integers(min_value=0, max_value=10**6))
def test_agui_stream_validates_and_is_well_ordered(fixture: Any, seed: int) -> None:
    import pydantic
    from ag_ui.core import Event as AGUIEvent

    adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(AGUIEvent)
    batches = parse_events(fixture, seed)
    result = merge_events(e for batch in batches for e in batch)
    emitter = AGUIEmitter(thread_id="t1", run_id="r1")
    events = emitter.start() + [e for batch in batches for e in emitter.feed(batch)] + emitter.finish()
    for event in events:
        adapter.validate_python(event)
    assert events[0]["type"] == "RUN_STARTED" and events[-1]["type"] == "RUN_FINISHED"
    open_ids: set[str] = set()
    for event in events:  # the AG-UI client's ordering rules
        kind, key = event["type"], event.get("messageId") or event.get("toolCallId")
        if kind.endswith("_START") and kind not in ("RUN_STARTED", "REASONING_START"):
            assert key not in open_ids
            open_ids.add(key)
        elif kind.endswith(("_CONTENT", "_ARGS")):
            assert key in open_ids
        elif kind.endswith("_END") and kind != "REASONING_END":
            open_ids.remove(key)
    assert not open_ids
    text = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert (text or None) == result.content
    names = [e["toolCallName"] for e in events if e["type"] == "TOOL_CALL_START"]
    assert names == [c.name for c in result.tool_calls]
    args: dict[str, str] = {}
    for e in events:
        if e["type"] == "TOOL_CALL_ARGS":
            args[e["toolCallId"]] = args.get(e["toolCallId"], "") + e["delta"]
    assert [json.loads(a) for a in args.values()] == [json.loads(c.arguments) for c in result.tool_calls]


def test_required_action_profile() -> None:
    events = [ToolCallStart(0, None, "f"), ToolCallDelta(0, '{"a": 1}'), ToolCallEnd(0, '{"a": 1}')]
    emitter = ResponsesStreamEmitter(Upstream(model="m"), required_action=True)
    out = emitter.feed(events) + emitter.finish()
    assert [e["type"] for e in out[-2:]] == ["response.required_action", "response.completed"]
    action = out[-2]["required_action"]
    call = action["submit_tool_outputs"]["tool_calls"][0]
    fc = out[-1]["response"]["output"][0]
    assert action["type"] == "submit_tool_outputs"
    assert call["id"] == fc["call_id"] and call["function"] == {"name": "f", "arguments": '{"a": 1}'}
    assert out[-1]["response"]["status"] == "requires_action"
    assert [e["sequence_number"] for e in out] == list(range(len(out)))
    plain = ResponsesStreamEmitter(Upstream(model="m"), required_action=True)
    assert "response.required_action" not in [e["type"] for e in plain.feed([TextDelta("hi")]) + plain.finish()]


def test_extensions_profile() -> None:
    result = merge_events(
        [ReasoningDelta("think"), ToolCallStart(0, "functions.f:0", "f"), ToolCallDelta(0, "{}"), ToolCallEnd(0, "{}")]
    )
    body = ChatMessageBuilder(Upstream(model="m"), extensions=True).build(result)
    ChatCompletion.model_validate(body)
    assert body["extensions"] == {
        "reasoning_chunks": ["think"],
        "tool_call_chunks": [
            {"type": "start", "index": 0, "id": "functions.f:0", "name": "f"},
            {"type": "args", "index": 0, "arguments": "{}"},
            {"type": "end", "index": 0},
        ],
    }
    assert "extensions" not in ChatMessageBuilder(Upstream(model="m")).build(result)
