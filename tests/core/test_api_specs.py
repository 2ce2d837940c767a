"""Each wire API is declared whole in its `ApiSpec` (`core/apis/<name>.py`), and nothing else
chooses by API name: the registry is complete and consistent, and the code that dispatches asks
the spec."""

from __future__ import annotations

import ast
import asyncio
import json

import pytest

from tests.modules import package_modules
from toolcall_middleware._keepalive import PING_COMMENT, ping_for
from toolcall_middleware.core._api import APIS, ApiSpec, spec_for
from toolcall_middleware.core._detect import kind_of, kind_of_route, reader_for
from toolcall_middleware.core._replaced import host_error

# Where an API's name may still be compared in code: the specs themselves, the bridges (which
# translate one named API into another) and the features only one API has (Responses compaction
# and WebSocket mode, Messages token counting). Anything that dispatches by API asks its spec.
NAMED_BY_FEATURE = {
    "toolcall_middleware.core._host",  # the bridges' translations
    "toolcall_middleware.core._forwarded",  # Responses compaction items expanded
    "toolcall_middleware._compact",  # `POST /v1/responses/compact`
    "toolcall_middleware._asgi",  # WebSocket mode on the Responses routes
    "toolcall_middleware.config",  # compaction by the host needs a Responses host
    "toolcall_middleware._upstream_routes",  # a missing route bridged, unless the host compacts
}


@pytest.mark.parametrize("api", APIS)
def test_each_api_has_its_spec_in_its_own_module(api: str) -> None:
    spec = spec_for(api)
    assert isinstance(spec, ApiSpec)
    assert spec.name == api
    assert spec is spec_for(api)  # read once
    assert kind_of_route(spec.path) == api  # its standard path is known as its own
    assert all(kind_of_route("/prefix" + suffix) == api for suffix in spec.route_suffixes)
    # Its reader is in its own package (an API no host serves reads its host API's answers).
    assert type(reader_for(api)).__module__ == f"toolcall_middleware.core.apis.{spec.host_api or api}._reader"


def test_paths_are_distinct() -> None:
    paths = [spec_for(api).path for api in APIS]
    assert len(set(paths)) == len(paths)


def test_an_unknown_api_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown API 'gemini'; the APIs are: chat, responses"):
        spec_for("gemini")


@pytest.mark.parametrize(
    ("obj", "api"),
    [
        ({"object": "chat.completion", "choices": []}, "chat"),
        ({"choices": [{"delta": {"content": "hi"}}]}, "chat"),
        ({"object": "response", "output": []}, "responses"),
        ({"type": "response.output_text.delta", "delta": "hi"}, "responses"),
        ({"object": "text_completion", "choices": [{"text": "hi"}]}, "completions"),
        ({"type": "message", "role": "assistant", "content": []}, "messages"),
        ({"type": "content_block_delta", "index": 0, "delta": {}}, "messages"),
        ({"error": {"message": "no"}}, None),
        ({"hello": 1}, None),
    ],
)
def test_each_spec_recognises_only_its_own_answers(obj: dict[str, object], api: str | None) -> None:
    assert kind_of(obj) == api
    assert [name for name in APIS if spec_for(name).recognizes(obj)] == ([api] if api else [])


@pytest.mark.parametrize("api", APIS)
def test_error_bodies_are_in_the_api_shape(api: str) -> None:
    body = json.loads(spec_for(api).error_body("nope", 429, code="rate", param="model"))
    if api == "messages":
        assert body == {"type": "error", "error": {"type": "rate_limit_error", "message": "nope"}}
    elif api == "agui":  # the body reads as the protocol's own error event
        assert body == {"type": "RUN_ERROR", "message": "nope", "code": "rate", "param": "model"}
    else:
        assert body == {"error": {"message": "nope", "type": "invalid_request_error", "param": "model", "code": "rate"}}
    # A host's error in OpenAI's shape reaches an OpenAI client as it is, an Anthropic one translated.
    raw = b'{"error": {"message": "slow down", "type": "x", "param": null, "code": "c"}}'
    translated = json.loads(host_error(raw, 503, api))
    if api == "messages":
        assert translated["error"] == {"type": "overloaded_error", "message": "slow down"}
    elif api == "agui":
        assert translated == {"type": "RUN_ERROR", "message": "slow down"}
    else:
        assert translated == json.loads(raw)


