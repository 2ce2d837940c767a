"""Legacy `/v1/completions` from the upstream: `text_completion` objects, streamed and whole.

The raw text is `choices[].text`. A stream's chunks and a whole body share one `object`
(`text_completion`), so the reader is told which it reads: `stream=False` makes the one body the
whole response. Every choice of an `n > 1` request is read, keyed by its `index`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ..._api_names import Api
from ..._schema import JSON_OBJECT
from ...inbound._base import ReaderBase, choices_meta, upstream_error
from ...inbound._events import Channel, InboundEvent, RawText, Unrecognized


def is_text_completion(obj: Mapping[str, Any]) -> bool:
    """By `object`; a host that omits it is judged by its choices (`text`), or a bare usage chunk."""
    kind = obj.get("object")
    if kind == "text_completion":
        return True
    choices = obj.get("choices")
    if kind is not None or not isinstance(choices, list):
        return False
    if not choices:
        return False  # a bare usage chunk is ambiguous without `object`: Chat hosts send it too
    first = choices[0]
    return isinstance(first, JSON_OBJECT) and isinstance(first.get("text"), str) and "delta" not in first


class CompletionsReader(ReaderBase):
    """`text_completion` objects in, raw text and metadata out.

    With `stream=True` (the default) the response ends at `[DONE]` or `flush()`; with
    `stream=False` the first body is the whole response.
    """

    kind: ClassVar[Api] = "completions"

    def __init__(self, *, stream: bool = True) -> None:
        super().__init__()
        self._stream = stream

    def _read(self, obj: Mapping[str, Any]) -> list[InboundEvent]:
        error = upstream_error(obj)
        if error is not None:
            return [error]
        usage_only = obj.get("choices") == [] and obj.get("object") in (None, "text_completion")
        if not (is_text_completion(obj) or usage_only):
            return [Unrecognized(obj)]
        out = self._meta(lambda: choices_meta(obj, "completions"))
        self._note_usage(obj.get("usage"))
        for index, choice in self._choices(obj):
            text = choice.get("text")
            if isinstance(text, str) and text:
                out.append(RawText(text, Channel.CONTENT, index))
            self._finished(index, choice.get("finish_reason"))
        if not self._stream:
            out.extend(self._end(complete=True))
        return out


__all__ = [
    "CompletionsReader",
    "is_text_completion",
]
