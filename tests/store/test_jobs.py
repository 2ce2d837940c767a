"""Background jobs belong to the deployment: leases that lapse when their owner dies and are ended
by exactly one other instance; followers that are told of changes (across machines on Redis),
back off when they are not, and stop as soon as their client leaves. On a real SQLite file
shared by two connections (as two processes share it) and a real `redis-server`."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.store.test_backends import make
from toolcall_middleware.store import SQLiteStore, Store
from toolcall_middleware.store._admission import Admission
from toolcall_middleware.store._background import LAST_POLL, BackgroundRuns
from toolcall_middleware.store._layer import ResponsesState
from toolcall_middleware.store._redis import RedisStore
from toolcall_middleware.store._state import response_key, scope_of

SECRET = "s" * 64
HEADERS = [(b"authorization", b"Bearer sk-jobs")]
SCOPE = scope_of(HEADERS, SECRET)


@pytest.fixture(params=["memory", "sqlite", "redis"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def twin(kind: str, store: Store, tmp_path: Path) -> Store:
    """A second client of the same store, as another process or machine has."""
    if isinstance(store, SQLiteStore):
        return SQLiteStore(tmp_path / "state.db")
    if isinstance(store, RedisStore):
        return RedisStore(store.url, prefix=store._prefix)
    return store


async def close_both(store: Store, other: Store) -> None:
    await store.close()
    if other is not store:
        await other.close()


async def nothing(scope: Any, receive: Any, send: Any) -> None:  # (the stateless app: never reached)
    raise AssertionError("not reached")


def running_record(ident: str, events: int = 1) -> dict[str, Any]:
    response = {"id": ident, "object": "response", "status": "in_progress", "background": True, "output": []}
    kept = [json.dumps({"type": "response.created", "sequence_number": n, "response": response}) for n in range(events)]
    return {"response": response, "input": [], "events": kept}


class Follower:
    """`GET /v1/responses/{id}?stream=true` on the layer, as a server calls it; `leave()` is the
    client going away."""

    def __init__(self, layer: ResponsesState, ident: str) -> None:
        self.layer, self.ident = layer, ident
        self.left = asyncio.Event()
        self.events: list[dict[str, Any]] = []
        self.ended = False

    async def receive(self) -> dict[str, Any]:
        await self.left.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        body = message.get("body", b"")
        for line in body.decode().splitlines():
            if line.startswith("data: "):
                self.events.append(json.loads(line[6:]))
        if message["type"] == "http.response.body" and not message.get("more_body"):
            self.ended = True

    async def run(self) -> None:
        scope = {
            "type": "http",
            "method": "GET",
            "path": f"/v1/responses/{self.ident}",
            "query_string": b"stream=true",
            "headers": HEADERS,
        }
        await self.layer(scope, self.receive, self.send)


def layer_on(store: Store, lease: float = 10.0) -> ResponsesState:
    return ResponsesState(nothing, store, responses_paths=("/v1/responses",), secret=SECRET, lease_seconds=lease)


class Counting:
    """Counts a store's reads of one key."""

    def __init__(self, store: Store, key: str) -> None:
        self.reads = 0
        original = store.get

        async def get(asked: str) -> Any:
            self.reads += asked == key
            return await original(asked)

        store.get = get  # type: ignore[method-assign]


