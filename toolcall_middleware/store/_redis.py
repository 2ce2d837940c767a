"""`RedisStore`: state in Redis, for several processes or machines serving one deployment.

Needs the `redis` package (`pip install 'toolcall-middleware[redis]'`), imported only here. Each
record is one Redis string with the store's TTL (`SET … PX`); `put` is one `MULTI` transaction and
`update` an optimistic `WATCH` transaction, retried when another client changed the key between
the read and the write. Connection failures become `StoreUnavailable`.

Background jobs' leases are members of one sorted set (`leases`, scored by expiry): the owner
renews with `ZADD XX` (never bringing back a lease another instance has taken away), and an
instance that finds one lapsed claims it with `ZREM`, which only one caller wins. A change to a
job is `PUBLISH`ed on the `changed` channel; each process holds one subscription to it (opened
when it first has a follower) and wakes the followers of the key named.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ..redact import redact
from ._base import Store, StoreLimits, StoreUnavailable, Updater, Value, decode, encode, lifetime_of

RETRIES = 64  # optimistic `update` attempts before giving up under contention
POOL = 64  # connections to Redis per process
logger = logging.getLogger("toolcall_middleware")


class RedisStore(Store):
    def __init__(self, url: str, limits: StoreLimits | None = None, *, prefix: str = "toolcall:") -> None:
        try:
            import redis.asyncio
        except ImportError:
            raise ValueError(
                "a Redis store needs the redis package: pip install 'toolcall-middleware[redis]'"
            ) from None
        super().__init__(limits)
        self.url = url
        self._prefix = prefix
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        self._watch_error: type[BaseException] = redis.WatchError
        # A burst waits for a connection (up to the socket timeout) instead of failing at once, as
        # the default pool does past its 100 connections.
        pool = redis.asyncio.BlockingConnectionPool.from_url(
            url, max_connections=POOL, timeout=10, socket_timeout=10, socket_connect_timeout=5
        )
        self._client: Any = redis.asyncio.Redis.from_pool(pool)
        self._listener: asyncio.Task[None] | None = None  # the subscription to `changed`

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
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
        await self._client.aclose()

    # -- jobs ----------------------------------------------------------------------------------

    async def _call(self, method: str, *args: Any) -> Any:
        try:
            return await getattr(self._client, method)(*args)
        except self._errors as e:
            raise self._failed(e) from e

    async def take_lease(self, key: str, owner: str, until: float) -> None:
        await self._call("zadd", self._prefix + "leases", {key: until})

    async def renew_leases(self, owner: str, keys: Collection[str], until: float) -> set[str]:
        ordered = list(keys)
        try:
            async with self._client.pipeline(transaction=False) as pipe:
                for key in ordered:
                    pipe.zadd(self._prefix + "leases", {key: until}, xx=True, ch=True)
                changed = await pipe.execute()
        except self._errors as e:
            raise self._failed(e) from e
        return {key for key, done in zip(ordered, changed, strict=True) if not done}

    async def drop_lease(self, key: str) -> None:
        await self._call("zrem", self._prefix + "leases", key)

    async def lapsed_leases(self, now: float, limit: int = 100) -> list[str]:
        name = self._prefix + "leases"
        found = await self._call("zrangebyscore", name, "-inf", now, 0, limit)
        claimed = []
        for member in found:
            if await self._call("zrem", name, member):  # (the instance whose ZREM removes it ends the job)
                claimed.append(member.decode() if isinstance(member, bytes) else str(member))
        return claimed

    async def publish(self, key: str) -> None:
        try:
            await self._client.publish(self._prefix + "changed", key)
        except self._errors as e:  # (followers fall back on polling)
            logger.warning("toolcall-middleware: store: could not publish a change: %s", self._failed(e))
            self._signal(key)

    def watch(self, key: str) -> asyncio.Future[None]:
        loop = asyncio.get_running_loop()
        if self._listener is None or self._listener.done() or self._listener.get_loop() is not loop:
            self._listener = loop.create_task(self._listen())
        return super().watch(key)

    async def _listen(self) -> None:
        """Wake the followers of each key published on `changed`; reconnect after a failure.

        The client can swallow a cancellation that comes while it waits for a message (the task
        then waited on, and a server's shutdown with it), so it waits at most `_LOOK` seconds at a
        time and ends between two waits once its task is being cancelled."""
        task = asyncio.current_task()
        while True:
            pubsub = self._client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self._prefix + "changed")
                while not _cancelling(task):
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=_LOOK)
                    if message is not None and message.get("type") == "message":
                        data = message["data"]
                        self._signal(data.decode() if isinstance(data, bytes) else str(data))
                raise asyncio.CancelledError
            except self._errors as e:
                logger.warning("toolcall-middleware: store: change subscription lost: %s", self._failed(e))
                await asyncio.sleep(1.0)
            finally:
                with contextlib.suppress(*self._errors):
                    await pubsub.aclose()


_LOOK = 1.0  # seconds the subscription waits for a message before it looks whether it is cancelled


def _cancelling(task: asyncio.Task[Any] | None) -> bool:
    """The task is being cancelled (Python 3.11+; on 3.10 a swallowed cancellation goes unseen)."""
    cancelling = getattr(task, "cancelling", None)
    return bool(cancelling()) if cancelling is not None else False


__all__ = [
    "POOL",
    "RETRIES",
    "RedisStore",
]
