"""Scale-out, shown: three `toolcall-middleware serve` processes on one Redis, as behind a load
balancer. A conversation moves across all three; a background job made on one is followed on
another and read on the third; when the process running a job is killed, the other two end it
and a follower on either gets its terminal event."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.served.test_store_jobs import LEASE, LONG, SLOW, follow, instance, sdk, status, upstream, wait_for
from tests.store.redis_server import redis_server

__all__ = ["upstream"]  # (the fixture, shared)


@pytest.fixture
def three(upstream: str) -> Iterator[list[tuple[Any, openai.OpenAI]]]:
    with redis_server() as url, contextlib.ExitStack() as stack:
        found = [stack.enter_context(instance(upstream, url, "--background-lease", str(LEASE))) for _ in range(3)]
        yield [(proc, sdk(base, "sk-team")) for proc, base in found]


def test_three_serve_processes_share_one_redis(three: list[tuple[Any, openai.OpenAI]]) -> None:
    (_, one), (_, two), (killed, three_) = three

    conversation = one.conversations.create()
    one.responses.create(model="m", input="Begun on one.", conversation=conversation.id)
    second = two.responses.create(model="m", input="Then two.", conversation=conversation.id)
    third = three_.responses.create(model="m", input="And three.", previous_response_id=second.id)
    assert third.output_text == "Heard: Begun on one. | Then two. | And three."
    assert len(list(one.conversations.items.list(conversation.id))) == 6  # (two turns: input, reasoning, answer)

    job = one.responses.create(model="m", input=SLOW, background=True)
    events: list[Any] = []
    follow(two, job.id, events).join(timeout=15)
    assert events[-1].type == "response.completed" and events[-1].response.output_text == "Heard: " + SLOW
    assert three_.responses.retrieve(job.id).status == "completed"

    orphan = three_.responses.create(model="m", input=LONG, background=True)
    wait_for(one, orphan.id, {"in_progress"}, 10)
    seen_on_one: list[Any] = []
    seen_on_two: list[Any] = []
    followers = [follow(one, orphan.id, seen_on_one), follow(two, orphan.id, seen_on_two)]
    time.sleep(0.5)
    killed.kill()
    killed.wait()
    died = time.monotonic()
    for follower in followers:
        follower.join(timeout=1.25 * LEASE + 2)
        assert not follower.is_alive()
    assert time.monotonic() - died <= 1.25 * LEASE + 1
    assert seen_on_one[-1].type == seen_on_two[-1].type == "response.failed"
    assert status(two, orphan.id) == status(one, orphan.id) == "failed"
    assert one.responses.create(model="m", input="Still here.", previous_response_id=third.id).output_text.endswith(
        "Still here."
    )
