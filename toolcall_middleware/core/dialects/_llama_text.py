"""Text mode shared by the Llama dialects (`llama3_json`, `pythonic`): `TextMachine`.

Llama outputs have no section markers around their calls: a call starts at a tag
(`<|python_tag|>`) or at a bare character (`[`, `{`) that may as well be prose, and end-of-turn
tokens may appear in the text. `TextMachine` drops those tokens, hands the text from an opening to
a `Segment` until the segment says where it ended, streams other text at once, and treats
whitespace next to calls as layout. Code in the text (fences, inline code spans: `inline_code`) is
text, as in every dialect.
"""

from __future__ import annotations

import re
from typing import Protocol

from .._events import Event, OversizedCall, TextDelta, TruncatedCall
from .._inline_code import skip_backticks
from .._reasoning import ReasoningInText
from .._textscan import WHITESPACE, hold_whitespace
from ._base import Call, ParseContext, PendingTextMachine, call_events

PYTHON_TAG = "<|python_tag|>"
PYTHON_START = "<|python_start|>"
PYTHON_END = "<|python_end|>"
# End-of-turn tokens of Llama 3 and Llama 4: they end the output and are never text.
STOP_TOKENS = ("<|eom_id|>", "<|eot_id|>", "<|end_of_text|>", "<|eom|>", "<|eot|>")


class Segment(Protocol):
    """Text from an opening (`[`, `{`, a tag) to the end of its call(s), or until it is not one."""

    def feed(self, text: str, start: int) -> int | None:
        """Consume `text[start:]`: where the segment ended in it, or `None` while it is open."""
        ...

    def take(self) -> list[Call | str]:
        """Calls found, and text to show as content, since the last `take`."""
        ...

    def finish(self) -> tuple[str, bool]:
        """The output ended inside: the raw text still held, and whether it is an unfinished call."""
        ...


class _Spent:
    """The segment after a call that grew past the limit: it takes the rest of the output and
    keeps none of it (the response has failed)."""

    def feed(self, text: str, start: int) -> int | None:
        return None

    def take(self) -> list[Call | str]:
        return []

    def finish(self) -> tuple[str, bool]:
        return "", True


_SPENT = _Spent()


