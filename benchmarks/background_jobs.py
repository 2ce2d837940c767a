"""The background-response budgets, measured on `toolcall-middleware serve` processes.

1. **A burst**: `--jobs` background requests at once from one credential. Every one must end:
   accepted (`queued`) and then `completed`, or refused up front with a 429 that carries
   `retry-after`; nothing else. Meanwhile another credential's ordinary request (the upstream
   takes `--job-ms` to answer it) is timed: its median while the burst runs against its median
   on an idle server.
2. **Dead owners**: `--followers` background responses that never finish on one `serve`, each
   followed (`GET /v1/responses/{id}?stream=true`) on a second `serve`; then the first is killed
   (SIGKILL). Every follower's stream must end with `response.failed` within the lease bound
   (1.25 × `--lease`), and the second process must idle afterwards (its CPU over 5 s).

The upstream is a raw-output Chat model (hermes) in its own uvicorn process: it streams its
answer over `--job-ms`, or for ever when asked for a "long" one. The store is a SQLite file or
a fresh `redis-server` (`--store`). Prints one line per figure; exits 1 when a budget fails.

    python benchmarks/background_jobs.py [--store sqlite|redis] [--jobs 1000] [--followers 200]
        [--job-ms 200] [--lease 10]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from toolcall_middleware._inprocess import receive_body
from toolcall_middleware.core._body_read import BodyRead

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"


# -- the upstream --------------------------------------------------------------------------------


def upstream_app(job_seconds: float) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        read = BodyRead(1 << 20)
        if not await receive_body(receive, read):
            return
        data = read.body
        head = [(b"content-type", b"text/event-stream")]
        if scope["path"] != "/v1/chat/completions":
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        long = "long" in json.dumps(json.loads(data)["messages"][-1])
        await send({"type": "http.response.start", "status": 200, "headers": head})
        pieces = ["<think>Fine.</think>", "\n\nAll ", "done ", "here."]
        for n in range(10**9 if long else len(pieces)):
            piece = pieces[n % len(pieces)] if not long or n == 0 else "more "
            chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
            chunk["choices"] = [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]
            await send(
                {
                    "type": "http.response.body",
                    "body": b"data: " + json.dumps(chunk).encode() + b"\n\n",
                    "more_body": True,
                }
            )
            await asyncio.sleep(job_seconds / len(pieces) if not long else 0.5)
        end = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
        end["choices"] = [{"index": 0, "delta": {}, "finish_reason": "stop"}]
        await send(
            {"type": "http.response.body", "body": b"data: " + json.dumps(end).encode() + b"\n\ndata: [DONE]\n\n"}
        )

    return app


def serve_upstream(port: int, job_seconds: float) -> None:
    import uvicorn

    uvicorn.run(upstream_app(job_seconds), host=HOST, port=port, log_level="warning", backlog=4096)


# -- the servers ---------------------------------------------------------------------------------


@contextlib.contextmanager
def deployment(args: argparse.Namespace) -> Iterator[tuple[str, str]]:
    """The upstream and the store URL."""
    sys.path.insert(0, str(ROOT))
    from tests.servers import free_port, serve

    port = free_port()
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--serve-upstream",
        str(port),
        "--job-ms",
        str(args.job_ms),
    ]
    with contextlib.ExitStack() as stack:
        upstream = stack.enter_context(serve(command, port))
        if args.store == "redis":
            from tests.store.redis_server import redis_server

            store = stack.enter_context(redis_server())
        else:
            folder = stack.enter_context(tempfile.TemporaryDirectory())
            store = f"sqlite:///{folder}/state.db"
        yield upstream, store


@contextlib.contextmanager
def middleware(upstream: str, store: str, lease: float) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    from tests.servers import free_port, running

    port = free_port()
    command = [sys.executable, "-m", "toolcall_middleware.cli", "serve", "--upstream", upstream, "--port", str(port)]
    command += ["--dialect", "hermes", "--bridge", "responses-to-chat", "--store", store]
    command += ["--background-lease", str(lease), "--log-level", "warning"]
    with running(command, port) as found:
        yield found


def headers(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


# -- 1. the burst -------------------------------------------------------------------------------


async def timed_request(http: httpx.AsyncClient, base: str) -> float:
    started = time.monotonic()
    answer = await http.post(base + "/v1/responses", json={"model": "m", "input": "quick"}, headers=headers("sk-other"))
    if answer.status_code != 200:
        raise RuntimeError(f"another credential's request failed: {answer.status_code} {answer.text}")
    return time.monotonic() - started


async def burst(args: argparse.Namespace, base: str) -> bool:
    limits = httpx.Limits(max_connections=args.jobs + 50, max_keepalive_connections=100)
    async with httpx.AsyncClient(timeout=120, limits=limits) as http:
        idle = [await timed_request(http, base) for _ in range(7)]
        body = {"model": "m", "input": "a job", "background": True}
        started = time.monotonic()

        async def one() -> httpx.Response:
            return await http.post(base + "/v1/responses", json=body, headers=headers("sk-burst"))

        sending = asyncio.gather(*(one() for _ in range(args.jobs)))
        during: list[float] = []
        while not sending.done():
            during.append(await timed_request(http, base))
        answers = await sending
        sent = time.monotonic() - started
        codes = Counter(a.status_code for a in answers)
        refused = [a for a in answers if a.status_code == 429]
        with_retry = sum(1 for a in refused if int(a.headers.get("retry-after", "0")) >= 1)
        pending = [a.json()["id"] for a in answers if a.status_code == 200]
        ended: Counter[str] = Counter()
        while pending:
            during.append(await timed_request(http, base))
            polled = await asyncio.gather(
                *(http.get(f"{base}/v1/responses/{ident}", headers=headers("sk-burst")) for ident in pending[:50])
            )
            for ident, answer in zip(pending[:50], polled, strict=True):
                state = answer.json()["status"]
                if state not in ("queued", "in_progress"):
                    ended[state] += 1
                    pending.remove(ident)
            await asyncio.sleep(0.2)
        drained = time.monotonic() - started
    usual, busy = statistics.median(idle), statistics.median(during)
    print(f"burst: {args.jobs} background requests from one credential answered in {sent:.1f} s: {dict(codes)}")
    print(f"burst: 429s with retry-after: {with_retry} of {len(refused)}; accepted jobs ended: {dict(ended)}")
    print(f"burst: all ended after {drained:.1f} s")
    print(
        f"burst: another credential's request: median {usual * 1000:.0f} ms idle, {busy * 1000:.0f} ms during "
        f"the burst (max {max(during) * 1000:.0f} ms, {len(during)} requests)"
    )
    ok = set(codes) <= {200, 429} and with_retry == len(refused) and set(ended) <= {"completed"}
    return ok and busy <= 2 * usual + 0.05


# -- 2. dead owners --------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def follow(http: httpx.AsyncClient, base: str, ident: str, key: str) -> tuple[float, str]:
    """Follow a response's stream to its end: when it ended, and its last event's type."""
    last = ""
    async with http.stream("GET", f"{base}/v1/responses/{ident}?stream=true", headers=headers(key)) as stream:
        async for line in stream.aiter_lines():
            if line.startswith("data: "):
                last = json.loads(line[6:]).get("type", "")
    return time.monotonic(), last


async def dead_owners(args: argparse.Namespace, upstream: str, store: str) -> bool:
    with (
        middleware(upstream, store, args.lease) as (owner, first),
        middleware(upstream, store, args.lease) as (
            survivor,
            second,
        ),
    ):
        limits = httpx.Limits(max_connections=args.followers + 50, max_keepalive_connections=100)
        async with httpx.AsyncClient(timeout=None, limits=limits) as http:
            body = {"model": "m", "input": "a long one", "background": True}
            keys = [f"sk-owner-{n % 10}" for n in range(args.followers)]
            created = await asyncio.gather(
                *(http.post(first + "/v1/responses", json=body, headers=headers(k)) for k in keys)
            )
            idents = [answer.json()["id"] for answer in created]
            followers = [asyncio.ensure_future(follow(http, second, i, k)) for i, k in zip(idents, keys, strict=True)]
            await asyncio.sleep(2.0)
            before = cpu_seconds(survivor.pid)
            await asyncio.sleep(5.0)
            waiting_cpu = (cpu_seconds(survivor.pid) - before) / 5.0
            owner.kill()
            owner.wait()
            died = time.monotonic()
            ends = await asyncio.wait_for(asyncio.gather(*followers), timeout=3 * args.lease + 30)
        after = cpu_seconds(survivor.pid)
        await asyncio.sleep(5.0)
        idle_cpu = (cpu_seconds(survivor.pid) - after) / 5.0
    times = sorted(end - died for end, _ in ends)
    kinds = Counter(kind for _, kind in ends)
    bound = 1.25 * args.lease
    print(f"dead owners: {args.followers} followers on another process, owner killed; last events: {dict(kinds)}")
    print(
        f"dead owners: ended {statistics.median(times):.1f} s (median) and {times[-1]:.1f} s (last) after the kill; "
        f"lease {args.lease:g} s, bound {bound:g} s"
    )
    print(f"dead owners: the followers' server at {waiting_cpu:.1%} CPU while they waited, {idle_cpu:.1%} after")
    return set(kinds) == {"response.failed"} and times[-1] <= bound + 1.0 and idle_cpu < 0.05


def run(args: argparse.Namespace) -> int:
    with deployment(args) as (upstream, store):
        print(f"store: {args.store}; upstream answers in {args.job_ms:g} ms")
        with middleware(upstream, store, args.lease) as (_, base):
            first = asyncio.run(burst(args, base))
        second = asyncio.run(dead_owners(args, upstream, store))
    print("budgets:", "held" if first and second else "FAILED")
    return 0 if first and second else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", choices=("sqlite", "redis"), default="sqlite")
    parser.add_argument("--jobs", type=int, default=1000, help="background requests in the burst")
    parser.add_argument("--followers", type=int, default=200, help="followers of a dead owner's jobs")
    parser.add_argument("--job-ms", type=float, default=200.0, help="how long the upstream takes to answer")
    parser.add_argument("--lease", type=float, default=10.0, help="serve's --background-lease")
    parser.add_argument("--serve-upstream", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_upstream is not None:
        serve_upstream(args.serve_upstream, args.job_ms / 1000)
        return
    sys.exit(run(args))


if __name__ == "__main__":
    main()
