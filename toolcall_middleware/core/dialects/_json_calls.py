"""The block shared by the formats that write their calls as JSON after an opening marker.

```
<|tool_call|>[{"name": "f", "arguments": {…}}, …]              granite (no closing marker)
functools[{"name": "f", "arguments": {…}}]                      phi4_mini, firefunction_v2
<tool_calls>[{"name": "f", "arguments": {…}}]</tool_calls>      jamba, hunyuan_a13b
<TOOLCALL>[…]</TOOLCALL>                                        nemotron
<|START_ACTION|>[{"tool_name": "f", "parameters": {…}}]<|END_ACTION|>   cohere_command
<|tools_prefix|>[{"f": {…}}]<|tools_suffix|>                   apertus
<function_call> {"name": "f", "arguments": {…}}                 granite_20b_fc (one object)
<tool_calls>\\n{…}\\n{…}\\n</tool_calls>                           minimax_m1 (objects, one a line)
```

A `JsonCallsSyntax` says what follows the opener: one JSON array of calls, one call object, or
a run of call objects; the closing marker, if the format has one; and how one JSON item reads as
a call. The value's end is found by tracking brackets and strings as the text arrives
(`JsonDepth`), so a value that holds the closing marker, `]` or `}` stays inside. The calls are
handed out together once the block is complete (its closing marker read, or its value closed
where there is no marker): a block whose items are not all calls, or that is not followed by its
closing marker, is text as written. Output that ends inside a block is a `TruncatedCall`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal

from .._textscan import WHITESPACE, JsonDepth
from ..framing._utf8 import json_loads
from ._base import Block, BlockItem, Call, load_object
from .hermes import call_from_object

Shape = Literal["array", "object", "objects", "any"]


@dataclass(frozen=True)
class JsonCallsSyntax:
    """What follows a format's opening marker.

    `shape`: `"array"` (one JSON array of calls), `"object"` (one call object), `"objects"` (call
    objects separated by whitespace, up to `close`), `"any"` (an array or one object). `close`:
    the marker after the JSON, `""` when the JSON's own end ends the block. `read`: one item
    (an element of the array, or the object) as a call, `None` when it is not one.
    """

    shape: Shape = "array"
    close: str = ""
    read: Callable[[Any], Call | None] = lambda item: call_from_object(item) if isinstance(item, dict) else None


class _State(Enum):
    LEAD = "lead"  # whitespace after the opener, before the JSON
    VALUE = "value"  # inside the JSON value
    AFTER = "after"  # whitespace after a value: the closing marker, or the next object
    CLOSE = "close"  # reading the closing marker


def _opens(shape: Shape, c: str) -> bool:
    if shape == "array":
        return c == "["
    if shape == "any":
        return c in "[{"
    return c == "{"


class JsonCallsBlock:
    """Everything after one opening marker: the JSON calls and the closing marker, if any."""

    def __init__(self, opener: str, syntax: JsonCallsSyntax) -> None:
        self._syntax = syntax
        self._state = _State.LEAD
        self._raw: list[str] = [opener]  # the block as written, given back if it is not calls
        self._body: list[str] = []  # the JSON value being read
        self._values: list[str] = []
        self._depth = JsonDepth()
        self._closed = ""  # the part of the closing marker read so far
        self._items: list[BlockItem] = []

    def feed(self, text: str) -> str | None:
        s, i, n = text, 0, len(text)
        syntax = self._syntax
        while i < n:
            state = self._state
            if state is _State.VALUE:
                end = self._depth.advance(s, i)
                if end < 0:
                    self._body.append(s[i:])
                    return None
                self._body.append(s[i:end])
                value = "".join(self._body)
                self._body = []
                self._raw.append(value)
                self._values.append(value)
                i = end
                if not syntax.close and syntax.shape != "objects":
                    return self._complete(s[i:])
                self._state = _State.AFTER
                continue
            if state is _State.CLOSE:
                want = syntax.close[len(self._closed) :]
                piece = s[i : i + len(want)]
                if not want.startswith(piece):
                    return self._malformed(s, i)
                self._closed += piece
                i += len(piece)
                if self._closed == syntax.close:
                    self._raw.append(self._closed)
                    return self._complete(s[i:])
                continue
            j = i
            while j < n and s[j] in WHITESPACE:
                j += 1
            if j > i:
                self._raw.append(s[i:j])
                i = j
                continue
            c = s[i]
            more = state is _State.LEAD or syntax.shape == "objects"
            if more and _opens(syntax.shape, c):
                self._state = _State.VALUE
                self._depth = JsonDepth()
                self._body = [c]
                i += 1
            elif state is _State.AFTER and syntax.close:
                self._state = _State.CLOSE
            elif state is _State.AFTER:
                return self._complete(s[i:])  # (objects without a closing marker)
            else:
                return self._malformed(s, i)
        return None

    def _calls(self) -> list[Call] | None:
        items: list[Any] = []
        for value in self._values:
            if value.startswith("["):
                try:
                    array = json_loads(value)
                except (ValueError, RecursionError):
                    return None
                if not isinstance(array, list):
                    return None
                items.extend(array)
            else:
                obj = load_object(value)
                if obj is None:
                    return None
                items.append(obj)
        calls = [self._syntax.read(item) for item in items]
        if not calls or any(call is None for call in calls):
            return None
        return [call for call in calls if call is not None]

    def _complete(self, rest: str) -> str:
        calls = self._calls()
        raw = "".join(self._raw)
        self._raw, self._values = [], []
        if calls is None:
            self._items.append(raw)
        else:
            self._items.extend(calls)
        return rest

    def _malformed(self, s: str, i: int) -> str:
        """Not this format's calls after all: what was read is text, and so is `s[i:]`."""
        self._items.append("".join(self._raw) + self._closed)
        self._raw, self._values, self._closed = [], [], ""
        return s[i:]

    @property
    def end_marker(self) -> str:
        """The marker that ends the block, if it has one (`closed_at_stop`)."""
        return self._syntax.close

    @property
    def started(self) -> bool:
        """Whether the JSON after the opener has begun (not only whitespace so far)."""
        return self._state is not _State.LEAD

    def take(self) -> list[BlockItem]:
        items, self._items = self._items, []
        return items

    def finish(self) -> str | None:
        raw = "".join(self._raw) + "".join(self._body) + self._closed
        return raw or None


