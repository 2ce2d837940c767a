"""Anthropic Messages (`/v1/messages`): the streamed event sequence and the whole `message` object.

Rules from the `anthropic` SDK's types and its stream accumulator (`accumulate_event`):
`message_start` carries the message with `content: []` and `stop_reason: null`; then each content
block is `content_block_start` (the block, empty), `content_block_delta`s and
`content_block_stop`, one block open at a time, `index` 0, 1, 2… in the final `content` order;
`thinking` blocks take `thinking_delta`s and start with `signature: ""` (the SDK's
`ThinkingBlock` requires the field, not a `signature_delta`); `text` blocks take `text_delta`s;
`tool_use` blocks start with an id `toolu_…`, the name and `input: {}`, and take
`input_json_delta` fragments (`partial_json`) whose concatenation is the arguments' JSON text.
`message_delta` carries `stop_reason` (`tool_use`, `max_tokens`, `end_turn`) and the cumulative
usage, and `message_stop` ends the stream. A failure is an `error` event, after which nothing
follows. Every event goes out SSE-framed with its `event:` line (`framing.sse.encode_event`): the
SDK skips events without one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from ..._events import Event, ReasoningDelta, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart, TruncatedCall
from ..._result import ParseResult
from ...emitters._ids import random_id
from ...emitters._meta import Upstream, token_count, usage_details

StopReason = Literal["end_turn", "max_tokens", "stop_sequence", "tool_use", "refusal"]


def tool_use_id(own: str | None = None) -> str:
    """`toolu_` + 24 alphanumerics, the style of Anthropic's own tool-use ids; a call that already
    has an id in that style (from an Anthropic upstream) keeps it."""
    return own if own is not None and own.startswith("toolu_") else random_id("toolu_")


def message_id(upstream_id: str) -> str:
    """The upstream's id in Anthropic's `msg_…` style (kept as it is when it already is)."""
    if upstream_id.startswith("msg_"):
        return upstream_id
    return "msg_" + upstream_id.removeprefix("chatcmpl-").removeprefix("resp_")


def stop_reason_for(
    *, called: bool, truncated: bool, upstream: str | None, stop_sequence: str | None = None
) -> StopReason:
    """`tool_use` whenever a call went out, else `max_tokens` when cut off, `refusal` for an
    upstream `content_filter`, `stop_sequence` when one of the client's stop sequences ended the
    output, else `end_turn`. (`pause_turn` belongs to Anthropic's own server tools, which a host
    here does not run.)"""
    if called:
        return "tool_use"
    if truncated or upstream in ("length", "max_tokens"):
        return "max_tokens"
    if upstream == "content_filter":
        return "refusal"
    if stop_sequence is not None:
        return "stop_sequence"
    return "end_turn"


def stop_fields(upstream: Upstream, *, called: bool, truncated: bool) -> dict[str, Any]:
    """`stop_reason` and `stop_sequence` of a message that ended (see `stop_reason_for`)."""
    stop = stop_reason_for(
        called=called, truncated=truncated, upstream=upstream.finish_reason, stop_sequence=upstream.stop_sequence
    )
    return {"stop_reason": stop, "stop_sequence": upstream.stop_sequence if stop == "stop_sequence" else None}


def anthropic_usage(usage: Mapping[str, Any] | None) -> dict[str, Any]:
    """Chat-style, Responses-style or Anthropic-style usage -> Anthropic's `usage` object.

    `prompt_tokens`/`input_tokens` -> `input_tokens`, `completion_tokens`/`output_tokens` ->
    `output_tokens`; cached prompt tokens (`prompt_tokens_details.cached_tokens`,
    `input_tokens_details.cached_tokens`) -> `cache_read_input_tokens`. OpenAI's prompt count
    includes the cached tokens while Anthropic's `input_tokens` does not, so they are taken out.
    """
    usage = usage or {}
    out_tokens = token_count(usage, "output_tokens", "completion_tokens")
    if "cache_read_input_tokens" in usage or "cache_creation_input_tokens" in usage:
        # Already Anthropic's shape (an Anthropic upstream): the counts are its own.
        return {
            "input_tokens": token_count(usage, "input_tokens"),
            "output_tokens": out_tokens,
            "cache_creation_input_tokens": token_count(usage, "cache_creation_input_tokens"),
            "cache_read_input_tokens": token_count(usage, "cache_read_input_tokens"),
        }
    in_tokens = token_count(usage, "input_tokens", "prompt_tokens")
    details = usage_details(usage, "prompt_tokens_details", "input_tokens_details")
    cached = min(token_count(details, "cached_tokens"), in_tokens)
    return {
        "input_tokens": in_tokens - cached,
        "output_tokens": out_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": cached,
    }


def tool_input(arguments: str) -> dict[str, Any]:
    """A call's arguments as the `input` object. The policy lets out only calls whose arguments
    are a JSON object; `""` (a call without arguments) is `{}`."""
    if not arguments.strip():
        return {}
    try:
        value = json.loads(arguments)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def error_object(message: str, type_: str = "api_error") -> dict[str, Any]:
    """`{"type": "error", "error": {"type": …, "message": …}}`: Anthropic's error body and event."""
    return {"type": "error", "error": {"type": type_, "message": message}}


def _message(
    upstream: Upstream, mid: str, content: list[dict[str, Any]], stop: dict[str, Any] | None, usage: dict[str, Any]
) -> dict[str, Any]:
    """The `message` object; `stop` its `stop_fields` (None: not ended yet, in `message_start`)."""
    return {
        "id": mid,
        "type": "message",
        "role": "assistant",
        "model": upstream.model,
        "content": content,
        **(stop or {"stop_reason": None, "stop_sequence": None}),
        "usage": usage,
    }


