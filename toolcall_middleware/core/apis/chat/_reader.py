"""Chat Completions from the upstream: streamed `chat.completion.chunk`s and whole `chat.completion`s.

Raw text is in `delta.content` / `message.content` (a string or a list of text parts), reasoning
in `reasoning_content` or `reasoning`. Within one delta or message the reasoning comes first, as
the model wrote it. The usage chunk (`choices: []`) and `[DONE]` end a stream.

Several choices (`n > 1`): every choice is read, and each `RawText` carries its choice's index,
so the middleware runs one parser per choice and every choice comes out correct. A host that
streams choices interleaved is fine: the text of one index is still in order.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from ..._api_names import Api
from ..._schema import JSON_OBJECT
from ...inbound._base import (
    ReaderBase,
    choices_meta,
    content_texts,
    int_or_none,
    reasoning_text,
    str_or_none,
    upstream_error,
)
from ...inbound._events import Channel, InboundEvent, RawText, Unrecognized, UpstreamCall
from ...inbound._template import TextTemplate, holder_of, text_key

Shape = Literal["chunk", "completion"]

# Where a delta's text is, by channel, in the order `_message` reads it.
_TEXT_KEYS: dict[Channel, tuple[str, ...]] = {
    Channel.CONTENT: ("content",),
    Channel.REASONING: ("reasoning_content", "reasoning"),
}


def chat_shape(obj: Mapping[str, Any]) -> Shape | None:
    """`chunk` or `completion` by `object`; a host that omits `object` is judged by its choices
    (`delta` or `message`). Any other `object` (Azure's `""` filter chunk) is not a Chat object."""
    kind = obj.get("object")
    if kind == "chat.completion.chunk":
        return "chunk"
    if kind == "chat.completion":
        return "completion"
    choices = obj.get("choices")
    if kind is not None or not isinstance(choices, list):
        return None
    first = choices[0] if choices else None
    if isinstance(first, JSON_OBJECT):
        message = first.get("message")  # (None in a chunk: not put to the ABC's slow check)
        if message is not None and isinstance(message, JSON_OBJECT):
            return "completion"
        if isinstance(first.get("delta"), JSON_OBJECT):
            return "chunk"
        return None
    return "chunk" if not choices and "usage" in obj else None


def with_logprobs(texts: list[RawText], logprobs: list[Any]) -> list[RawText]:
    """A choice's texts with the host's log probabilities of its content's tokens, given to its
    one content text (the API gives none for reasoning; content in several parts gets none)."""
    content = [i for i, t in enumerate(texts) if t.channel == "content"]
    if len(content) != 1:
        return texts
    i = content[0]
    text = texts[i]
    return [*texts[:i], RawText(text.text, text.channel, text.choice, logprobs), *texts[i + 1 :]]


class ChatReader(ReaderBase):
    """Chat Completions objects in, raw text and metadata out.

    ```python
    reader = ChatReader()
    for data in sse_datas:  # each SSE event's data: the chunk decoded, or the string "[DONE]"
        events = reader.feed(json.loads(data) if data != "[DONE]" else data)
    events = reader.flush()
    ```
    A whole `chat.completion` body gives everything, `UpstreamDone` included, from one `feed`.
    """

    kind: ClassVar[Api] = "chat"

    def __init__(self) -> None:
        super().__init__()
        self._template = TextTemplate()
        # A host that makes tool calls itself (it was given the tools: `forward_tools`) streams
        # them as `tool_calls` deltas; a call has no end of its own there: the choice's finish, or
        # the stream's, ends it. By choice: the indexes of its calls not yet ended.
        self._open_calls: dict[int, list[int]] = {}

    def _read(self, obj: Mapping[str, Any]) -> list[InboundEvent]:
        error = upstream_error(obj)
        if error is not None:
            return [error]
        shape = chat_shape(obj)
        if shape is None:
            return [Unrecognized(obj)]
        out = self._meta(lambda: choices_meta(obj, "chat"))
        self._note_usage(obj.get("usage"))
        key = "delta" if shape == "chunk" else "message"
        for index, choice in self._choices(obj):
            message = choice.get(key)
            if isinstance(message, JSON_OBJECT):
                texts = self._message(message, index)
                logprobs = choice.get("logprobs")
                if logprobs and isinstance(logprobs, JSON_OBJECT) and isinstance(logprobs.get("content"), list):
                    texts = with_logprobs(texts, logprobs["content"])
                out.extend(texts)
                out.extend(self._calls(message, index, whole=shape == "completion"))
            if choice.get("finish_reason"):
                out.extend(self._end_calls(index))
                # vLLM names the stop string that ended the choice (a token id when it was one).
                self._stopped_by(index, choice.get("stop_reason"))
            self._finished(index, choice.get("finish_reason"))
        if shape == "completion":
            out.extend(self._end(complete=True))
        return out

    def _calls(self, message: Mapping[str, Any], choice: int, *, whole: bool) -> list[InboundEvent]:
        """The host's own calls in a delta or message (`tool_calls`, or the legacy `function_call`),
        as `UpstreamCall` pieces; a whole message's calls are whole."""
        calls = message.get("tool_calls")
        legacy = message.get("function_call")
        if not (isinstance(calls, list) and calls) and (legacy is None or not isinstance(legacy, JSON_OBJECT)):
            return []
        self._native = True  # `tool_calls: []` on every delta (some hosts) is no call
        entries: list[tuple[int, Mapping[str, Any], Any]] = []
        if isinstance(calls, list):
            for position, call in enumerate(calls):
                if isinstance(call, JSON_OBJECT):
                    index = int_or_none(call.get("index"))
                    entries.append((position if index is None else index, call.get("function") or {}, call.get("id")))
        if isinstance(legacy, JSON_OBJECT):
            entries.append((0, legacy, None))
        out: list[InboundEvent] = []
        open_calls = self._open_calls.setdefault(choice, [])
        for index, function, call_id in entries:
            if not isinstance(function, JSON_OBJECT):
                continue
            arguments = function.get("arguments")
            if isinstance(arguments, JSON_OBJECT):  # some hosts send the object itself
                arguments = json.dumps(arguments, ensure_ascii=False)
            first = index not in open_calls
            if first and not whole:
                open_calls.append(index)
            out.append(
                UpstreamCall(
                    index=index,
                    id=str_or_none(call_id) if first else None,
                    name=str_or_none(function.get("name")) if first else None,
                    arguments=arguments if isinstance(arguments, str) else "",
                    done=whole,
                    choice=choice,
                )
            )
        return out

    def _end_calls(self, choice: int) -> list[InboundEvent]:
        """The choice finished: its calls still open end here."""
        return [UpstreamCall(index=i, done=True, choice=choice) for i in self._open_calls.pop(choice, [])]

    def _end(self, *, complete: bool) -> list[InboundEvent]:
        ended = [e for choice in sorted(self._open_calls) for e in self._end_calls(choice)]
        return ended + super()._end(complete=complete)

    def _learn(self, template: TextTemplate, data: str, obj: dict[str, Any], event: RawText) -> None:
        # Only a chunk whose every other part is a no-op to read again: one choice, no finish
        # reason, no usage (the last one seen wins), no calls or refusal.
        choices = obj.get("choices")
        if obj.get("usage") or self._native or self._refusal or chat_shape(obj) != "chunk":
            return
        if not isinstance(choices, list) or len(choices) != 1 or not isinstance(choices[0], dict):
            return
        if choices[0].get("finish_reason") or choices[0].get("logprobs"):
            return  # (a chunk with log probabilities never repeats its shape, and they are read)
        delta = holder_of(obj, "choices", 0, "delta")
        key = None if delta is None else text_key(delta, event.channel, event.text, _TEXT_KEYS)
        if key is not None:
            template.learn(data, event, key, lambda o: holder_of(o, "choices", 0, "delta"), obj)

    def _message(self, message: Mapping[str, Any], index: int) -> list[RawText]:
        out: list[RawText] = []
        reasoning = reasoning_text(message)
        if reasoning:
            out.append(RawText(reasoning, Channel.REASONING, index))
        texts, refusal = content_texts(message.get("content"), index)
        out.extend(texts)
        if refusal or (isinstance(message.get("refusal"), str) and message["refusal"]):
            self._refusal = True
        return out


__all__ = [
    "ChatReader",
    "Shape",
    "chat_shape",
    "with_logprobs",
]
