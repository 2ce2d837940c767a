"""`MemoryStore`: state in this process's memory, for tests and a single-process deployment.

Capped by `max_records` (a write past it is refused with `StoreFull`, never an eviction that
would silently lose a conversation) and by the TTL, checked on every read and write.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence

from ._base import Store, StoreFull, StoreLimits, Updater, Value, decode, encode, lifetime_of


class MemoryStore(Store):
    def __init__(self, limits: StoreLimits | None = None) -> None:
        super().__init__(limits)
        self._data: dict[str, tuple[bytes, float]] = {}  # key -> (JSON, expiry on the monotonic clock)
        self._lock = asyncio.Lock()

    def _expiry(self, expires: bool = True, lifetime: float | None = None) -> float:
        ttl = lifetime_of(self.limits, lifetime)
        return float("inf") if ttl is None or not expires else time.monotonic() + ttl

    def _live(self, key: str) -> bytes | None:
        found = self._data.get(key)
        if found is None:
            return None
        if found[1] <= time.monotonic():
            del self._data[key]
            return None
        return found[0]

    def _room(self, new_keys: int) -> None:
        if len(self._data) + new_keys <= self.limits.max_records:
            return
        now = time.monotonic()
        for key in [k for k, (_, expiry) in self._data.items() if expiry <= now]:
            del self._data[key]
        if len(self._data) + new_keys > self.limits.max_records:
            raise StoreFull(f"the in-memory store holds its limit of {self.limits.max_records} records")

    async def get(self, key: str) -> Value | None:
        return decode(self._live(key))

    async def get_many(self, keys: Sequence[str]) -> list[Value | None]:
        return [decode(self._live(key)) for key in keys]

    async def put(self, values: Mapping[str, Value], *, lifetime: float | None = None, expires: bool = True) -> None:
        encoded = {key: encode(key, value, self.limits) for key, value in values.items()}
        self._room(sum(1 for key in encoded if self._live(key) is None))
        expiry = self._expiry(expires, lifetime)
        for key, data in encoded.items():
            self._data[key] = (data, expiry)

    async def alive(self, keys: Sequence[str], *, refresh: bool = False) -> int:
        found = [key for key in dict.fromkeys(keys) if self._live(key) is not None]
        if refresh:
            expiry = self._expiry()
            for key in found:
                self._data[key] = (self._data[key][0], expiry)
        return len(found)

    async def delete(self, key: str) -> bool:
        return self._data.pop(key, None) is not None

    async def update(self, key: str, change: Updater, *, expires: bool = True) -> Value | None:
        async with self._lock:  # (no await inside: the lock only documents the atomic step)
            new = change(decode(self._live(key)))
            if new is None:
                self._data.pop(key, None)
            else:
                await self.put({key: new}, expires=expires)
            return new


__all__ = [
    "MemoryStore",
]
