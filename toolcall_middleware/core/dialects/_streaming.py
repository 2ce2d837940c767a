"""Incremental argument streaming for JSON bodies: the raw text of an arguments object as it comes.

With `ParseContext.incremental`, a block reports `Opened` once a call's name is known and
`Fragment`s of its arguments as they become certain (see `base.Block.take`). For JSON formats the
fragments are the model's own text of the arguments object, from its `{` to the `}` that closes
it, so the final `Call.arguments` of a streamed call is that raw text (`raw_arguments`), not a
re-dump; a body that only a repair pass reads, or whose parsed arguments differ from the text
streamed (a duplicate key), keeps the re-dumped arguments, and `BlockParser` then abandons the
call rather than send changed arguments.

`member_fragment` is the piece a parameter-tagged format streams per completed parameter.
`ObjectText` streams one object; `CallObjectWatcher` reads a `{"name": …, "arguments": {…}}`
body (hermes and its relatives), holding argument text that comes before the name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from .._textscan import WHITESPACE, JsonDepth
from ._base import BlockItem, Fragment, Opened, dump_arguments

_STRING_SPECIAL = re.compile(r'["\\]')
_SCALAR = re.compile(r"[^,}\s]*")


class ObjectText:
    """The raw text of one JSON object, fed in pieces: leading whitespace, then `{` … `}`.

    `feed` returns the part of the piece that belongs to the object, and sets `consumed` to how
    much of the piece it read (the rest follows the object). Text that does not start with `{`
    turns it `off`; nothing is judged inside, the caller parses the whole at the end.
    """

    def __init__(self) -> None:
        self._depth = JsonDepth(depth=0)
        self.started = False
        self.closed = False
        self.off = False
        self.consumed = 0
        self._parts: list[str] = []

    def feed(self, text: str) -> str:
        self.consumed = 0
        if self.closed or self.off:
            return ""
        start = 0
        if not self.started:
            stripped = text.lstrip(WHITESPACE)
            if not stripped:
                self.consumed = len(text)
                return ""
            if stripped[0] != "{":
                self.off = True
                return ""
            self.started = True
            start = len(text) - len(stripped)
        end = self._depth.advance(text, start)
        if end >= 0:
            self.closed = True
        else:
            end = len(text)
        self.consumed = end
        piece = text[start:end]
        self._parts.append(piece)
        return piece

    def text(self) -> str:
        return "".join(self._parts)


def member_fragment(arguments: Mapping[str, Any], key: str, value: Any) -> str | None:
    """The text `dump_arguments` writes for a new member `key: value` after `arguments` (its
    opening `{` or `, ` included; the closing `}` comes with the call's end). `None` for a key
    already there: it changes an earlier member, so the call cannot stream on."""
    if key in arguments:
        return None
    return ("{" if not arguments else ", ") + dump_arguments({key: value})[1:-1]


def raw_arguments(raw: str, value: Any) -> str | None:
    """`raw` when it is the JSON text of the object `value` exactly, else `None`."""
    try:
        parsed = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return raw if isinstance(parsed, dict) and parsed == value else None


class CallObjectWatcher:
    """Watches a call object's text arrive: `Opened` when `"name"` is read, `Fragment`s of the
    object under `"arguments"` (or `"parameters"`), in `items`, held until the name is known.

    It reads well-formed JSON only; at anything else it stops (`off`) and the block decides at
    the end, as in whole mode. `arguments` is the raw text of the streamed object once closed.
    """

    ARGUMENT_KEYS = ("arguments", "parameters")

    def __init__(self, items: list[BlockItem]) -> None:
        self._items = items
        self._state = "start"
        self.off = False
        self._escape = False
        self._string: list[str] = []
        self._purpose = ""  # what the string being read is: "key_string" or "value_string"
        self._key = ""
        self._name: str | None = None
        self._id: str | None = None
        self._args: ObjectText | None = None
        self.arguments: str | None = None
        self._held: list[str] = []
        self._skip: JsonDepth | None = None

    def feed(self, text: str) -> None:
        i, n = 0, len(text)
        while i < n and not self.off:
            i = self._step(text, i)

    def _step(self, s: str, i: int) -> int:
        state = self._state
        if state == "string":
            end = self._read_string(s, i)
            if end < 0:
                return len(s)
            self._string_done()
            return end
        if state == "args":
            assert self._args is not None
            piece = self._args.feed(s[i:])
            if piece:
                if self._name is None:
                    self._held.append(piece)
                else:
                    self._items.append(Fragment(piece))
            if self._args.closed:
                self.arguments = self._args.text()
                self._state = "after"
            return i + self._args.consumed if self._args.closed else len(s)
        if state == "skip":
            assert self._skip is not None
            end = self._skip.advance(s, i)
            if end < 0:
                return len(s)
            self._state = "after"
            return end
        if state == "scalar":
            m = _SCALAR.match(s, i)
            end = m.end() if m else i
            if end < len(s):
                self._state = "after"
            return end
        if s[i] in WHITESPACE:
            return i + 1
        c = s[i]
        if state == "start":
            return self._expect(c == "{", "key", i)
        if state == "key":
            if c == "}":
                self._state = "done"
                return i + 1
            return self._begin_string(c, "key_string", i)
        if state == "colon":
            return self._expect(c == ":", "value", i)
        if state == "value":
            return self._value(c, i)
        if state == "after":
            if c == ",":
                self._state = "key"
                return i + 1
            return self._expect(c == "}", "done", i)
        self.off = True  # text after the object: the block's final parse decides
        return i

    def _expect(self, ok: bool, then: str, i: int) -> int:
        if not ok:
            self.off = True
            return i
        self._state = then
        return i + 1

    def _begin_string(self, c: str, purpose: str, i: int) -> int:
        if c != '"':
            self.off = True
            return i
        self._purpose = purpose
        self._string = []
        self._state = "string"
        return i + 1

    def _value(self, c: str, i: int) -> int:
        key = self._key
        if c == '"':
            return self._begin_string(c, "value_string", i)
        if c == "{" and key in self.ARGUMENT_KEYS and self._args is None:
            self._args = ObjectText()
            self._state = "args"
            return i
        if c in "{[":
            self._skip = JsonDepth(depth=0)
            self._state = "skip"
            return i
        self._state = "scalar"
        return i

    def _read_string(self, s: str, i: int) -> int:
        """Index past the closing quote, or -1 when the piece ends inside the string."""
        n = len(s)
        while i < n:
            if self._escape:
                self._escape = False
                self._string.append(s[i])
                i += 1
                continue
            m = _STRING_SPECIAL.search(s, i)
            if m is None:
                self._string.append(s[i:])
                return -1
            self._string.append(s[i : m.end()])
            i = m.end()
            if m.group() == "\\":
                self._escape = True
            else:
                return i
        return -1

    def _string_done(self) -> None:
        try:
            value = json.loads('"' + "".join(self._string))  # the closing quote is collected
        except ValueError:
            self.off = True
            return
        self._string = []
        if self._purpose == "key_string":
            self._key = value
            self._state = "colon"
            return
        self._state = "after"
        if self._key == "id" and self._name is None:
            self._id = value
        elif self._key == "name" and self._name is None and value:
            self._name = value
            self._items.append(Opened(value, self._id))
            if self._held:
                self._items.append(Fragment("".join(self._held)))
                self._held = []


__all__ = ["CallObjectWatcher", "ObjectText", "member_fragment", "raw_arguments"]