BARE_ARRAY = "[{"  # a call array written without a marker (a bracket not opening an object is text)
# The same array pretty-printed (`[\n  {…}\n]`): `[` and layout whitespace, then the first object.
BARE_ARRAY_SPACED = ("[\n", "[\r", "[ ", "[\t")


def bare_array_block(at_answer_start: bool, opener: str = BARE_ARRAY) -> Block:
    """The block of a `BARE_ARRAY` (or `BARE_ARRAY_SPACED`) opener: a call array where the answer
    starts (xLAM's form, and Granite's when the decoder dropped its marker token), text anywhere
    else, so that prose with brackets stays prose."""
    if not at_answer_start:
        return LiteralText(opener)
    if opener != BARE_ARRAY:
        return SpacedArray(opener)
    block = JsonCallsBlock("", JsonCallsSyntax(shape="array"))
    block.feed(BARE_ARRAY)
    return block


class SpacedArray:
    """`[` and layout whitespace where the answer starts: a call array when `{` comes next (the
    array pretty-printed, as vLLM's `xlam` reads it); text as written when anything else does."""

    def __init__(self, opener: str) -> None:
        self._lead = [opener]
        self._array: JsonCallsBlock | None = None
        self._items: list[BlockItem] = []

    def feed(self, text: str) -> str | None:
        if self._array is not None:
            return self._array.feed(text)
        i = 0
        while i < len(text) and text[i] in WHITESPACE:
            i += 1
        self._lead.append(text[:i])
        if i == len(text):
            return None
        lead = "".join(self._lead)
        if text[i] != "{":
            self._items.append(lead)
            return text[i:]
        self._array = JsonCallsBlock("", JsonCallsSyntax(shape="array"))
        return self._array.feed(lead + text[i:])

    def take(self) -> list[BlockItem]:
        items, self._items = self._items, []
        return items + self._array.take() if self._array is not None else items

    def finish(self) -> str | None:
        if self._array is not None:
            return self._array.finish()
        self._items.append("".join(self._lead))  # only the bracket and layout: text, not a call
        return None


class DroppedMarker:
    """A marker that wraps the answer (`<answer>`, `<|START_RESPONSE|>`): it is dropped, and the
    text goes on. With `newline`, one newline right after it is layout and goes too."""

    def __init__(self, newline: bool = False) -> None:
        self._newline = newline

    def feed(self, text: str) -> str:
        return text[1:] if self._newline and text.startswith("\n") else text

    def take(self) -> list[BlockItem]:
        return []

    def finish(self) -> None:
        return None


class LiteralText:
    """An opener that is text where it stands (a `[` after the output's calls): given back as is."""

    def __init__(self, opener: str) -> None:
        self._items: list[BlockItem] = [opener]

    def feed(self, text: str) -> str:
        return text

    def take(self) -> list[BlockItem]:
        items, self._items = self._items, []
        return items

    def finish(self) -> None:
        return None


__all__ = [
    "BARE_ARRAY",
    "BARE_ARRAY_SPACED",
    "DroppedMarker",
    "JsonCallsBlock",
    "JsonCallsSyntax",
    "LiteralText",
    "SpacedArray",
    "bare_array_block",
]
