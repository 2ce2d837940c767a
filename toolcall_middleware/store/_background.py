"""Background responses (`background: true`): the work runs on after the request returns.

- **Admitted, not just accepted.** Each job goes through `Admission` (`admission.py`): it runs
  when a slot is free (globally and for its credential), waits `queued` in the meantime, and is
  refused with a 429 up front when the queue is full.
- **Owned by the deployment.** A job holds a lease in the store from the moment it is queued;
  this process renews its leases every quarter of `lease_seconds`. Every process also sweeps the
  store for leases that lapsed (their owner died: kill -9, a lost machine) and ends those jobs
  `failed`, with their terminal event, so a follower's stream ends and a poller sees why. The
  bound: a dead owner's job ends within 1.25 × `lease_seconds` of its death.
- **Followed, not polled blindly.** A follower (`GET …?stream=true`, or the creating request with
  `stream: true`) waits for the store's change signal (pub/sub on Redis; in-process on SQLite,
  where a follower in another process polls, backing off from 0.05 s to 1 s) and stops as soon as
  its client leaves.

The task writes its progress to the store (the latest response object and the events so far, at
most every `FLUSH_SECONDS`), so any process sharing the store can poll it, follow it or cancel
it. A cancel marks the record `cancelled` and cancels the task if it runs here (which cancels the
upstream request with it); a task running in another process sees the mark at its next write and
stops itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from ..core.framing.sse import encode_event
from ._admission import Admission
from ._asgi_io import SSE_HEAD, Receive, Send
from ._base import Store, StoreError
from ._state import TERMINAL_STATUSES, StateError, ended, not_found

logger = logging.getLogger("toolcall_middleware")
FLUSH_SECONDS = 0.1  # the longest a poller waits behind the task's progress
FIRST_POLL = 0.05  # a follower's first wait for a change it may not be told of; doubled up to:
LAST_POLL = 1.0
INTAKE = 4  # background jobs being stored at once
SWEEP_BATCH = 100  # lapsed leases ended per sweep
LAPSED = {
    "code": "server_error",
    "message": "The server running this background response stopped before it finished (its lease lapsed).",
}

Work = Callable[[], Coroutine[Any, Any, None]]


class Stop(Exception):
    """The response was cancelled, ended or deleted elsewhere: the task stops."""


class BackgroundRuns:
    def __init__(self, store: Store, admission: Admission, *, lease_seconds: float = 10.0) -> None:
        self.store = store
        self.admission = admission
        self.lease_seconds = lease_seconds
        self.owner = secrets.token_hex(8)  # this process, as the owner of its leases
        self.tasks: dict[str, asyncio.Task[None]] = {}  # running, by the response's store key
        self.waiting: dict[str, tuple[str, Work]] = {}  # queued here: key -> (credential, work)
        self.held: set[str] = set()  # the keys this process holds a lease on
        self._upkeep: asyncio.Task[None] | None = None
        self._intake: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None

    # -- admission ------------------------------------------------------------------------------

    async def submit(
        self,
        credential: str,
        key: str,
        records: Mapping[str, Any],
        work: Work,
        *,
        lifetime: float | None = None,
    ) -> None:
        """Queue a job (its `queued` records stored, `key`'s among them, for `lifetime`; its lease
        taken) and start it when admitted; `Refused` (a 429) when the queue is full."""
        self.admission.reserve(credential)  # (refused before anything is stored)
        try:
            async with self._intake_here():
                await self.store.put(records, lifetime=lifetime)
                try:
                    await self.store.take_lease(key, self.owner, time.time() + self.lease_seconds)
                except BaseException:
                    with contextlib.suppress(StoreError):  # (no job without a lease: nobody would end it)
                        await self.store.delete(key)
                    raise
        except BaseException:
            self.admission.unreserve(credential)
            raise
        self.admission.admit(credential, key)
        self.held.add(key)
        self.waiting[key] = (credential, work)
        self.ensure_upkeep()
        self._start_ready()

    def _intake_here(self) -> asyncio.Semaphore:
        """The bound on jobs being stored at once (a burst waits here, not in the store's queue
        ahead of interactive requests' writes), for this event loop."""
        loop = asyncio.get_running_loop()
        if self._intake is None or self._intake[0] is not loop:
            self._intake = (loop, asyncio.Semaphore(INTAKE))
        return self._intake[1]

    def _start_ready(self) -> None:
        for credential, key in self.admission.ready():
            _, work = self.waiting.pop(key)
            self.tasks[key] = asyncio.create_task(self._run(credential, key, work))

    async def _run(self, credential: str, key: str, work: Work) -> None:
        started = time.monotonic()
        try:
            record = await self.store.get(key)  # (cancelled in another process while it waited?)
            if record is not None and record["response"].get("status") not in TERMINAL_STATUSES:
                await work()
        except StoreError as error:
            logger.error("toolcall-middleware: store: background response: %s", error)
        finally:
            self.tasks.pop(key, None)
            self.admission.done(credential, time.monotonic() - started)
            self._start_ready()
            await asyncio.shield(self._release(key))

    async def _release(self, key: str) -> None:
        """The job ended here: its lease goes, and its followers are told."""
        self.held.discard(key)
        try:
            await self.store.drop_lease(key)
            await self.store.publish(key)
        except StoreError as error:
            logger.error("toolcall-middleware: store: background response: %s", error)

    # -- progress -------------------------------------------------------------------------------

    async def progress(
        self, key: str, latest: dict[str, Any] | None, events: list[Any] | None, last: list[float]
    ) -> None:
        """Write the run's progress (throttled by `last`, the time of the last write); raise
        `Stop` when the record was cancelled, ended or deleted meanwhile."""
        now = time.monotonic()
        if now - last[0] < FLUSH_SECONDS:
            return
        last[0] = now

        def change(old: Any) -> Any:
            if old is None or old["response"].get("status") in TERMINAL_STATUSES:
                return old
            return {**old, "response": latest or old["response"], "events": events}

        record = await self.store.update(key, change)
        if record is None or record["response"].get("status") in TERMINAL_STATUSES:
            raise Stop
        await self.store.publish(key)

    async def end(self, key: str, status: str, error: dict[str, Any] | None = None) -> None:
        await self.store.update(key, lambda old: None if old is None else ended(old, status, error))
        await self.store.publish(key)

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
        await self._stop_here(key)
        await self.store.publish(key)
        return dict(record["response"])

    async def _stop_here(self, key: str) -> None:
        """Stop job `key` if this process has it: out of the queue, or its task cancelled."""
        queued = self.waiting.pop(key, None)
        if queued is not None:
            self.admission.withdraw(queued[0], key)
            await self._release(key)
        task = self.tasks.get(key)
        if task is not None:
            task.cancel()

    # -- leases ---------------------------------------------------------------------------------

    def ensure_upkeep(self) -> None:
        """Start renewing this process's leases and sweeping lapsed ones (once per process)."""
        loop = asyncio.get_running_loop()
        if self._upkeep is None or self._upkeep.done() or self._upkeep.get_loop() is not loop:
            self._upkeep = loop.create_task(self._keep_up())  # (a test client may run a new loop each time)

    async def stop(self) -> None:
        if self._upkeep is not None:
            self._upkeep.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._upkeep
            self._upkeep = None

    async def _keep_up(self) -> None:
        while True:
            await asyncio.sleep(self.lease_seconds / 4)
            try:
                await self.renew()
                await self.sweep()
            except StoreError as error:  # (the store is down: try again at the next turn)
                logger.warning("toolcall-middleware: store: background leases: %s", error)

    async def renew(self) -> None:
        if not self.held:
            return
        lost = await self.store.renew_leases(self.owner, set(self.held), time.time() + self.lease_seconds)
        for key in lost:  # (another instance found it lapsed, and ended it)
            self.held.discard(key)
            await self._stop_here(key)

    async def sweep(self) -> list[str]:
        """End every job whose owner stopped renewing its lease; the keys ended."""
        keys = await self.store.lapsed_leases(time.time(), SWEEP_BATCH)
        for key in keys:
            await self.end(key, "failed", LAPSED)
            logger.warning("toolcall-middleware: a background response's owner stopped; it ends failed")
        return keys

    # -- followers ------------------------------------------------------------------------------

    async def follow(self, key: str, after: int, send: Send, receive: Receive) -> None:
        """Stream a stored response's events after sequence number `after`, following a background
        one as it runs until it ends, or until the client leaves."""
        gone = asyncio.ensure_future(_client_left(receive))
        try:
            await send({"type": "http.response.start", "status": 200, "headers": SSE_HEAD})
            last, wait = after, FIRST_POLL
            while True:
                changed = self.store.watch(key)  # (before the read: a change after it is not missed)
                try:
                    record = await self.store.get(key)
                    if record is None:
                        break
                    events = [json.loads(text) for text in record.get("events") or ()]
                    new = [e for e in events if int(e.get("sequence_number", -1)) > last]
                    if new:
                        body = b"".join(map(encode_event, new))
                        await send({"type": "http.response.body", "body": body, "more_body": True})
                        last = int(new[-1].get("sequence_number", last))
                        wait = FIRST_POLL
                    if record["response"].get("status") in TERMINAL_STATUSES or record.get("events") is None:
                        break
                    await asyncio.wait((changed, gone), timeout=wait, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    self.store.unwatch(key, changed)
                if gone.done():
                    return  # the client left: nothing more to send, nobody to send it to
                told = changed.done() and not changed.cancelled()
                wait = FIRST_POLL if told else min(wait * 2, LAST_POLL)
            await send({"type": "http.response.body", "body": b""})
        finally:
            gone.cancel()


async def _client_left(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


__all__ = [
    "FIRST_POLL",
    "FLUSH_SECONDS",
    "LAPSED",
    "LAST_POLL",
    "BackgroundRuns",
    "Stop",
    "Work",
]
