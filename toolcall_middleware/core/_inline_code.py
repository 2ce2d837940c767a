"""Code in prose: backtick runs, fences and inline code spans, decided the same for any split.

A call written in code is an example, not a call: in a fenced block (a run of three or more
backticks at a line start opens or closes one) and in an inline code span, as Markdown reads it:
a run of one or two backticks, closed by a run of exactly the same length. Unlike Markdown, a
span here ends with its line: a run that no run of its length closes before the line ends, in a
span shorter than `SPAN_CAP` characters, is a literal backtick, and the text after it is read as usual (an
unmatched backtick before a call on the same line leaves the call a call).

Each decision depends on the text from the run on, never on where a stream was split: while the
text seen so far cannot decide (the closing run, the line's end or the cap has not arrived, or
the run itself may go on), the caller holds the text from the run, at most `SPAN_CAP`
characters.
"""

from __future__ import annotations

import re

TICK = "`"
FENCE = "```"
# Inline code spans are shorter than this (backticks included): a run not closed within it is
# literal. It bounds what a parser holds while a span is open (a stream must wait for the
# close, the line's end or this).
SPAN_CAP = 1024

_TICKS = re.compile(r"`*")
_TICKS_OR_LINE_END = re.compile(r"`+|\n")


def run_end(s: str, pos: int) -> int:
    """The end of the run of backticks at `pos`."""
    return _TICKS.match(s, pos).end()  # type: ignore[union-attr]  # (it matches "" at least)


def code_span_end(s: str, pos: int, size: int, final: bool) -> int | None:
    """The run of `size` (1 or 2) backticks at `pos`: the end of the inline code span it opens
    (just past its closing run), `pos + size` when it opens none (a literal run), or `None`
    while the text so far cannot tell (`final`: no more text comes, so it always can)."""
    limit = pos + SPAN_CAP
    i = pos + size
    while True:
        m = _TICKS_OR_LINE_END.search(s, i, limit)
        if m is None:
            return pos + size if final or len(s) >= limit else None
        end = m.end()
        if m.group() == "\n" or end == limit:  # the line ends first, or the cap: literal
            return pos + size
        if end == len(s) and not final:
            return None  # the closing run may go on
        if end - m.start() == size:
            return end
        i = end


def skip_backticks(s: str, pos: int, before: str, in_fence: bool, final: bool) -> tuple[int, bool] | None:
    """A backtick run at `pos` of text outside calls (`before`: the character before it):
    `(where reading goes on, whether the run opens or closes a fence)`, or `None` while it cannot
    be told (hold the text from `pos`).

    A run after a backtick is the rest of a fence's run that a piece cut off: it was read with
    it. (A shorter run at a piece's end is held until the run is whole, so only a fence, taken
    as soon as it has three backticks, is ever cut.)"""
    end = run_end(s, pos)
    if before == TICK:
        return end, False
    size = end - pos
    if size >= len(FENCE):
        return end, before == "\n"  # a fence at a line start; elsewhere a literal run
    if end == len(s) and not final:
        return None  # the run may go on
    if in_fence:
        return end, False
    span_end = code_span_end(s, pos, size, final)
    return None if span_end is None else (span_end, False)


__all__ = ["FENCE", "SPAN_CAP", "TICK", "code_span_end", "run_end", "skip_backticks"]
