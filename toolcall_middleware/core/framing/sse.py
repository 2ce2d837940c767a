"""Server-sent events: decoded split-safe from any upstream, encoded the way the OpenAI API writes them.

Chat Completions: `data: <json>\\n\\n` per chunk and `data: [DONE]\\n\\n` at the end. The Responses
API: `event: <type>\\ndata: <json>\\n\\n`, no `[DONE]`. One compact single-line JSON per event
(json.dumps never writes a raw newline), every event closed by a blank line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from json.encoder import encode_basestring
from typing import Any, NamedTuple

from ._utf8 import COMPACT, json_bytes

DONE = b"data: [DONE]\n\n"


def encode_data(obj: Mapping[str, Any]) -> bytes:
    """One Chat Completions chunk."""
    return b"data: " + json_bytes(obj, separators=COMPACT) + b"\n\n"


def encode_event(obj: Mapping[str, Any]) -> bytes:
    """One typed event (Responses, Anthropic): the `event:` line names `obj["type"]`."""
    return b"event: " + str(obj["type"]).encode() + b"\ndata: " + json_bytes(obj, separators=COMPACT) + b"\n\n"


def event_data(raw: bytes) -> str:
    """The `data` (JSON text) of one event as `encode_event` wrote it: its one `data:` line."""
    return raw[raw.index(b"\ndata: ") + 7 : -2].decode()


class SSETemplate:
    """An encoded event with holes: `fill(*values)` is the same event's bytes with each value in
    place of a probe, without building and dumping the object again (the per-chunk fast path).

    ```python
    template = SSETemplate(encode_data({"delta": {"content": "probe"}}), json_token("probe"))
    template.fill(json_token("Hi").encode()) == encode_data({"delta": {"content": "Hi"}})
    ```
    Each probe must occur exactly once in the event, in the order given.
    """

    __slots__ = ("parts",)

    def __init__(self, encoded: bytes, *probes: str) -> None:
        parts: list[bytes] = []
        rest = encoded
        for probe in probes:
            token = probe.encode()
            if rest.count(token) != 1:
                raise ValueError(f"the probe {probe!r} must occur once in the event")
            head, _, rest = rest.partition(token)
            parts.append(head)
        parts.append(rest)
        self.parts = tuple(parts)  # the bytes around the holes (a caller may join them itself)

    @classmethod
    def of(cls, encoded: bytes, *probes: str) -> SSETemplate | None:
        """The template, or `None` when a probe is not found exactly once (say an upstream id
        that happens to hold it): the caller then encodes the long way."""
        try:
            return cls(encoded, *probes)
        except ValueError:
            return None

    def fill(self, *values: bytes) -> bytes:
        parts = self.parts
        if len(values) == 1:
            return parts[0] + values[0] + parts[1]
        out = [parts[0]]
        for value, part in zip(values, parts[1:], strict=True):
            out += (value, part)
        return b"".join(out)


def json_token(text: str) -> str:
    """A string as `dumps` writes it inside an object (non-ASCII kept, as the OpenAI API does)."""
    return encode_basestring(text)


def encode_chat(chunks: Iterable[Mapping[str, Any]], *, done: bool = False) -> bytes:
    return b"".join(encode_data(c) for c in chunks) + (DONE if done else b"")


def encode_events(events: Iterable[Mapping[str, Any]]) -> bytes:
    return b"".join(encode_event(e) for e in events)


# -- decoding -----------------------------------------------------------------------------------


class SSETooLarge(ValueError):
    """One SSE event grew past the configured cap without ending."""


class SSEEvent(NamedTuple):
    """One event as the upstream framed it: its fields, and its exact bytes for pass-through.

    `data` is the `data:` lines joined with `\\n` (`None` when there were none: a comment-only
    block); `raw` holds the event's bytes including the blank line that ended it. (A named tuple:
    one is made per upstream chunk, and a tuple is made several times faster than a frozen class.)
    """

    raw: bytes
    data: str | None = None
    event: str | None = None
    id: str | None = None
    retry: int | None = None


_EOL = re.compile(rb"\r\n|\r|\n")


class SSEDecoder:
    """Bytes in any pieces -> complete events, per the WHATWG rules the openai SDK follows.

    Lines end with CR, LF or CRLF only (never `str.splitlines`, which also splits on U+2028 and
    friends that JSON strings may hold); a CRLF split across pieces is one line end. Lines are
    decoded only once complete, so a multi-byte character is never cut. Each byte is scanned once.

    ```python
    decoder = SSEDecoder()
    events = decoder.feed(b"data: {\\"a\\"") + decoder.feed(b": 1}\\n\\n")  # one event, data '{"a": 1}'
    ```
    """

    def __init__(self, *, max_event_bytes: int = 8 * 1024 * 1024) -> None:
        self._max = max_event_bytes
        self._partial: list[bytes] = []  # the current line, in pieces
        self._partial_len = 0
        self._event_raw: list[bytes] = []  # the current event's complete lines, with their ends
        self._event_len = 0
        self._cr = b""  # a CR that ended the last piece, until the next byte says CR or CRLF
        # Nothing held: the next byte starts a new event. (An attribute kept by `feed` and `flush`,
        # not a property: the stream reads it on every chunk.)
        self.idle = True

    @property
    def max_event_bytes(self) -> int:
        return self._max

    def feed(self, data: bytes) -> list[SSEEvent]:
        out: list[SSEEvent] = []
        if self.idle and b"\r" not in data:
            start = self._simple_events(data, out)
            if start == len(data):
                return out
            data = data[start:]  # the rest by the general rules, from the same clean state
        self.idle = False  # (until this piece is read: one over the cap leaves it so)
        # A CR at the end of a piece may be the first half of a CRLF: keep it for the next piece,
        # so the event's bytes (and the line ends) are the same however the stream was split.
        data = self._cr + data
        self._cr = b""
        if data.endswith(b"\r"):
            data, self._cr = data[:-1], b"\r"
        start = 0
        for m in _EOL.finditer(data):
            line = data[start : m.start()]
            if self._partial:
                line = b"".join(self._partial) + line
                self._partial, self._partial_len = [], 0
            self._line(line, m.group(), out)
            start = m.end()
        rest = data[start:]
        if rest:
            self._partial.append(rest)
            self._partial_len += len(rest)
            if self._partial_len + self._event_len > self._max:
                raise SSETooLarge(f"an SSE event exceeded {self._max} bytes without ending")
        self.idle = not (self._cr or self._partial or self._event_raw)
        return out

    def _simple_events(self, data: bytes, out: list[SSEEvent]) -> int:
        """The leading events of `data` that are one `data:` line each, ended by `\\n\\n` (what
        OpenAI-style hosts write), decoded as the general rules would; returns where they end."""
        start, size = 0, len(data)
        while start < size:
            end = data.find(b"\n\n", start)
            if end < 0 or not data.startswith(b"data:", start) or end + 2 - start > self._max:
                break
            line = data[start:end]
            if b"\n" in line:
                break  # an event of several lines
            value = line[6:] if line.startswith(b"data: ") else line[5:]
            out.append(SSEEvent(raw=data[start : end + 2], data=value.decode("utf-8", errors="replace")))
            start = end + 2
        return start

    def flush(self) -> list[SSEEvent]:
        """The stream ended: an unterminated last event is returned as it was (for pass-through);
        the SDK's decoder would drop it."""
        out: list[SSEEvent] = []
        if self._cr:
            self._cr = b""
            line = b"".join(self._partial)
            self._partial, self._partial_len = [], 0
            self._line(line, b"\r", out)
        raw = b"".join(self._event_raw) + b"".join(self._partial)
        self._event_raw, self._partial, self._event_len, self._partial_len = [], [], 0, 0
        self.idle = True
        if raw:
            out.append(self._parse(raw))
        return out

    def _line(self, line: bytes, eol: bytes, out: list[SSEEvent]) -> None:
        self._event_raw.append(line + eol)
        self._event_len += len(line) + len(eol)
        if self._event_len > self._max:
            raise SSETooLarge(f"an SSE event exceeded {self._max} bytes without ending")
        if line:
            return
        raw = b"".join(self._event_raw)
        self._event_raw, self._event_len = [], 0
        out.append(self._parse(raw))

    @staticmethod
    def _parse(raw: bytes) -> SSEEvent:
        data: list[str] = []
        event = event_id = None
        retry = None
        for line in _EOL.split(raw):
            if not line or line.startswith(b":"):
                continue
            name, _, value = line.partition(b":")
            if value.startswith(b" "):
                value = value[1:]
            text = value.decode("utf-8", errors="replace")
            if name == b"data":
                data.append(text)
            elif name == b"event":
                event = text
            elif name == b"id" and "\0" not in text:
                event_id = text
            elif name == b"retry" and text.isdigit():
                retry = int(text)
        return SSEEvent(raw=raw, data="\n".join(data) if data else None, event=event, id=event_id, retry=retry)


__all__ = [
    "DONE",
    "SSEDecoder",
    "SSEEvent",
    "SSETemplate",
    "SSETooLarge",
    "encode_chat",
    "encode_data",
    "encode_event",
    "encode_events",
    "event_data",
    "json_token",
]
