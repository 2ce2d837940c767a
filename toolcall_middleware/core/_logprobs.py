"""The host's log probabilities, kept in step with the text the client reads.

A Chat host that was asked for `logprobs` sends, with each chunk's text, one entry per token
(`{"token", "logprob", "bytes", "top_logprobs"}`). The middleware's parser may hold text back (a
possible marker's start, whitespace before a call) and let it out with a later chunk, take it
into a call, or move it to the reasoning. `LogprobQueue` keeps the entries of the text not yet
given out, and gives a chunk of text out with exactly the entries of its tokens, when the text
is the tokens' text as it came; text that became something else takes its entries with it.

```python
queue = LogprobQueue()
queue.add("Hello ", entries)          # the host's text and its tokens' entries
queue.take("Hello")                   # the entries of "Hello" (" " is held back): or None
queue.drop()                          # the held text became a call: its entries go too
```
"""

from __future__ import annotations

from collections import deque
from typing import Any


class LogprobQueue:
    """The entries of the host's tokens whose text has not gone out yet, in order."""

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: deque[tuple[str, Any]] = deque()  # (the token's text, its entry)

    def add(self, text: str, entries: list[Any]) -> None:
        """The host's `text` and the entries of its tokens. Entries whose tokens do not spell
        the text (a host that sends them some other way) are not kept: nothing is given out for
        text they would not describe."""
        tokens = [e.get("token") if isinstance(e, dict) else None for e in entries]
        if any(not isinstance(t, str) for t in tokens) or "".join(tokens) != text:  # type: ignore[arg-type]
            self._entries.clear()
            return
        self._entries.extend(zip(tokens, entries, strict=True))  # type: ignore[arg-type]

    def take(self, text: str) -> list[Any] | None:
        """The entries of the tokens that spell `text`, the next text to go out, taken off the
        queue; `None` (and nothing kept) when `text` does not start with them or cuts a token."""
        taken: list[Any] = []
        at = 0
        entries = self._entries
        while at < len(text) and entries:
            token, entry = entries[0]
            if not text.startswith(token, at):
                break
            taken.append(entry)
            at += len(token)
            entries.popleft()
        if at != len(text):
            entries.clear()  # out of step with the text: none of it is described any more
            return None
        return taken

    def drop(self) -> None:
        """What was held became something else than text (a call): its entries go with it."""
        self._entries.clear()

    def __bool__(self) -> bool:
        return bool(self._entries)


__all__ = ["LogprobQueue"]
