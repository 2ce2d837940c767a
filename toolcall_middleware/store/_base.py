"""`Store`: the one small interface every state backend implements (memory, SQLite, Redis).

A store maps string keys to JSON values. Everything the Responses state keeps (responses, their
items, conversations, the scoping secret) is a value under a key the state layer builds; a
backend knows nothing of responses. Writes are atomic per call: `put` writes all its values or
none, and `update` is a read-modify-write no other writer can interleave with, across processes
for SQLite and Redis.

A backend raises `StoreFull` when a limit refuses a write and `StoreUnavailable` when it cannot
be reached; the state layer answers both as a 503 in the API's error shape.

Background responses also need what a key-value map does not give: a **lease** per running job
(its owner renews it; when the owner dies it lapses, and any instance that sees it lapsed ends the
job) and a **signal** when a job's record changes, so its followers wake instead of polling. The
defaults here hold both in this process (enough for the memory store); SQLite keeps the leases in
a table every process on the file sees, Redis in a sorted set, and Redis carries the signals to
every machine by pub/sub.
"""

from __future__ import annotations

import asyncio
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.framing._utf8 import COMPACT, json_bytes

Value = Any  # a JSON value: what `json.dumps` takes
Updater = Callable[[Value | None], Value | None]  # the old value (None: absent) -> the new (None: delete)


class StoreError(Exception):
    """A store could not do what was asked; the message says why, for the client's 503."""


class StoreFull(StoreError):
    """A limit (records, bytes per record) refused a write."""


class StoreUnavailable(StoreError):
    """The backend could not be reached or failed."""


@dataclass(frozen=True)
class StoreLimits:
    """`ttl`: seconds a record lives after its last write (None: forever); `max_records`: records
    the store holds (the memory backend's cap; SQLite and Redis leave it to the disk and
    `maxmemory`); `max_record_bytes`: the largest record, as JSON."""

    ttl: float | None = 30 * 24 * 3600.0
    max_records: int = 100_000
    max_record_bytes: int = 16 * 1024 * 1024


def encode(key: str, value: Value, limits: StoreLimits) -> bytes:
    """A value as the bytes a backend keeps, refused when it passes `max_record_bytes`."""
    data = json_bytes(value, separators=COMPACT)  # (lone surrogates escaped, never a crash)
    if len(data) > limits.max_record_bytes:
        raise StoreFull(
            f"the record {key.rsplit(':', 1)[-1]!r} is {len(data)} bytes, over the store's limit of "
            f"{limits.max_record_bytes} bytes"
        )
    return data


def decode(data: bytes | str | None) -> Value | None:
    return None if data is None else json.loads(data)


def lifetime_of(limits: StoreLimits, lifetime: float | None) -> float | None:
    """The seconds a write lives: `lifetime` capped by the TTL (None: forever)."""
    if limits.ttl is None:
        return None
    return limits.ttl if lifetime is None else max(0.001, min(lifetime, limits.ttl))


class Store(ABC):
    """The async interface of a backend. Keys are opaque strings; values JSON."""

    limits: StoreLimits

    def __init__(self, limits: StoreLimits | None = None) -> None:
        self.limits = limits or StoreLimits()
        self._watchers: dict[str, set[asyncio.Future[None]]] = {}  # key -> followers waiting for a change
        self._leases: dict[str, tuple[str, float]] = {}  # job key -> (owner, wall-clock expiry); this process's

    @abstractmethod
    async def get(self, key: str) -> Value | None:
        """The value under `key`, or None when there is none (or it expired)."""

    async def get_many(self, keys: Sequence[str]) -> list[Value | None]:
        """The values under `keys`, in order (None where absent), in one round trip where the
        backend has one (SQL `IN`, Redis `MGET`)."""
        return [await self.get(key) for key in keys]

    @abstractmethod
    async def put(self, values: Mapping[str, Value], *, lifetime: float | None = None) -> None:
        """Write every value in one atomic step, each living the store's TTL, or `lifetime`
        seconds when given (a response expires with its chain; never longer than the TTL)."""

    @abstractmethod
    async def alive(self, keys: Sequence[str], *, refresh: bool = False) -> int:
        """How many of `keys` hold a value, in one round trip; `refresh`: their expiry restarts
        at the store's TTL (a chain of responses kept alive by its newest)."""

    @abstractmethod
    async def delete(self, key: str) -> bool:
        """Remove `key`; whether it was there."""

    @abstractmethod
    async def update(self, key: str, change: Updater, *, expires: bool = True) -> Value | None:
        """Replace the value under `key` with `change(old)` atomically (None deletes it); returns
        the new value. `change` may be called more than once (an optimistic backend retries it)
        and must be pure. `expires=False`: the value never expires (the scoping secret)."""

    async def close(self) -> None:  # noqa: B027 - a backend with nothing to release keeps this
        """Release connections; the store is not used after this."""

    # -- jobs: leases ------------------------------------------------------------------------------

    async def take_lease(self, key: str, owner: str, until: float) -> None:
        """Give job `key` to `owner` until wall-clock time `until`."""
        self._leases[key] = (owner, until)

    async def renew_leases(self, owner: str, keys: Collection[str], until: float) -> set[str]:
        """Extend `owner`'s leases on `keys` to `until`; the keys whose lease is gone (another
        instance found it lapsed and ended the job)."""
        lost = set()
        for key in keys:
            if self._leases.get(key, ("",))[0] == owner:
                self._leases[key] = (owner, until)
            else:
                lost.add(key)
        return lost

    async def drop_lease(self, key: str) -> None:
        """The job ended: its lease goes."""
        self._leases.pop(key, None)

    async def lapsed_leases(self, now: float, limit: int = 100) -> list[str]:
        """Claim up to `limit` jobs whose lease ran out before `now` (their owner died): each is
        removed and given to one caller only, which ends it."""
        found = [key for key, (_, until) in self._leases.items() if until <= now][:limit]
        for key in found:
            del self._leases[key]
        return found

    # -- jobs: change signals ----------------------------------------------------------------------

    def watch(self, key: str) -> asyncio.Future[None]:
        """A future that is done when `key` may have changed (a `publish` here or, for Redis,
        anywhere); pass it to `unwatch` after."""
        changed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._watchers.setdefault(key, set()).add(changed)
        return changed

    def unwatch(self, key: str, changed: asyncio.Future[None]) -> None:
        waiting = self._watchers.get(key)
        if waiting is not None:
            waiting.discard(changed)
            if not waiting:
                del self._watchers[key]
        changed.cancel()

    async def publish(self, key: str) -> None:
        """Tell the followers of `key` that it changed."""
        self._signal(key)

    def _signal(self, key: str) -> None:
        for changed in self._watchers.pop(key, ()):
            if not changed.done():
                changed.set_result(None)


__all__ = [
    "Store",
    "StoreError",
    "StoreFull",
    "StoreLimits",
    "StoreUnavailable",
    "Updater",
    "Value",
    "decode",
    "encode",
    "lifetime_of",
]
