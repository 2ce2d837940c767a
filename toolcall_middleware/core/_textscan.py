"""Split-safe scanning helpers shared by the reasoning splitter and the dialects.

Every parser here sees text in arbitrary pieces, split anywhere, inside markers too. These helpers
find literal markers in a piece and say how much of its end must be held back because it could be
the start of a marker that the next piece completes. Nothing here looks at a character twice
except the held-back suffix, which is shorter than the longest marker.

`MarkerScanner` streams the text before a marker, `MarkerSegment` collects it; the JSON variants
(`JsonStringTracker`, `JsonSegment`) ignore a marker written inside a JSON string, and
`JsonDepth` finds where a JSON value closes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import Enum
from functools import lru_cache

WHITESPACE = " \t\r\n"
# Layout whitespace a parser holds back (a block or a closing marker may follow, which drops it):
# at most this much of a run; what comes before goes out as text at once. A longer run is not
# layout, and holding it all would copy it again with every piece of it (quadratic) and grow
# memory with the output.
HELD_WHITESPACE = 128


def hold_whitespace(ws: str) -> tuple[str, str]:
    """Whitespace to hold back, as (what goes out now, what is held): the held part is its last
    `HELD_WHITESPACE` characters, whatever pieces the run came in."""
    if len(ws) <= HELD_WHITESPACE:
        return "", ws
    return ws[:-HELD_WHITESPACE], ws[-HELD_WHITESPACE:]


@lru_cache(maxsize=512)
def _marker_shape(markers: tuple[str, ...]) -> tuple[int, frozenset[str], frozenset[str]]:
    """The longest possible partial marker, the characters a marker can start with, and every
    proper prefix of a marker."""
    prefixes = frozenset(m[:size] for m in markers for size in range(1, len(m)))
    return max((len(m) for m in markers), default=1) - 1, frozenset(m[0] for m in markers if m), prefixes


@lru_cache(maxsize=512)
def head_pattern(markers: tuple[str, ...]) -> re.Pattern[str]:
    """A regex for any character a marker starts with: a piece it does not match holds no marker,
    whole or partial."""
    heads = sorted({m[0] for m in markers if m})
    return re.compile("[" + "".join(re.escape(h) for h in heads) + "]" if heads else "(?!)")


def partial_marker_len(text: str, markers: Sequence[str]) -> int:
    """Length of the longest suffix of `text` that is a proper prefix of one of `markers`."""
    longest, heads, prefixes = _marker_shape(markers if isinstance(markers, tuple) else tuple(markers))
    tail = text[-longest:] if longest else ""
    # A prefix starts with a marker's first character: most pieces hold none, decided at once;
    # else only the suffixes that start at one are looked up, the longest first.
    start = -1
    for head in heads:  # (a loop, not `min(...)`: no generator per call)
        found = tail.find(head)
        if found >= 0 and (start < 0 or found < start):
            start = found
    if start < 0:
        return 0
    size = len(tail)
    for i in range(start, size):
        if tail[i] in heads and tail[i:] in prefixes:
            return size - i
    return 0


def find_first(text: str, markers: Sequence[str], start: int = 0) -> tuple[int, str] | None:
    """The earliest occurrence of any marker at or after `start` (longest marker wins a tie).

    One pass that stops at the hit: a search per marker would run to the end of the text for
    each marker absent from it, on every call, which is quadratic when a caller steps from one
    hit to the next over a long text."""
    m = alternation(markers).search(text, start)
    return None if m is None else (m.start(), m.group())


def alternation(markers: Sequence[str]) -> re.Pattern[str]:
    """A regex matching any of the literal markers, longest first (linear: no backtracking)."""
    return _alternation(markers if isinstance(markers, tuple) else tuple(markers))


@lru_cache(maxsize=512)
def _alternation(markers: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(m) for m in sorted(markers, key=len, reverse=True)))


@lru_cache(maxsize=512)
def _outside_strings(markers: tuple[str, ...]) -> re.Pattern[str]:
    """`JsonStringTracker`'s pattern (a quote or a marker): made once per set of markers, not
    once per call's body."""
    return re.compile('"|' + alternation(markers).pattern)


class Match(Enum):
    YES = "yes"
    NO = "no"
    MAYBE = "maybe"


def match_spaced(text: str, pos: int, parts: Sequence[str]) -> tuple[Match, int]:
    """Does `text[pos:]` start with `parts` joined by optional whitespace?

    Returns `(YES, end)`, `(NO, pos)`, or `(MAYBE, pos)` when the text ends before it can tell.
    """
    i = pos
    for n, part in enumerate(parts):
        if n:
            while i < len(text) and text[i] in WHITESPACE:
                i += 1
        chunk = text[i : i + len(part)]
        if not part.startswith(chunk):
            return Match.NO, pos
        if len(chunk) < len(part):
            return Match.MAYBE, pos
        i += len(part)
    return Match.YES, i


