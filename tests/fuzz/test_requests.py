"""Any request body, on every API and bridge, through the real ASGI and WSGI middleware.

The host (`hosts.py`) answers 200 to anything, so the invariant is: the middleware never raises
and never answers 5xx on its own; a client gets the (rewritten) host answer, or a 4xx of the
middleware in the API's own error shape (`{"error": {...}}` for OpenAI routes, `{"type":
"error", "error": {...}}` for Anthropic's). Bodies are garbage bytes, BOMs, any JSON value,
deep nesting, huge strings, lone surrogates, and real requests of each API with fields replaced
by values of the wrong type, removed or added.
"""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import httpx
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from toolcall_middleware import ToolCallMiddleware, ToolCallWSGIMiddleware

from .hosts import asgi_host, sha, wsgi_host
from .profile import fuzz

# The three ways a deployment routes: the host serves every API; the host serves Chat only and
# Responses and Messages clients are bridged to it; the host serves Messages only.
CONFIGS: dict[str, dict[str, Any]] = {
    "native": {},
    "to-chat": {"bridge": {"responses-to-chat", "messages-to-chat"}},
    "to-messages": {"bridge": {"chat-to-messages", "responses-to-messages"}},
}
ROUTES = {
    "chat": "/v1/chat/completions",
    "responses": "/v1/responses",
    "messages": "/v1/messages",
    "completions": "/v1/completions",
    "count_tokens": "/v1/messages/count_tokens",
}
OPTIONS: dict[str, Any] = {"dialect": "hermes", "keepalive_interval": None}
ASGI = {name: ToolCallMiddleware(asgi_host, **OPTIONS, **extra) for name, extra in CONFIGS.items()}
WSGI = {name: ToolCallWSGIMiddleware(wsgi_host, **OPTIONS, **extra) for name, extra in CONFIGS.items()}

# -- bodies ------------------------------------------------------------------------------------

UNICODE = st.text(st.characters(codec="utf-8") | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=20)
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | UNICODE
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(UNICODE, inner, max_size=4), max_leaves=12
)
KEYS = st.sampled_from(
    ["model", "messages", "input", "tools", "tool_choice", "stream", "parallel_tool_calls", "system", "role",
     "content", "type", "function", "name", "parameters", "input_schema", "arguments", "tool_call_id", "call_id",
     "max_tokens", "instructions", "text", "id", "thinking", "stream_options", "n", "previous_response_id", "store",
     # (and a host answer's, for `test_streams.py`)
     "choices", "delta", "message", "finish_reason", "index", "tool_calls", "reasoning_content", "item", "output",
     "response", "partial_json", "content_block", "usage", "error", "object", "status", "logprobs"]
)  # fmt: skip

CHAT_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
RESPONSES_TOOL = {"type": "function", **CHAT_TOOL["function"]}
MESSAGES_TOOL = {"name": "get_weather", "description": "Weather", "input_schema": CHAT_TOOL["function"]["parameters"]}
CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
TEMPLATES: dict[str, dict[str, Any]] = {
    "chat": {
        "model": "m",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
            {"role": "assistant", "content": None, "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "call_1", "content": "Sunny"},
        ],
        "tools": [CHAT_TOOL],
        "tool_choice": "auto",
        "parallel_tool_calls": True,
    },
    "responses": {
        "model": "m",
        "instructions": "Be brief.",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city": "Paris"}'},
            {"type": "function_call_output", "call_id": "call_1", "output": "Sunny"},
        ],
        "tools": [RESPONSES_TOOL],
        "tool_choice": {"type": "function", "name": "get_weather"},
    },
    "messages": {
        "model": "m",
        "max_tokens": 100,
        "system": [{"type": "text", "text": "Be brief."}],
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                                               "input": {"city": "Paris"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "Sunny"}]},
        ],
        "tools": [MESSAGES_TOOL],
        "tool_choice": {"type": "auto"},
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    },
    "completions": {"model": "m", "prompt": "Weather in Paris?", "max_tokens": 10},
}  # fmt: skip
TEMPLATES["count_tokens"] = TEMPLATES["messages"]


