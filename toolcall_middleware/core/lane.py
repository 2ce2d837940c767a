"""The lane: one function from a host's usual chunk to the client's bytes for it.

Most chunks of a streamed answer are a few characters of plain text, or of reasoning, in the same
JSON shape. The exchange reads such a chunk from the bytes around its text (the reader's
`TextTemplate`); the parser takes it as text (`BlockParser.feed_plain_text`) or as reasoning (a
`ReasoningSplitter` inside its block, no marker in sight); nothing waits in the rules; and the
emitter writes it into the bytes around the client's text (its chunk template). A lane is those
steps as one function of the raw event, with the checks that cannot change between two of its
chunks made once, when it is built (`text_lane` for text, `reasoning_lane` for reasoning):

```python
lane = machine.text_lane((head_in, tail_in), (head_out, tail_out), cap, template)
lane(b'data: {"choices":[{"delta":{"content":"Hi"}}]}\\n\\n')  # -> the client's bytes, or None
```

Inside a call's body the usual chunk is a piece of the arguments that cannot end the call: the
open block takes it without a word, and the client gets nothing for it (`quiet_lane`; in C too,
for a JSON body).

`None` means "not the usual chunk" and changes nothing: the caller takes the general path, after
which it builds a new lane (the general path may change any state the lane took as settled). A
text without escapes is its own JSON string body, so it goes out as the bytes it came in.

Where the package was built with its C helper (`_lane.c`, compiled by `hatch_build.py` where a
C compiler answers), the text, reasoning and call-body lanes are that helper's: the same steps
for the usual chunk without the interpreter, this module's closure for any other chunk. Setting
`TOOLCALL_MIDDLEWARE_PURE_PYTHON` (at build or at import) keeps everything in Python.

The property tests in `tests/core/test_fast_paths.py` hold the lane to the general path, with
either lane; `tests/core/test_native_lane.py` holds the C lane to the Python one.
"""

from __future__ import annotations

import importlib
import json
import os
import re
from collections.abc import Callable
from functools import lru_cache
from json.encoder import encode_basestring, encode_basestring_ascii
from types import ModuleType
from typing import TYPE_CHECKING, Protocol, TypeAlias

from .framing.utf8 import token_bytes
from .textscan import HELD_WHITESPACE, WHITESPACE, JsonSegment, marker_starts

if TYPE_CHECKING:
    from .dialects.base import BlockParser
    from .reasoning import ReasoningSplitter

Lane = Callable[[bytes], "bytes | None"]
"""A whole SSE event as it came -> the client's bytes for it, or `None` (take the general path)."""

Writer: TypeAlias = Callable[[str, bytes], bytes]
"""(a text piece, its JSON string token with quotes) -> the client's bytes for it, keeping what
the emitter keeps (`ResponsesStreamEmitter.text_writer`: sequence numbers, the item's text)."""

Output: TypeAlias = "tuple[bytes, bytes] | Writer"
"""The client's side of a lane: the bytes around the string token of a chunk that is the same
but for its text (a Chat chunk), or a `Writer`."""

# The usual text chunk in C (`_lane.c`), where the package was built with it and the environment
# does not ask for pure Python; each lane falls back to its Python closure for any other chunk.
def _load_native() -> ModuleType | None:
    if os.environ.get("TOOLCALL_MIDDLEWARE_PURE_PYTHON"):
        return None
    try:
        return importlib.import_module("._lane", __package__)
    except ImportError:
        return None


_native = _load_native()

# The C string scanner `json.loads` reads a string token with (not in the type stubs).
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


def _unescaped(body: str) -> str | None:
    """The text of a JSON string body with escapes (as `json.loads('"' + body + '"')`, which
    must end at the last quote); `None` for a bad escape or a quote that ends the string early."""
    try:
        text, end = _scanstring(token := body + '"', 0)
    except ValueError:
        return None
    return text if end == len(token) else None


class Hits(Protocol):
    """What learns that its shape was matched (`TextTemplate.used`)."""

    used: bool