class MessagesStreamEmitter:
    """Events in, Anthropic stream events (dicts with `type`) out.

    ```python
    emitter = MessagesStreamEmitter(Upstream(model="qwen3"))
    events = emitter.start() + emitter.feed(parser.feed(delta)) ... + emitter.finish()
    body = encode_events(events)  # `event: message_start\\ndata: {…}\\n\\n` …
    ```
    """

    def __init__(self, upstream: Upstream, *, reasoning: bool = True) -> None:
        self.upstream = upstream
        self.id = message_id(upstream.id)
        self._reasoning = reasoning
        self._index = 0  # the next block's index
        self._open: str | None = None  # "text" | "thinking" | "tool_use"
        self._call_index: int | None = None
        self._call_args: list[str] = []
        self._called = False
        self._truncated = False
        self._started = False
        self._finished = False

    @property
    def called(self) -> bool:
        return self._called

    def start(self) -> list[dict[str, Any]]:
        if self._started:
            return []
        self._started = True
        usage = anthropic_usage(None)
        message = _message(self.upstream, self.id, [], None, usage)
        return [{"type": "message_start", "message": message}]

    def feed(self, events: Iterable[Event]) -> list[dict[str, Any]]:
        out = self.start()
        if self._finished:
            return out
        for event in events:
            if isinstance(event, TextDelta):
                if event.text:
                    self._open_block(out, "text", {"type": "text", "text": ""})
                    out.append(self._delta({"type": "text_delta", "text": event.text}))
            elif isinstance(event, ReasoningDelta):
                if event.text and self._reasoning:
                    self._open_block(out, "thinking", {"type": "thinking", "thinking": "", "signature": ""})
                    out.append(self._delta({"type": "thinking_delta", "thinking": event.text}))
            elif isinstance(event, ToolCallStart):
                self._close_block(out)
                self._called = True
                self._call_index, self._call_args = event.index, []
                block = {"type": "tool_use", "id": tool_use_id(event.id), "name": event.name, "input": {}}
                self._open_block(out, "tool_use", block)
            elif isinstance(event, ToolCallDelta):
                if event.arguments and self._open == "tool_use" and event.index == self._call_index:
                    self._call_args.append(event.arguments)
                    out.append(self._delta({"type": "input_json_delta", "partial_json": event.arguments}))
            elif isinstance(event, ToolCallEnd):
                if self._open == "tool_use" and event.index == self._call_index:
                    # A call whose fragments did not carry all of it (or none): the rest goes now,
                    # so the accumulated `input` is always the whole arguments.
                    seen = "".join(self._call_args)
                    if event.arguments != seen and event.arguments.startswith(seen):
                        rest = event.arguments[len(seen) :]
                        out.append(self._delta({"type": "input_json_delta", "partial_json": rest}))
                    self._close_block(out)
            elif isinstance(event, TruncatedCall):
                self._truncated = True
        return out

    def _delta(self, delta: dict[str, Any]) -> dict[str, Any]:
        return {"type": "content_block_delta", "index": self._index, "delta": delta}

    def _open_block(self, out: list[dict[str, Any]], kind: str, block: dict[str, Any]) -> None:
        if self._open == kind and kind != "tool_use":
            return
        self._close_block(out)
        self._open = kind
        out.append({"type": "content_block_start", "index": self._index, "content_block": block})

    def _close_block(self, out: list[dict[str, Any]]) -> None:
        if self._open is None:
            return
        out.append({"type": "content_block_stop", "index": self._index})
        self._open, self._call_index = None, None
        self._index += 1

    def finish(self, *, usage: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Close the open block; `message_delta` with the stop reason and usage; `message_stop`."""
        if self._finished:
            return []
        out = self.start()
        self._finished = True
        self._close_block(out)
        stop = stop_fields(self.upstream, called=self._called, truncated=self._truncated)
        counts = anthropic_usage(usage if usage is not None else self.upstream.usage)
        out.append({"type": "message_delta", "delta": stop, "usage": counts})
        out.append({"type": "message_stop"})
        return out

    def fail(self, message: str, *, type_: str = "api_error") -> list[dict[str, Any]]:
        """An `error` event (the SDK raises it as an `APIStatusError`); nothing follows it."""
        if self._finished:
            return []
        out = self.start()
        self._finished = True
        out.append(error_object(message, type_))
        return out


class MessagesBuilder:
    """A whole parse -> the Anthropic `message` object.

    ```python
    body = MessagesBuilder(Upstream(model="qwen3")).build(parse(text, "hermes"))
    ```
    """

    def __init__(self, upstream: Upstream, *, reasoning: bool = True) -> None:
        self.upstream = upstream
        self._reasoning = reasoning

    def content(self, result: ParseResult) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if result.reasoning and self._reasoning:
            blocks.append({"type": "thinking", "thinking": result.reasoning, "signature": ""})
        if result.content:
            blocks.append({"type": "text", "text": result.content})
        for call in result.tool_calls:
            blocks.append(
                {"type": "tool_use", "id": tool_use_id(call.id), "name": call.name, "input": tool_input(call.arguments)}
            )
        return blocks

    def build(self, result: ParseResult, *, usage: Mapping[str, Any] | None = None) -> dict[str, Any]:
        stop = stop_fields(self.upstream, called=bool(result.tool_calls), truncated=result.truncated is not None)
        counts = anthropic_usage(usage if usage is not None else self.upstream.usage)
        return _message(self.upstream, message_id(self.upstream.id), self.content(result), stop, counts)


__all__ = [
    "MessagesBuilder",
    "MessagesStreamEmitter",
    "StopReason",
    "anthropic_usage",
    "error_object",
    "message_id",
    "stop_fields",
    "stop_reason_for",
    "tool_input",
    "tool_use_id",
]