class MarkerScanner:
    """Finds the first of several literal markers in a stream, holding back only a partial one.

    `feed(text)` returns `(before, marker, after)`: `before` is text known not to start a marker
    (a partial marker held back from the previous piece included), `marker` the marker found or
    `None`, `after` the rest of the piece behind it. Nothing is scanned twice but the held part.
    """

    def __init__(self, markers: Sequence[str]) -> None:
        self._markers = tuple(markers)
        self._pattern = alternation(markers)
        self.pending = ""

    def feed(self, text: str) -> tuple[str, str | None, str]:
        s = self.pending + text
        m = self._pattern.search(s)
        if m is None:
            keep = partial_marker_len(s, self._markers)
            self.pending = s[len(s) - keep :]
            return s[: len(s) - keep], None, ""
        self.pending = ""
        return s[: m.start()], m.group(), s[m.end() :]


class MarkerSegment:
    """Collects text up to the first of `markers`, searching each piece once.

    `feed(text)` returns `(before, marker, after)` once a marker is complete, else `None`; only a
    possible partial marker at the end is searched again with the next piece.
    """

    def __init__(self, markers: tuple[str, ...]) -> None:
        self._scanner = MarkerScanner(markers)
        self._parts: list[str] = []

    def feed(self, text: str) -> tuple[str, str, str] | None:
        before, marker, after = self._scanner.feed(text)
        self._parts.append(before)
        if marker is None:
            return None
        collected = "".join(self._parts)
        self._parts = []
        return collected, marker, after

    def text(self) -> str:
        """Everything collected so far (the output ended inside the segment)."""
        return "".join(self._parts) + self._scanner.pending


class JsonStringTracker:
    """Tracks whether a stream of JSON-ish text is inside a string literal.

    `find(text, pattern)` returns the end of the first match of `pattern` outside strings, or
    `None`; the tracker then has consumed all of `text` but a possible partial match, which it
    keeps and rescans with the next piece. Used to find a closing marker that the model may also
    have written inside an argument value (`"Use </tool_call> tags"`).
    """

    _SPECIAL_IN_STRING = re.compile(r'["\\]')

    def __init__(self, markers: Sequence[str]) -> None:
        self._markers = tuple(markers)
        self._outside = _outside_strings(self._markers)
        self.in_string = False
        self._skip = 0
        self._carry = ""

    def find(self, text: str) -> tuple[int, str] | None:
        """End offset in `text` of the first marker outside a string, and the marker."""
        s = self._carry + text
        base = len(self._carry)
        self._carry = ""
        i = self._skip
        self._skip = 0
        n = len(s)
        while i < n:
            if self.in_string:
                m = self._SPECIAL_IN_STRING.search(s, i)
                if m is None:
                    return None
                if m.group() == "\\":
                    i = m.end() + 1
                    if i > n:
                        self._skip = i - n
                        return None
                else:
                    self.in_string = False
                    i = m.end()
            else:
                m = self._outside.search(s, i)
                if m is None:
                    keep = partial_marker_len(s[i:], self._markers)
                    self._carry = s[n - keep :] if keep else ""
                    return None
                if m.group() == '"':
                    self.in_string = True
                    i = m.end()
                else:
                    return m.end() - base, m.group()
        return None


class JsonSegment:
    """Like `MarkerSegment`, but a marker inside a JSON string literal does not count.

    `size` counts the characters it was given."""

    def __init__(self, markers: tuple[str, ...]) -> None:
        self._tracker = JsonStringTracker(markers)
        self._parts: list[str] = []
        self.size = 0

    def feed(self, text: str) -> tuple[str, str, str] | None:
        self.size += len(text)
        hit = self._tracker.find(text)
        if hit is None:
            self._parts.append(text)
            return None
        end, marker = hit
        self._parts.append(text[:end])
        full = "".join(self._parts)
        self._parts = []
        # The marker may have begun in an earlier piece: cut it off the joined text.
        return full[: len(full) - len(marker)], marker, text[end:]

    def text(self) -> str:
        return "".join(self._parts)


class JsonDepth:
    """Finds where a JSON value closes, across pieces, in one pass.

    Only brackets and strings are tracked; whether the text is valid JSON is decided by the
    caller once the value has closed. `depth` is how many brackets are open where scanning starts:
    1 when the caller has consumed the opening bracket, 0 when the scan starts at it.
    """

    _OUTSIDE = re.compile(r'["{}\[\]]')
    _IN_STRING = re.compile(r'["\\]')

    def __init__(self, depth: int = 1) -> None:
        self._depth = depth
        self._in_string = False
        self._escape = False

    def advance(self, s: str, i: int) -> int:
        """Index just past the bracket that closes the value, or -1 when `s[i:]` does not close it."""
        n = len(s)
        while i < n:
            if self._escape:
                self._escape = False
                i += 1
            elif self._in_string:
                m = self._IN_STRING.search(s, i)
                if m is None:
                    return -1
                i = m.end()
                if m.group() == "\\":
                    self._escape = True
                else:
                    self._in_string = False
            else:
                m = self._OUTSIDE.search(s, i)
                if m is None:
                    return -1
                i = m.end()
                c = m.group()
                if c == '"':
                    self._in_string = True
                elif c in "{[":
                    self._depth += 1
                else:
                    self._depth -= 1
                    if self._depth == 0:
                        return i
        return -1


__all__ = [
    "HELD_WHITESPACE",
    "WHITESPACE",
    "JsonDepth",
    "JsonSegment",
    "JsonStringTracker",
    "MarkerScanner",
    "MarkerSegment",
    "Match",
    "alternation",
    "find_first",
    "head_pattern",
    "hold_whitespace",
    "match_spaced",
    "partial_marker_len",
]