class TextMachine(PendingTextMachine):
    """Text mode: stop tokens vanish, openings start a `Segment`, other text streams at once.

    `tags` open a segment anywhere outside a code fence, and so do the `bare` characters; the
    `bare_at_edge` characters only at the start of the output or right after a call. Whitespace
    at such an edge (and one `separator` after a call) is held: it is layout when a call follows
    or the output ends after a call, and text otherwise.
    """

    drop: tuple[str, ...] = STOP_TOKENS
    tags: tuple[str, ...] = ()
    bare = ""
    bare_at_edge = ""
    separator = ""

    def __init__(self, ctx: ParseContext) -> None:
        super().__init__(ctx)
        self._segment: Segment | None = None
        self._edge: str | None = "start"  # "start", "call", or None in running text
        self._held = ""
        self._seg_held = ""  # what was held when the open segment began
        self._seg_chars = 0
        self._sep_seen = False
        self._in_fence = False
        self._prev = "\n"  # the character before `_pending`, for fences at a line start
        # Reasoning markers in the text: a close with no opening one is markup, dropped (outside
        # code; the stop tokens are dropped everywhere).
        self._reasoning = ReasoningInText(ctx.stray_pairs)
        self._strays = tuple(m for m in self._reasoning.markers if m not in self.drop and m not in self.tags)
        self._markers = (*self.drop, *self.tags, *self._strays)
        self._longest = max(len(m) for m in self._markers)
        self._heads = "".join(sorted({m[0] for m in self._markers}))
        self._scan = re.compile("[`" + re.escape(self._heads + self.bare) + "]")

    def open_segment(self, opener: str) -> Segment:
        raise NotImplementedError

    def _flush(self, out: list[Event]) -> None:
        if self._segment is not None:
            self._take(out)
            raw, is_call = self._segment.finish()
            self._segment = None
            if is_call:
                if raw:
                    out.append(TruncatedCall(raw))
            elif raw or self._seg_held:
                self._emit(out, self._seg_held + raw)
            self._seg_held = ""
        if self._held and self._edge != "call":
            self._emit(out, self._held)
        self._held = ""

    def _run(self, out: list[Event], final: bool) -> None:
        s, i, n = self._pending, 0, len(self._pending)
        go = True
        while i < n and go:
            if self._segment is not None:
                end = self._segment.feed(s, i)
                self._take(out)
                if end is None:
                    self._seg_chars += n - i
                    self._bound_segment(out)
                    i = n
                    break
                self._end_segment(out)
                i = end
            elif self._edge is not None:
                i, go = self._edge_step(out, s, i, final)
            else:
                i, go = self._text_step(out, s, i, final)
        self._pending = s[i:]

    def _edge_step(self, out: list[Event], s: str, i: int, final: bool) -> tuple[int, bool]:
        j, n = i, len(s)
        while j < n:
            c = s[j]
            if c in WHITESPACE:
                j += 1
            elif c == self.separator and self._edge == "call" and not self._sep_seen:
                self._sep_seen = True
                j += 1
            else:
                break
        given, self._held = hold_whitespace(self._held + s[i:j])  # (bounded: `HELD_WHITESPACE`)
        self._emit(out, given)
        if j == n:
            return n, False
        c = s[j]
        if c in self.bare_at_edge or c in self.bare:
            self._open(c)
            return j + 1, True
        if c in self._heads:
            hit = self._marker_at(s, j)
            if hit is not None and hit in self._strays and self._reasoning.is_text(hit):
                self._edge = None  # reasoning markup the model wrote as text: the edge ends
                self._emit(out, self._held + hit)
                self._held = ""
                return j + len(hit), True
            if hit is not None:  # a stop token (or a stray close) keeps the edge; a tag opens a segment
                if hit in self.tags:
                    self._open(hit)
                self._prev = ">"
                return j + len(hit), True
            if not final and self._partial_at(s, j):
                return j, False
        self._edge = None
        if self._held:
            self._emit(out, self._held)
            self._held = ""
        return j, True

    def _text_step(self, out: list[Event], s: str, i: int, final: bool) -> tuple[int, bool]:
        start = i
        while True:
            m = self._scan.search(s, start)
            if m is None:
                self._emit(out, s[i:])
                return len(s), True
            pos = m.start()
            c = s[pos]
            if c in self._heads:
                hit = self._marker_at(s, pos)
                if hit is not None and hit in self._strays and not self._in_fence and self._reasoning.is_text(hit):
                    start = pos + len(hit)  # reasoning markup the model wrote as text
                elif hit is not None and (hit in self.drop or not self._in_fence):
                    self._emit(out, s[i:pos])
                    if hit in self.tags:
                        self._open(hit)
                    self._prev = ">"
                    return pos + len(hit), True
                if hit is None and not final and self._partial_at(s, pos):
                    self._emit(out, s[i:pos])
                    return pos, False
                start = pos + (len(hit) if hit else 1)
            elif c == "`":
                before = s[pos - 1] if pos > i else self._prev
                step = skip_backticks(s, pos, before, self._in_fence, final)
                if step is None:  # a code span or a run not decided yet (`inline_code`)
                    self._emit(out, s[i:pos])
                    return pos, False
                start, fence = step
                if fence:
                    self._in_fence = not self._in_fence
            elif self._in_fence:
                start = pos + 1
            else:
                self._emit(out, s[i:pos])
                self._open(c)
                return pos + 1, True

    def _marker_at(self, s: str, pos: int) -> str | None:
        for marker in self._markers:
            if s.startswith(marker, pos):
                return marker
        return None

    def _partial_at(self, s: str, pos: int) -> bool:
        if len(s) - pos >= self._longest:  # long enough to have matched in full
            return False
        rest = s[pos:]
        return any(m.startswith(rest) for m in self._markers)

    def _emit(self, out: list[Event], text: str) -> None:
        if text:
            out.append(TextDelta(text))
            self._prev = text[-1]

    def _open(self, opener: str) -> None:
        self._segment = self.open_segment(opener)
        self._seg_held, self._held = self._held, ""
        self._seg_chars = 0  # what the open segment was given (`ctx.max_call_chars`)

    def _bound_segment(self, out: list[Event]) -> None:
        """The open segment over `ctx.max_call_chars`: let it go (`OversizedCall`); the rest of
        the output goes to a segment that keeps nothing."""
        limit = self.ctx.max_call_chars
        if limit is not None and self._seg_chars > limit and self._segment is not _SPENT:
            out.append(OversizedCall(self._seg_chars))
            self._segment, self._seg_held = _SPENT, ""

    def _take(self, out: list[Event]) -> None:
        assert self._segment is not None
        for item in self._segment.take():
            if isinstance(item, Call):
                self._seg_held = ""  # whitespace next to a call is layout
                out.extend(call_events(self.ctx, item))
                self._edge, self._sep_seen = "call", False
            elif item:
                self._emit(out, self._seg_held + item)
                self._seg_held, self._edge = "", None

    def _end_segment(self, out: list[Event]) -> None:
        self._segment = None
        self._emit(out, self._seg_held)
        self._seg_held = ""
        if self._edge == "call":
            self._prev = " "


__all__ = [
    "PYTHON_END",
    "PYTHON_START",
    "PYTHON_TAG",
    "STOP_TOKENS",
    "Segment",
    "TextMachine",
]
