"""SSE keep-alive: a ping whenever a rewritten stream has been silent for `interval` seconds.

Proxies and load balancers close idle connections (often after 30-60 s); a model that thinks for
long, or writes a long tool call that the middleware holds back until it ends, can be silent that
long. The ping is a comment line, `: ping`, which every SSE client skips. Anthropic's clients also
know a typed `event: ping` (Anthropic sends it itself); the `ping_events` profile sends that to
Messages clients. OpenAI clients get the comment either way: the openai SDK hands every `data:`
event to its accumulators, so a typed ping would reach them as a chunk.

A ping only ever goes out between two whole messages, and every message of a rewritten stream
holds whole SSE events, so a ping never lands inside one. A message costs the keep-alive no clock
read and no coroutine of ours: the shell's write (`_asgi_request._counting`) counts its bytes, as
it does for every response, and keeps the awaitable the server gave for it (`last_write`). The
timer reads the silence off those: it looks every quarter of the interval; a write still being
awaited (a slow client: the server's coroutine not finished, its future not done) means no silence
yet, and a count that moved since the last look, a silence from that look at the earliest. Once
nothing moved for the interval it pings, so a ping comes after between three quarters of the
interval and the interval of silence, never later (counted from the stream's head, when the shell
starts the keep-alive: a host that is slow to its first token is kept alive too; the SDKs skip a
ping wherever it comes). The ping is written by a task
(`pinger`); a message the app sends meanwhile is written after it (`after_ping`). The timer (a
loop timer handle) runs on asyncio only (under trio there is no timer and no ping) and `stop()`
ends it for good; the middleware calls it before the last body, on pass-through, on error and when
the request ends, so nothing is left running.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from time import monotonic
from types import CoroutineType
from typing import Any

from .core._api import spec_for
from .core.apis.messages import PING_EVENT

Message = MutableMapping[str, Any]
Send = Callable[[Message], Awaitable[None]]

PING_COMMENT = b": ping\n\n"
_LOOKS = 4  # the timer's looks per interval: a ping may come a quarter of one early, never late


def ping_for(api: str, profiles: frozenset[str]) -> bytes:
    """The ping a client of `api` gets: an SSE comment, or under `ping_events` the API's typed
    ping event where it has one (Messages)."""
    event = spec_for(api).ping_event
    return event if event is not None and "ping_events" in profiles else PING_COMMENT


class KeepAlive:
    """Pings through `send` after `interval` seconds without a message; see the module doc.
    `sent`: the body bytes written so far (pings too), the count the shell's write keeps."""

    def __init__(self, send: Send, interval: float, ping: bytes, sent: Callable[[], int]) -> None:
        self._send = send
        self._interval = interval
        self._ping = {"type": "http.response.body", "body": ping, "more_body": True}
        self._sent = sent
        # What the shell's write keeps: the awaitable of the last message handed to the server (a
        # coroutine or a future, which say whether it is still being written: `writing`).
        self.last_write: Awaitable[None] | None = None
        self.pinger: asyncio.Task[None] | None = None  # a ping being written: messages wait for it
        # What the timer saw at its last look (bytes sent, a write being awaited), when it looked,
        # and since when the stream is silent at the earliest.
        self._seen = (0, False)
        self._looked = self._since = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._stopped = False
        self.pings = 0

    def start(self) -> bool:
        """Start the timer (once; never after `stop`). False outside asyncio (trio): no timer, and
        nothing for the shell's write to keep."""
        if self._stopped:
            return False
        if self._loop is not None:
            return True
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:  # another event loop (trio): no timer
            return False
        self._seen, self._looked = (self._sent(), False), monotonic()
        self._since = self._looked
        self._timer = self._loop.call_later(self._interval / _LOOKS, self._wake)
        return True

    def readable(self, written: Awaitable[None]) -> Awaitable[None]:
        """The server's awaitable for a message, as one whose end `writing` can read: a coroutine
        or a future as it is (the shell checks for a coroutine itself), anything else awaited in
        a coroutine of ours."""
        return written if isinstance(written, asyncio.Future) else _awaited(written)

    def writing(self) -> bool:
        """A message is being written: the server's awaitable for the last one has not ended."""
        written = self.last_write
        if written is None:
            return False
        if type(written) is CoroutineType:
            return written.cr_frame is not None  # (a coroutine that returned, raised or was cancelled has none)
        assert isinstance(written, asyncio.Future)
        return not written.done()

    async def after_ping(self, message: Message) -> None:
        """A message the app sent while a ping is being written: written once the ping is."""
        pinger = self.pinger
        if pinger is not None:
            await asyncio.wait([pinger])  # (never raises, even when the ping failed)
        await self._send(message)

    async def stop(self) -> None:
        """End the timer; a ping being written completes first. Safe to call more than once."""
        self._stopped = True
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        pinger = self.pinger
        if pinger is not None and not pinger.done():
            await asyncio.wait([pinger])  # (a ping not begun yet sees `stop` and is not written)

    def _wake(self) -> None:
        """The timer's look: silent for `interval` yet? Then ping, else look again."""
        self._timer = None
        if self._stopped or self._loop is None:
            return
        now = monotonic()
        seen = (self._sent(), self.writing())
        if seen[1]:
            self._seen, self._since = seen, now  # being written: not silent yet
        elif seen != self._seen:
            self._seen, self._since = seen, self._looked  # written since the last look: silent from it at most
        elif now - self._since >= self._interval:
            self.pinger = self._loop.create_task(self._write_ping())
            return
        self._looked = now
        self._timer = self._loop.call_later(self._interval / _LOOKS, self._wake)

    async def _write_ping(self) -> None:
        try:
            if self._stopped:
                return
            await self._send(dict(self._ping))
            self.pings += 1
        except Exception:  # the client is gone: the app's own send will find out
            self._stopped = True
            return
        finally:
            self.pinger = None
        self._seen, self._looked = (self._sent(), False), monotonic()
        self._since = self._looked
        if not self._stopped and self._loop is not None:
            self._timer = self._loop.call_later(self._interval / _LOOKS, self._wake)


async def _awaited(written: Awaitable[None]) -> None:
    await written


__all__ = ["PING_COMMENT", "PING_EVENT", "KeepAlive", "ping_for"]
