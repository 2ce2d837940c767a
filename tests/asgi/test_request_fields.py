"""Each API's request fields are checked to that API's types the same way on native and bridged
routes: a 400 in the client API's error shape naming the field, and the host never asked."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from toolcall_middleware import ToolCallMiddleware

CHAT_TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
RESPONSES_TOOLS = [{"type": "function", "name": "f", "parameters": {"type": "object"}}]
MESSAGES_TOOLS = [{"name": "f", "input_schema": {"type": "object"}}]

GOOD: dict[str, dict[str, Any]] = {
    "chat": {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": CHAT_TOOLS},
    "responses": {"model": "m", "input": "hi", "tools": RESPONSES_TOOLS},
    "messages": {
        "model": "m",
        "max_tokens": 8,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": MESSAGES_TOOLS,
    },
}
PATHS = {"chat": "/v1/chat/completions", "responses": "/v1/responses", "messages": "/v1/messages"}
# (client API, the host's API): every native route and every bridge.
ROUTES = [
    ("chat", "chat"),
    ("responses", "responses"),
    ("messages", "messages"),
    ("responses", "chat"),
    ("messages", "chat"),
    ("chat", "messages"),
    ("responses", "messages"),
]
BAD: dict[str, list[tuple[dict[str, Any], str, str]]] = {
    "chat": [
        ({"parallel_tool_calls": "yes"}, "parallel_tool_calls", "expected a boolean"),
        ({"stream": 1}, "stream", "expected a boolean"),
        ({"temperature": "hot"}, "temperature", "expected a number"),
        ({"max_tokens": "5"}, "max_tokens", "expected an integer"),
        ({"stop": [1]}, "stop", "expected a string or an array of strings"),
        ({"messages": [{"role": "user", "content": 5}]}, "messages[0].content", "expected a string or an array"),
        ({"messages": [{"role": "user", "content": {"a": 1}}]}, "messages[0].content", "expected a string"),
        ({"messages": [{"role": "user", "content": [None]}]}, "messages[0].content[0]", "expected a content part"),
        ({"messages": [{"role": "user"}]}, "messages[0].content", "Missing required parameter"),
    ],
    "responses": [
        ({"parallel_tool_calls": "yes"}, "parallel_tool_calls", "expected a boolean"),
        ({"max_output_tokens": 1.5}, "max_output_tokens", "expected an integer"),
        ({"instructions": ["x"]}, "instructions", "expected a string"),
        ({"input": [{"role": "user", "content": 5}]}, "input[0].content", "expected a string or an array"),
    ],
    "messages": [
        (
            {"tool_choice": {"type": "auto", "disable_parallel_tool_use": "yes"}},
            "tool_choice.disable_parallel_tool_use",
            "expected a boolean",
        ),
        ({"max_tokens": "8"}, "max_tokens", "expected an integer"),
        ({"top_k": 1.5}, "top_k", "expected an integer"),
        ({"stop_sequences": "END"}, "stop_sequences", "expected an array of strings"),
        ({"messages": [{"role": "user", "content": 5}]}, "messages.0.content", "expected a string or an array"),
        ({"messages": [{"role": "user", "content": [None]}]}, "messages.0.content.0", "expected a content block"),
    ],
}


class Host:
    """A host of every API that counts the requests it gets (none should reach it)."""

    def __init__(self) -> None:
        self.asked = 0

        async def answer(request: Request) -> Response:
            self.asked += 1
            return JSONResponse({"error": "the host was asked"}, status_code=599)

        self.app = Starlette(routes=[Route(path, answer, methods=["POST"]) for path in PATHS.values()])


def post(api: str, upstream: str, body: Any) -> tuple[httpx.Response, Host]:
    host = Host()
    bridge = f"{api}-to-{upstream}" if api != upstream else set()
    app = ToolCallMiddleware(host.app, dialect="hermes", bridge=bridge)

    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://h") as client:
            return await client.post(PATHS[api], content=json.dumps(body))

    return asyncio.run(go()), host


def error_of(api: str, response: httpx.Response) -> tuple[str, str]:
    """The error's type and message, from the API's own error shape."""
    body = response.json()
    if api == "messages":
        assert body["type"] == "error"
        return body["error"]["type"], body["error"]["message"]
    return body["error"]["type"], body["error"]["message"]


@pytest.mark.parametrize(("api", "upstream"), ROUTES)
def test_a_field_of_the_wrong_type_is_the_same_400_on_every_route(api: str, upstream: str) -> None:
    for change, param, words in BAD[api]:
        response, host = post(api, upstream, {**GOOD[api], **change})
        assert response.status_code == 400, (change, response.text)
        kind, message = error_of(api, response)
        assert kind == "invalid_request_error"
        assert f"'{param}'" in message and words in message, (change, message)
        assert host.asked == 0


@pytest.mark.parametrize(("api", "upstream"), ROUTES)
def test_a_good_request_reaches_the_host(api: str, upstream: str) -> None:
    response, host = post(api, upstream, GOOD[api])
    assert host.asked == 1 and response.status_code == 599


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    route=st.sampled_from(ROUTES),
    field=st.sampled_from(
        ["parallel_tool_calls", "stream", "temperature", "max_tokens", "top_k", "stop", "messages", "input"]
    ),
    value=VALUES,
)
def test_native_and_bridged_routes_agree_on_any_value(route: tuple[str, str], field: str, value: Any) -> None:
    """Property: for any value of a field, the native route of the client's API and the bridged
    one say the same thing: a 400 naming the same field, or no 400 from us."""
    api, upstream = route
    body = {**GOOD[api], field: value}
    native, _ = post(api, api, body)
    bridged, _ = post(api, upstream, body)
    assert (native.status_code == 400) == (bridged.status_code == 400), (native.text, bridged.text)
    if native.status_code == 400:
        assert error_of(api, native) == error_of(api, bridged)