@st.composite
def mutated(draw: Any, template: Any, most: int = 4) -> Any:
    """`template` (a copy) with up to `most` places in it replaced by any value, removed, or added to."""
    body: Any = json.loads(json.dumps(template))
    for _ in range(draw(st.integers(0, most))):
        parent: Any = None
        key: Any = None
        node = body
        while isinstance(node, (dict, list)) and node and draw(st.integers(0, 2)):  # go deeper, or stop here
            key = draw(st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node))))
            parent, node = node, node[key]
        action = draw(st.sampled_from(["replace", "replace", "remove", "add"]))
        if action == "add" and isinstance(node, dict):
            node[draw(KEYS)] = draw(VALUES)
        elif action == "add" and isinstance(node, list):
            # (a copy: a later place may be inside it, and the templates are shared)
            node.append(copy.deepcopy(draw(VALUES | st.sampled_from([CHAT_TOOL, RESPONSES_TOOL, MESSAGES_TOOL, CALL]))))
        elif parent is None:
            body = draw(VALUES)
        elif action == "remove":
            del parent[key]
        else:
            parent[key] = draw(VALUES)
    return body


def encode(value: Any, style: str) -> bytes:
    text = json.dumps(value, ensure_ascii=style == "ascii")
    return text.encode("utf-8", "surrogatepass" if style == "surrogates" else "replace")


