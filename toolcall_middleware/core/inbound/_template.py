"""Reading a streamed chunk's text without decoding the chunk: the shape of the last plain text chunk.

A host streams hundreds of chunks that differ only in their text: the same id, model and
timestamp, the same keys in the same order, one `delta.content` string. After one such chunk has
been decoded the normal way, `TextTemplate` knows the bytes before and after its text; a later
chunk with exactly that prefix and suffix is the same object with another text, so the text is
read from between them (decoded as a JSON string only when it holds an escape). Anything else
(another shape, an empty text, a string that would not be one JSON string token) is not matched
and the caller decodes the chunk in full, as before.

The template is proven when it is learned: the chunk with a probe put in place of its text must
decode to the chunk with only that one string changed. A host whose chunks never repeat their
shape (a per-chunk timestamp or usage) stops being templated after a few tries.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any

from ..framing._utf8 import json_loads
from ._events import Channel, RawText

_PROBE = "toolcall-template-probe"
_SPECIAL = re.compile(r'["\\\x00-\x1f]')  # what a JSON string body cannot hold unescaped
# The C string scanner `json.loads` reads a string token with (not in the type stubs).
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_MAX_UNUSED = 3  # templates learned and never matched, before learning stops

Locate = Callable[[Any], "dict[str, Any] | None"]
"""Given a decoded chunk, the mapping that holds its text (`delta`, a choice), or `None`."""


class TextTemplate:
    """`match_text(raw)` -> the text of a whole SSE event shaped like the learned chunk, or `None`."""

    def __init__(self) -> None:
        self._head = b""  # the prefix and suffix as one `data: ` line's bytes (empty: not on one line)
        self._tail = b""
        self._frame = 1 << 62  # len(head) + len(tail): no event is longer while nothing is learned
        self.learned: RawText | None = None  # the learned chunk's event: its channel and choice
        self.used = False  # a chunk matched the learned shape
        self._unused = 0

    def match_text(self, raw: bytes) -> str | None:
        """The text of a whole SSE event as it came (`data: …\\n\\n`), before SSE decoding, when
        the chunk is the learned one's shape on one `data:` line (`Answer.feed_event`, the one
        fast path); its channel and choice are `learned`'s. `None`: decode it."""
        size = len(raw)
        # Not shorter than head + tail + one byte: an empty text (or an overlap) is decoded in full.
        if size <= self._frame:
            return None
        # (Two one-argument calls, cheaper than `startswith`, `endswith` and a slice: what is left
        # is head + tail shorter only when both were there.)
        between = raw.removeprefix(self._head).removesuffix(self._tail)
        if len(between) + self._frame != size:
            return None
        try:
            body = between.decode()
        except UnicodeDecodeError:
            return None  # the SSE decoder replaces bad bytes: its text is not this one
        # The usual text: no escape, the token's body is the text. (A printable body holds no
        # control character; two `in` tests and `isprintable` cost less than a search.)
        if body.isprintable() and '"' not in body and "\\" not in body:
            self.used = True
            return body
        return self._read(body)

    def _read(self, body: str) -> str | None:
        """The text of the string token `"body"`, or `None` when it is not exactly one."""
        if _SPECIAL.search(body) is not None:
            try:
                # As `json.loads('"' + body + '"')`: the string token must end at the last quote.
                text, end = _scanstring(body + '"', 0)
            except ValueError:  # a raw control character, a bad escape
                return None
            if end != len(body) + 1 or not text:
                return None  # an unescaped quote: not one string token
        else:
            text = body
        self.used = True
        return text

    def learn(self, data: str, event: RawText, key: str, locate: Locate, decoded: Any = None) -> None:
        """Learn from a chunk that gave exactly `event`, whose text is `locate(chunk)[key]`;
        `decoded`: the chunk as the caller decoded it (`json.loads(data)`), not decoded again. It
        is compared with the probed chunk and comes back unchanged."""
        if self._unused >= _MAX_UNUSED:
            return
        if self.learned is not None and not self.used:
            self._unused += 1
        self.learned, self.used, self._head, self._tail = None, False, b"", b""
        self._frame = 1 << 62
        token = None
        for encoded in (encode_basestring(event.text), encode_basestring_ascii(event.text)):  # json.dumps's
            if data.count(encoded) == 1:
                token = encoded
                break
        if token is None:
            return
        start = data.index(token)
        prefix, suffix = data[: start + 1], data[start + len(token) - 1 :]
        try:
            probed = json_loads(prefix + _PROBE + suffix)
            expected = json_loads(data) if decoded is None else decoded
        except ValueError:
            return
        holder = locate(expected)
        if holder is None or holder.get(key) != event.text:
            return
        holder[key] = _PROBE
        try:
            if probed != expected:
                return
        finally:
            holder[key] = event.text
        self.learned = event
        if "\n" not in prefix and "\r" not in prefix and "\n" not in suffix and "\r" not in suffix:  # one line
            self._head, self._tail = b"data: " + prefix.encode(), suffix.encode() + b"\n\n"
            self._frame = len(self._head) + len(self._tail)


def holder_of(obj: Any, *path: str | int) -> dict[str, Any] | None:
    """`obj[p0][p1]…` when every step exists and the last is a dict, else `None`."""
    for step in path:
        if isinstance(step, int):
            if not isinstance(obj, list) or len(obj) <= step:
                return None
        elif not isinstance(obj, dict) or step not in obj:
            return None
        obj = obj[step]
    return obj if isinstance(obj, dict) else None


def text_key(
    holder: Mapping[str, Any], channel: Channel, text: str, keys: Mapping[Channel, tuple[str, ...]]
) -> str | None:
    """Which of the channel's keys holds `text` (the first that does, as the readers read them)."""
    for key in keys[channel]:
        if holder.get(key) == text:
            return key
    return None


__all__ = [
    "Locate",
    "TextTemplate",
    "holder_of",
    "text_key",
]
