"""What every inbound reader shares: the feed/flush contract, the end of a response, error objects,
and reading text out of the shapes hosts use for it (a string, or a list of content parts)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Protocol

from .._api_names import Api
from .._depth import MAX_DEPTH, deeper
from .._schema import JSON_OBJECT
from ..framing._utf8 import json_loads
from ._events import Channel, InboundEvent, RawText, Unrecognized, UpstreamDone, UpstreamError, UpstreamMeta
from ._template import TextTemplate

DONE = "[DONE]"
"""The data of the SSE event that ends a Chat or completions stream (fed to a reader as is)."""

NOT_DECODED: Any = object()
"""`feed_data`'s default: its data is not decoded yet."""


class Reader(Protocol):
    """`feed(obj)` takes one decoded JSON value (or the `[DONE]` data string); `flush()` says the
    upstream's body ended. Both return the events the input completes; neither looks back."""

    @property
    def kind(self) -> Api: ...

    @property
    def has_native_tool_calls(self) -> bool: ...

    @property
    def has_refusal(self) -> bool: ...

    def feed(self, obj: object) -> list[InboundEvent]: ...

    def feed_data(self, data: str, decoded: object = NOT_DECODED) -> list[InboundEvent] | None: ...

    @property
    def template(self) -> TextTemplate | None: ...

    # The chunk the template is to learn next (`settle` teaches it; see `ReaderBase`).
    lesson: tuple[TextTemplate, str, dict[str, Any], RawText] | None

    def settle(self) -> None: ...

    @property
    def done(self) -> bool: ...

    def flush(self) -> list[InboundEvent]: ...


def decode_data(data: str, max_depth: int = MAX_DEPTH) -> object | None:
    """One SSE event's data (or a whole body) as a reader takes it: its JSON decoded, the `[DONE]`
    marker as the string it is, `None` for anything else, and for JSON nested deeper than
    `max_depth` levels of arrays and objects: an answer we do not read, which passes through.

    The limit is ours, not the decoder's: json's own decoder gives up at a depth that depends on
    the Python version (about 1000 on 3.11, further from 3.12 on), and the answer must not be
    rewritten on one Python and passed through on another."""
    if data.startswith("[DONE]") and data.strip() == DONE:
        return data  # every stream's last event: not tried as JSON (a raised error costs microseconds)
    try:
        value: object = json_loads(data)
    except ValueError:
        return data if data.strip() == DONE else None
    except RecursionError:  # nested too deep for JSON's decoder: not an answer we can read
        return None
    # A value nests at most as deep as it has brackets and braces: most data is measured by that
    # count alone, without a walk.
    if data.count("[") + data.count("{") > max_depth and deeper(value, max_depth):
        return None
    return value


