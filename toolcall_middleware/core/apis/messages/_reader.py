"""Anthropic Messages from the upstream: its SSE events and whole `message` objects.

A host that answers `/v1/messages` itself. Raw text is in `text` blocks (`text_delta`s), reasoning
in `thinking` blocks (`thinking_delta`s). Real `tool_use` blocks (a host that parses calls itself)
are not text: they come out as `UpstreamCall` pieces (start with id and name, `input_json_delta`
fragments, done at `content_block_stop`), which `NativeCalls` turns into parser events, and they
set `has_native_tool_calls`. `signature_delta`, `citations_delta`, `ping` and `redacted_thinking`
carry no text. Server-side tool blocks (`server_tool_use`, `web_search_tool_result`, …) are the
host's own structured output: `has_native_tool_calls` too.

`message_delta` gives the stop reason, mapped to Chat's finish reasons (`end_turn` and
`stop_sequence` -> `stop`, `max_tokens` -> `length`, `tool_use` -> `tool_calls`, `refusal` ->
`content_filter`), and the usage, merged over `message_start`'s (its counts are cumulative, and
the ones it omits keep their start value). `message_stop` ends the stream; an `error` event is an
`UpstreamError`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from ..._api_names import Api
from ..._events import Event, ToolCallDelta, ToolCallEnd, ToolCallStart
from ..._schema import JSON_OBJECT
from ...inbound._base import ReaderBase, str_or_none, upstream_error
from ...inbound._events import Channel, InboundEvent, RawText, Unrecognized, UpstreamCall, UpstreamMeta

STREAM_EVENTS = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    }
)

FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


def is_anthropic_message(obj: Mapping[str, Any]) -> bool:
    """A whole Anthropic `message` (an answer) or one of its stream events."""
    kind = obj.get("type")
    if "object" in obj or not isinstance(kind, str):
        return False
    if kind == "message":
        return obj.get("role") == "assistant" and isinstance(obj.get("content"), list)
    if kind == "message_start":
        return isinstance(obj.get("message"), JSON_OBJECT)  # the stream's first event always has it
    return kind in STREAM_EVENTS


def messages_meta(message: Mapping[str, Any]) -> UpstreamMeta:
    return UpstreamMeta(
        kind="messages",
        id=str_or_none(message.get("id")) or None,
        model=str_or_none(message.get("model")) or None,
    )


def _index(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class MessagesReader(ReaderBase):
    """Anthropic stream events or a whole `message` in, raw text, upstream calls and metadata out.

    ```python
    reader = MessagesReader()
    for data in sse_datas:  # each SSE event's data, decoded
        events = reader.feed(json.loads(data))
    events = reader.flush()
    ```
    """

    kind: ClassVar[Api] = "messages"

    def __init__(self) -> None:
        super().__init__()
        self._blocks: dict[int, str] = {}  # block index -> block type
        self._calls: dict[int, int] = {}  # tool_use block index -> call index
        self._call_fragments: dict[int, bool] = {}  # call index -> whether fragments came
        self._call_input: dict[int, Mapping[str, Any]] = {}  # call index -> `input` at its start
        self._start_usage: dict[str, Any] = {}

    def _read(self, obj: Mapping[str, Any]) -> list[InboundEvent]:
        error = upstream_error(obj)
        if error is not None:
            return [error]
        kind = obj.get("type")
        if kind == "ping":
            return []
        if not is_anthropic_message(obj):
            return [Unrecognized(obj)]
        if kind == "message":
            return self._whole(obj)
        if kind == "message_start":
            message = obj.get("message")
            message = message if isinstance(message, JSON_OBJECT) else {}
            out = self._meta(lambda: messages_meta(message))
            self._usage_update(message.get("usage"), start=True)
            return out
        out = self._meta(lambda: UpstreamMeta(kind="messages"))
        index = _index(obj.get("index"))
        if kind == "content_block_start":
            block = obj.get("content_block")
            if isinstance(block, JSON_OBJECT):
                out.extend(self._block_start(index, block))
        elif kind == "content_block_delta":
            delta = obj.get("delta")
            if isinstance(delta, JSON_OBJECT):
                out.extend(self._block_delta(index, delta))
        elif kind == "content_block_stop":
            out.extend(self._block_stop(index))
        elif kind == "message_delta":
            delta = obj.get("delta")
            if isinstance(delta, JSON_OBJECT):
                self._stop(delta.get("stop_reason"), delta.get("stop_sequence"))
            self._usage_update(obj.get("usage"), start=False)
        elif kind == "message_stop":
            out.extend(self._end(complete=True))
        return out

    def _whole(self, message: Mapping[str, Any]) -> list[InboundEvent]:
        out = self._meta(lambda: messages_meta(message))
        content = message.get("content")
        for index, block in enumerate(content if isinstance(content, list) else []):
            if isinstance(block, JSON_OBJECT):
                out.extend(self._block_start(index, block))
                out.extend(self._block_stop(index))
        self._usage_update(message.get("usage"), start=True)
        self._stop(message.get("stop_reason"), message.get("stop_sequence"))
        return out + self._end(complete=True)

    def _block_start(self, index: int, block: Mapping[str, Any]) -> list[InboundEvent]:
        kind = block.get("type")
        self._blocks[index] = kind if isinstance(kind, str) else ""
        self._see(0)
        if kind == "text":
            return self._text(block.get("text"), Channel.CONTENT)
        if kind == "thinking":
            return self._text(block.get("thinking"), Channel.REASONING)
        if kind == "redacted_thinking":
            return []
        self._native = True
        if kind != "tool_use":
            return []  # a server-side tool's block: the host's own structured output
        call = len(self._calls)
        self._calls[index] = call
        self._call_fragments[call] = False
        given = block.get("input")
        if isinstance(given, JSON_OBJECT) and given:
            self._call_input[call] = given
        return [UpstreamCall(call, id=str_or_none(block.get("id")), name=str_or_none(block.get("name")) or "")]

    def _block_delta(self, index: int, delta: Mapping[str, Any]) -> list[InboundEvent]:
        kind = delta.get("type")
        if kind == "text_delta":
            return self._text(delta.get("text"), Channel.CONTENT)
        if kind == "thinking_delta":
            return self._text(delta.get("thinking"), Channel.REASONING)
        if kind == "input_json_delta" and index in self._calls:
            fragment = delta.get("partial_json")
            if isinstance(fragment, str) and fragment:
                call = self._calls[index]
                self._call_fragments[call] = True
                return [UpstreamCall(call, arguments=fragment)]
        return []  # signature_delta, citations_delta: no text

    def _block_stop(self, index: int) -> list[InboundEvent]:
        if index not in self._calls:
            return []
        call = self._calls.pop(index)
        given = self._call_input.pop(call, None)
        # The `input` of the block's start is the call's when no fragment followed (a whole
        # message, or a host that sends the input at once); fragments replace it, as in the SDK.
        arguments = json.dumps(given, ensure_ascii=False) if given and not self._call_fragments[call] else ""
        return [UpstreamCall(call, arguments=arguments, done=True)]

    def _text(self, text: object, channel: Channel) -> list[InboundEvent]:
        if not isinstance(text, str) or not text:
            return []
        return [RawText(text, channel)]

    def _stop(self, reason: object, sequence: object) -> None:
        self._stopped_by(0, sequence)
        if isinstance(reason, str):
            self._finished(0, FINISH_REASONS.get(reason, reason))

    def _usage_update(self, usage: object, *, start: bool) -> None:
        if not isinstance(usage, JSON_OBJECT):
            return
        counts = {k: v for k, v in usage.items() if v is not None}
        if start:
            self._start_usage = counts
        merged = {**self._start_usage, **(self._usage or {}), **counts}
        self._note_usage(merged)


class NativeCalls:
    """`UpstreamCall` pieces -> `ToolCallStart`, `ToolCallDelta`, `ToolCallEnd` events.

    The events go to the `PolicyFilter` (not the dialect parser): the upstream already made the
    calls. `index_base` is added to every call index, so the upstream's calls never share an index
    with calls the parser finds in the same response's text (the filter renumbers what goes out).

    ```python
    native = NativeCalls(index_base=1000)
    events = native.feed(upstream_call)
    ```
    """

    def __init__(self, *, index_base: int = 0) -> None:
        self._base = index_base
        self._arguments: dict[int, list[str]] = {}

    def feed(self, item: UpstreamCall) -> list[Event]:
        index = self._base + item.index
        out: list[Event] = []
        if index not in self._arguments:
            self._arguments[index] = []
            out.append(ToolCallStart(index, item.id, item.name or ""))
        if item.arguments:
            self._arguments[index].append(item.arguments)
            out.append(ToolCallDelta(index, item.arguments))
        if item.done:
            pieces = self._arguments.pop(index)
            if not pieces:  # a call without arguments: `{}`, the object every client expects
                pieces.append("{}")
                out.append(ToolCallDelta(index, "{}"))
            out.append(ToolCallEnd(index, "".join(pieces)))
        return out


__all__ = ["FINISH_REASONS", "MessagesReader", "NativeCalls", "is_anthropic_message", "messages_meta"]
