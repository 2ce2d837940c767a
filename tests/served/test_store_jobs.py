"""Background responses under `toolcall-middleware serve`, on a shared SQLite file and on a real
Redis: admitted (a bound on running jobs, globally and per credential, a queue, a 429 with
`retry-after` past it) and owned by the deployment (kill -9 the process running a job: another
ends it `failed` within the lease bound, and a follower's stream ends with `response.failed`)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from tests.servers import free_port, running, serve, uvicorn
from tests.store.redis_server import redis_server

SLOW = "Go slowly."  # about 1 s of the host's slow stream
LONG = "Go slowly: " + "and on and on " * 20  # about 7 s


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    command, port = uvicorn("tests.store.hosts:host")
    with serve(command, port) as base:
        yield base


@pytest.fixture(params=["sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'state.db'}"
    else:
        with redis_server() as url:
            yield url


@contextlib.contextmanager
def instance(upstream: str, store: str, *flags: str) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """One `serve` process on the store."""
    port = free_port()
    command = [sys.executable, "-m", "toolcall_middleware.cli", "serve", "--upstream", upstream, "--port", str(port)]
    command += ["--dialect", "hermes", "--bridge", "responses-to-chat", "--store", store, "--log-level", "warning"]
    with running([*command, *flags], port) as found:
        yield found


def sdk(base: str, key: str) -> openai.OpenAI:
    return openai.OpenAI(api_key=key, base_url=base + "/v1", max_retries=0)


def status(client: openai.OpenAI, ident: str) -> str:
    return str(client.responses.retrieve(ident).status)


def wait_for(client: openai.OpenAI, ident: str, wanted: set[str], timeout: float) -> float:
    """Seconds until the response's status is one of `wanted`."""
    started = time.monotonic()
    while (found := status(client, ident)) not in wanted:
        assert time.monotonic() - started < timeout, f"still {found}"
        time.sleep(0.05)
    return time.monotonic() - started


def open_streams(upstream: str) -> int:
    counts = httpx.get(upstream + "/stats").json()
    return int(counts["started"] - counts["finished"] - counts["cut"])


BOUNDS = ["--max-background-jobs", "2", "--max-background-jobs-per-credential", "1"]
QUEUE = ["--max-background-queued", "3", "--max-background-queued-per-credential", "2"]


def test_background_work_is_admitted_queued_and_refused_past_the_queue(upstream: str, store: str) -> None:
    with instance(upstream, store, *BOUNDS, *QUEUE) as (_, base):
        alice, bob, carol = sdk(base, "sk-alice"), sdk(base, "sk-bob"), sdk(base, "sk-carol")
        first = alice.responses.create(model="m", input=SLOW, background=True)
        waiting = [alice.responses.create(model="m", input=SLOW, background=True) for _ in range(2)]
        assert all(r.status == "queued" for r in [first, *waiting])
        with pytest.raises(openai.RateLimitError) as refused:  # alice's share of the queue is full
            alice.responses.create(model="m", input=SLOW, background=True)
        assert int(refused.value.response.headers["retry-after"]) >= 1
        assert refused.value.code == "rate_limit_exceeded"
        other = bob.responses.create(model="m", input=SLOW, background=True)
        wait_for(bob, other.id, {"in_progress", "completed"}, 5)  # bob is not behind alice's queue
        assert status(alice, waiting[0].id) == "queued" and status(alice, waiting[1].id) == "queued"
        later = bob.responses.create(model="m", input=SLOW, background=True)  # (both slots taken: queued)
        with pytest.raises(openai.RateLimitError):  # the whole queue is full
            carol.responses.create(model="m", input=SLOW, background=True)
        most = 0
        jobs = [(alice, first), (alice, waiting[0]), (alice, waiting[1]), (bob, other), (bob, later)]
        deadline = time.monotonic() + 30
        while not all(status(client, job.id) == "completed" for client, job in jobs):
            most = max(most, open_streams(upstream))
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert most <= 2  # never more than the global bound at the upstream
        assert alice.responses.retrieve(waiting[1].id).output_text == "Heard: " + SLOW
        carol.responses.create(model="m", input=SLOW, background=True)  # room again


def follow(client: openai.OpenAI, ident: str, into: list[Any]) -> threading.Thread:
    def run() -> None:
        for event in client.responses.retrieve(ident, stream=True):
            into.append(event)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


LEASE = 1.0


def test_a_job_whose_process_is_killed_ends_failed_within_the_lease_bound(upstream: str, store: str) -> None:
    lease = ["--background-lease", str(LEASE)]
    with instance(upstream, store, *lease) as (owner, first), instance(upstream, store, *lease) as (_, second):
        there, here = sdk(first, "sk-alice"), sdk(second, "sk-alice")
        job = there.responses.create(model="m", input=LONG, background=True)
        wait_for(here, job.id, {"in_progress"}, 10)
        events: list[Any] = []
        follower = follow(here, job.id, events)
        time.sleep(1.5)  # (longer than the lease: a live owner keeps it)
        assert status(here, job.id) == "in_progress" and events
        owner.kill()
        owner.wait()
        took = wait_for(here, job.id, {"failed"}, 10)
        assert took <= 1.25 * LEASE + 0.5, took
        ended = here.responses.retrieve(job.id)
        assert ended.error is not None and "lease lapsed" in ended.error.message
        follower.join(timeout=3)
        assert not follower.is_alive(), "the follower's stream did not end"
        assert events[-1].type == "response.failed"
        numbers = [e.sequence_number for e in events]
        assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))


def test_a_job_queued_on_a_killed_process_ends_failed_too(upstream: str, store: str) -> None:
    flags = ["--background-lease", str(LEASE), "--max-background-jobs", "1"]
    with instance(upstream, store, *flags) as (owner, first), instance(upstream, store, *flags) as (_, second):
        there, here = sdk(first, "sk-alice"), sdk(second, "sk-alice")
        there.responses.create(model="m", input=LONG, background=True)
        queued = there.responses.create(model="m", input=LONG, background=True)
        assert status(here, queued.id) == "queued"
        owner.kill()
        owner.wait()
        assert wait_for(here, queued.id, {"failed"}, 10) <= 1.25 * LEASE + 0.5
