"""`SQLiteStore`: state in one SQLite file, the embedded default of `serve`.

Safe under concurrent requests and several worker processes on one machine: the file is in WAL
mode (readers never wait for the writer), every connection waits up to `busy_timeout` for a lock
instead of failing, and `update` runs in a `BEGIN IMMEDIATE` transaction, so two processes
appending to one conversation never lose each other's items. The blocking calls run in a worker
thread (`asyncio.to_thread`), never on the event loop. Expiry is by wall-clock time, the one
clock all processes share; expired rows are skipped on read and swept now and then on write.

A background job's lease is a row of the `leases` table (its key, its owner, its expiry), which
every process on the file sees: the owner renews it, and a process that finds it lapsed deletes
it in a `BEGIN IMMEDIATE` transaction, so exactly one process ends the job. Change signals stay
in the process (SQLite has no notifications between processes); a follower in another process
polls, backing off (`background.py`).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from ._base import Store, StoreLimits, StoreUnavailable, Updater, Value, decode, encode, lifetime_of

T = TypeVar("T")
SWEEP_EVERY = 256  # writes between sweeps of expired rows
BATCH = 500  # keys per `IN (…)` (SQLite's default cap on bound variables is far above this)

SCHEMA = "CREATE TABLE IF NOT EXISTS records (key TEXT PRIMARY KEY, value BLOB NOT NULL, expires REAL)"
LEASES = "CREATE TABLE IF NOT EXISTS leases (key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL)"


class SQLiteStore(Store):
    def __init__(self, path: str | Path, limits: StoreLimits | None = None, *, busy_timeout: float = 10.0) -> None:
        super().__init__(limits)
        self.path = str(path)
        self._busy_timeout = busy_timeout
        self._lock = threading.Lock()  # one connection, used by one worker thread at a time
        self._connection: sqlite3.Connection | None = None
        self._writes = 0

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=self._busy_timeout, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(SCHEMA)
            db.execute(LEASES)
            self._connection = db
        return self._connection

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        def locked() -> T:
            with self._lock:
                return work(self._connect())

        try:
            return await asyncio.to_thread(locked)
        except (sqlite3.Error, OSError) as e:  # (OSError: its folder could not be made)
            raise StoreUnavailable(f"the SQLite store {self.path} failed: {e}") from e

    def _expires(self, expires: bool = True, lifetime: float | None = None) -> float | None:
        ttl = lifetime_of(self.limits, lifetime)
        return None if ttl is None or not expires else time.time() + ttl

    @staticmethod
    def _read(db: sqlite3.Connection, key: str) -> bytes | None:
        row = db.execute(
            "SELECT value FROM records WHERE key = ? AND (expires IS NULL OR expires > ?)", (key, time.time())
        ).fetchone()
        return None if row is None else bytes(row[0])

    def _write(
        self,
        db: sqlite3.Connection,
        values: Mapping[str, bytes],
        *,
        expires: bool = True,
        lifetime: float | None = None,
    ) -> None:
        until = self._expires(expires, lifetime)
        db.executemany(
            "INSERT OR REPLACE INTO records (key, value, expires) VALUES (?, ?, ?)",
            [(key, data, until) for key, data in values.items()],
        )
        self._writes += 1
        if self._writes % SWEEP_EVERY == 0:
            db.execute("DELETE FROM records WHERE expires IS NOT NULL AND expires <= ?", (time.time(),))

    async def get(self, key: str) -> Value | None:
        return decode(await self._run(lambda db: self._read(db, key)))

    async def get_many(self, keys: Sequence[str]) -> list[Value | None]:
        def work(db: sqlite3.Connection) -> dict[str, bytes]:
            found: dict[str, bytes] = {}
            now = time.time()
            for start in range(0, len(keys), BATCH):
                chunk = list(keys[start : start + BATCH])
                marks = ",".join("?" * len(chunk))
                rows = db.execute(
                    f"SELECT key, value FROM records WHERE key IN ({marks}) AND (expires IS NULL OR expires > ?)",
                    (*chunk, now),
                )
                found.update((key, bytes(value)) for key, value in rows)
            return found

        found = await self._run(work) if keys else {}
        return [decode(found.get(key)) for key in keys]

    async def put(self, values: Mapping[str, Value], *, lifetime: float | None = None) -> None:
        encoded = {key: encode(key, value, self.limits) for key, value in values.items()}

        def work(db: sqlite3.Connection) -> None:
            with db:  # one transaction: all or nothing
                db.execute("BEGIN IMMEDIATE")
                self._write(db, encoded, lifetime=lifetime)

        await self._run(work)

    async def alive(self, keys: Sequence[str], *, refresh: bool = False) -> int:
        unique = list(dict.fromkeys(keys))

        def work(db: sqlite3.Connection) -> int:
            count, now = 0, time.time()
            with db:
                if refresh:
                    db.execute("BEGIN IMMEDIATE")
                for start in range(0, len(unique), BATCH):
                    chunk = unique[start : start + BATCH]
                    where = f"key IN ({','.join('?' * len(chunk))}) AND (expires IS NULL OR expires > ?)"
                    if refresh:
                        count += db.execute(
                            f"UPDATE records SET expires = ? WHERE {where}", (self._expires(), *chunk, now)
                        ).rowcount
                    else:
                        count += db.execute(f"SELECT count(*) FROM records WHERE {where}", (*chunk, now)).fetchone()[0]
            return count

        return await self._run(work) if unique else 0

    async def delete(self, key: str) -> bool:
        return await self._run(lambda db: db.execute("DELETE FROM records WHERE key = ?", (key,)).rowcount > 0)

    async def update(self, key: str, change: Updater, *, expires: bool = True) -> Value | None:
        def work(db: sqlite3.Connection) -> Value | None:
            with db:
                db.execute("BEGIN IMMEDIATE")  # the write lock first: no other process reads-then-writes between
                new = change(decode(self._read(db, key)))
                if new is None:
                    db.execute("DELETE FROM records WHERE key = ?", (key,))
                else:
                    self._write(db, {key: encode(key, new, self.limits)}, expires=expires)
                return new

        return await self._run(work)

    async def take_lease(self, key: str, owner: str, until: float) -> None:
        await self._run(
            lambda db: db.execute(
                "INSERT OR REPLACE INTO leases (key, owner, expires) VALUES (?, ?, ?)", (key, owner, until)
            )
        )

    async def renew_leases(self, owner: str, keys: Collection[str], until: float) -> set[str]:
        def work(db: sqlite3.Connection) -> set[str]:
            with db:
                db.execute("BEGIN IMMEDIATE")
                renew = "UPDATE leases SET expires = ? WHERE key = ? AND owner = ?"
                return {key for key in keys if db.execute(renew, (until, key, owner)).rowcount == 0}

        return await self._run(work)

    async def drop_lease(self, key: str) -> None:
        await self._run(lambda db: db.execute("DELETE FROM leases WHERE key = ?", (key,)))

    async def lapsed_leases(self, now: float, limit: int = 100) -> list[str]:
        def work(db: sqlite3.Connection) -> list[str]:
            lapsed = "SELECT key FROM leases WHERE expires <= ? LIMIT ?"
            if not db.execute(lapsed, (now, limit)).fetchone():
                return []  # (the usual answer, without taking the write lock)
            with db:
                db.execute("BEGIN IMMEDIATE")  # (one process claims each: the others then find it gone)
                found = [str(row[0]) for row in db.execute(lapsed, (now, limit))]
                db.executemany("DELETE FROM leases WHERE key = ?", [(key,) for key in found])
                return found

        return await self._run(work)

    async def close(self) -> None:
        def shut() -> None:
            with self._lock:
                if self._connection is not None:
                    self._connection.close()
                    self._connection = None

        await asyncio.to_thread(shut)


__all__ = [
    "LEASES",
    "SCHEMA",
    "SWEEP_EVERY",
    "SQLiteStore",
]
