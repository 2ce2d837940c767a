"""`ObservedStore`: a store whose every operation is told to a callback (the metrics').

It wraps a backend and answers as it does; each call is timed and reported as
`(operation, backend, seconds, error)`, `error` being None, `full` (`StoreFull`), `unavailable`
(`StoreUnavailable`) or `other`, and the error raised again as it came. The signals (`watch`,
`unwatch`, `publish`) go to the backend's own, so followers are woken as before; `watch` and
`unwatch` touch no backend and are not counted.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import TypeVar

from ._base import Store, StoreFull, StoreUnavailable, Updater, Value

OnOperation = Callable[[str, str, float, "str | None"], None]
T = TypeVar("T")

BACKENDS = {"MemoryStore": "memory", "SQLiteStore": "sqlite", "RedisStore": "redis"}


def error_kind(error: BaseException) -> str:
    """A failed operation's label: `full`, `unavailable` or `other` (bounded, unlike messages)."""
    if isinstance(error, StoreFull):
        return "full"
    if isinstance(error, StoreUnavailable):
        return "unavailable"
    return "other"


class ObservedStore(Store):
    def __init__(self, inner: Store, on_operation: OnOperation) -> None:
        super().__init__(inner.limits)
        self.inner = inner
        self.backend = BACKENDS.get(type(inner).__name__, "other")
        self.on_operation = on_operation

    async def _timed(self, operation: str, call: Awaitable[T]) -> T:
        began = time.perf_counter()
        try:
            result = await call
        except asyncio.CancelledError:
            raise  # (the request went away: not the store's failure)
        except Exception as error:
            self.on_operation(operation, self.backend, time.perf_counter() - began, error_kind(error))
            raise
        self.on_operation(operation, self.backend, time.perf_counter() - began, None)
        return result

    async def get(self, key: str) -> Value | None:
        return await self._timed("get", self.inner.get(key))

    async def get_many(self, keys: Sequence[str]) -> list[Value | None]:
        return await self._timed("get_many", self.inner.get_many(keys))

    async def put(self, values: Mapping[str, Value], *, lifetime: float | None = None) -> None:
        await self._timed("put", self.inner.put(values, lifetime=lifetime))

    async def alive(self, keys: Sequence[str], *, refresh: bool = False) -> int:
        return await self._timed("alive", self.inner.alive(keys, refresh=refresh))

    async def delete(self, key: str) -> bool:
        return await self._timed("delete", self.inner.delete(key))

    async def update(self, key: str, change: Updater, *, expires: bool = True) -> Value | None:
        return await self._timed("update", self.inner.update(key, change, expires=expires))

    async def close(self) -> None:
        await self.inner.close()

    async def take_lease(self, key: str, owner: str, until: float) -> None:
        await self._timed("take_lease", self.inner.take_lease(key, owner, until))

    async def renew_leases(self, owner: str, keys: Collection[str], until: float) -> set[str]:
        return await self._timed("renew_leases", self.inner.renew_leases(owner, keys, until))

    async def drop_lease(self, key: str) -> None:
        await self._timed("drop_lease", self.inner.drop_lease(key))

    async def lapsed_leases(self, now: float, limit: int = 100) -> list[str]:
        return await self._timed("lapsed_leases", self.inner.lapsed_leases(now, limit))

    def watch(self, key: str) -> asyncio.Future[None]:
        return self.inner.watch(key)

    def unwatch(self, key: str, changed: asyncio.Future[None]) -> None:
        self.inner.unwatch(key, changed)

    async def publish(self, key: str) -> None:
        await self._timed("publish", self.inner.publish(key))


def observed(store: Store, on_operation: OnOperation) -> Store:
    """`store` with its operations told to `on_operation` (an observed one: the new callback)."""
    inner = store.inner if isinstance(store, ObservedStore) else store
    return ObservedStore(inner, on_operation)


__all__ = ["ObservedStore", "OnOperation", "error_kind", "observed"]
