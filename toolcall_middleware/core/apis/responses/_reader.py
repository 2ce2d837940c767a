"""The Responses API from the upstream: its SSE events and whole `response` objects.

Content is the text of `output_text` parts, reasoning that of `reasoning_text` parts (raw
reasoning, what open-weight hosts send) and of reasoning summaries. Deltas are read as they come.
Every "done" value (`output_text.done`, `content_part.done`, `output_item.done`, the terminal
response's `output`) is checked against what the deltas gave: text the deltas missed (a host that
sends only the done events, or only the final response) is read from it, so nothing is lost and
nothing is read twice. A done value that contradicts its deltas does not undo them. Text is in
order as long as each item's text is whole by its own done events; text that only the terminal
response holds can only come at the end.

The terminal event maps to a finish reason: `completed` -> `stop` (`tool_calls` when the output
has calls), `incomplete` -> `length` (`content_filter` when that was the reason), `failed` ->
`error` after an `UpstreamError`. A `function_call` item is a call the host made itself (it was
given the tools): it comes out as `UpstreamCall` pieces, to go through the request's rules like
any call. Hosted tools and custom calls mean the host produced structured output the client's
API may not carry: `has_native_tool_calls`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from ..._api_names import Api
from ..._schema import JSON_OBJECT
from ...inbound._base import ReaderBase, error_from, str_or_none, upstream_error
from ...inbound._events import Channel, InboundEvent, RawText, Unrecognized, UpstreamCall, UpstreamError, UpstreamMeta

_TEXT_ITEMS = ("message", "reasoning")
_CALL_ITEMS = ("function_call", "custom_tool_call")
# Fields of the response object that describe this run rather than echo the request.
_NOT_ECHOED = frozenset(
    {
        "id",
        "object",
        "created_at",
        "completed_at",
        "model",
        "status",
        "output",
        "output_text",
        "usage",
        "error",
        "incomplete_details",
    }
)
_TERMINAL = ("response.completed", "response.incomplete", "response.failed")

PartKey = tuple[int | str, str, int]  # (output index or item id, "content" | "summary", part index)


def responses_meta(response: Mapping[str, Any]) -> UpstreamMeta:
    created_at = response.get("created_at")
    stamp = float(created_at) if isinstance(created_at, int | float) and not isinstance(created_at, bool) else None
    echo = {k: v for k, v in response.items() if k not in _NOT_ECHOED}
    return UpstreamMeta(
        kind="responses",
        id=str_or_none(response.get("id")) or None,
        model=str_or_none(response.get("model")) or None,
        created=None if stamp is None else int(stamp),
        service_tier=str_or_none(response.get("service_tier")),
        created_at=stamp,
        response=MappingProxyType(echo) if response else None,
    )


def finish_reason_of(response: Mapping[str, Any]) -> str | None:
    status = response.get("status")
    if status == "completed":
        output = response.get("output")
        items = output if isinstance(output, list) else []
        called = any(isinstance(i, JSON_OBJECT) and i.get("type") in _CALL_ITEMS for i in items)
        return "tool_calls" if called else "stop"
    if status == "incomplete":
        details = response.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, JSON_OBJECT) else None
        return "content_filter" if reason == "content_filter" else "length"
    if status == "failed":
        return "error"
    return None  # cancelled, or a stream that stopped while queued / in progress


def _index(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class ResponsesReader(ReaderBase):
    """Responses stream events or a whole `response` object in, raw text and metadata out."""

    kind: ClassVar[Api] = "responses"

    def __init__(self) -> None:
        super().__init__()
        self._parts: dict[PartKey, list[str]] = {}  # the text each part has given so far
        self._item_index: dict[str, int] = {}  # item id -> output index, from `output_item.added`
        # The host's own function calls (it was given the tools), by owner: their index among the
        # response's calls, the argument text read so far, and whether they ended.
        self._calls: dict[int | str, tuple[int, list[str]]] = {}
        self._calls_done: set[int | str] = set()

    def _read(self, obj: Mapping[str, Any]) -> list[InboundEvent]:
        if obj.get("object") == "response":
            return self._meta(lambda: responses_meta(obj)) + self._terminal(obj)
        error = upstream_error(obj)
        if error is not None:
            return [error]
        kind = obj.get("type")
        if not isinstance(kind, str) or not kind.startswith("response."):
            return [Unrecognized(obj)]
        response = obj.get("response")
        out = self._meta(lambda: responses_meta(response if isinstance(response, JSON_OBJECT) else {}))
        if kind in _TERMINAL:
            return out + self._terminal(response if isinstance(response, JSON_OBJECT) else {"status": kind[9:]})
        out.extend(self._event(kind, obj))
        return out

    def _event(self, kind: str, obj: Mapping[str, Any]) -> list[InboundEvent]:
        if kind == "response.output_text.delta":
            return self._delta(self._key(obj, "content", "content_index"), obj.get("delta"), Channel.CONTENT)
        if kind == "response.reasoning_text.delta":
            return self._delta(self._key(obj, "content", "content_index"), obj.get("delta"), Channel.REASONING)
        if kind == "response.reasoning_summary_text.delta":
            return self._delta(self._key(obj, "summary", "summary_index"), obj.get("delta"), Channel.REASONING)
        if kind == "response.output_text.done":
            return self._settle(self._key(obj, "content", "content_index"), obj.get("text"), Channel.CONTENT)
        if kind == "response.reasoning_text.done":
            return self._settle(self._key(obj, "content", "content_index"), obj.get("text"), Channel.REASONING)
        if kind == "response.reasoning_summary_text.done":
            return self._settle(self._key(obj, "summary", "summary_index"), obj.get("text"), Channel.REASONING)
        if kind in ("response.content_part.added", "response.content_part.done"):
            return self._part(self._key(obj, "content", "content_index"), obj.get("part"))
        if kind in ("response.reasoning_summary_part.added", "response.reasoning_summary_part.done"):
            return self._part(self._key(obj, "summary", "summary_index"), obj.get("part"))
        if kind in ("response.output_item.added", "response.output_item.done"):
            item = obj.get("item")
            if isinstance(item, JSON_OBJECT):
                item_id, index = item.get("id"), obj.get("output_index")
                if isinstance(item_id, str) and isinstance(index, int):
                    self._item_index[item_id] = index
                if kind.endswith(".done") or item.get("type") not in _TEXT_ITEMS:
                    return self._item(self._owner(obj), item, done=kind.endswith(".done"))
            return []
        if kind == "response.function_call_arguments.delta":
            return self._call_arguments(self._owner(obj), obj.get("delta"), done=False)
        if kind == "response.function_call_arguments.done":
            return self._call_arguments(self._owner(obj), obj.get("arguments"), done=True)
        if kind.startswith("response.custom_tool_call_input."):
            self._native = True
        elif kind.startswith("response.refusal."):
            self._refusal = True
        return []  # lifecycle, annotations, audio, hosted-tool progress: no raw text

    def _owner(self, obj: Mapping[str, Any]) -> int | str:
        """The item an event belongs to: its output index, or its item id when a host omits that."""
        index = obj.get("output_index")
        if isinstance(index, int) and not isinstance(index, bool):
            return index
        item_id = obj.get("item_id")
        if isinstance(item_id, str):
            return self._item_index.get(item_id, item_id)
        return 0

    def _final_owner(self, position: int, item: Mapping[str, Any]) -> int | str:
        """The owner the events gave an item of the final output: its output index as announced
        by `output_item.added`, its id when the events carried only that, else its position."""
        item_id = item.get("id")
        if isinstance(item_id, str):
            if item_id in self._item_index:
                return self._item_index[item_id]
            if any(key[0] == item_id for key in self._parts):
                return item_id
        return position

    def _key(self, obj: Mapping[str, Any], part: str, index_field: str) -> PartKey:
        return (self._owner(obj), part, _index(obj.get(index_field)))

    def _delta(self, key: PartKey, delta: object, channel: Channel) -> list[InboundEvent]:
        if not isinstance(delta, str) or not delta:
            return []
        self._parts.setdefault(key, []).append(delta)
        self._see(0)
        return [RawText(delta, channel)]

    def _settle(self, key: PartKey, full: object, channel: Channel) -> list[InboundEvent]:
        """Read what a done value has beyond the deltas already read for the same part."""
        if not isinstance(full, str) or not full:
            return []
        pieces = self._parts.setdefault(key, [])
        seen = "".join(pieces)
        if len(full) <= len(seen) or not full.startswith(seen):
            return []
        rest = full[len(seen) :]
        pieces[:] = [full]
        self._see(0)
        return [RawText(rest, channel)]

    def _part(self, key: PartKey, part: object) -> list[InboundEvent]:
        if not isinstance(part, JSON_OBJECT):
            return []
        kind = part.get("type")
        if kind == "refusal":
            self._refusal = self._refusal or bool(part.get("refusal"))
            return []
        channel: Channel = Channel.CONTENT if kind == "output_text" else Channel.REASONING
        if kind not in ("output_text", "reasoning_text", "summary_text"):
            return []
        return self._settle(key, part.get("text"), channel)

    def _item(self, owner: int | str, item: Mapping[str, Any], *, done: bool = True) -> list[InboundEvent]:
        kind = item.get("type")
        if kind == "function_call":
            return self._call(owner, item, done=done)
        if kind not in _TEXT_ITEMS:
            self._native = True  # a hosted tool or a custom call: the host produced it, not raw text
            return []
        out: list[InboundEvent] = []
        content = item.get("content")
        for n, part in enumerate(content if isinstance(content, list) else []):
            out.extend(self._part((owner, "content", n), part))
        summary = item.get("summary")
        for n, part in enumerate(summary if isinstance(summary, list) else []):
            out.extend(self._part((owner, "summary", n), part))
        return out

    def _call(self, owner: int | str, item: Mapping[str, Any], *, done: bool) -> list[InboundEvent]:
        """A `function_call` item the host made: its start once, then (when `done`) the arguments
        the deltas missed and its end. Its `call_id` is the id the client sends the result with."""
        self._native = True
        out: list[InboundEvent] = []
        if owner not in self._calls:
            self._calls[owner] = (len(self._calls), [])
            call_id = str_or_none(item.get("call_id")) or str_or_none(item.get("id"))
            out.append(UpstreamCall(index=self._calls[owner][0], id=call_id, name=str_or_none(item.get("name")) or ""))
        if done:
            out.extend(self._call_arguments(owner, item.get("arguments"), done=True))
        return out

    def _call_arguments(self, owner: int | str, text: object, *, done: bool) -> list[InboundEvent]:
        """A delta of a call's arguments, or (`done`) their whole text: what the deltas missed,
        then the call's end. Pieces of a call never announced, or already ended, are dropped."""
        self._native = True
        if owner not in self._calls or owner in self._calls_done:
            return []
        index, pieces = self._calls[owner]
        rest = ""
        if isinstance(text, str):
            seen = "".join(pieces)
            rest = text if not done else text[len(seen) :] if text.startswith(seen) else ""
        if rest:
            pieces.append(rest)
        if done:
            self._calls_done.add(owner)
        elif not rest:
            return []
        return [UpstreamCall(index=index, arguments=rest, done=done)]

    def _terminal(self, response: Mapping[str, Any]) -> list[InboundEvent]:
        """A terminal event's response, or a whole response object: the output's text the events
        did not give, the error of a failed response, the usage, the end."""
        out: list[InboundEvent] = []
        output = response.get("output")
        for position, item in enumerate(output if isinstance(output, list) else []):
            if isinstance(item, JSON_OBJECT):
                out.extend(self._item(self._final_owner(position, item), item))
        if response.get("status") == "failed":
            error = response.get("error")
            out.append(
                error_from(error, response)
                if isinstance(error, JSON_OBJECT)
                else UpstreamError(message="the upstream response failed", body=response)
            )
        self._note_usage(response.get("usage"))
        self._finished(0, finish_reason_of(response))
        return out + self._end(complete=True)


__all__ = [
    "PartKey",
    "ResponsesReader",
    "finish_reason_of",
    "responses_meta",
]
