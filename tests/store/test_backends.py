"""Every backend behind the one `Store` interface: the same behaviour, limits and failures, on a
real SQLite file and a real `redis-server`; concurrent writers never lose each other's updates."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.servers import ROOT, free_port
from toolcall_middleware.store import (
    MemoryStore,
    SQLiteStore,
    Store,
    StoreFull,
    StoreLimits,
    StoreUnavailable,
    open_store,
)
from toolcall_middleware.store._redis import RedisStore

BACKENDS = ["memory", "sqlite", "redis"]


def make(kind: str, tmp_path: Path, request: pytest.FixtureRequest, limits: StoreLimits | None = None) -> Store:
    if kind == "memory":
        return MemoryStore(limits)
    if kind == "sqlite":
        return SQLiteStore(tmp_path / "state.db", limits)
    url = request.getfixturevalue("redis_url")
    return RedisStore(url, limits, prefix=f"test:{request.node.name}:{time.monotonic_ns()}:")


def run(work: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(work())


@pytest.fixture(params=BACKENDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_get_put_delete(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    store = make(kind, tmp_path, request)

    async def work() -> None:
        assert await store.get("a") is None
        await store.put({"a": {"x": [1, "é"]}, "b": 2})
        assert await store.get("a") == {"x": [1, "é"]} and await store.get("b") == 2
        assert await store.delete("a") is True
        assert await store.delete("a") is False
        assert await store.get("a") is None
        await store.close()

    run(work)


def test_update_is_read_modify_write(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    store = make(kind, tmp_path, request)

    async def work() -> None:
        assert await store.update("n", lambda old: None if old is None else old + 1) is None
        assert await store.update("n", lambda old: (old or 0) + 1) == 1
        # Concurrent appends: none is lost.
        await asyncio.gather(*(store.update("list", lambda old, n=n: [*(old or []), n]) for n in range(40)))
        assert sorted(await store.get("list")) == list(range(40))
        assert await store.update("n", lambda old: None) is None and await store.get("n") is None
        await store.close()

    run(work)


def test_records_expire(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    store = make(kind, tmp_path, request, StoreLimits(ttl=0.3))

    async def work() -> None:
        await store.put({"a": 1})
        await store.update("kept", lambda old: "secret", expires=False)  # (the scoping secret)
        assert await store.get("a") == 1
        await asyncio.sleep(0.5)
        assert await store.get("a") is None
        assert await store.get("kept") == "secret"
        await store.close()

    run(work)


def test_batched_reads_refreshes_and_shorter_lifetimes(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store = make(kind, tmp_path, request, StoreLimits(ttl=1.0))

    async def work() -> None:
        await store.put({f"k{n}": n for n in range(1200)})  # (more than one SQL `IN` batch)
        keys = [f"k{n}" for n in range(1200)]
        assert await store.get_many(["k3", "gone", "k1"]) == [3, None, 1]
        assert await store.get_many(keys) == list(range(1200)) and await store.get_many([]) == []
        assert await store.alive(["k1", "k2", "gone", "k1"]) == 2
        await store.put({"brief": 1}, lifetime=0.2)
        await asyncio.sleep(0.6)
        assert await store.get("brief") is None
        assert await store.alive(["k1", "k2", "brief"], refresh=True) == 2  # k1, k2 live 1 s more
        await asyncio.sleep(0.6)
        assert await store.get_many(["k1", "k2", "k3"]) == [1, 2, None]
        await store.close()

    run(work)


def test_a_record_over_the_size_limit_is_refused_and_nothing_is_written(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store = make(kind, tmp_path, request, StoreLimits(max_record_bytes=100))

    async def work() -> None:
        with pytest.raises(StoreFull, match="over the store's limit of 100 bytes"):
            await store.put({"small": 1, "big": "x" * 200})
        assert await store.get("small") is None
        await store.close()

    run(work)


def test_the_memory_store_refuses_past_its_record_cap_instead_of_evicting() -> None:
    store = MemoryStore(StoreLimits(max_records=3))

    async def work() -> None:
        await store.put({"a": 1, "b": 2, "c": 3})
        with pytest.raises(StoreFull, match="limit of 3 records"):
            await store.put({"d": 4})
        await store.put({"a": 5})  # replacing a record needs no room
        assert [await store.get(k) for k in "abc"] == [5, 2, 3]

    run(work)


def test_an_unreachable_redis_is_store_unavailable() -> None:
    store = open_store(f"redis://127.0.0.1:{free_port()}/0")

    async def work() -> None:
        with pytest.raises(StoreUnavailable, match=r"Redis store at 127\.0\.0\.1"):
            await store.get("a")

    run(work)


def test_an_unusable_sqlite_file_is_store_unavailable(tmp_path: Path) -> None:
    (tmp_path / "dir.db").mkdir()
    store = SQLiteStore(tmp_path / "dir.db")

    async def work() -> None:
        with pytest.raises(StoreUnavailable, match="SQLite store"):
            await store.get("a")

    run(work)


WRITER = """
import asyncio, sys
from toolcall_middleware.store import open_store

async def main():
    store = open_store(sys.argv[1])
    for n in range(int(sys.argv[3])):
        await store.update("list", lambda old: [*(old or []), f"{sys.argv[2]}{n}"])
    await store.close()

asyncio.run(main())
"""


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
def test_processes_appending_to_one_record_lose_nothing(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}" if backend == "sqlite" else request.getfixturevalue("redis_url")
    if backend == "redis":
        run(lambda: open_store(url).delete("list"))
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, url, name, "60"], cwd=ROOT) for name in ("a", "b", "c")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    written = run(lambda: open_store(url).get("list"))
    assert sorted(written) == sorted(f"{name}{n}" for name in "abc" for n in range(60))