def test_a_follower_stops_as_soon_as_its_client_leaves(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store = make(kind, tmp_path, request)

    async def work() -> None:
        key = response_key(SCOPE, "resp_ghost")
        await store.put({key: running_record("resp_ghost")})  # a job nobody will ever finish
        follower = Follower(layer_on(store), "resp_ghost")
        task = asyncio.create_task(follower.run())
        await asyncio.sleep(0.3)
        assert [e["sequence_number"] for e in follower.events] == [0] and not task.done()
        follower.left.set()
        started = time.monotonic()
        await asyncio.wait_for(task, 2)
        assert time.monotonic() - started < 0.2
        await store.close()

    asyncio.run(work())


def test_an_idle_follower_backs_off_and_is_told_of_a_change(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Idle for 3 s, a follower reads the store a handful of times (not every 0.1 s); a change
    made through another client of the store reaches it at once where the store carries signals
    (Redis, and the memory store within its process), within the longest back-off on SQLite."""
    store = make(kind, tmp_path, request)
    other = twin(kind, store, tmp_path)

    async def work() -> None:
        key = response_key(SCOPE, "resp_idle")
        await store.put({key: running_record("resp_idle")})
        counting = Counting(store, key)
        follower = Follower(layer_on(store), "resp_idle")
        task = asyncio.create_task(follower.run())
        await asyncio.sleep(3.0)
        assert counting.reads <= 9, counting.reads  # (polling every 0.1 s: 30)
        record = running_record("resp_idle", events=2)
        changed = time.monotonic()
        await other.put({key: record})
        await other.publish(key)
        while len(follower.events) < 2:
            await asyncio.sleep(0.01)
        told = time.monotonic() - changed
        assert told < (0.3 if kind != "sqlite" else LAST_POLL + 0.3), told
        ended = {**record, "response": {**record["response"], "status": "completed"}}
        await other.put({key: ended})
        await other.publish(key)
        await asyncio.wait_for(task, LAST_POLL + 1)
        assert follower.ended
        await close_both(store, other)

    asyncio.run(work())


def test_a_lapsed_lease_is_ended_by_one_instance_and_its_followers_get_the_end(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store = make(kind, tmp_path, request)
    other = twin(kind, store, tmp_path)

    async def work() -> None:
        key = response_key(SCOPE, "resp_orphan")
        await store.put({key: running_record("resp_orphan", events=3)})
        await store.take_lease(key, "dead-owner", time.time() + 0.5)
        await store.take_lease("kept", "live-owner", time.time() + 60)
        follower = Follower(layer_on(store), "resp_orphan")
        task = asyncio.create_task(follower.run())
        here, there = layer_on(store, lease=0.4), layer_on(other, lease=0.4)
        assert await here.background.sweep() == [] and await there.background.sweep() == []
        await asyncio.sleep(0.6)
        swept = await asyncio.gather(here.background.sweep(), there.background.sweep())
        assert sorted(swept, key=len) == [[], [key]]  # one instance ends it, never both
        assert await store.renew_leases("dead-owner", [key], time.time() + 10) == {key}  # (a late owner learns)
        assert await store.renew_leases("live-owner", ["kept"], time.time() + 10) == set()
        await asyncio.wait_for(task, LAST_POLL + 1)
        assert [e["sequence_number"] for e in follower.events] == [0, 1, 2, 3]
        last = follower.events[-1]
        assert last["type"] == "response.failed" and last["response"]["status"] == "failed"
        assert "lease lapsed" in last["response"]["error"]["message"]
        assert (await other.get(key))["response"]["status"] == "failed"
        await close_both(store, other)

    asyncio.run(work())


def test_jobs_submitted_at_once_all_run_within_the_bounds(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store = make(kind, tmp_path, request)
    runs = BackgroundRuns(store, Admission(2, 1, 100, 100))
    ran: list[int] = []
    now = {"running": 0, "most": 0}

    async def job(n: int) -> None:
        now["running"] += 1
        now["most"] = max(now["most"], now["running"])
        await asyncio.sleep(0.01)
        now["running"] -= 1
        ran.append(n)

    async def work() -> None:
        record = running_record("resp_many")
        await asyncio.gather(
            *(runs.submit(f"c{n % 3}", f"k{n}", {f"k{n}": record}, lambda n=n: job(n)) for n in range(30))
        )
        deadline = time.monotonic() + 10
        while len(ran) < 30:
            assert time.monotonic() < deadline, sorted(ran)
            await asyncio.sleep(0.01)
        assert sorted(ran) == list(range(30)) and now["most"] == 2
        await runs.stop()
        await store.close()

    asyncio.run(work())


def test_a_burst_of_first_requests_is_served_not_refused(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """300 requests at once on a fresh store (the scoping secret not yet made, more requests than
    the Redis client's connections): each gets its answer (a 404 here), none a 503."""
    store = make(kind, tmp_path, request)
    layer = ResponsesState(nothing, store, responses_paths=("/v1/responses",))
    statuses: list[int] = []

    async def one(n: int) -> None:
        scope = {
            "type": "http",
            "method": "GET",
            "path": f"/v1/responses/resp_{n}",
            "query_string": b"",
            "headers": HEADERS,
        }

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b""}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                statuses.append(message["status"])

        await layer(scope, receive, send)

    async def work() -> None:
        await asyncio.gather(*(one(n) for n in range(300)))
        await layer.background.stop()
        await store.close()

    asyncio.run(work())
    assert statuses == [404] * 300
