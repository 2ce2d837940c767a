"""Chat Completions: streamed chunks and the whole `chat.completion` body, exact for OpenAI clients.

Rules from the SDK's types and stream accumulator (`reference/wire.md` §0, §2): `role` only in
the first delta; a call's first fragment carries `index`, `id`, `type`, `function.name` and
`function.arguments: ""`, later fragments only `index` and `function.arguments`; indexes 0, 1,
2…; exactly one `finish_reason`; `tool_calls` whenever a call went out; `content` null when
empty; the usage chunk has `choices: []`. The deprecated `functions` API gets `function_call`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from ..._events import Event, ReasoningDelta, TextDelta, ToolCallDelta, ToolCallStart, TruncatedCall
from ..._result import ParseResult
from ...emitters._ids import CallIds, tool_call_id
from ...emitters._meta import Upstream
from ...framing._utf8 import token_bytes
from ...framing.sse import SSETemplate, encode_data, json_token

ReasoningField = Literal["reasoning_content", "reasoning", "both", "none"]

_PROBE = "toolcall-text-probe"


def finish_reason_for(*, called: bool, truncated: bool, upstream: str | None, legacy: bool = False) -> str:
    """`tool_calls` whenever a call went out (a complete call must reach the client even when a
    later one was cut off), else `length` when cut off, else the upstream's reason or `stop`."""
    if called:
        return "function_call" if legacy else "tool_calls"
    if truncated or upstream == "length":
        return "length"
    if upstream in ("stop", "content_filter"):
        return upstream
    return "stop"


def reasoning_fields(text: str, field: ReasoningField) -> dict[str, str]:
    if field == "none":
        return {}
    if field == "both":
        return {"reasoning_content": text, "reasoning": text}
    return {field: text}


