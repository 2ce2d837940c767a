"""A request body read within its limit: when to stop reading, and what was read, sans-IO.

Every shell reads a request body before the exchange rewrites it, by the same rules, kept here:
- a body whose declared length is over the limit, or not a length at all, is not read (`skipped`):
  not ours to judge, or too large to hold; the app gets it from the server as it came;
- reading stops once more than the limit has come (`over`): what was read is replayed to the app
  and the rest comes from the server (or the request is refused: the caller's choice);
- a body is `complete` when its end was read, and it is as long as it said it was.

The shell does the reading and tells `BodyRead` each piece: `feed` where the server pushes pieces
that say whether more follows (ASGI's `receive`), `take` where the shell pulls reads of a size it
asks for (`wanted`) and an empty read is the end (WSGI's `wsgi.input`).

```python
read = BodyRead(limit, declared=b"1234")
while read.reading:
    read.feed(piece, more=more)          # or: read.take(stream.read(read.wanted(65536)))
read.body, read.complete, read.over
```
"""

from __future__ import annotations


class BodyRead:
    """One request body being read; see the module doc."""

    def __init__(self, limit: int, declared: bytes | str | None = None) -> None:
        self.limit = limit
        text = declared.decode("latin-1") if isinstance(declared, bytes) else declared
        text = None if text is None else text.strip()
        self.declared = int(text) if text is not None and text.isascii() and text.isdigit() else None
        # Not read at all: a declared length over the limit, or a Content-Length that is no length.
        self.skipped = text is not None and (self.declared is None or self.declared > limit)
        self.parts: list[bytes] = []
        self.size = 0
        self.ended = self.declared == 0  # the body's end was read (an empty one's, at once)
        self.short = False  # it ended before the length it declared
        self.reading = not self.skipped and not self.ended

    def feed(self, data: bytes, *, more: bool) -> None:
        """A piece the server pushed (`more`: more of the body follows)."""
        self.parts.append(data)
        self.size += len(data)
        self.ended = not more
        self.reading = more and self.size <= self.limit

    def wanted(self, most: int) -> int:
        """How many bytes to ask for next, `most` at most (no more than the declared length left)."""
        return most if self.declared is None else min(self.declared - self.size, most)

    def take(self, data: bytes) -> None:
        """A read the shell pulled: empty is the end of the input (short of a declared length, the
        client sent less than it said); reaching the declared length is the end too."""
        if data:
            self.parts.append(data)
            self.size += len(data)
        else:
            self.short = self.declared is not None and self.size < self.declared
        self.ended = not data or (self.declared is not None and self.size >= self.declared)
        self.reading = not self.ended and self.size <= self.limit

    @property
    def complete(self) -> bool:
        """The whole body was read (it may still be over the limit: it ended in the read that crossed it)."""
        return self.ended and not self.short

    @property
    def over(self) -> bool:
        """More than the limit: declared so, or read so."""
        return (self.skipped and self.declared is not None) or self.size > self.limit

    @property
    def body(self) -> bytes:
        return b"".join(self.parts)


__all__ = ["BodyRead"]
