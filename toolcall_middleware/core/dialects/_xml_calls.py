"""The body machine of the XML call formats: `qwen3_coder`, `seed_oss` and `minimax_m2`.

```
<SECTION>
<CALL NAME>
<PARAM KEY>value</parameter>
</CALL>
</SECTION>
```

The three formats differ only in their marker strings (`<function=f>` or `<invoke name="f">`,
`<parameter=k>` or `<parameter name="k">`, the section's wrapper) and in a few layout rules, which
`XmlCallSyntax` states; `XmlCallBlock` reads any of them, `XmlCallParser` is the text mode around.
Values are raw text, not XML-escaped, typed by the request's tool schema
(`schema.coerce_value`: a string without one, but for the literal `null`).

What is read, and how:
- Several calls in one section are parallel calls; each is handed out at its own call end.
- A value ends at `</parameter>` only when whitespace and then the next parameter or the call's
  end follow it (held back until that is known), so a value may mention `</parameter>`.
- Anything else that breaks the structure comes back as text: a name with `<` or a newline in
  it, prose between parameters, and so on. Output that ends inside a call is a `TruncatedCall`,
  never a call, so a cut `rm -rf /tmp/build` never runs as `rm -rf /`.

With incremental argument streaming (`ParseContext.incremental`) a call opens at its name, and
each parameter goes out as one typed member of the JSON object once its end is certain (the last
one with the call's end, which is what confirms its `</parameter>`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Any

from .._schema import coerce_value
from .._textscan import find_first
from ._base import Block, BlockItem, BlockParser, Call, Fragment, Opened, ParseContext, dump_arguments
from ._streaming import member_fragment

_NAME_MAX = 256  # a longer "name" is prose that happens to contain the marker
_WS = re.compile(r"[ \t\r\n]*")


@dataclass(frozen=True)
class XmlCallSyntax:
    """The markers of an XML call format, and how its values are laid out.

    `bare_calls`: a call marker with no section marker before it opens a block too.
    `line_ends`: a value whose `</parameter>` is missing ends where the next parameter or the
    call's end starts a line. `one_newline`: exactly one newline on each side of a value is layout
    (the template writes `\\n` + value + `\\n`); otherwise every newline there is.
    `quoted_names`: names may be quoted, `name="f"` or `name='f'`.
    `section_end_after_calls`: the section's end is recognised only after a complete call (an empty
    section is text, and a section end after a `</parameter>` is value text), as qwen3_coder reads
    it; otherwise an empty section vanishes and a section that closes on an unfinished call makes
    that call text.
    """

    section: str
    section_end: str
    call: str
    call_end: str
    param: str
    param_end: str = "</parameter>"
    bare_calls: bool = False
    line_ends: bool = False
    one_newline: bool = False
    quoted_names: bool = False
    section_end_after_calls: bool = False

    @property
    def value_ends(self) -> tuple[str, ...]:
        if self.line_ends:
            return (self.param_end, "\n" + self.param, "\n" + self.call_end)
        return (self.param_end,)


class _State(Enum):
    HEAD = "head"  # after the section marker: a call comes next
    CALL_NAME = "call_name"
    BODY = "body"  # between parameters: the next parameter or the call's end
    PARAM_NAME = "param_name"
    VALUE = "value"
    CLOSING = "closing"  # after a `</parameter>` in a value: is it the real close?
    AFTER = "after"  # after a call's end: another call, the section's end, or the block is over


def _skip_ws(s: str, i: int) -> int:
    match = _WS.match(s, i)
    return match.end() if match else i


def _expect(s: str, i: int, options: tuple[str, ...]) -> tuple[str | None, bool]:
    """The option `s[i:]` starts with, and whether it may still become one (text ends too soon)."""
    maybe = False
    for option in options:
        chunk = s[i : i + len(option)]
        if chunk == option:
            return option, False
        maybe = maybe or option.startswith(chunk)
    return None, maybe


class XmlCallBlock:
    """One section block (or a bare call, where the syntax allows it); see the module doc."""

    def __init__(self, ctx: ParseContext, syntax: XmlCallSyntax, opener: str) -> None:
        self._ctx = ctx
        self._syntax = syntax
        self._ends = syntax.value_ends
        self._end_len = max(len(end) for end in self._ends)
        # Only these characters can start a value end: the hold-back scan looks for them alone.
        self._end_starts = re.compile("[" + re.escape("".join({end[0] for end in self._ends})) + "]")
        # What may follow the section marker, and a `</parameter>` that really ends its value.
        if syntax.section_end_after_calls:
            self._head_options: tuple[str, ...] = (syntax.call,)
            self._closing_options: tuple[str, ...] = (syntax.param, syntax.call_end)
        else:
            self._head_options = (syntax.call, syntax.section_end)
            self._closing_options = (syntax.param, syntax.call_end, syntax.section_end)
        self._state = _State.HEAD if opener == syntax.section else _State.CALL_NAME
        self._raw: list[str] = [opener]  # the current call's raw text, for a malformed or cut-off one
        self._buf = ""  # undecided text: a marker prefix, or a name still waiting for its `>`
        self._items: list[BlockItem] = []
        self._streaming = False  # incremental: each typed parameter goes out as it completes
        self._end: int | None = None  # where in the text the block ended
        self._name = ""
        self._key = ""
        self._arguments: dict[str, Any] = {}
        self._value: list[str] = []
        self._held: list[str] = []  # a `</parameter>` and the whitespace after it, while undecided

    def feed(self, text: str) -> str | None:
        self._raw.append(text)
        s, self._buf = self._buf + text, ""
        i: int | None = 0
        while i is not None:
            if self._end is not None:
                return s[self._end :]
            i = self._step(s, i)
        return None

    def take(self) -> list[BlockItem]:
        items, self._items = self._items, []
        return items

    def finish(self) -> str | None:
        raw = "".join(self._raw)
        if self._state is _State.AFTER:
            # The calls are complete; only a cut-off section end can be left.
            return raw if raw.strip() else None
        return raw

    # -- states: each takes the text and a position, returns where to go on or None to wait ----

    def _step(self, s: str, i: int) -> int | None:
        state, syntax = self._state, self._syntax
        if state is _State.VALUE:
            return self._in_value(s, i)
        if state is _State.CLOSING:
            return self._closing(s, i)
        if state is _State.CALL_NAME or state is _State.PARAM_NAME:
            return self._name_until_gt(s, i)
        i = _skip_ws(s, i)
        if i == len(s):
            return None
        if state is _State.HEAD:
            return self._marker(s, i, self._head_options)
        if state is _State.BODY:
            return self._marker(s, i, (syntax.param, syntax.call_end))
        return self._marker(s, i, (syntax.section_end, syntax.call))

    def _marker(self, s: str, i: int, options: tuple[str, ...]) -> int | None:
        found, maybe = _expect(s, i, options)
        if found is None:
            if maybe:
                self._buf = s[i:]
                return None
            if self._state is _State.AFTER:
                self._end = i  # text follows the calls: the block is over
            else:
                self._malformed(s, i)
            return i
        end = i + len(found)
        syntax = self._syntax
        if found == syntax.call:
            self._state = _State.CALL_NAME
        elif found == syntax.param:
            self._state = _State.PARAM_NAME
        elif found == syntax.call_end:
            self._complete(s, end)
        else:
            self._end = end  # the section's end (an empty section leaves nothing behind)
        return end

    def _name_until_gt(self, s: str, i: int) -> int | None:
        gt = s.find(">", i, i + _NAME_MAX + 1)
        head = s[i : gt if gt >= 0 else i + _NAME_MAX + 1]
        if "<" in head or "\n" in head or (gt < 0 and len(head) > _NAME_MAX):
            self._malformed(s, i)
            return i
        if gt < 0:
            self._buf = s[i:]
            return None
        name = self._clean_name(head)
        if not name:
            self._malformed(s, i)
            return i
        if self._state is _State.CALL_NAME:
            self._name, self._arguments = name, {}
            self._state = _State.BODY
            if self._ctx.incremental:
                self._streaming = True
                self._items.append(Opened(name))
        else:
            self._key, self._value = name, []
            self._state = _State.VALUE
        return gt + 1

    def _clean_name(self, head: str) -> str:
        """The name in `head`, or "" when it is not one (unbalanced or stray quotes)."""
        name = head.strip()
        if not self._syntax.quoted_names:
            return name
        quote = name[:1]
        if quote in ('"', "'"):
            if len(name) < 2 or name[-1] != quote:
                return ""
            name = name[1:-1].strip()
        return "" if '"' in name or "'" in name else name

    def _in_value(self, s: str, i: int) -> int | None:
        hit = find_first(s, self._ends, i)
        if hit is None:
            tail = s[i:]
            keep = self._partial_end(tail)
            if len(tail) > keep:
                self._value.append(tail[: len(tail) - keep])
            self._buf = tail[len(tail) - keep :]
            return None
        pos, marker = hit
        self._value.append(s[i:pos])
        end = pos + len(marker)
        if marker == self._syntax.param_end:
            self._held = [marker]
            self._state = _State.CLOSING
        elif marker.endswith(self._syntax.param):
            self._store_value(closed=False)
            self._state = _State.PARAM_NAME
        else:
            self._store_value(closed=False)
            self._complete(s, end)
        return end

    def _partial_end(self, tail: str) -> int:
        """Length of the suffix of `tail` that may begin a value end (`partial_marker_len`, but it
        only tries the few places a marker can start: this runs on every piece of a long value)."""
        match = self._end_starts.search(tail, max(0, len(tail) - self._end_len + 1))
        while match is not None:
            rest = tail[match.start() :]
            if any(end.startswith(rest) for end in self._ends):
                return len(rest)
            match = self._end_starts.search(tail, match.start() + 1)
        return 0

    def _closing(self, s: str, i: int) -> int | None:
        j = _skip_ws(s, i)
        if j > i:
            self._held.append(s[i:j])
        if j == len(s):
            return None
        found, maybe = _expect(s, j, self._closing_options)
        if found == self._syntax.section_end:
            # The section closes on an unfinished call (its call end is missing): the call is
            # malformed, and its text is content rather than a value swallowing the rest.
            self._malformed(s, j)
            return j
        if found is not None:
            self._store_value(closed=True)
            self._state = _State.BODY
        elif maybe:
            self._buf = s[j:]
            return None
        else:  # `</parameter>` written inside the value: it is text
            self._value.extend(self._held)
            self._state = _State.VALUE
        self._held = []
        return j

    # -- results ---------------------------------------------------------------------------

    def _store_value(self, *, closed: bool) -> None:
        value = "".join(self._value)
        self._value = []
        if not self._syntax.one_newline:
            value = value.strip("\n")
        else:
            if value.startswith("\n"):
                value = value[1:]
            # An unclosed value ended at a line-start marker, which already took the closing `\n`.
            if closed and value.endswith("\n"):
                value = value[:-1]
        typed = coerce_value(value, self._ctx.property_schema(self._name, self._key))
        if self._streaming:
            piece = member_fragment(self._arguments, self._key, typed)
            self._streaming = piece is not None  # a repeated key: abandoned at the call's end
            if piece is not None:
                self._items.append(Fragment(piece))
        self._arguments[self._key] = typed

    def _complete(self, s: str, end: int) -> None:
        self._items.append(Call(name=self._name, arguments=dump_arguments(self._arguments)))
        self._arguments = {}
        self._streaming = False
        self._raw = [s[end:]]  # what follows the call's end belongs to the next call, if any
        self._state = _State.AFTER

    def _malformed(self, s: str, i: int) -> None:
        """The structure broke at `s[i]`: the call's raw text so far is text; the rest is re-read."""
        raw = "".join(self._raw)
        self._items.append(raw[: len(raw) - (len(s) - i)])
        self._streaming = False
        self._end = i


class XmlCallParser(BlockParser):
    """Text mode around `XmlCallBlock`s; subclasses set `syntax`."""

    syntax: XmlCallSyntax
    strip_around_blocks = True  # the templates write each block on lines of its own

    def __init__(self, ctx: ParseContext) -> None:
        syntax = self.syntax
        self.openers = (syntax.section, syntax.call) if syntax.bare_calls else (syntax.section,)
        super().__init__(ctx)

    def open_block(self, opener: str) -> Block:
        return XmlCallBlock(self.ctx, self.syntax, opener)


__all__ = [
    "XmlCallBlock",
    "XmlCallParser",
    "XmlCallSyntax",
]
