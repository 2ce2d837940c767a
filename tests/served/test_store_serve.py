"""`toolcall-middleware serve` keeps Responses state: by default in one SQLite file that several
`serve` processes share, or in the store `--store` names. A conversation begun on one process
continues on another, as behind a load balancer."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from tests.servers import free_port, serve, uvicorn
from tests.store.redis_server import redis_server


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    """The raw-output host, alone: it knows nothing of tool calling or state."""
    command, port = uvicorn("tests.store.hosts:host")
    with serve(command, port) as base:
        yield base


@contextlib.contextmanager
def worker(upstream: str, *flags: str) -> Iterator[openai.OpenAI]:
    port = free_port()
    command = [sys.executable, "-m", "toolcall_middleware.cli", "serve", "--upstream", upstream, "--port", str(port)]
    with serve([*command, "--dialect", "hermes", "--bridge", "responses-to-chat", *flags], port) as base:
        yield openai.OpenAI(api_key="sk-test", base_url=base + "/v1", max_retries=0)


def continue_across(first: openai.OpenAI, second: openai.OpenAI) -> None:
    conversation = first.conversations.create()
    one = first.responses.create(model="m", input="Begun on one.", conversation=conversation.id)
    two = second.responses.create(model="m", input="Continued on two.", conversation=conversation.id)
    assert two.output_text == "Heard: Begun on one. | Continued on two."
    three = first.responses.create(model="m", input="Back.", previous_response_id=two.id)
    assert three.output_text == "Heard: Begun on one. | Continued on two. | Back."
    assert second.responses.retrieve(one.id).output_text == "Heard: Begun on one."
    assert len(list(second.conversations.items.list(conversation.id))) == 6


def test_two_serve_processes_share_the_default_sqlite_store(upstream: str, tmp_path: Path) -> None:
    with (
        worker(upstream, "--data-dir", str(tmp_path)) as first,
        worker(upstream, "--data-dir", str(tmp_path)) as second,
    ):
        continue_across(first, second)
    assert (tmp_path / "state.db").exists()


def test_two_serve_processes_share_a_redis_store(upstream: str) -> None:
    with redis_server() as url, worker(upstream, "--store", url) as first, worker(upstream, "--store", url) as second:
        continue_across(first, second)


def test_store_none_is_stateless(upstream: str) -> None:
    with worker(upstream, "--store", "none") as sdk:
        first = sdk.responses.create(model="m", input="hello")
        with pytest.raises(openai.BadRequestError, match="previous_response_id"):
            sdk.responses.create(model="m", input="more", previous_response_id=first.id)


def test_a_bad_store_url_is_a_configuration_error(capsys: pytest.CaptureFixture[str]) -> None:
    from toolcall_middleware.cli import main

    assert main(["serve", "--store", "postgres://db"]) == 2
    assert "store (--store): store 'postgres://db': expected one of memory, sqlite:///" in capsys.readouterr().err


def test_a_background_response_is_polled_and_cancelled_from_another_process(upstream: str, tmp_path: Path) -> None:
    text = "Tell me slowly about the sea and the long rivers that run into it."
    with (
        worker(upstream, "--data-dir", str(tmp_path)) as first,
        worker(upstream, "--data-dir", str(tmp_path)) as second,
    ):
        done = first.responses.create(model="m", input="Quick one.", background=True)
        deadline = time.monotonic() + 20
        while second.responses.retrieve(done.id).status != "completed":
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert second.responses.retrieve(done.id).output_text == "Heard: Quick one."
        before = httpx.get(upstream + "/stats").json()
        running = first.responses.create(model="m", input=text, background=True)
        time.sleep(0.5)
        assert second.responses.cancel(running.id).status == "cancelled"
        deadline = time.monotonic() + 10
        while httpx.get(upstream + "/stats").json()["cut"] == before["cut"]:
            assert time.monotonic() < deadline, "the process running it did not stop it"
            time.sleep(0.05)
        assert first.responses.retrieve(running.id).status == "cancelled"