@st.composite
def bodies(draw: Any, api: str) -> bytes:
    kind = draw(st.sampled_from(["request"] * 6 + ["garbage", "json", "bom", "deep", "huge", "cut"]))
    style = draw(st.sampled_from(["ascii", "utf-8", "surrogates"]))
    if kind == "garbage":
        return draw(st.binary(max_size=64) | UNICODE.map(lambda t: t.encode("utf-8", "surrogatepass")))
    if kind == "json":
        return encode(draw(VALUES), style)
    request = draw(mutated({**TEMPLATES[api], "stream": draw(st.sampled_from([True, False, None, "yes", 1]))}))
    if kind == "request":
        return encode(request, style)
    if kind == "bom":
        return draw(st.sampled_from([b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"])) + encode(request, style)
    if kind == "cut":
        raw = encode(request, style)
        return raw[: draw(st.integers(0, len(raw)))]
    if kind == "deep":
        # (Deeper than the interpreter's recursion limit: `test_a_body_nested_deeper_than_...` below.)
        depth = draw(st.sampled_from([10, 100, 500, 900]))
        opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
        nested = opener * depth + "1" + closer * depth
        where = draw(st.sampled_from(["body", "content", "tools", "parameters"]))
        if where == "body":
            return nested.encode()
        key = {"content": "messages", "tools": "tools", "parameters": "tools"}[where]
        placed = json.dumps(request | {key: "@@"}) if isinstance(request, dict) else json.dumps({key: "@@"})
        return placed.replace('"@@"', nested, 1).encode()
    # huge: a long string where a short one is usual
    size = draw(st.sampled_from([10_000, 300_000, 3_000_000]))
    char = draw(st.sampled_from(["a", "é", "\\u00e9", "<tool_call>", "\\ud800", '\\"']))
    placed = json.dumps(request if isinstance(request, dict) else {})
    field = draw(st.sampled_from(['"model"', '"content"', '"name"']))
    return (placed[:-1] + ("," if len(placed) > 2 else "") + field + ': "' + char * (size // len(char)) + '"}').encode()


# -- the invariant -------------------------------------------------------------------------------


def check(api: str, status: int, headers: httpx.Headers, content: bytes, sent: bytes | None = None) -> None:
    assert status < 500, (status, content[:500])
    if status == 200:
        assert headers.get("x-fuzz-host") == "1", "a 200 the host never sent"
        # The host got the client's body as it was, or one the middleware wrote: a JSON object.
        if sent is not None and headers["x-fuzz-sent"] != sha(sent):
            assert headers["x-fuzz-object"] == "1", "the host got a body the middleware broke"
        return
    assert 400 <= status < 500, status
    error = json.loads(content)
    if api in ("messages", "count_tokens"):
        assert error["type"] == "error", error
        assert isinstance(error["error"]["type"], str) and isinstance(error["error"]["message"], str), error
    else:
        assert isinstance(error["error"]["message"], str), error
        assert isinstance(error["error"]["type"], str), error


async def through_asgi(config: str, path: str, raw: bytes, chunked: bool) -> httpx.Response:
    transport = httpx.ASGITransport(app=ASGI[config])  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://fuzz") as client:
        content: Any = raw
        if chunked:  # no Content-Length: the body arrives in pieces

            async def pieces() -> Any:
                for i in range(0, len(raw), 4096):
                    yield raw[i : i + 4096]

            content = pieces()
        response = await client.post(path, content=content, headers={"content-type": "application/json"})
        await response.aread()
        return response


APIS = st.sampled_from(sorted(ROUTES))


@fuzz(60)
@given(st.sampled_from(sorted(CONFIGS)), APIS.flatmap(lambda api: st.tuples(st.just(api), bodies(api))), st.booleans())
@example("native", ("chat", b"\xef\xbb\xbf{}"), False)
@example("to-chat", ("responses", b'{"input": ' + b"[" * 900 + b"]" * 900 + b"}"), True)
@example("to-messages", ("chat", b'{"messages": [{"role": "user", "content": "\\ud800"}], "tools": 7}'), False)
def test_any_body_through_asgi_gets_the_host_answer_or_a_4xx(
    config: str, case: tuple[str, bytes], chunked: bool
) -> None:
    api, raw = case
    response = asyncio.run(asyncio.wait_for(through_asgi(config, ROUTES[api], raw, chunked), 60))
    check(api, response.status_code, response.headers, response.content, raw)


@fuzz(60)
@given(st.sampled_from(sorted(CONFIGS)), APIS.flatmap(lambda api: st.tuples(st.just(api), bodies(api))))
@example("native", ("messages", b"\xff\xfe{}"))
@example("to-chat", ("messages", b'{"messages": 1, "tools": [{"name": {}}]}'))
def test_any_body_through_wsgi_gets_the_host_answer_or_a_4xx(config: str, case: tuple[str, bytes]) -> None:
    api, raw = case
    with httpx.Client(transport=httpx.WSGITransport(app=WSGI[config]), base_url="http://fuzz") as client:
        response = client.post(ROUTES[api], content=raw, headers={"content-type": "application/json"})
    check(api, response.status_code, response.headers, response.content, raw)


@pytest.mark.parametrize("api", sorted(ROUTES))
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_the_unmutated_requests_get_the_host_answer(config: str, api: str) -> None:
    """The templates are real requests: the fuzzing starts from bodies that go through."""
    body = {**TEMPLATES[api], "stream": False}
    if api == "responses":
        body["tool_choice"] = "auto"
    raw = json.dumps(body).encode()
    response = asyncio.run(through_asgi(config, ROUTES[api], raw, False))
    check(api, response.status_code, response.headers, response.content)
    assert response.status_code == 200, response.content


# A body nested deeper than Python's recursion limit: `json.loads` raises `RecursionError` (not a
# `ValueError`); the middleware answers the 400 of `limits.max_depth` (found by `bodies()`'s
# "deep" case, when it was a 500).
DEEP = b'{"messages": ' + b"[" * 5000 + b"]" * 5000 + b"}"


def test_a_body_nested_deeper_than_the_recursion_limit_gets_a_400_through_asgi() -> None:
    response = asyncio.run(through_asgi("native", ROUTES["chat"], DEEP, False))
    check("chat", response.status_code, response.headers, response.content)


def test_a_body_nested_deeper_than_the_recursion_limit_gets_a_400_through_wsgi() -> None:
    with httpx.Client(transport=httpx.WSGITransport(app=WSGI["native"]), base_url="http://fuzz") as client:
        response = client.post(ROUTES["chat"], content=DEEP, headers={"content-type": "application/json"})
    check("chat", response.status_code, response.headers, response.content)