def test_only_messages_has_a_typed_ping() -> None:
    typed = [api for api in APIS if ping_for(api, frozenset({"ping_events"})) != PING_COMMENT]
    assert typed == ["messages"]
    assert all(ping_for(api, frozenset()) == PING_COMMENT for api in APIS)


def test_the_apis_that_rewrite_have_outputs() -> None:
    # An API either rewrites answers whole (a reader's events out as its stream and body) or
    # passes them through (legacy completions): never half. One no host serves (AG-UI) has no
    # rewrite of its own: its requests become its host API's (`to_host`), rewritten as such.
    for api in APIS:
        spec = spec_for(api)
        assert (spec.output is None) == (spec.whole is None) == (spec.rewrite is None and spec.to_host is None)
        assert (spec.host_api is None) == (spec.to_host is None)
    assert [api for api in APIS if spec_for(api).output is None] == ["completions"]


def _compares_an_api_name(tree: ast.AST) -> list[int]:
    """The lines where an API name literal is compared (`==`, `!=`, `in`) with anything."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(side, ast.Constant) and side.value in APIS for side in sides):
                lines.append(node.lineno)
    return lines


def test_nothing_else_chooses_by_api_name() -> None:
    found = {}
    for name, path in package_modules().items():
        if name.startswith("toolcall_middleware.core.apis") or name in NAMED_BY_FEATURE:
            continue
        lines = _compares_an_api_name(ast.parse(path.read_text(encoding="utf-8")))
        if lines:
            found[name] = lines
    assert found == {}, f"compare API names: ask the API's spec (core/_api.py) instead: {found}"


def test_a_new_api_is_its_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    """An API added as one spec module (here Chat's parts under another name and path, its host
    answering in Chat's shape) is routed,
    its requests rewritten and its answers read and written, with no other change: no config
    option, no table elsewhere."""
    import dataclasses
    import sys
    import types

    import httpx
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from toolcall_middleware import ToolCallMiddleware

    echo = types.ModuleType("toolcall_middleware.core.apis.echo")
    echo.SPEC = dataclasses.replace(  # type: ignore[attr-defined]
        spec_for("chat"),
        name="echo",
        path="/v1/echo",
        routes=("/v1/echo",),
        route_suffixes=("/echo",),
        recognizes=lambda obj: False,  # its own answers are Chat's, read as such
        answered_as=("chat",),
    )
    monkeypatch.setitem(sys.modules, echo.__name__, echo)
    with_echo = (*APIS, "echo")
    # The modules that loop over the APIs (`Api`, a literal, is for mypy: at run time it is `APIS`).
    for name in (
        "toolcall_middleware.core._api",
        "toolcall_middleware.config",
        "toolcall_middleware.core._detect",
    ):
        monkeypatch.setattr(sys.modules[name], "APIS", with_echo)
    spec_for.cache_clear()
    seen: list[dict[str, object]] = []

    async def model(request: Request) -> JSONResponse:
        seen.append(await request.json())
        text = '<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>'
        choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        return JSONResponse({"id": "c1", "object": "chat.completion", "created": 1, "model": "m", "choices": [choice]})

    app = ToolCallMiddleware(Starlette(routes=[Route("/v1/echo", model, methods=["POST"])]), dialect="hermes")
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": tools}

    async def call() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
            return await client.post("/v1/echo", json=body)

    try:
        response = asyncio.run(call())
    finally:
        spec_for.cache_clear()
    assert kind_of_route("/v1/echo") == "echo"
    assert "tools" not in seen[0] and "<tool_call>" in json.dumps(seen[0])  # the manifest, injected
    message = response.json()["choices"][0]["message"]
    assert message["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"x": 1}'}
    assert response.json()["choices"][0]["finish_reason"] == "tool_calls"
