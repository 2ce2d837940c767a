"""Warnings where the middleware does something an operator would not expect, logged once per
cause and rate-limited, so a misconfiguration shows in the log without flooding it.

The causes (`routing.route_request` and the exchange's record find them, `reporting` warns of
them; each message says what happened and what to change):

- a POST to a path that looks like an API route (`…/chat/completions`, `…/responses`,
  `…/messages`) that no configured route matches (`route_prefixes` not set for `/api/v1/…`);
- a request the middleware rewrote whose answer it passed through untouched, and why (a host
  that streams `text/plain`, a body that is no answer): the client sees the raw text;
- a model's call to a tool the request did not offer (it goes to the client as text);
- a model that wrote a call in another dialect's markup than the one in force, per model and
  dialect found (`dialect_mismatch`: read as that dialect's, or only warned of);
- a served model name no dialect matches, read as `auto` (`dialect=` or `model_dialects` fixes it).

```python
surprises = Surprises(per_minute=10)
surprises.warn("route:/api/v1/chat/completions", "…")   # logged; the same cause again is not
```
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

logger = logging.getLogger("toolcall_middleware")

API_SUFFIXES = ("/chat/completions", "/responses", "/messages")


class Surprises:
    """Which causes were said (at most `remember` of them) and how many this minute."""

    def __init__(
        self, *, per_minute: int = 10, remember: int = 1024, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.per_minute = per_minute
        self.remember = remember
        self._clock = clock
        self._said: set[str] = set()
        self._window = 0.0
        self._in_window = 0

    def warn(self, cause: str, message: str) -> bool:
        """Log `message` unless `cause` was said already or this minute's quota is spent; whether
        it was logged. A cause passed over for the quota is said when it comes again later."""
        if cause in self._said:
            return False
        now = self._clock()
        if now - self._window >= 60.0:
            self._window, self._in_window = now, 0
        if self._in_window >= self.per_minute:
            return False
        self._in_window += 1
        if len(self._said) < self.remember:
            self._said.add(cause)
        logger.warning("toolcall-middleware: %s", message)
        return True


SURPRISES = Surprises()


def looks_like_api(path: str) -> bool:
    """A path one of the APIs would have (with any prefix): worth a warning when unrouted."""
    path = path.rstrip("/")
    return path.endswith(API_SUFFIXES) or path.endswith("/messages/count_tokens")


__all__ = ["API_SUFFIXES", "SURPRISES", "Surprises", "looks_like_api"]
