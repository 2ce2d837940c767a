"""Background responses as the `openai` SDK uses them: create with `background=True`, poll with
`retrieve`, cancel (which cuts the host's stream off), and follow or resume the stream by
sequence number."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import httpx
import openai
import pytest
from openai.types.responses import Response

from tests.store.test_sdk import served

SETUPS = [("bridged", "memory"), ("native", "sqlite")]
TEXT = "Tell me slowly about the sea and the long rivers that run into it."


@pytest.fixture(scope="module", params=SETUPS, ids=["-".join(s) for s in SETUPS])
def base(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    app, backend = request.param
    store = f"sqlite:///{tmp_path_factory.mktemp('bg') / 'state.db'}" if backend == "sqlite" else "memory"
    with served(app, store) as url:
        yield url


def client(base: str) -> openai.OpenAI:
    return openai.OpenAI(api_key="sk-bg", base_url=base + "/v1", max_retries=0)


def poll(sdk: openai.OpenAI, ident: str, timeout: float = 20.0) -> Response:
    deadline = time.monotonic() + timeout
    while True:
        response = sdk.responses.retrieve(ident)
        if response.status not in ("queued", "in_progress"):
            return response
        assert time.monotonic() < deadline, f"still {response.status}"
        time.sleep(0.1)


def stats(base: str) -> dict[str, int]:
    return dict(httpx.get(base + "/stats").json())


def settled(base: str) -> dict[str, int]:
    """The host's counts once no slow stream is open (an earlier test's may still be closing)."""
    deadline = time.monotonic() + 10
    while True:
        counts = stats(base)
        if counts["started"] == counts["finished"] + counts["cut"]:
            return counts
        assert time.monotonic() < deadline, counts
        time.sleep(0.05)


def test_a_background_response_runs_on_and_is_polled(base: str) -> None:
    sdk = client(base)
    before = settled(base)
    created = sdk.responses.create(model="m", input=TEXT, background=True)
    assert stats(base)["finished"] == before["finished"]  # answered while the host still writes
    assert created.status == "queued" and created.background is True
    seen = {sdk.responses.retrieve(created.id).status}
    done = poll(sdk, created.id)
    assert done.status == "completed" and done.output_text == "Heard: " + TEXT
    assert done.id == created.id and done.background is True
    seen.add(done.status)
    assert seen >= {"completed"}
    follow = sdk.responses.create(model="m", input="Next.", previous_response_id=created.id)
    assert follow.output_text == f"Heard: {TEXT} | Next."


def test_cancel_stops_the_response_and_its_upstream(base: str) -> None:
    sdk = client(base)
    before = settled(base)
    created = sdk.responses.create(model="m", input=TEXT, background=True)
    time.sleep(0.5)
    assert sdk.responses.retrieve(created.id).status == "in_progress"
    cancelled = sdk.responses.cancel(created.id)
    assert cancelled.status == "cancelled" and cancelled.id == created.id
    deadline = time.monotonic() + 5
    while stats(base)["cut"] == before["cut"]:
        assert time.monotonic() < deadline, "the host's stream was not cut off"
        time.sleep(0.05)
    time.sleep(0.3)
    assert sdk.responses.retrieve(created.id).status == "cancelled"
    assert stats(base)["finished"] == before["finished"]
    assert sdk.responses.cancel(created.id).status == "cancelled"  # again: no change


def test_a_background_stream_resumes_by_sequence_number(base: str) -> None:
    sdk = client(base)
    first: list[int] = []
    ident = ""
    with contextlib.closing(sdk.responses.create(model="m", input=TEXT, background=True, stream=True)) as stream:
        for event in stream:
            if event.type == "response.created":
                ident = event.response.id
                assert event.response.background is True
            first.append(event.sequence_number)
            if len(first) == 4:
                break  # the client goes away; the response runs on
    assert ident and first == [0, 1, 2, 3]
    rest = list(sdk.responses.retrieve(ident, stream=True, starting_after=first[-1]))
    assert [e.sequence_number for e in rest] == list(range(4, 4 + len(rest)))
    assert rest[-1].type == "response.completed" and rest[-1].response.output_text == "Heard: " + TEXT


def test_a_host_failure_fails_the_background_response(base: str) -> None:
    sdk = client(base)
    created = sdk.responses.create(model="m", input="please fail", background=True)
    failed = poll(sdk, created.id)
    assert failed.status == "failed" and failed.error is not None
    assert "500" in failed.error.message and "the model is overloaded" in failed.error.message


def test_what_cannot_be_backgrounded_or_cancelled(base: str) -> None:
    sdk = client(base)
    with pytest.raises(openai.BadRequestError, match="require 'store'"):
        sdk.responses.create(model="m", input="x", background=True, store=False)
    plain = sdk.responses.create(model="m", input="x")
    with pytest.raises(openai.BadRequestError, match="Only background responses"):
        sdk.responses.cancel(plain.id)
    with pytest.raises(openai.NotFoundError):
        sdk.responses.cancel("resp_nothing")
