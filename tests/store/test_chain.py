"""Long chains and many references as a client makes them, with the `openai` SDK against the
middleware on a real SQLite file and a real `redis-server`: each turn is stored once, the whole
context comes back (from the links, in another process too), an earlier response lives as long as
a later one needs it, records of earlier versions still read, and the lookups are batched and
capped."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from collections.abc import Iterator
from typing import Any

import openai
import pytest
import redis
from starlette.testclient import TestClient

from tests.store.hosts import host
from toolcall_middleware import ToolCallMiddleware
from toolcall_middleware.core.framing._utf8 import json_bytes
from toolcall_middleware.store import open_store
from toolcall_middleware.store._state import item_key, response_key, scope_of

SECRET = "chain-test-secret"
FILLER = "x" * 200


def stored_bytes(url: str) -> int:
    """The bytes every record in the store holds."""
    if url.startswith("sqlite"):
        with contextlib.closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as db:
            return int(db.execute("SELECT sum(length(value)) FROM records").fetchone()[0])
    client = redis.Redis.from_url(url)
    return sum(int(client.strlen(key)) for key in client.scan_iter("toolcall:*"))


@contextlib.contextmanager
def middleware(url: str, **options: Any) -> Iterator[tuple[ToolCallMiddleware, TestClient]]:
    app = ToolCallMiddleware(host, dialect="hermes", store=url, store_secret=SECRET, **options)
    with TestClient(app) as http:
        yield app, http


def sdk(http: TestClient, key: str = "sk-alice") -> openai.OpenAI:
    return openai.OpenAI(base_url="http://testserver/v1", api_key=key, http_client=http, max_retries=0)


def count(n: int) -> str:
    return f"Count {n:03d} {FILLER}"


def heard(n: int) -> str:
    return f"Heard {n} turns, first {count(1)[:20]!r}."


def test_a_chain_stores_each_turn_once_and_rebuilds_its_whole_context(store_url: str) -> None:
    sizes: dict[int, int] = {}
    with middleware(store_url) as (app, http):
        alice, previous = sdk(http), None
        for n in range(1, 41):
            with store_reads(store_url, app) as reads:
                answer = alice.responses.create(model="m", input=count(n), previous_response_id=previous)
            assert answer.output_text == heard(n)
            assert n == 1 or reads == {"single": 0, "batched": 1}  # (the response and its turn; the rest cached)
            previous = answer.id
            if n in (8, 24, 40):
                sizes[n] = stored_bytes(store_url)
        with pytest.raises(openai.NotFoundError):  # (the cache is no way around the credential)
            sdk(http, "sk-mallory").responses.create(model="m", input=count(41), previous_response_id=previous)
    # Linear: the last 16 turns took no more room than the 16 before them (stored whole, as
    # before, each turn's record grew with the chain: about twice as much).
    assert sizes[40] - sizes[24] <= 1.25 * (sizes[24] - sizes[8])
    with middleware(store_url) as (app, http):  # another process: nothing cached, rebuilt from the links
        alice = sdk(http)
        with store_reads(store_url, app) as reads:
            answer = alice.responses.create(model="m", input=count(41), previous_response_id=previous)
        assert reads["single"] <= 1 and reads["batched"] <= 4  # (the response, its checkpoints, every turn)
        with pytest.raises(openai.NotFoundError):  # (nor is the rebuild)
            sdk(http, "sk-mallory").responses.input_items.list(previous)
        assert answer.output_text == heard(41)
        items = list(alice.responses.input_items.list(answer.id, order="asc"))
        assert len(items) == 40 * 3 + 1  # each turn: its input, the reasoning, the answer
        assert [item.content[0].text for item in items if item.type == "message" and item.role == "user"] == [
            count(n) for n in range(1, 42)
        ]


def test_the_host_gets_the_whole_context_as_the_request_encoded(store_url: str) -> None:
    """Each turn's body is written from its context's JSON text, kept with the context (made
    anew once when the context is rebuilt): the host gets the bytes that encoding the whole
    request gives, non-ASCII text and all, from the cache and after a rebuild."""
    bodies: list[bytes] = []

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        async def kept() -> Any:
            message = await receive()
            bodies.append(message.get("body", b""))
            return message

        await host(scope, kept if scope["type"] == "http" else receive, send)

    def turns(start: int, stop: int, previous: str | None) -> str | None:
        app = ToolCallMiddleware(recording, dialect="hermes", store=store_url, store_secret=SECRET)
        with TestClient(app) as http:
            for n in range(start, stop):
                text = f"{count(n)} é ☃ \u2028"
                answer = sdk(http).responses.create(model="m", input=text, previous_response_id=previous)
                assert answer.output_text == heard(n)
                previous = answer.id
        return previous

    last = turns(2, 8, turns(1, 2, None))  # (the second process rebuilds the first turn's context)
    assert len(bodies) == 7
    for n, body in enumerate(bodies, 1):
        sent = json.loads(body)
        assert body == json_bytes(sent)  # (the host's bytes: the request as encoding it whole writes it)
        given = sent["input"] if n > 1 else [{"role": "user", "content": [{"text": sent["input"]}]}]
        users = [item["content"][0]["text"] for item in given if item.get("role") == "user"]
        assert users == [f"{count(k)} é ☃ \u2028" for k in range(1, n + 1)]
    assert last is not None


def test_continuing_a_large_response_stores_only_what_is_new(store_url: str) -> None:
    """Twenty short continuations of one 4 MB turn (each once stored the 4 MB again)."""
    with middleware(store_url) as (_, http):
        alice = sdk(http)
        big = alice.responses.create(model="m", input="Count 001 " + "y" * 4_000_000)
        before = stored_bytes(store_url)
        previous = big.id
        for n in range(2, 22):
            answer = alice.responses.create(model="m", input=f"Count {n:03d}", previous_response_id=previous)
            assert answer.output_text == f"Heard {n} turns, first {'Count 001 yyyyyyyyyyy'[:20]!r}."
            previous = answer.id
        assert stored_bytes(store_url) - before < 200_000


def test_an_earlier_response_deleted_is_gone_and_its_chain_goes_on(store_url: str) -> None:
    """As when each response kept a copy of the items before it: a deleted response is not found
    anywhere, and the responses that continue it still continue and list its items."""
    with middleware(store_url) as (_, http):
        alice = sdk(http)
        first = alice.responses.create(model="m", input=count(1))
        second = alice.responses.create(model="m", input=count(2), previous_response_id=first.id)
        alice.responses.delete(first.id)
        for gone in (
            lambda: alice.responses.retrieve(first.id),
            lambda: alice.responses.delete(first.id),
            lambda: alice.responses.input_items.list(first.id),
            lambda: alice.responses.cancel(first.id),
            lambda: alice.responses.create(model="m", input=count(2), previous_response_id=first.id),
        ):
            with pytest.raises(openai.NotFoundError, match=first.id):
                gone()
        third = alice.responses.create(model="m", input=count(3), previous_response_id=second.id)
        assert third.output_text == heard(3)
    with middleware(store_url) as (_, http):  # (rebuilt, not cached)
        alice = sdk(http)
        assert alice.responses.create(model="m", input=count(4), previous_response_id=third.id).output_text == heard(4)
        assert len(list(alice.responses.input_items.list(third.id))) == 2 * 3 + 1


def test_a_record_in_the_earlier_format_is_read_and_continued(store_url: str) -> None:
    """A response stored by earlier versions kept its whole input; it still continues."""
    scope = scope_of([(b"authorization", b"Bearer sk-alice")], SECRET)
    user = [
        {"id": f"msg_u{n}", "type": "message", "role": "user", "status": "completed", "content": [part]}
        for n, part in enumerate([{"type": "input_text", "text": "Count 001 legacy"}], 1)
    ]
    answer = {"id": "msg_a1", "type": "message", "role": "assistant", "status": "completed", "content": []}
    answer["content"] = [{"type": "output_text", "text": "Heard 1 turns.", "annotations": []}]
    response = {"id": "resp_old", "object": "response", "status": "completed", "output": [answer], "store": True}
    record = {"response": response, "input": [*user, {**user[0], "id": "msg_u2"}], "events": None}

    async def plant() -> None:
        store = open_store(store_url)
        await store.put({response_key(scope, "resp_old"): record, item_key(scope, "msg_a1"): answer})
        await store.close()

    asyncio.run(plant())
    with middleware(store_url) as (_, http):
        alice = sdk(http)
        assert alice.responses.retrieve("resp_old").output_text == "Heard 1 turns."
        next_ = alice.responses.create(model="m", input="Count 003", previous_response_id="resp_old")
        assert next_.output_text == "Heard 3 turns, first 'Count 001 legacy'."
        last = alice.responses.create(model="m", input="Count 004", previous_response_id=next_.id)
        assert last.output_text == "Heard 4 turns, first 'Count 001 legacy'."
        ids = [item.id for item in alice.responses.input_items.list(last.id, order="asc")]
        assert ids[:3] == ["msg_u1", "msg_u2", "msg_a1"] and len(ids) == 3 + 1 + 2 + 1


def test_earlier_responses_live_as_long_as_the_chain_needs_them(store_url: str) -> None:
    with middleware(store_url, store_ttl=1.6) as (_, http):
        alice = sdk(http)
        first = alice.responses.create(model="m", input=count(1))
        time.sleep(1.0)
        second = alice.responses.create(model="m", input=count(2), previous_response_id=first.id)
        time.sleep(1.0)  # the first was written 2 s ago: past the TTL, but its chain renewed it
        third = alice.responses.create(model="m", input=count(3), previous_response_id=second.id)
        assert third.output_text == heard(3)
        time.sleep(1.8)
        for ident in (first.id, second.id, third.id):  # and the chain expires as one
            with pytest.raises(openai.NotFoundError):
                alice.responses.retrieve(ident)


def error_of(caught: pytest.ExceptionInfo[openai.BadRequestError]) -> dict[str, Any]:
    body = caught.value.body
    assert isinstance(body, dict)
    return body


def test_a_chain_past_its_limit_is_a_400_naming_previous_response_id(store_url: str) -> None:
    with middleware(store_url, limits={"max_chain_responses": 3}) as (_, http):
        alice, previous = sdk(http), None
        for n in range(1, 5):  # a response continuing three
            previous = alice.responses.create(model="m", input=count(n), previous_response_id=previous).id
        with pytest.raises(openai.BadRequestError, match="over the limit of 3") as caught:
            alice.responses.create(model="m", input=count(5), previous_response_id=previous)
        assert error_of(caught)["param"] == "previous_response_id"


@contextlib.contextmanager
def store_reads(url: str, app: ToolCallMiddleware) -> Iterator[dict[str, int]]:
    """Count the store's reads while the block runs: single-key reads and batched ones."""
    counted = {"single": 0, "batched": 0}
    if url.startswith("redis"):
        client = redis.Redis.from_url(url)

        def calls() -> dict[str, int]:
            stats = client.info("commandstats")
            return {kind: int(stats.get(f"cmdstat_{cmd}", {}).get("calls", 0)) for kind, cmd in READS.items()}

        before = calls()
        yield counted
        after = calls()
        counted.update({kind: after[kind] - before[kind] for kind in READS})
        return
    store = app._entry.store  # type: ignore[attr-defined]  # (the SQLite store's one connection)

    def trace(statement: str) -> None:
        if statement.startswith("SELECT"):
            counted["batched" if " IN (" in statement else "single"] += 1

    store._connect().set_trace_callback(trace)
    yield counted


READS = {"single": "get", "batched": "mget"}


def test_item_references_are_read_in_one_batch_and_capped(store_url: str) -> None:
    with middleware(store_url, limits={"max_item_references": 500}) as (app, http):
        alice = sdk(http)
        first = alice.responses.create(model="m", input=count(1))
        reasoning = next(item for item in first.output if item.type == "reasoning")
        references: list[Any] = [{"type": "item_reference", "id": f"rs_unknown{n}"} for n in range(499)]
        with store_reads(store_url, app) as reads, pytest.raises(openai.NotFoundError, match="rs_unknown0"):
            alice.responses.create(model="m", input=[*references, {"type": "item_reference", "id": reasoning.id}])
        assert reads["batched"] == 1 and reads["single"] <= 1
        known = [{"type": "item_reference", "id": reasoning.id}, {"role": "user", "content": count(2)}]
        assert alice.responses.create(model="m", input=known).output_text == f"Heard 1 turns, first {count(2)[:20]!r}."
        with pytest.raises(openai.BadRequestError, match="501 item references, over the limit of 500") as caught:
            alice.responses.create(model="m", input=[*references, *references[:2]])
        assert error_of(caught)["param"] == "input"
