"""The text lane: one function from a host's plain text chunk to the client's, for a `BlockParser`.

Most chunks of a streamed answer are a few characters of plain text in the same JSON shape. The
exchange reads such a chunk from the bytes around its text (the reader's `TextTemplate`), the
text mode takes it as text (`BlockParser.feed_plain_text`), nothing waits in the rules, and the
emitter writes it into the bytes around the client's text (its text template). The lane is those
steps as one function of the raw event, with the checks that cannot change between two of its
chunks made once, when it is built:

```python
lane = machine.text_lane((head_in, tail_in), (head_out, tail_out), cap, template)
lane(b'data: {"choices":[{"delta":{"content":"Hi"}}]}\\n\\n')  # -> the client's bytes, or None
```

`None` means "not the usual chunk" and changes nothing: the caller takes the general path, after
which it builds a new lane (the general path may change any state the lane took as settled). A
text without escapes is its own JSON string body, so it goes out as the bytes it came in.

The property tests in `tests/core/test_fast_paths.py` hold the lane to the general path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

from ..framing.utf8 import token_bytes

if TYPE_CHECKING:
    from .base import BlockParser

Lane = Callable[[bytes], "bytes | None"]
"""A whole SSE event as it came -> the client's bytes for it, or `None` (take the general path)."""

# The C string scanner `json.loads` reads a string token with (not in the type stubs).
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


class Hits(Protocol):
    """What learns that its shape was matched (`TextTemplate.used`)."""

    used: bool


@lru_cache(maxsize=64)
def stop_bytes(markers: tuple[str, ...]) -> re.Pattern[bytes]:
    """Bytes of a JSON string body the lane leaves to the general path: a raw control character
    (not a JSON string) and the first byte of any marker's first character (a marker may start)."""
    firsts = sorted({m[:1].encode()[:1] for m in markers if m})
    return re.compile(b"[\\x00-\\x1f" + b"".join(re.escape(b) for b in firsts) + b"]")


def text_lane(
    machine: BlockParser,
    frame_in: tuple[bytes, bytes],
    frame_out: tuple[bytes, bytes],
    cap: int,
    template: Hits,
    hold_spaces: bool | None,
) -> Lane:
    """The lane for `machine`, in text mode with nothing held but layout whitespace (the caller
    checks). `frame_in` is the bytes around the text's string body in the host's event (quotes
    included), `frame_out` the bytes around the client's string token (quotes excluded); events
    longer than `cap` take the general path. `hold_spaces`: whether the format holds back
    whitespace at the end of a text whatever came before it (`None`: that depends, ask it)."""
    head, tail = frame_in
    out_head, out_tail = frame_out
    out_open, out_close = out_head + b'"', b'"' + out_tail
    out_open_space = out_open + b" "
    head_len, tail_len = len(head), len(tail)
    frame = head_len + tail_len
    stop = stop_bytes(machine._markers).search
    heads = machine._heads.search
    piece = machine._text_piece

    def kept_out(kept: str) -> bytes:
        return out_head + token_bytes(kept) + out_tail if kept else b""

    def escaped(body: str) -> bytes | None:
        try:  # as `json.loads('"' + body + '"')`, which must end at the last quote
            text, end = _scanstring(token := body + '"', 0)
        except ValueError:  # a bad escape
            return None
        if end != len(token) or not text or heads(text) is not None:
            return None  # an unescaped quote; a marker may start
        return kept_out(piece(text))

    def lane(raw: bytes) -> bytes | None:
        size = len(raw)
        if size <= frame or size > cap or not raw.startswith(head) or not raw.endswith(tail):
            return None
        body = raw[head_len : size - tail_len]
        if stop(body) is not None:
            return None
        try:
            text = body.decode()
        except UnicodeDecodeError:
            return None  # the SSE decoder replaces bad bytes: its text is not this one
        template.used = True
        if 92 in body or 34 in body:  # a backslash (escapes) or a quote
            return escaped(text)
        # From here the text is its own JSON string body, and whitespace in it can only be spaces
        # (the rest comes escaped): `_text_piece(text)`, inline for the usual cases.
        held = machine._held_ws
        if body[-1] != 32:  # no whitespace at the end: all of it goes, after any held
            machine._prev = machine._last = text[-1]
            machine._after_call = False
            if not held:
                return out_open + body + out_close
            machine._held_ws = ""
            if held == " ":
                return out_open_space + body + out_close
            return out_head + token_bytes(held + text) + out_tail
        kept = text.rstrip(" ")
        if hold_spaces is None or not kept:
            return kept_out(piece(text))
        machine._prev = " "
        machine._last = kept[-1]
        machine._after_call = False
        if not hold_spaces:
            if held:
                machine._held_ws = ""
                return out_head + token_bytes(held + text) + out_tail
            return out_open + body + out_close
        machine._held_ws = text[len(kept) :]  # held back: a block may follow
        if held:
            return out_head + token_bytes(held + kept) + out_tail
        return out_open + body[: len(kept) - len(text)] + out_close

    return lane
