"""`toolcall-middleware serve` stopped by SIGTERM, as a container or Kubernetes stops it, in one
process and with workers, with the official openai and anthropic SDKs as clients of a slow
streaming upstream:

- within the grace (`--shutdown-timeout`), a stream under way runs to its end while a new
  connection is refused at once, and the command exits 0;
- past it, each stream still running ends in its API's error (a Chat error chunk, Responses'
  `response.failed`, Messages' `error` event: each SDK raises or reports it), never cut off as if
  complete, and the command still exits 0.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.served.test_store_jobs import LONG, upstream
from tests.servers import free_port, output_of, running

__all__ = ["upstream"]  # (the fixture, shared)

WORKERS = ["1", "2"]
STOPPED = "shut down before the response ended"
HALF = "Go slowly:" + " and on" * 10  # about 2.5 s of the upstream's slow stream


@contextmanager
def serve(upstream: str, data: Path, workers: str, grace: str) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    port = free_port()
    command = [sys.executable, "-m", "toolcall_middleware.cli", "serve", "--upstream", upstream, "--port", str(port)]
    command += ["--dialect", "hermes", "--data-dir", str(data), "--log-level", "warning"]
    command += ["--workers", workers, "--shutdown-timeout", grace, "--keepalive-interval", "0"]
    with running(command, port) as found:
        yield found


def stopped(proc: subprocess.Popen[bytes]) -> int:
    """The exit status of `serve` once it has stopped by itself (the output shown if it failed)."""
    status = proc.wait(timeout=20)
    if status != 0:
        print(output_of(proc).text(wait=5))
    return status


def refused(base: str, timeout: float = 3.0) -> float:
    """Seconds until a new connection to `base` is refused."""
    started = time.monotonic()
    while True:
        try:
            httpx.get(base + "/healthz", timeout=1)
        except httpx.ConnectError:
            return time.monotonic() - started
        except httpx.RemoteProtocolError:
            pass  # (queued as a worker's socket closed: dropped unanswered; the next try must be refused)
        assert time.monotonic() - started < timeout, "new connections are still taken"
        time.sleep(0.05)


def in_thread(work: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    return thread


def openai_client(base: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0, timeout=30)


@pytest.mark.parametrize("workers", WORKERS)
def test_a_stream_under_way_finishes_within_the_grace(upstream: str, tmp_path: Path, workers: str) -> None:
    with serve(upstream, tmp_path, workers, "30") as (proc, base):
        stream = openai_client(base).chat.completions.create(
            model="m", messages=[{"role": "user", "content": HALF}], stream=True
        )
        chunks = iter(stream)
        content = next(chunks).choices[0].delta.content or ""
        proc.send_signal(signal.SIGTERM)
        refused(base)
        refused_at = time.monotonic()
        reasons = []
        for chunk in chunks:
            content += chunk.choices[0].delta.content or "" if chunk.choices else ""
            reasons += [c.finish_reason for c in chunk.choices if c.finish_reason]
        assert time.monotonic() - refused_at > 0.5  # (the stream went on after the port closed)
        assert content.strip() == "Heard: " + HALF and reasons == ["stop"]
        assert stopped(proc) == 0


@pytest.mark.parametrize("workers", WORKERS)
def test_streams_past_the_grace_end_in_their_apis_error(upstream: str, tmp_path: Path, workers: str) -> None:
    with serve(upstream, tmp_path, workers, "1") as (proc, base):
        seen: dict[str, list[Any]] = {"chat": [], "responses": [], "messages": []}
        raised: dict[str, Exception] = {}

        def chat() -> None:
            try:
                for chunk in openai_client(base).chat.completions.create(
                    model="m", messages=[{"role": "user", "content": LONG}], stream=True
                ):
                    seen["chat"].append(chunk)
            except openai.APIError as error:
                raised["chat"] = error

        def responses() -> None:
            seen["responses"] += openai_client(base).responses.create(model="m", input=LONG, stream=True)

        def messages() -> None:
            client = anthropic.Anthropic(api_key="sk-test", base_url=base, max_retries=0, timeout=30)
            try:
                with client.messages.stream(
                    model="m", max_tokens=1000, messages=[{"role": "user", "content": LONG}]
                ) as events:
                    seen["messages"] += events
            except anthropic.APIStatusError as error:
                raised["messages"] = error

        threads = [in_thread(chat), in_thread(responses), in_thread(messages)]
        deadline = time.monotonic() + 10
        while not all(len(events) > 3 for events in seen.values()):  # each stream under way
            assert time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        for thread in threads:
            thread.join(timeout=10)
            assert not thread.is_alive()
        assert time.monotonic() - signalled < 4  # (the grace, not the 7 s the streams would take)

        assert STOPPED in raised["chat"].message
        assert not [c for c in seen["chat"] if c.choices and c.choices[0].finish_reason == "stop"]
        last = seen["responses"][-1]
        assert last.type == "response.failed" and STOPPED in last.response.error.message
        assert not [e for e in seen["responses"] if e.type == "response.completed"]
        assert STOPPED in str(raised["messages"])
        assert not [e for e in seen["messages"] if e.type == "message_stop"]
        assert stopped(proc) == 0
