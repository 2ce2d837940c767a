"""Background responses (`background: true`): the work runs on after the request returns.

The layer starts each one as a task this object owns. The task runs the stateless pipeline with
no client and writes its progress to the store (the latest response object and the events so
far, at most every `FLUSH_SECONDS`), so any process sharing the store can poll it
(`GET /v1/responses/{id}`), follow its stream from a sequence number, or cancel it. A cancel marks
the record `cancelled` in the store and cancels the task if it runs here (which cancels the
upstream request with it); a task running in another process sees the mark at its next write and
stops itself.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Coroutine
from time import monotonic
from typing import Any

from ..core.framing.sse import encode_event
from .asgi_io import SSE_HEAD, Send
from .base import Store
from .state import TERMINAL_STATUSES, StateError, ended, not_found

logger = logging.getLogger("toolcall_middleware")
FLUSH_SECONDS = 0.1  # the longest a poller waits behind the task's progress
POLL_SECONDS = 0.1  # how often a follower reads the store for new events


class Stop(Exception):
    """The response was cancelled or deleted elsewhere: the task stops."""


class BackgroundRuns:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.tasks: dict[str, asyncio.Task[None]] = {}  # by the response's store key

    def start(self, key: str, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self.tasks[key] = task
        task.add_done_callback(lambda _: self.tasks.pop(key, None))

    async def progress(
        self, key: str, latest: dict[str, Any] | None, events: list[Any] | None, last: list[float]
    ) -> None:
        """Write the run's progress (throttled by `last`, the time of the last write); raise
        `Stop` when the record was cancelled or deleted meanwhile."""
        now = monotonic()
        if now - last[0] < FLUSH_SECONDS:
            return
        last[0] = now

        def change(old: Any) -> Any:
            if old is None or old["response"].get("status") in TERMINAL_STATUSES:
                return old
            return {**old, "response": latest or old["response"], "events": events}

        record = await self.store.update(key, change)
        if record is None or record["response"].get("status") == "cancelled":
            raise Stop

    async def end(self, key: str, status: str, error: dict[str, Any] | None = None) -> None:
        await self.store.update(key, lambda old: None if old is None else ended(old, status, error))

    async def cancel(self, key: str, ident: str) -> dict[str, Any]:
        """Cancel a background response: its record is marked, its task (if here) cancelled."""

        def change(old: Any) -> Any:
            if old is None:
                return None
            if not old["response"].get("background"):
                raise StateError(400, "Only background responses can be cancelled.", None, code="invalid_request")
            return ended(old, "cancelled")

        record = await self.store.update(key, change)
        if record is None:
            raise not_found("Response", ident)
        task = self.tasks.get(key)
        if task is not None:
            task.cancel()
        return dict(record["response"])

    async def follow(self, key: str, after: int, send: Send) -> None:
        """Stream a stored response's events after sequence number `after`, following a background
        one as it runs until it ends."""
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEAD})
        last = after
        while True:
            record = await self.store.get(key)
            if record is None:
                break
            events = [json.loads(text) for text in record.get("events") or ()]
            new = [e for e in events if int(e.get("sequence_number", -1)) > last]
            if new:
                await send({"type": "http.response.body", "body": b"".join(map(encode_event, new)), "more_body": True})
                last = int(new[-1].get("sequence_number", last))
            if record["response"].get("status") in TERMINAL_STATUSES or record.get("events") is None:
                break
            await asyncio.sleep(POLL_SECONDS)
        await send({"type": "http.response.body", "body": b""})


__all__ = [
    "FLUSH_SECONDS",
    "POLL_SECONDS",
    "BackgroundRuns",
    "Stop",
]
