"""SSE keep-alive: a ping whenever a rewritten stream has been silent for `interval` seconds.

Proxies and load balancers close idle connections (often after 30-60 s); a model that thinks for
long, or writes a long tool call that the middleware holds back until it ends, can be silent that
long. The ping is a comment line, `: ping`, which every SSE client skips. Anthropic's clients also
know a typed `event: ping` (Anthropic sends it itself); the `ping_events` profile sends that to
Messages clients. OpenAI clients get the comment either way: the openai SDK hands every `data:`
event to its accumulators, so a typed ping would reach them as a chunk.

The middleware sends its own messages through `KeepAlive.send`: a ping only ever goes out between
two whole messages, and every message of a rewritten stream holds whole SSE events, so a ping never
lands inside one. A message costs a timestamp and a counter: no lock, no timer rescheduled. The
timer wakes when the silence could have reached the interval, reads the timestamp, and sleeps on or
pings. A ping is written holding a lock, with a flag up that makes a message arriving meanwhile
wait for the lock; a ping never starts while a message is being written. The timer (a loop timer
handle; a task only while a ping is written) runs on asyncio only (under trio there is no timer and
no ping) and `stop()` ends it for good; the middleware calls it before the last body, on
pass-through, on error and when the request ends, so nothing is left running.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from time import monotonic
from typing import Any

from .core._api import spec_for
from .core.apis.messages import PING_EVENT

Message = MutableMapping[str, Any]
Send = Callable[[Message], Awaitable[None]]

PING_COMMENT = b": ping\n\n"


def ping_for(api: str, profiles: frozenset[str]) -> bytes:
    """The ping a client of `api` gets: an SSE comment, or under `ping_events` the API's typed
    ping event where it has one (Messages)."""
    event = spec_for(api).ping_event
    return event if event is not None and "ping_events" in profiles else PING_COMMENT


class KeepAlive:
    """Pings through `send` after `interval` seconds without a message; see the module doc."""

    def __init__(self, send: Send, interval: float, ping: bytes) -> None:
        self._send = send
        self._interval = interval
        self._ping = {"type": "http.response.body", "body": ping, "more_body": True}
        self._lock = asyncio.Lock()  # held by a ping being written (and a message waiting for one)
        # What `send` keeps: `pinging`, a ping is being written (a message waits for the lock);
        # `sending`, messages being written outside the lock (no ping starts); `last`, when the
        # last message (or ping) was written (`time.monotonic()`).
        self.pinging = False
        self.sending = 0
        self.last = 0.0
        # A timer handle, not a task, waits out the silence: cheap to set up and to cancel, which
        # every rewritten stream does. A task exists only while a ping is being written.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._pinger: asyncio.Task[None] | None = None
        self._stopped = False
        self.pings = 0

    def start(self) -> None:
        """Start the timer (once; never after `stop`, never outside asyncio)."""
        if self._loop is not None or self._stopped:
            return
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:  # another event loop (trio): no timer
            return
        self.last = monotonic()
        self._timer = self._loop.call_later(self._interval, self._wake)

    async def send(self, message: Message) -> None:
        """Send one message of the response; the silence counts from here."""
        if self.pinging:
            async with self._lock:  # after the ping being written
                await self._send(message)
                self.last = monotonic()
            return
        self.sending += 1
        try:
            await self._send(message)
        finally:
            self.sending -= 1
        self.last = monotonic()

    async def stop(self) -> None:
        """End the timer; a ping being written completes first. Safe to call more than once."""
        self._stopped = True
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        pinger, self._pinger = self._pinger, None
        if pinger is None or pinger.done():
            return
        async with self._lock:
            pinger.cancel()
        await asyncio.wait([pinger])  # never raises, even when the ping failed

    def _wake(self) -> None:
        """The timer: silent for `interval` yet? Then ping, else wait for the rest of it."""
        self._timer = None
        if self._stopped or self._loop is None:
            return
        wait = self.last + self._interval - monotonic()
        if wait <= 0 and self.sending:
            wait = self._interval  # a message is being written (a slow client): not silent
        if wait > 0:
            self._timer = self._loop.call_later(wait, self._wake)
        else:
            self._pinger = self._loop.create_task(self._write_ping())

    async def _write_ping(self) -> None:
        async with self._lock:
            if self._stopped:
                return
            if not self.sending and monotonic() - self.last >= self._interval:
                # Still silent (no message went out, or began to, while we waited for the lock).
                self.pinging = True
                try:
                    await self._send(dict(self._ping))
                except Exception:  # the client is gone: the app's own send will find out
                    self._stopped = True
                    return
                finally:
                    self.pinging = False
                self.pings += 1
                self.last = monotonic()
        if not self._stopped and self._loop is not None:
            self._timer = self._loop.call_later(max(0.0, self.last + self._interval - monotonic()), self._wake)


__all__ = ["PING_COMMENT", "PING_EVENT", "KeepAlive", "ping_for"]
