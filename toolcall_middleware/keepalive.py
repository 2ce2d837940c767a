"""SSE keep-alive: a ping whenever a rewritten stream has been silent for `interval` seconds.

Proxies and load balancers close idle connections (often after 30-60 s); a model that thinks for
long, or writes a long tool call that the middleware holds back until it ends, can be silent that
long. The ping is a comment line, `: ping`, which every SSE client skips. Anthropic's clients also
know a typed `event: ping` (Anthropic sends it itself); the `ping_events` profile sends that to
Messages clients. OpenAI clients get the comment either way: the openai SDK hands every `data:`
event to its accumulators, so a typed ping would reach them as a chunk.

The middleware sends its own messages through `KeepAlive.send`, which holds the same lock as the
timer: a ping only ever goes out between two whole messages, and every message of a rewritten
stream holds whole SSE events, so a ping never lands inside one. The timer runs on asyncio only
(under trio there is no timer and no ping) and `stop()` ends it for good; the middleware calls it
before the last body, on pass-through, on error and when the request ends, so nothing is left
running.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Message = MutableMapping[str, Any]
Send = Callable[[Message], Awaitable[None]]

PING_COMMENT = b": ping\n\n"
PING_EVENT = b'event: ping\ndata: {"type": "ping"}\n\n'


def ping_for(api: str, profiles: frozenset[str]) -> bytes:
    """The ping a client of `api` gets: typed for Messages clients under `ping_events`."""
    return PING_EVENT if api == "messages" and "ping_events" in profiles else PING_COMMENT


class KeepAlive:
    """Pings through `send` after `interval` seconds without a message; see the module doc."""

    def __init__(self, send: Send, interval: float, ping: bytes) -> None:
        self._send = send
        self._interval = interval
        self._ping = {"type": "http.response.body", "body": ping, "more_body": True}
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self._last = 0.0
        self._stopped = False
        self.pings = 0

    def start(self) -> None:
        """Start the timer (once; never after `stop`, never outside asyncio)."""
        if self._task is not None or self._stopped:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # another event loop (trio): no timer
            return
        self._last = loop.time()
        self._task = loop.create_task(self._run())

    async def send(self, message: Message) -> None:
        """Send one message of the response; the silence counts from here."""
        async with self._lock:
            await self._send(message)
            self._last = asyncio.get_running_loop().time()

    async def stop(self) -> None:
        """End the timer; a ping being written completes first. Safe to call more than once."""
        self._stopped = True
        task, self._task = self._task, None
        if task is None:
            return
        async with self._lock:
            task.cancel()
        await asyncio.wait([task])  # never raises, even when the timer failed

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            wait = self._last + self._interval - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
                continue
            async with self._lock:
                if self._stopped:
                    return
                if loop.time() - self._last < self._interval:
                    continue  # a message went out while we waited for the lock
                try:
                    await self._send(dict(self._ping))
                except Exception:  # the client is gone: the app's own send will find out
                    return
                self.pings += 1
                self._last = loop.time()


__all__ = ["PING_COMMENT", "PING_EVENT", "KeepAlive", "ping_for"]
