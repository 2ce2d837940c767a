"""The AG-UI route as a frontend meets it, in process and under uvicorn: its runs' ids carried,
the frontend's context, state and `forwardedProps` reaching the model as documented, a run the
protocol refuses (or a `forwardedProps` field Chat refuses) answered 400 naming the field as
sent, the route moved by `agui_routes` and
`route_prefixes`, and keep-alive on a quiet stream."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.agui.hosts import app, prefixed
from tests.agui.protocol import EVENT, run_input
from tests.asgi.harness import sse_events
from tests.servers import serve, uvicorn
from toolcall_middleware import ToolCallConfig, ToolCallMiddleware
from toolcall_middleware._agui import field_path
from toolcall_middleware._upstream_routes import RouteMap, route_map
from toolcall_middleware.core.apis.agui._request import CONTEXT_HEADING, STATE_HEADING

RUN = run_input(
    threadId="thread-7",
    state={"unit": "celsius"},
    context=[{"description": "The user's name", "value": "Ada"}],
    forwardedProps={"toolChoice": "required", "model": "qwen3"},
)


def post(asgi: Any, path: str, body: Any) -> tuple[httpx.Response, dict[str, Any]]:
    """POST `body` to `path` of the app in process; the response and what the host was sent."""

    async def go() -> tuple[httpx.Response, dict[str, Any]]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=asgi), base_url="http://t") as client:
            response = await client.post(path, json=body)
            return response, (await client.get("/last")).json()

    return asyncio.run(go())


def test_a_run_carries_its_ids_and_calls_the_frontends_tool() -> None:
    response, sent = post(app, "/v1/agui", RUN)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.content)
    for event in events:
        EVENT.validate_python(event)
    assert events[0] == {"type": "RUN_STARTED", "threadId": "thread-7", "runId": "run-2", "parentRunId": "run-1"}
    assert events[-1] == {"type": "RUN_FINISHED", "threadId": "thread-7", "runId": "run-2"}
    starts = [e for e in events if e["type"] == "TOOL_CALL_START"]
    assert [e["toolCallName"] for e in starts] == ["get_weather"]
    assert "".join(e["delta"] for e in events if e["type"] == "TOOL_CALL_ARGS") == '{"city": "Paris"}'
    # What the host was sent: a streamed Chat request, the tools written into its prompt.
    assert sent["stream"] is True and sent["model"] == "qwen3" and "tools" not in sent
    system = sent["messages"][0]["content"]
    assert system.startswith(f"{CONTEXT_HEADING}\n- The user's name: Ada\n{STATE_HEADING}\n" + '{"unit": "celsius"}')
    assert "<tools>" in system and "get_weather" in system


def test_the_record_says_what_the_run_was() -> None:
    records: list[dict[str, Any]] = []
    reported = ToolCallMiddleware(app.app, dialect="hermes", on_report=records.append)
    post(reported, "/v1/agui", RUN)
    assert records[0]["api"] == "agui" and records[0]["stream"] is True
    assert records[0]["path"] == "/v1/agui" and records[0]["calls_emitted"] == 1


def test_tool_choice_from_forwarded_props_is_kept() -> None:
    # `required`, and the model answers without a call: the run ends in RUN_ERROR, not RUN_FINISHED.
    tools = [{"name": "get_time", "description": "The time"}]  # (the model never calls it)
    body = {**RUN, "tools": tools, "forwardedProps": {"tool_choice": "required"}}
    response, _ = post(app, "/v1/agui", body)
    events = sse_events(response.content)
    assert events[0]["type"] == "RUN_STARTED" and events[-1]["type"] == "RUN_ERROR"
    assert "RUN_FINISHED" not in [e["type"] for e in events]


@pytest.mark.parametrize(
    ("change", "param"),
    [
        ({"threadId": 7}, "threadId"),
        ({"messages": [{"id": "u1", "role": "user"}]}, "messages[0].content"),
        ({"tools": [{"name": "f"}]}, "tools[0].description"),
        # One only the protocol's own types refuse (the `agui` extra, installed for the tests).
        (
            {"messages": [{"id": "u1", "role": "user", "content": [{"type": "image", "source": {"type": "url"}}]}]},
            "messages[0].content[0].source.value",
        ),
    ],
)
def test_a_run_the_protocol_refuses_is_a_400_naming_the_field(change: dict[str, Any], param: str) -> None:
    response, _ = post(app, "/v1/agui", {**RUN, **change})
    assert response.status_code == 400
    body = response.json()
    EVENT.validate_python(body)
    assert body["type"] == "RUN_ERROR" and body["param"] == param and param in body["message"]


@pytest.mark.parametrize(
    ("props", "param"),
    [
        ({"toolChoice": "bogus"}, "forwardedProps.toolChoice"),
        ({"toolChoice": 5}, "forwardedProps.toolChoice"),
        ({"toolChoice": {"type": "function", "function": {"name": "nope"}}}, "forwardedProps.toolChoice"),
        ({"toolChoice": {"type": "function", "function": {"name": 3}}}, "forwardedProps.toolChoice.function.name"),
        ({"tool_choice": "bogus"}, "forwardedProps.tool_choice"),  # (named as sent: snake_case here)
        ({"parallelToolCalls": "yes"}, "forwardedProps.parallelToolCalls"),
        ({"maxTokens": "many"}, "forwardedProps.maxTokens"),
    ],
)
def test_a_bad_forwarded_field_is_a_400_naming_it_as_sent(props: dict[str, Any], param: str) -> None:
    response, _ = post(app, "/v1/agui", {**RUN, "forwardedProps": props})
    assert response.status_code == 400
    body = response.json()
    EVENT.validate_python(body)
    assert body["type"] == "RUN_ERROR" and body["param"] == param and f"'{param}'" in body["message"]


def test_a_body_that_is_no_run_is_a_400() -> None:
    response, _ = post(app, "/v1/agui", [1, 2])
    assert response.status_code == 400 and response.json()["type"] == "RUN_ERROR"


def test_the_route_moves_with_agui_routes_and_route_prefixes() -> None:
    response, sent = post(prefixed, "/api/agent", RUN)
    assert response.status_code == 200 and sse_events(response.content)[-1]["type"] == "RUN_FINISHED"
    assert sent["stream"] is True
    assert post(prefixed, "/api/v1/agui", RUN)[0].status_code == 404  # (not ours there: the host's 404)


def test_the_route_is_off_with_no_paths() -> None:
    off = ToolCallMiddleware(app.app, dialect="hermes", agui_routes=())
    assert post(off, "/v1/agui", RUN)[0].status_code == 404


def test_field_paths_are_the_wires() -> None:
    body = {"messages": [{}, {"role": "assistant", "toolCalls": [{"type": "function"}]}]}
    assert field_path(("messages", 1, "assistant", "tool_calls", 0, "id"), body) == "messages[1].toolCalls[0].id"
    union = ("messages", 0, "user", "content", "str")  # (the `str` member of content's union)
    assert field_path(union, {"messages": [{"content": 3}]}) == "messages[0].content"


@pytest.fixture(scope="module")
def quiet() -> Iterator[str]:
    command, port = uvicorn("tests.hosts:keepalive_app")  # (a host that goes quiet mid-stream)
    with serve(command, port) as base:
        yield base


def test_a_quiet_stream_gets_pings_between_whole_events(quiet: str) -> None:
    with httpx.stream("POST", quiet + "/v1/agui", json=RUN, timeout=30) as response:
        raw = b"".join(response.iter_bytes())
    assert b": ping\n\n" in raw
    for block in raw.split(b"\n\n")[:-1]:
        assert block == b": ping" or block.startswith(b"data: {"), block  # (never inside an event)
    events = [json.loads(b[6:]) for b in raw.split(b"\n\n") if b.startswith(b"data: ")]
    for event in events:
        EVENT.validate_python(event)
    assert events[0]["type"] == "RUN_STARTED" and events[-1]["type"] == "RUN_FINISHED"


def test_serves_start_up_map_says_where_runs_go_and_how_they_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    import toolcall_middleware._agui

    config = ToolCallConfig(dialect="hermes")
    routes = RouteMap.of(config)
    assert "agui" not in routes.paths  # (never probed on the upstream: no host serves it)
    said = route_map(config, routes, lambda path: "http://up" + path.decode())
    line = "POST /v1/agui -> http://up/v1/chat/completions (served: agui runs as chat requests; "
    assert line + "runs checked by the ag-ui-protocol types)" in said
    # Without the extra, the route still checks runs, by hand, and serve says how to check more.
    monkeypatch.setattr(toolcall_middleware._agui, "protocol_types", lambda: None)
    said = route_map(config, routes, lambda path: "http://up" + path.decode())
    assert line + "runs checked by hand; pip install 'toolcall-middleware[agui]' checks them by" in said
    assert config.request_checks() == {}
    image = {"type": "image", "source": {"type": "url"}}  # (what only the protocol's types refuse)
    plain = ToolCallMiddleware(app.app, dialect="hermes")
    unchecked = {**RUN, "messages": [{"id": "u", "role": "user", "content": [image]}]}
    assert post(plain, "/v1/agui", unchecked)[0].status_code == 200
    assert post(plain, "/v1/agui", {**RUN, "threadId": None})[0].status_code == 400


def test_a_run_reaches_a_messages_only_host_through_the_chat_bridge() -> None:
    from tests.hosts import anthropic_host

    bridged = ToolCallMiddleware(anthropic_host(native=False), dialect="hermes", bridge="chat-to-messages")

    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=bridged), base_url="http://t") as client:
            return await client.post("/v1/agui", json=run_input())

    events = sse_events(asyncio.run(go()).content)
    for event in events:
        EVENT.validate_python(event)
    assert events[0]["type"] == "RUN_STARTED" and events[-1]["type"] == "RUN_FINISHED"
    assert [e["toolCallName"] for e in events if e["type"] == "TOOL_CALL_START"] == ["get_weather"]
