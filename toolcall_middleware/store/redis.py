"""`RedisStore`: state in Redis, for several processes or machines serving one deployment.

Needs the `redis` package (`pip install 'toolcall-middleware[redis]'`), imported only here. Each
record is one Redis string with the store's TTL (`SET … PX`); `put` is one `MULTI` transaction and
`update` an optimistic `WATCH` transaction, retried when another client changed the key between
the read and the write. Connection failures become `StoreUnavailable`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..redact import redact
from .base import Store, StoreLimits, StoreUnavailable, Updater, Value, decode, encode, lifetime_of

RETRIES = 64  # optimistic `update` attempts before giving up under contention


class RedisStore(Store):
    def __init__(self, url: str, limits: StoreLimits | None = None, *, prefix: str = "toolcall:") -> None:
        try:
            import redis.asyncio
        except ImportError:
            raise ValueError(
                "a Redis store needs the redis package: pip install 'toolcall-middleware[redis]'"
            ) from None
        self.limits = limits or StoreLimits()
        self.url = url
        self._prefix = prefix
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        self._watch_error: type[BaseException] = redis.WatchError
        self._client: Any = redis.asyncio.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=5)

    def _px(self, expires: bool = True, lifetime: float | None = None) -> int | None:
        ttl = lifetime_of(self.limits, lifetime)
        return None if ttl is None or not expires else max(1, int(ttl * 1000))

    def _failed(self, error: BaseException) -> StoreUnavailable:
        return StoreUnavailable(redact(f"the Redis store at {self._where()} failed: {error}"))

    def _where(self) -> str:
        return redact(self.url).partition("://")[2]  # where, never the password

    async def get(self, key: str) -> Value | None:
        try:
            return decode(await self._client.get(self._prefix + key))
        except self._errors as e:
            raise self._failed(e) from e

    async def get_many(self, keys: Sequence[str]) -> list[Value | None]:
        if not keys:
            return []
        try:
            return [decode(data) for data in await self._client.mget([self._prefix + key for key in keys])]
        except self._errors as e:
            raise self._failed(e) from e

    async def put(self, values: Mapping[str, Value], *, lifetime: float | None = None) -> None:
        encoded = {key: encode(key, value, self.limits) for key, value in values.items()}
        try:
            async with self._client.pipeline(transaction=True) as pipe:
                for key, data in encoded.items():
                    pipe.set(self._prefix + key, data, px=self._px(lifetime=lifetime))
                await pipe.execute()
        except self._errors as e:
            raise self._failed(e) from e

    async def alive(self, keys: Sequence[str], *, refresh: bool = False) -> int:
        names = [self._prefix + key for key in dict.fromkeys(keys)]
        px = self._px()
        if not names:
            return 0
        try:
            if not refresh or px is None:
                return int(await self._client.exists(*names))
            async with self._client.pipeline(transaction=False) as pipe:  # (one round trip)
                for name in names:
                    pipe.pexpire(name, px)
                return sum(map(bool, await pipe.execute()))
        except self._errors as e:
            raise self._failed(e) from e

    async def delete(self, key: str) -> bool:
        try:
            return bool(await self._client.delete(self._prefix + key))
        except self._errors as e:
            raise self._failed(e) from e

    async def update(self, key: str, change: Updater, *, expires: bool = True) -> Value | None:
        name = self._prefix + key
        try:
            async with self._client.pipeline(transaction=True) as pipe:
                for _ in range(RETRIES):
                    try:
                        await pipe.watch(name)
                        new = change(decode(await pipe.get(name)))
                        pipe.multi()
                        if new is None:
                            pipe.delete(name)
                        else:
                            pipe.set(name, encode(key, new, self.limits), px=self._px(expires))
                        await pipe.execute()
                        return new
                    except self._watch_error:
                        continue
        except self._watch_error:
            pass
        except self._errors as e:
            raise self._failed(e) from e
        raise StoreUnavailable(f"the Redis store at {self._where()}: {key!r} kept changing under {RETRIES} writes")

    async def close(self) -> None:
        await self._client.aclose()


__all__ = [
    "RETRIES",
    "RedisStore",
]