def str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def int_or_none(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def upstream_error(obj: Mapping[str, Any]) -> UpstreamError | None:
    """The error an object carries: a truthy top-level `error` (what openai-python raises
    `APIError` on, in any shape hosts send: an object, a string), or a flat Responses `error` event."""
    error = obj.get("error")
    if error:
        if isinstance(error, JSON_OBJECT):
            return error_from(error, obj)
        return UpstreamError(message=str(error), body=obj)
    if obj.get("type") == "error":
        return error_from(obj, obj)
    return None


def error_from(error: Mapping[str, Any], body: Mapping[str, Any]) -> UpstreamError:
    code = error.get("code")
    return UpstreamError(
        message=str(error.get("message") or "upstream error"),
        type=str_or_none(error.get("type")),
        code=None if code is None else str(code),  # llama.cpp sends the HTTP status as a number
        param=str_or_none(error.get("param")),
        body=body,
    )


def content_texts(content: object, choice: int) -> tuple[list[RawText], bool]:
    """Text out of a `content` value, and whether it held a refusal part.

    A string is content. A list of parts: `text` / `output_text` parts are content; Mistral's
    `thinking` parts (`{"type": "thinking", "thinking": [text parts] or str}`) and `reasoning_text`
    parts are reasoning; other parts (images, audio) carry no text.
    """
    if isinstance(content, str):
        return ([RawText(content, Channel.CONTENT, choice)] if content else []), False
    out: list[RawText] = []
    refusal = False
    if not isinstance(content, list):
        return out, refusal
    for part in content:
        if isinstance(part, str):  # a bare string in the list: some hosts write parts that way
            if part:
                out.append(RawText(part, Channel.CONTENT, choice))
            continue
        if not isinstance(part, JSON_OBJECT):
            continue
        kind = part.get("type")
        if kind == "thinking":
            inner, _ = content_texts(part.get("thinking"), choice)
            out.extend(RawText(t.text, Channel.REASONING, choice) for t in inner)
        elif kind == "refusal":
            refusal = refusal or bool(part.get("refusal"))
        elif kind in ("text", "output_text", "reasoning_text", None):
            text = part.get("text")
            if isinstance(text, str) and text:
                channel: Channel = Channel.REASONING if kind == "reasoning_text" else Channel.CONTENT
                out.append(RawText(text, channel, choice))
    return out, refusal


def reasoning_text(message: Mapping[str, Any]) -> str | None:
    """The reasoning a Chat message or delta carries: `reasoning_content` (DeepSeek, llama.cpp,
    vLLM before 0.19) or `reasoning` (vLLM 0.19+, Ollama, OpenRouter, Groq). Hosts migrating between
    the names send both with the same text, so one is read: `reasoning_content` when it has text."""
    first = message.get("reasoning_content")
    if isinstance(first, str) and first:
        return first
    second = message.get("reasoning")
    return second if isinstance(second, str) and second else None


class ReaderBase:
    """The state every reader keeps: whether the meta went out, each choice's finish reason, the
    last usage seen, whether the response ended; and the end itself (`[DONE]`, `flush()`)."""

    kind: ClassVar[Api]

    def __init__(self) -> None:
        self.max_depth = MAX_DEPTH  # data nested deeper is no answer (`decode_data`; `reader_for` sets it)
        self._meta_sent = False
        self.done = False  # the end came (`[DONE]`, a whole body): nothing more is read
        self._finish: dict[int, str | None] = {}
        self._stop_sequence: str | None = None  # the stop sequence that ended the first choice
        self._usage: Mapping[str, Any] | None = None
        self._native = False
        self._refusal = False
        self._template: TextTemplate | None = None  # set by readers that can learn one
        # The chunk the template is to learn next (`settle`): learned when the template is next
        # asked for, not while the chunk's own text is on its way to the client.
        self.lesson: tuple[TextTemplate, str, dict[str, Any], RawText] | None = None

    @property
    def has_native_tool_calls(self) -> bool:
        """The upstream returned structured calls of its own (a host that parses itself): the
        middleware passes such a response through untouched instead of parsing its text."""
        return self._native

    @property
    def has_refusal(self) -> bool:
        """The upstream returned a structured refusal, which is not raw text: pass through too."""
        return self._refusal

    def feed(self, obj: object) -> list[InboundEvent]:
        if self.done:
            return [Unrecognized(obj)]  # nothing follows the end; hand it back rather than drop it
        if isinstance(obj, str) and obj.startswith(DONE):  # as openai-python: data starting with [DONE]
            return self._end(complete=True)
        if not isinstance(obj, JSON_OBJECT):
            return [Unrecognized(obj)]
        return self._read(obj)

    def feed_data(self, data: str, decoded: object = NOT_DECODED) -> list[InboundEvent] | None:
        """`feed(decode_data(data))` for one SSE event's data; `None` when it is not JSON (nor
        `[DONE]`). `decoded`: `decode_data(data)`, when the caller has it already (the event that
        told the answer's kind). A chunk that reads as one text event may teach the reader's
        template (`TextTemplate`), which the answer's fast path reads later chunks with."""
        if self.lesson is not None:
            self.settle()
        obj = decode_data(data, self.max_depth) if decoded is NOT_DECODED else decoded
        if obj is None:
            return None
        events = self.feed(obj)
        template = self._template
        if template is not None and len(events) == 1 and isinstance(events[0], RawText) and isinstance(obj, dict):
            self.lesson = (template, data, obj, events[0])  # (learned when next asked for)
        return events

    def settle(self) -> None:
        """Teach the template the last chunk that can teach it, if it has not learned it yet:
        done whenever the template is asked for (its readers, `Answer`), so that learning is
        never on the way of the text of the chunk it learns from. The chunk is as it was read:
        nothing writes to a decoded chunk."""
        lesson, self.lesson = self.lesson, None
        if lesson is not None:
            self._learn(*lesson)

    @property
    def template(self) -> TextTemplate | None:
        """The chunk template this reader reads plain text chunks with (`None`: none); what it
        learns comes in when it is next asked for (`settle`)."""
        if self.lesson is not None:
            self.settle()
        return self._template

    def _learn(self, template: TextTemplate, data: str, obj: dict[str, Any], event: RawText) -> None:
        """Teach `template` this chunk when reading it again would change nothing but the text."""

    def flush(self) -> list[InboundEvent]:
        """The body ended. A stream that ended without its end marker ends here, `complete=False`."""
        if self.done:
            return []
        return self._end(complete=False)

    def _read(self, obj: Mapping[str, Any]) -> list[InboundEvent]:
        raise NotImplementedError

    def _meta(self, build: Callable[[], UpstreamMeta]) -> list[InboundEvent]:
        """The metadata event, once per response: built only then, not on every chunk."""
        if self._meta_sent:
            return []
        self._meta_sent = True
        return [build()]

    def _choices(self, obj: Mapping[str, Any]) -> list[tuple[int, Mapping[str, Any]]]:
        """`(index, choice)` for each well-formed entry of `choices`, each seen; a choice without
        an `index` counts by its position. (A list, not a generator, with `_see` and `int_or_none`
        written out: every decoded chunk is read through here.)"""
        choices = obj.get("choices")
        if not isinstance(choices, list):
            return []
        out: list[tuple[int, Mapping[str, Any]]] = []
        finish = self._finish
        for position, choice in enumerate(choices):
            if not isinstance(choice, JSON_OBJECT):
                continue
            index = choice.get("index")
            if type(index) is not int:
                index = int_or_none(index)
                if index is None:
                    index = position
            if index not in finish:
                finish[index] = None
            out.append((index, choice))
        return out

    def _see(self, choice: int) -> None:
        self._finish.setdefault(choice, None)

    def _finished(self, choice: int, reason: object) -> None:
        # The wire allows one reason per choice; a repeat from a sloppy host does not overwrite it.
        finish = self._finish
        if choice not in finish:
            finish[choice] = None
        if reason and isinstance(reason, str) and finish[choice] is None:
            finish[choice] = reason

    def _stopped_by(self, choice: int, sequence: object) -> None:
        """The stop sequence a host says ended a choice (vLLM's `stop_reason`, Anthropic's
        `stop_sequence`); only the first choice's is kept, as only it has a Messages answer."""
        if choice == 0 and isinstance(sequence, str) and sequence:
            self._stop_sequence = sequence

    def _note_usage(self, usage: object) -> None:
        # The last one wins: hosts with continuous usage stats send a running total on every chunk.
        if usage and isinstance(usage, JSON_OBJECT):
            self._usage = usage

    def _end(self, *, complete: bool) -> list[InboundEvent]:
        out = self._meta(lambda: UpstreamMeta(kind=self.kind))
        self.done = True
        reasons = dict(sorted(self._finish.items()))
        first = reasons[min(reasons)] if reasons else None
        out.append(
            UpstreamDone(
                finish_reason=first,
                usage=self._usage,
                finish_reasons=reasons,
                complete=complete,
                stop_sequence=self._stop_sequence,
            )
        )
        return out


def choices_meta(obj: Mapping[str, Any], kind: Api) -> UpstreamMeta:
    """The metadata of a `choices`-shaped object (Chat Completions, legacy completions)."""
    # (`str_or_none` written out: this runs on every response)
    id_, model = obj.get("id"), obj.get("model")
    fingerprint, tier = obj.get("system_fingerprint"), obj.get("service_tier")
    return UpstreamMeta(
        kind=kind,
        id=id_ if isinstance(id_, str) and id_ else None,
        model=model if isinstance(model, str) and model else None,
        created=int_or_none(obj.get("created")),
        system_fingerprint=fingerprint if isinstance(fingerprint, str) else None,
        service_tier=tier if isinstance(tier, str) else None,
    )


__all__ = [
    "DONE",
    "NOT_DECODED",
    "Reader",
    "ReaderBase",
    "choices_meta",
    "content_texts",
    "decode_data",
    "error_from",
    "int_or_none",
    "reasoning_text",
    "str_or_none",
    "upstream_error",
]