@lru_cache(maxsize=64)
def stop_bytes(markers: tuple[str, ...]) -> re.Pattern[bytes]:
    """Bytes of a JSON string body the lane leaves to the general path: a raw control character
    (not a JSON string) and the first byte of any marker's first character (a marker may start)."""
    firsts = sorted({m[:1].encode()[:1] for m in markers if m})
    return re.compile(b"[\\x00-\\x1f" + b"".join(re.escape(b) for b in firsts) + b"]")


class _Holder(Protocol):
    """What holds back trailing whitespace: a `BlockParser`'s text mode, a `ReasoningSplitter`."""

    _held_ws: str


class _Tracker(Protocol):
    """A text mode's note of the last characters of the text so far (`BlockParser`)."""

    _prev: str
    _last: str
    _after_call: bool


def text_lane(
    machine: BlockParser,
    frame_in: tuple[bytes, bytes],
    output: Output,
    cap: int,
    template: Hits,
    hold_spaces: bool | None,
) -> Lane:
    """The lane for `machine`, in text mode with nothing held but layout whitespace (the caller
    checks): `_text_piece(text)` for a piece with no byte that may start a marker. `frame_in` is
    the bytes around the text's string body in the host's event (quotes included); `output` the
    client's side (see `Output`); events longer than `cap` take the general path. `hold_spaces`:
    whether the format holds back whitespace at the end of a text whatever came before it
    (`None`: that depends, ask it)."""
    piece = machine._text_piece

    def take(text: str) -> str:
        """`_text_piece(text)`, inline where the format's layout is fixed."""
        kept = text.rstrip(WHITESPACE)
        if hold_spaces is None or not kept:
            return piece(text)
        held = machine._held_ws
        machine._prev, machine._last, machine._after_call = text[-1], kept[-1], False
        if not hold_spaces or len(kept) == len(text):
            machine._held_ws = ""
            return held + text
        if len(text) - len(kept) > HELD_WHITESPACE:
            return piece(text)  # (what is held is bounded)
        machine._held_ws = text[len(kept) :]  # held back: a block may follow
        return held + kept

    markers, holds, simple = machine._markers, hold_spaces is True, hold_spaces is not None
    return _lane(frame_in, output, cap, template, markers, machine, take, machine, holds, simple)


def reasoning_lane(
    splitter: ReasoningSplitter | None,
    frame_in: tuple[bytes, bytes],
    output: Output,
    cap: int,
    template: Hits,
) -> Lane:
    """The lane for reasoning text: inside `splitter`'s reasoning block with nothing held but
    trailing whitespace (the caller checks), a piece with no byte that may start its closing
    marker (or a tool call that ends it) is reasoning, its trailing whitespace held back as
    `ReasoningSplitter._emit_reasoning` holds it. `splitter` `None`: a dialect that marks no
    reasoning, where what the host labels reasoning is reasoning as it is. The rest as for
    `text_lane`."""
    markers = () if splitter is None else splitter._closes + splitter._implicit_heads

    def take(text: str) -> str:
        """`_emit_reasoning(text, closing=False)`."""
        return text if splitter is None else splitter.reasoning_text(text)

    return _lane(frame_in, output, cap, template, markers, splitter, take, None, splitter is not None, True)


