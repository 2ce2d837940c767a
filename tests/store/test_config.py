"""The store options: off by default, validated at construction, and `stateful_host` leaves every
stateful request and route to the host."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from toolcall_middleware import ToolCallConfig, ToolCallMiddleware

SEEN: list[dict[str, Any]] = []


async def stateful_host(scope: Any, receive: Any, send: Any) -> None:
    """A host that keeps its own state: it records what it got and answers every route itself."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    SEEN.append({"method": scope["method"], "path": scope["path"], "body": json.loads(body) if body else None})
    answer = {"object": "host", "path": scope["path"]}
    data = json.dumps(answer).encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": data})


def call(app: Any, method: str, path: str, body: Any = None) -> httpx.Response:
    async def work() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            return await client.request(method, path, json=body)

    return asyncio.run(work())


def test_stateful_host_passes_everything_through() -> None:
    app = ToolCallMiddleware(stateful_host, dialect="hermes", store="memory", stateful_host=True)
    SEEN.clear()
    body = {"model": "m", "input": [{"type": "item_reference", "id": "rs_1"}], "previous_response_id": "resp_1"}
    call(app, "POST", "/v1/responses", body)
    assert SEEN[0]["body"]["previous_response_id"] == "resp_1"
    assert SEEN[0]["body"]["input"][0] == {"type": "item_reference", "id": "rs_1"}
    for method, path in [
        ("GET", "/v1/responses/resp_1"),
        ("DELETE", "/v1/responses/resp_1"),
        ("POST", "/v1/conversations"),
    ]:
        assert call(app, method, path).json() == {"object": "host", "path": path}


def test_without_a_store_the_routes_are_the_hosts() -> None:
    app = ToolCallMiddleware(stateful_host, dialect="hermes")
    assert call(app, "GET", "/v1/responses/resp_1").json()["object"] == "host"
    assert call(app, "POST", "/v1/conversations", {}).json()["object"] == "host"


@pytest.mark.parametrize(
    ("store", "message"),
    [
        ("postgres://db", "expected one of memory, sqlite:///path/to/file.db"),
        ("sqlite://", "name a file, as sqlite:///path/to/state.db"),
    ],
)
def test_a_bad_store_fails_at_construction(store: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ToolCallConfig(store=store)


def test_store_none_is_off() -> None:
    assert ToolCallConfig(store="none").store == "none"
    app = ToolCallMiddleware(stateful_host, dialect="hermes", store="none")
    assert call(app, "GET", "/v1/responses/resp_1").json()["object"] == "host"


def test_a_lone_surrogate_is_stored_and_read_back_not_a_crash() -> None:
    from tests.store.hosts import host

    app = ToolCallMiddleware(host, dialect="hermes", bridge="responses-to-chat", store="memory")

    async def work() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            raw = b'{"model": "m", "input": "hi", "instructions": "odd \\ud800 rule"}'
            first = await client.post("/v1/responses", content=raw, headers={"content-type": "application/json"})
            assert first.status_code == 200, first.text
            ident = first.json()["id"]
            again = await client.post(
                "/v1/responses", json={"model": "m", "input": "next", "previous_response_id": ident}
            )
            assert again.status_code == 200 and again.json()["output"][-1]["content"][0]["text"] == "Heard: hi | next"
            stored = await client.get(f"/v1/responses/{ident}")
            assert stored.json()["instructions"] == "odd \ud800 rule"

    asyncio.run(work())