class ChatStreamEmitter:
    """Events in, `chat.completion.chunk` objects out.

    ```python
    emitter = ChatStreamEmitter(Upstream(model="qwen3"), include_usage=True)
    chunks = emitter.feed(parser.feed(delta)) ... + emitter.finish()
    ```
    """

    def __init__(
        self,
        upstream: Upstream,
        *,
        reasoning_field: ReasoningField = "reasoning_content",
        include_usage: bool = False,
        legacy_functions: bool = False,
        call_ids: CallIds = "model",
        choice: int = 0,
    ) -> None:
        self.upstream = upstream
        self._choice = choice  # the choice's `index` (requests with `n > 1`)
        self._reasoning_field = reasoning_field
        self._include_usage = include_usage
        self._legacy = legacy_functions
        self._call_ids: CallIds = call_ids
        self._role_sent = False
        self._called = False
        self._truncated = False
        self._finished = False
        self._ids: dict[int, str] = {}
        self._legacy_index: int | None = None  # the one call the functions API can carry
        # The text and reasoning chunks' frames (`text_frame`), by field name. Made once: the
        # upstream fields they hold (id, created, model, system fingerprint) are the stream's
        # identity, fixed when its `Upstream` is made (only its end's fields change later).
        self._frames: dict[str, tuple[bytes, bytes] | None] = {}

    @property
    def called(self) -> bool:
        return self._called

    def _chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        if not self._role_sent:
            delta = {"role": "assistant", **delta}
            self._role_sent = True
        chunk: dict[str, Any] = {
            "id": self.upstream.id,
            "object": "chat.completion.chunk",
            "created": self.upstream.created,
            "model": self.upstream.model,
            "choices": [{"index": self._choice, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
        }
        if self.upstream.system_fingerprint is not None:
            chunk["system_fingerprint"] = self.upstream.system_fingerprint
        if self._include_usage:
            chunk["usage"] = None
        return chunk

    def feed(self, events: Iterable[Event]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        text: list[str] = []
        reasoning: list[str] = []

        def flush_text() -> None:
            if reasoning:
                fields = reasoning_fields("".join(reasoning), self._reasoning_field)
                if fields:
                    out.append(self._chunk(fields))
                reasoning.clear()
            if text:
                out.append(self._chunk({"content": "".join(text)}))
                text.clear()

        for event in events:
            if isinstance(event, TextDelta):
                if reasoning:
                    flush_text()
                text.append(event.text)
            elif isinstance(event, ReasoningDelta):
                if text:
                    flush_text()
                reasoning.append(event.text)
            else:
                if text or reasoning:
                    flush_text()
                out.extend(self._call_event(event))
        if text or reasoning:
            flush_text()
        return out

    def opening(self) -> list[dict[str, Any]]:
        """The first chunk (`role`, empty `content`) if none went out yet. With several choices,
        a choice must appear before any higher one does: the SDK's accumulator appends them in order."""
        return [] if self._role_sent else [self._chunk({"content": ""})]

    def feed_sse(self, events: list[Event]) -> bytes:
        """`feed`, encoded as SSE. A piece that is text or reasoning alone (most of them) is written
        into a template of its chunk, made once per response: the same bytes, without the dicts."""
        if len(events) == 1:
            event = events[0]
            kind = type(event)
            if (kind is TextDelta or kind is ReasoningDelta) and isinstance(event, (TextDelta, ReasoningDelta)):
                out = self.text_sse(event.text, "content" if kind is TextDelta else "reasoning")
                if out is not None:
                    return out
        return b"".join([encode_data(c) for c in self.feed(events)])

    def logprobs_sse(self, text: str, logprobs: list[Any]) -> bytes:
        """A text chunk carrying the host's log probabilities of its tokens (`logprobs.content`)."""
        chunk = self._chunk({"content": text})
        chunk["choices"][0]["logprobs"] = {"content": logprobs, "refusal": None}
        return encode_data(chunk)

    def text_sse(self, text: str, channel: Literal["content", "reasoning"] = "content") -> bytes | None:
        """`feed_sse([TextDelta(text)])` (a `ReasoningDelta` for `channel="reasoning"`) written into
        the chunk's template (`text_frame`); `None` when there is none (the first chunk, which
        carries the role; a probe in the upstream's fields; reasoning under no field or both)."""
        frame = self._frames.get("content") if channel == "content" else None  # (made at the first text)
        if frame is None:
            frame = self.text_frame(channel)
            if frame is None:
                return None
        return frame[0] + token_bytes(text) + frame[1]

    def text_frame(self, channel: Literal["content", "reasoning"] = "content") -> tuple[bytes, bytes] | None:
        """The bytes before and after the JSON string token of a text chunk's `content` (or of a
        reasoning chunk's one reasoning field), made once per response; `None` as for `text_sse`,
        and for reasoning under no field or both."""
        if not self._role_sent:
            return None
        name = "content" if channel == "content" else self._reasoning_field
        if name in ("none", "both"):
            return None
        if name not in self._frames:
            template = SSETemplate.of(encode_data(self._chunk({name: _PROBE})), json_token(_PROBE))
            if template is None:
                self._frames[name] = None
            else:
                head, tail = template.parts
                self._frames[name] = head, tail
        return self._frames[name]

    def _call_event(self, event: Event) -> list[dict[str, Any]]:
        if isinstance(event, TruncatedCall):
            self._truncated = True
            return []
        if isinstance(event, ToolCallStart):
            self._called = True
            if self._legacy:
                if self._legacy_index is not None:
                    return []  # the functions API has room for one call
                self._legacy_index = event.index
                return [self._chunk({"content": None, "function_call": {"name": event.name, "arguments": ""}})]
            cid = tool_call_id(event.id, self._call_ids)
            self._ids[event.index] = cid
            fragment = {
                "index": event.index,
                "id": cid,
                "type": "function",
                "function": {"name": event.name, "arguments": ""},
            }
            return [
                self._chunk(
                    {"content": None, "tool_calls": [fragment]} if not self._role_sent else {"tool_calls": [fragment]}
                )
            ]
        if isinstance(event, ToolCallDelta):
            if not event.arguments:
                return []
            if self._legacy:
                if event.index != self._legacy_index:
                    return []
                return [self._chunk({"function_call": {"arguments": event.arguments}})]
            return [self._chunk({"tool_calls": [{"index": event.index, "function": {"arguments": event.arguments}}]})]
        return []  # ToolCallEnd: the fragments already carried the arguments

    def finish(self, *, usage: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """The closing chunk with `finish_reason`, then the usage chunk when it was asked for."""
        if self._finished:
            return []
        self._finished = True
        reason = finish_reason_for(
            called=self._called, truncated=self._truncated, upstream=self.upstream.finish_reason, legacy=self._legacy
        )
        out = [self._chunk({"content": ""} if not self._role_sent else {}, reason)]
        usage = usage if usage is not None else (dict(self.upstream.usage) if self.upstream.usage else None)
        if self._include_usage:
            final = {k: v for k, v in out[0].items() if k != "choices"}
            final["choices"] = []
            final["usage"] = usage or {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
            out.append(final)
        return out

    def error(
        self,
        message: str,
        *,
        code: str = "invalid_tool_call",
        param: str | None = None,
        kind: str = "invalid_request_error",
    ) -> list[dict[str, Any]]:
        """A mid-stream failure: the closing chunk has `finish_reason: "error"` and an `error` object
        (`type` is `kind`), which the openai SDK raises as `APIError`."""
        self._finished = True
        chunk = self._chunk({}, "error")
        chunk["error"] = {"message": message, "type": kind, "code": code, "param": param}
        return [chunk]


class ChatMessageBuilder:
    """A whole parse -> the `chat.completion` body.

    ```python
    body = ChatMessageBuilder(Upstream(model="qwen3")).build(parse(text, "hermes"))
    ```
    """

    def __init__(
        self,
        upstream: Upstream,
        *,
        reasoning_field: ReasoningField = "reasoning_content",
        legacy_functions: bool = False,
        extensions: bool = False,
        call_ids: CallIds = "model",
    ) -> None:
        self.upstream = upstream
        self._reasoning_field = reasoning_field
        self._legacy = legacy_functions
        self._extensions = extensions
        self._call_ids: CallIds = call_ids

    def message(self, result: ParseResult) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": result.content, "refusal": None}
        if result.reasoning is not None:
            message.update(reasoning_fields(result.reasoning, self._reasoning_field))
        if result.tool_calls:
            if self._legacy:
                first = result.tool_calls[0]
                message["function_call"] = {"name": first.name, "arguments": first.arguments}
            else:
                message["tool_calls"] = [
                    {
                        "id": tool_call_id(c.id, self._call_ids),
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments},
                    }
                    for c in result.tool_calls
                ]
        return message

    def build(self, result: ParseResult, *, usage: dict[str, Any] | None = None) -> dict[str, Any]:
        reason = finish_reason_for(
            called=bool(result.tool_calls),
            truncated=result.truncated is not None,
            upstream=self.upstream.finish_reason,
            legacy=self._legacy,
        )
        body: dict[str, Any] = {
            "id": self.upstream.id,
            "object": "chat.completion",
            "created": self.upstream.created,
            "model": self.upstream.model,
            "choices": [{"index": 0, "message": self.message(result), "logprobs": None, "finish_reason": reason}],
        }
        usage = usage if usage is not None else (dict(self.upstream.usage) if self.upstream.usage else None)
        body["usage"] = usage or {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        if self.upstream.system_fingerprint is not None:
            body["system_fingerprint"] = self.upstream.system_fingerprint
        if self.upstream.service_tier is not None:
            body["service_tier"] = self.upstream.service_tier
        if self._extensions:
            body["extensions"] = extensions(body["choices"][0]["message"], result)
        return body


def extensions(message: dict[str, Any], result: ParseResult) -> dict[str, Any]:
    """`extensions: {reasoning_chunks, tool_call_chunks}`: the parse as records, the way some serving
    stacks expose it next to the message (one start / args / end record per call)."""
    chunks: list[dict[str, Any]] = []
    for index, call in enumerate(message.get("tool_calls") or []):
        fn = call["function"]
        chunks.append({"type": "start", "index": index, "id": call["id"], "name": fn["name"]})
        chunks.append({"type": "args", "index": index, "arguments": fn["arguments"]})
        chunks.append({"type": "end", "index": index})
    return {"reasoning_chunks": [result.reasoning] if result.reasoning else [], "tool_call_chunks": chunks}


__all__ = [
    "ChatMessageBuilder",
    "ChatStreamEmitter",
    "ReasoningField",
    "extensions",
    "finish_reason_for",
    "reasoning_fields",
]
