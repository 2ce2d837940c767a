"""Finding a format's markers in prose while skipping markdown code, split-safe.

A marker written in code (a fenced block, an inline code span: `inline_code`) is an example, not
markup. The text mode of `BlockParser`, `auto`'s search for a format's first marker and the text
around `generic_json`'s object all read prose this way; `CodeAwareScanner` is that reading, with
the one state that crosses pieces: whether the text is inside a fence.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._inline_code import FENCE, TICK, skip_backticks
from .._textscan import find_first, head_pattern, partial_marker_len


class CodeAwareScanner:
    """The next of `markers` outside code in the text a parser holds.

    `markers` must include `FENCE` and `TICK`, which open code. `fenced_openers` are markers that
    begin with a fence (xLAM's ```` ```json ````): text that ends where one may follow waits for
    more before the fence is read as code.
    """

    __slots__ = ("_fenced_openers", "first_head", "in_fence", "markers")

    def __init__(self, markers: Sequence[str], fenced_openers: Sequence[str] = ()) -> None:
        self.markers = tuple(markers)
        self._fenced_openers = tuple(fenced_openers)
        # `first_head(text)`: the first character of `text` that a marker (or code) starts with,
        # `None` when `text` is all prose (a regex search: this runs on every plain piece).
        self.first_head = head_pattern(self.markers).search
        self.in_fence = False

    def next_stop(self, s: str, final: bool, before: str, start: int = 0) -> tuple[int, str | None]:
        """Where prose stops in `s`, read from `start`: `(pos, marker)` at a marker outside code,
        else `(pos, None)`: prose up to `pos`, and the rest waits for more (a partial marker, an
        undecided backtick run). `before` is the character before `s`; `final`: no more text
        comes, so nothing waits."""
        while True:
            hit = find_first(s, (FENCE,) if self.in_fence else self.markers, start)
            if hit is None:
                keep = 0 if final else partial_marker_len(s, self.markers)
                return len(s) - min(keep, len(s) - start), None  # (none from before a run read)
            pos, marker = hit
            if marker != FENCE and marker != TICK:
                return hit
            if not final and self._fenced_openers and any(o.startswith(s[pos:]) for o in self._fenced_openers):
                return pos, None  # the text ends where an opener that starts as a fence may follow
            step = skip_backticks(s, pos, s[pos - 1] if pos else before, self.in_fence, final)
            if step is None:
                return pos, None
            start, fence = step
            if fence:
                self.in_fence = not self.in_fence


__all__ = ["CodeAwareScanner"]
