"""A long `previous_response_id` chain: the room it takes and what each turn costs, by part.

A client makes N turns (default 1,000), each a 230-byte user message continuing the last response,
through the middleware with a store, in front of a Responses host that reads the whole input and
answers a short message. Printed per store: the bytes the store holds (its records' values; for
SQLite also the file, for Redis its memory); the median time of turn 10 and of turn N (each taken
15 times, alternately, as branches continuing turn 9 and turn N-1, so that both meet the same load
on the machine), split into its parts:

- the store's: its calls' time (reading the chain, writing the turn);
- the host's: its own work (reading the request, writing its answer), the CPU time it takes less
  what it waits for in `send` (the middleware's reading of the answer, and the store's writes);
- the middleware's: the CPU time of the turn (all of it runs in this thread: the client, the
  middleware, the host) less the host's and the store calls', so the load of other processes on
  the machine does not count;
- the whole turn, as the client waits for it;

then a turn continuing the chain from a second middleware on the same store, which has nothing
cached and rebuilds the context from the links.

    python benchmarks/store_chain.py [--turns 1000] [--store sqlite|redis ...]

Redis needs `redis-server` on PATH (started on a free port, unsaved) and the `redis` package.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import socket
import sqlite3
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

from toolcall_middleware import ToolCallMiddleware
from toolcall_middleware.store._base import Store

REPEATS = 15
PARTS = {"store": "store's part", "middleware": "middleware's part", "host": "host's part", "whole": "whole turn"}
TEXT = ("Please go on with the next step of the plan, keeping every earlier decision in mind. " * 3)[:224]


HOST_SPENT = [0.0]  # the host's own CPU time since last reset: its work, not what it waits for in `send`


async def host(scope: dict[str, Any], receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]):
    """A Responses host: it reads the whole request (as a model server must) and answers briefly.
    Its own time adds up in `HOST_SPENT`."""
    if scope["type"] != "http":
        return
    started = time.thread_time()
    waited = 0.0

    async def timed_send(message: Any) -> None:
        nonlocal waited
        start = time.thread_time()
        try:
            await send(message)
        finally:
            waited += time.thread_time() - start

    try:
        await _answer(receive, timed_send)
    finally:
        HOST_SPENT[0] += time.thread_time() - started - waited


async def _answer(receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]) -> None:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    request = json.loads(body)
    text = f"Noted; {len(request['input'])} items so far."
    item = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed"}
    item["content"] = [{"type": "output_text", "text": text, "annotations": []}]
    answer = {"id": "resp_host", "object": "response", "created_at": 0, "status": "completed", "output": [item]}
    data = json.dumps({**answer, "model": request.get("model")}).encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": data})


def timed_store(app: ToolCallMiddleware) -> list[float]:
    """Wrap the store's calls so that their time adds up in the returned list: `[0]` the time they
    took, `[1]` the CPU time this thread spent in them."""
    spent = [0.0, 0.0]
    store: Store = app._entry.store  # type: ignore[attr-defined]
    for name in ("get", "get_many", "put", "alive", "update"):
        original = getattr(store, name)

        async def wrapped(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
            start, cpu = time.perf_counter(), time.thread_time()
            try:
                return await _original(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - start
                spent[1] += time.thread_time() - cpu

        setattr(store, name, wrapped)
    return spent


def client_of(app: ToolCallMiddleware) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(transport=transport, base_url="http://bench", headers={"authorization": "Bearer sk-b"})


async def turn(client: httpx.AsyncClient, n: int, previous: str | None) -> str:
    body: dict[str, Any] = {"model": "m", "input": f"{n:05d} {TEXT}"}
    if previous is not None:
        body["previous_response_id"] = previous
    answer = await client.post("/v1/responses", json=body)
    answer.raise_for_status()
    return str(answer.json()["id"])


async def chain(url: str, turns: int, stored: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Make the chain, measure what it stored (`stored()`), then time turns."""
    app = ToolCallMiddleware(host, dialect="hermes", store=url, store_secret="bench")
    spent = timed_store(app)
    ids: list[str] = []
    async with client_of(app) as client:
        for n in range(1, turns + 1):
            ids.append(await turn(client, n, ids[-1] if ids else None))
        room = stored()
        # Turn 10 and turn N, timed in turns (branches of the chain) taken one after the other, so
        # that both meet the same load on the machine.
        times: dict[str, dict[int, list[float]]] = {part: {10: [], turns: []} for part in PARTS}
        for _ in range(REPEATS):
            for at in (10, turns):
                spent[0] = spent[1] = HOST_SPENT[0] = 0.0
                start, cpu = time.perf_counter(), time.thread_time()
                await turn(client, at, ids[at - 2])
                times["whole"][at].append(time.perf_counter() - start)
                times["store"][at].append(spent[0])
                times["host"][at].append(HOST_SPENT[0])
                # (the client's own work, httpx's in process, is in it too: the same at any length)
                times["middleware"][at].append(time.thread_time() - cpu - spent[1] - HOST_SPENT[0])
    cold = ToolCallMiddleware(host, dialect="hermes", store=url, store_secret="bench")  # nothing cached
    async with client_of(cold) as client:
        await turn(client, 2, ids[0])  # (the process's first request, set up)
        start = time.perf_counter()
        await turn(client, turns + 1, ids[-1])
        rebuilt = time.perf_counter() - start
    medians = {
        f"{PARTS[part]}, turn {at} (ms)": statistics.median(times[part][at]) * 1000
        for part in PARTS
        for at in (10, turns)
    }
    return {
        **medians,
        f"turn {turns + 1}, rebuilt in a fresh process (ms)": rebuilt * 1000,
        **room,
    }


def sqlite_bytes(path: Path) -> dict[str, Any]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        values = db.execute("SELECT sum(length(value)), count(*) FROM records").fetchone()
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return {"stored (MB)": values[0] / 1e6, "records": values[1], "file (MB)": path.stat().st_size / 1e6}


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not on PATH")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        for _ in range(200):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def redis_bytes(url: str) -> dict[str, Any]:
    import redis

    client = redis.Redis.from_url(url)
    keys = list(client.scan_iter("toolcall:*", count=1000))
    stored = sum(int(client.strlen(key)) for key in keys)
    return {"stored (MB)": stored / 1e6, "records": len(keys), "used_memory (MB)": client.info()["used_memory"] / 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--store", action="append", choices=["sqlite", "redis"])
    args = parser.parse_args()
    for kind in args.store or ["sqlite", "redis"]:
        with contextlib.ExitStack() as stack:
            if kind == "sqlite":
                path = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "state.db"
                figures = asyncio.run(chain(f"sqlite:///{path}", args.turns, lambda path=path: sqlite_bytes(path)))
            else:
                url = stack.enter_context(redis_server())
                figures = asyncio.run(chain(url, args.turns, lambda url=url: redis_bytes(url)))
        print(f"{kind}, a chain of {args.turns} turns of {len(TEXT) + 6} bytes:")
        for name, value in figures.items():
            print(f"  {name:44} {value:10.2f}" if isinstance(value, float) else f"  {name:44} {value:10}")


if __name__ == "__main__":
    main()
