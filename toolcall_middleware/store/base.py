"""`Store`: the one small interface every state backend implements (memory, SQLite, Redis).

A store maps string keys to JSON values. Everything the Responses state keeps (responses, their
items, conversations, the scoping secret) is a value under a key the state layer builds; a
backend knows nothing of responses. Writes are atomic per call: `put` writes all its values or
none, and `update` is a read-modify-write no other writer can interleave with, across processes
for SQLite and Redis.

A backend raises `StoreFull` when a limit refuses a write and `StoreUnavailable` when it cannot
be reached; the state layer answers both as a 503 in the API's error shape.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.framing.utf8 import COMPACT, json_bytes

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