def _lane(
    frame_in: tuple[bytes, bytes],
    output: Output,
    cap: int,
    template: Hits,
    markers: tuple[str, ...],
    holder: _Holder | None,
    take: Callable[[str], str],
    tracker: _Tracker | None,
    holds_spaces: bool,
    simple_take: bool,
) -> Lane:
    """The lane both builders share. The usual piece (no escape, no whitespace at its end) is
    done here: it goes out after whatever whitespace `holder` held, as the bytes it came in, and
    `tracker` (a text mode) notes its last character. `take(text)` does the rest, giving what
    goes out: escaped text (once decoded) and text that ends in whitespace. `holder` `None`:
    nothing is ever held. `holds_spaces`: `holder` always holds back the spaces at the end of
    a text (then a text ending in spaces, with nothing held before it, is done here too).
    `simple_take`: `take` of a text that does not end in whitespace is the held whitespace and
    the text, nothing held after it (the C lane then does escaped text itself)."""
    head, tail = frame_in
    head_len, tail_len = len(head), len(tail)
    frame = head_len + tail_len
    stop = stop_bytes(markers).search
    firsts = _firsts(markers)
    if callable(output):
        write: Writer | None = output
        out_head = out_tail = out_open = out_close = b""
    else:
        write = None
        out_head, out_tail = output
        out_open, out_close = out_head + b'"', b'"' + out_tail

    def out(text: str) -> bytes:
        if not text:
            return b""
        token = token_bytes(text)
        return out_head + token + out_tail if write is None else write(text, token)

    def lane(raw: bytes) -> bytes | None:
        size = len(raw)
        if size <= frame or size > cap or not raw.startswith(head) or not raw.endswith(tail):
            return None
        body = raw[head_len : size - tail_len]
        if stop(body) is not None:
            return None  # a raw control character; a marker may start
        try:
            text = body.decode()
        except UnicodeDecodeError:
            return None  # the SSE decoder replaces bad bytes: its text is not this one
        if 92 in body or 34 in body:  # a backslash (escapes) or a quote
            unescaped = _unescaped(text)
            if not unescaped or not firsts.isdisjoint(unescaped):
                return None  # a bad escape, an unescaped quote; a marker may start
            text = unescaped
            template.used = True
            return out(take(text))
        template.used = True  # (only for a chunk taken: as `TextTemplate.match_text`)
        # The text is its own JSON string body, and whitespace in it can only be spaces.
        if holder is not None:
            if body[-1] == 32:
                kept = text.rstrip(" ")
                if not holds_spaces or not kept or holder._held_ws or len(text) - len(kept) > HELD_WHITESPACE:
                    return out(take(text))
                # Held back: a block (or the reasoning's end) may follow; the rest goes as it came.
                holder._held_ws = text[len(kept) :]
                if tracker is not None:
                    tracker._prev, tracker._last, tracker._after_call = " ", kept[-1], False
                body = body[: len(kept) - len(text)]
                return out_open + body + out_close if write is None else write(kept, b'"' + body + b'"')
            if tracker is not None:  # `_text_piece`'s bookkeeping: no whitespace at the end
                tracker._prev = tracker._last = text[-1]
                tracker._after_call = False
            held = holder._held_ws
            if held:
                holder._held_ws = ""
                if held != " ":
                    return out(held + text)
                body = b" " + body  # the usual held space (a word's, before the next one)
                text = " " + text
        if write is None:
            return out_open + body + out_close
        return write(text, b'"' + body + b'"')

    if _native is None:
        return lane
    # The same lane in C: it takes the usual chunk itself (a writer's, in quotes, goes to the
    # writer) and hands this closure every other one, before changing anything.
    table = native_table(markers)
    around = (out_open, out_close) if write is None else (b'"', b'"')
    # What escaped text needs: the characters that may start a marker, `token_bytes`'s encoders.
    escaped = ("".join(sorted(firsts)), simple_take, encode_basestring, encode_basestring_ascii)
    return _native.text_lane(  # type: ignore[no-any-return]
        head, tail, cap, table, *around, holder, tracker, holds_spaces, template, lane, write, *escaped
    )


@lru_cache(maxsize=64)
def _firsts(markers: tuple[str, ...]) -> frozenset[str]:
    """The characters the markers start with."""
    return frozenset(m[0] for m in markers if m)


@lru_cache(maxsize=64)
def native_table(markers: tuple[str, ...]) -> bytes:
    """What each byte of a chunk's text means to the C lane: `stop_bytes` (the general path's),
    a backslash or a quote (the string is unescaped), a byte of a multi-byte
    character (the text must be valid UTF-8)."""
    assert _native is not None
    flags = _native.FLAGS
    stop = stop_bytes(markers).fullmatch
    table = bytearray(256)
    for byte in range(256):
        one = bytes([byte])
        if stop(one) is not None:
            table[byte] |= flags["STOP"]
        if one in (b"\\", b'"'):
            table[byte] |= flags["ESCAPE"]
        if byte >= 0x80:
            table[byte] |= flags["HIGH"]
    return bytes(table)


