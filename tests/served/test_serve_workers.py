"""`toolcall-middleware serve --workers N`: N processes on one port, sharing the store (a SQLite
file in WAL mode, or a real Redis). Many clients at once are all served; then each worker that
took part is killed in turn (uvicorn's parent starts a new one): a stored response, a conversation
and a background job made before are continued, read and listed by processes that did not exist
when they were made, through the official openai SDK."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import openai
import pytest

from tests.served.test_store_jobs import SLOW, instance, sdk, store, upstream, wait_for
from tests.servers import free_port

__all__ = ["store", "upstream"]  # (the fixtures, shared)


def workers_of(pid: int) -> set[int]:
    """The worker processes `serve` (process `pid`) runs: its children multiprocessing spawned
    (not its resource tracker)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    found = set()
    for child in map(int, children):
        with open(f"/proc/{child}/cmdline", "rb") as cmdline:
            if b"spawn_main" in cmdline.read():
                found.add(child)
    return found


def replaced(pid: int, gone: int, timeout: float = 20.0) -> set[int]:
    """Kill worker `gone`; the workers once the parent has started another in its place."""
    os.kill(gone, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while True:
        now = workers_of(pid)
        if gone not in now and len(now) == 2:
            return now
        assert time.monotonic() < deadline, "the dead worker was not replaced"
        time.sleep(0.1)


def test_two_workers_serve_one_port_and_share_the_store(upstream: str, store: str) -> None:
    with instance(upstream, store, "--workers", "2") as (proc, base):
        first = workers_of(proc.pid)
        assert len(first) == 2
        client = sdk(base, "sk-team")  # (one connection, kept alive: one worker)

        def ask(n: int) -> str:
            return sdk(base, "sk-team").responses.create(model="m", input=f"Number {n}.").output_text

        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(ask, range(24)))
        assert answers == [f"Heard: Number {n}." for n in range(24)]

        conversation = client.conversations.create()
        client.responses.create(model="m", input="Begun.", conversation=conversation.id)
        stored = client.responses.create(model="m", input="Stored.")
        job = client.responses.create(model="m", input=SLOW, background=True)
        wait_for(sdk(base, "sk-team"), job.id, {"completed"}, 15)

        now = first
        for worker in sorted(first):  # every process that served the above, gone
            now = replaced(proc.pid, worker)
            assert sdk(base, "sk-team").responses.retrieve(job.id).status == "completed"
        assert not now & first
        client = sdk(base, "sk-team")  # (a new connection: the old one's worker is gone)

        assert client.responses.retrieve(job.id).output_text == "Heard: " + SLOW
        later = client.responses.create(model="m", input="Then.", previous_response_id=stored.id)
        assert later.output_text == "Heard: Stored. | Then."
        more = client.responses.create(model="m", input="Again.", conversation=conversation.id)
        assert more.output_text == "Heard: Begun. | Again."
        assert len(list(client.conversations.items.list(conversation.id))) == 6  # (input, reasoning, answer x2)
        with pytest.raises(openai.NotFoundError):  # (the scope still follows the credential)
            sdk(base, "sk-other").responses.retrieve(stored.id)


def test_workers_refuse_a_store_in_memory(upstream: str) -> None:
    command = [sys.executable, "-m", "toolcall_middleware.cli", "serve", "--upstream", upstream]
    command += ["--port", str(free_port()), "--workers", "2", "--store", "memory"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert "--store memory" in done.stderr and "SQLite" in done.stderr


def test_every_worker_asks_for_the_keys_the_parent_was_given(upstream: str, tmp_path: Path) -> None:
    """The keys reach the workers whole (the options are handed over in the clear, not as the
    stars a secret prints as): each worker accepts them and refuses any other."""
    flags = ("--workers", "2", "--api-key", "sk-team", "--api-key", "sk-ops")
    with instance(upstream, f"sqlite:///{tmp_path / 'state.db'}", *flags) as (_, base):
        for _ in range(6):  # (fresh connections: both workers answer some)
            assert sdk(base, "sk-team").responses.create(model="m", input="Hi.").output_text == "Heard: Hi."
            assert sdk(base, "sk-ops").responses.create(model="m", input="Yo.").output_text == "Heard: Yo."
            with pytest.raises(openai.AuthenticationError):
                sdk(base, "**********").responses.create(model="m", input="Hi.")


def environment_of(pid: int) -> dict[str, str]:
    pairs = Path(f"/proc/{pid}/environ").read_bytes().decode().split("\0")
    return dict(pair.split("=", 1) for pair in pairs if "=" in pair)


def exchanges_counted(base: str, *, at_least: float = 0.0) -> float:
    """The sum of `toolcall_exchanges_total` that `/metrics` shows (on a fresh connection); asked
    again for up to 5 s while under `at_least` (an exchange is counted just after its answer)."""
    deadline = time.monotonic() + 5
    while True:
        lines = httpx.get(base + "/metrics", timeout=10).text.splitlines()
        found = sum(float(line.rsplit(" ", 1)[1]) for line in lines if line.startswith("toolcall_exchanges_total{"))
        if found >= at_least or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def test_metrics_are_summed_over_the_workers(upstream: str, tmp_path: Path) -> None:
    """Each worker counts in a folder `serve` made for them (prometheus-client's multiprocess
    mode), and `/metrics`, whichever worker answers it, shows the sum; the folder goes with
    `serve`. (Each worker had its own registry: a scrape showed the count of one.)"""
    with instance(upstream, f"sqlite:///{tmp_path / 'state.db'}", "--workers", "2") as (proc, base):
        workers = workers_of(proc.pid)
        (folder,) = {environment_of(pid).get("PROMETHEUS_MULTIPROC_DIR") for pid in workers}
        assert folder and Path(folder).is_dir()
        for n in range(24):  # (a client each, a connection each: both workers serve some)
            assert sdk(base, "sk-team").responses.create(model="m", input=f"Number {n}.").output_text
        counted_by = {int(name.split("_")[-1].removesuffix(".db")) for name in os.listdir(folder)}
        assert workers <= counted_by
        assert [exchanges_counted(base, at_least=24) for _ in range(6)] == [24.0] * 6  # (by either worker)
    assert not Path(folder).exists()
