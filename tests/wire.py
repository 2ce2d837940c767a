"""Test helpers: replay emitter output through the official openai SDK's types and accumulators,
and an in-process OpenAI-style endpoint (an httpx transport) that answers with scripted raw
model output through our parser and emitters."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import httpx
import pydantic
from openai import omit
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.lib.streaming.responses._responses import ResponseStreamState
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent

from toolcall_middleware import StreamParser, merge_events
from toolcall_middleware.core.apis.chat import ChatMessageBuilder, ChatStreamEmitter
from toolcall_middleware.core.apis.responses import ResponsesBuilder, ResponsesStreamEmitter
from toolcall_middleware.core.emitters import Upstream
from toolcall_middleware.core.framing.sse import encode_chat, encode_events

EVENT_ADAPTER: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(ResponseStreamEvent)


def replay_chat(chunks: list[dict[str, Any]]) -> Any:
    """Validate every chunk against `ChatCompletionChunk` and accumulate them as `.stream()` does."""
    state = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    return state.current_completion_snapshot


def replay_responses(events: list[dict[str, Any]]) -> Response:
    """Validate every event against `ResponseStreamEvent`, run them through `ResponseStreamState`
    (which raises on any ordering or identity error) and check the sequence numbers."""
    state: ResponseStreamState[Any] = ResponseStreamState(input_tools=[], text_format=omit)
    for n, event in enumerate(events):
        assert event["sequence_number"] == n
        state.handle_event(EVENT_ADAPTER.validate_python(event))
    assert events[0]["type"] == "response.created" and events[0]["response"]["output"] == []
    assert events[-1]["type"] in ("response.completed", "response.incomplete", "response.failed")
    return Response.model_validate(events[-1]["response"])


def pieces(text: str, size: int = 3) -> Iterator[str]:
    for i in range(0, len(text), size):
        yield text[i : i + size]


Script = Callable[[Mapping[str, Any]], str]


def scripted_endpoint(script: Script, *, dialect: str, model: str = "scripted-model") -> httpx.MockTransport:
    """An OpenAI-style endpoint whose model writes `script(request_body)` as raw text."""

    def handle(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content or b"{}")
        raw = script(body)
        tools = body.get("tools") or body.get("functions")
        parser = StreamParser(dialect, tools=tools)
        upstream = Upstream(model=body.get("model", model))
        legacy = "functions" in body
        responses = request.url.path.endswith("/responses")
        if body.get("stream"):
            if responses:
                r_emitter = ResponsesStreamEmitter(upstream, request=body)
                events = r_emitter.start()
                for piece in pieces(raw):
                    events += r_emitter.feed(parser.feed(piece))
                events += r_emitter.feed(parser.close()) + r_emitter.finish()
                data = encode_events(events)
            else:
                include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                c_emitter = ChatStreamEmitter(upstream, include_usage=include_usage, legacy_functions=legacy)
                chunks: list[dict[str, Any]] = []
                for piece in pieces(raw):
                    chunks += c_emitter.feed(parser.feed(piece))
                chunks += c_emitter.feed(parser.close()) + c_emitter.finish()
                data = encode_chat(chunks, done=True)
            return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=data)
        result = merge_events(parser.feed(raw) + parser.close())
        if responses:
            payload = ResponsesBuilder(upstream, request=body).build(result)
        else:
            payload = ChatMessageBuilder(upstream, legacy_functions=legacy).build(result)
            ChatCompletion.model_validate(payload)
        return httpx.Response(200, json=payload)

    return httpx.MockTransport(handle)