def _text_reader(frame_in: tuple[bytes, bytes], cap: int) -> Callable[[bytes], str | None]:
    """The text of a whole SSE event in the shape `frame_in` frames (a JSON string's body
    between them, no longer than `cap`), decoded; `None` for any other event. For the lanes
    that take a piece without writing anything (the usual text lane has its own, written out)."""
    head, tail = frame_in
    head_len, tail_len = len(head), len(tail)
    frame = head_len + tail_len
    control = stop_bytes(()).search

    def read(raw: bytes) -> str | None:
        size = len(raw)
        if size <= frame or size > cap or not raw.startswith(head) or not raw.endswith(tail):
            return None
        body = raw[head_len : size - tail_len]
        if control(body) is not None:
            return None  # a raw control character: not a JSON string
        try:
            text = body.decode()
        except UnicodeDecodeError:
            return None  # the SSE decoder replaces bad bytes: its text is not this one
        if 92 in body or 34 in body:
            return _unescaped(text)
        return text

    return read


def quiet_lane(quiet_feed: Callable[[str], bool], frame_in: tuple[bytes, bytes], cap: int, template: Hits) -> Lane:
    """The lane inside a call's body: a piece the open block takes without a word (its
    `quiet_feed`, as `HermesBlock.quiet_feed`) gives the client nothing (`b""`); a piece that may
    end the block, or make it report, takes the general path. `frame_in` and `cap` as for
    `text_lane`. A call's arguments come in many small chunks, most of them quoted or escaped."""
    read = _text_reader(frame_in, cap)

    def lane(raw: bytes) -> bytes | None:
        text = read(raw)
        if not text or not quiet_feed(text):
            return None
        template.used = True
        return b""

    if _native is None or getattr(quiet_feed, "__func__", None) is not JsonSegment.feed_inside:
        return lane
    # The same lane in C for a JSON body (`JsonSegment.feed_inside`): the segment's state moved
    # on as the Python method moves it; a piece with (a part of) a marker in it is this closure's.
    segment = getattr(quiet_feed, "__self__", None)
    assert isinstance(segment, JsonSegment)
    tracker = segment._tracker
    firsts = "".join(sorted(tracker._firsts))
    head, tail = frame_in
    limit = -1 if segment.limit is None else segment.limit
    return _native.quiet_lane(  # type: ignore[no-any-return]
        head, tail, cap, native_table(()), tracker, segment, template, firsts, lane, limit
    )


class _Pending(Protocol):
    """A text mode that may hold the start of a marker (`BlockParser`)."""

    _pending: str


def pending_lane(
    machine: _Pending, markers: tuple[str, ...], frame_in: tuple[bytes, bytes], cap: int, template: Hits
) -> Lane:
    """The lane while the text mode holds the start of a marker (`_pending`, as `<tool_`): a piece
    that only makes it longer, still short of a whole marker, is held with it, and the client gets
    nothing (what the general way does with it: nothing before it to write). Any other piece
    takes the general path. `frame_in` and `cap` as for
    `text_lane`. A marker comes in several chunks as a model writes it."""
    read = _text_reader(frame_in, cap)
    starts = marker_starts(markers)

    def lane(raw: bytes) -> bytes | None:
        held = machine._pending
        if not held:
            return None
        text = read(raw)
        if not text or held + text not in starts:
            return None
        # (Whitespace held before the marker stays held: it was held because the format's layout
        # said so after the same last character, which nothing since has changed.)
        machine._pending = held + text
        template.used = True
        return b""

    return lane


__all__ = [
    "Hits",
    "Lane",
    "Output",
    "Writer",
    "native_table",
    "pending_lane",
    "quiet_lane",
    "reasoning_lane",
    "stop_bytes",
    "text_lane",
]
