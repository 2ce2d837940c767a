"""A request nested too deep is a 400 in the client API's error shape, never a `RecursionError`.

A 2 KB body of brackets, 1,000 deep, used to raise out of the middleware (JSON's own decoder gives
up at about that depth, the rewrite's recursion sooner): the server answered 500 with a traceback.
Now every route and bridge refuses a body deeper than `limits.max_depth` (128) with a 400 that says
so, wherever the depth is (messages, tools and their schemas, content parts), and the host never
sees it. A host answer nested too deep is not ours to read: it passes through, and nothing raises.
The official SDKs are the clients where they can write the body (they cannot encode 1,000 deep).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anthropic
import openai
import pytest

from tests.asgi.harness import (
    SSE_HEADERS,
    Receive,
    Recorder,
    body,
    call,
    json_headers,
    request,
    scope,
    scripted,
    start,
)
from tests.asgi.test_messages_api import anthropic_client, openai_client, run
from toolcall_middleware import ToolCallMiddleware

CHAT, RESPONSES, MESSAGES = "/v1/chat/completions", "/v1/responses", "/v1/messages"
# (client route, bridge or None): every route, native and bridged.
ROUTES = [
    (CHAT, None),
    (RESPONSES, None),
    (MESSAGES, None),
    (RESPONSES, "responses-to-chat"),
    (MESSAGES, "messages-to-chat"),
    (CHAT, "chat-to-messages"),
    (RESPONSES, "responses-to-messages"),
]
ROUTE_IDS = [f"{path.split('/')[2]}:{bridge or 'native'}" for path, bridge in ROUTES]
WHERE = ["messages", "tools", "content"]


MARK = "@deep@"


def nested_text(where: str, depth: int) -> str:
    """JSON text `depth` levels deep: arrays, or for tools a schema of `items` of `items`.
    Written as text: `json.dumps` itself gives out before 1,000 deep."""
    if where == "tools":
        return '{"type":"array","items":' * (depth - 1) + '{"type":"string"}' + "}" * (depth - 1)
    return "[" * depth + '"deep"' + "]" * depth


def tool(api: str, parameters: Any) -> dict[str, Any]:
    if api == "chat":
        return {"type": "function", "function": {"name": "lookup", "parameters": parameters}}
    if api == "responses":
        return {"type": "function", "name": "lookup", "parameters": parameters}
    return {"name": "lookup", "input_schema": parameters}


def deep_text(path: str, where: str, depth: int) -> bytes:
    """A request of the route's API nested about `depth` deep at `where`."""
    api = {CHAT: "chat", RESPONSES: "responses", MESSAGES: "messages"}[path]
    content: Any = MARK if where == "messages" else "hi"
    tools = [tool(api, MARK if where == "tools" else {"type": "object", "properties": {}})]
    if where == "content":
        part_type = "input_text" if api == "responses" else "text"
        content = [{"type": part_type, "text": "hi", "extra": MARK}]
    payload: dict[str, Any] = {"model": "m", "tools": tools}
    if api == "responses":
        payload["input"] = [{"role": "user", "content": content}]
    else:
        payload["messages"] = [{"role": "user", "content": content}]
    if api == "messages":
        payload["max_tokens"] = 100
    return json.dumps(payload, separators=(",", ":")).replace(json.dumps(MARK), nested_text(where, depth)).encode()


def middleware(bridge: str | None, seen: list[bytes], **options: Any) -> ToolCallMiddleware:
    answer = b'{"never": "read"}'
    host = scripted([start(200, json_headers(answer)), body(answer)], seen=seen)
    return ToolCallMiddleware(host, dialect="hermes", **({"bridge": bridge} if bridge else {}), **options)


def assert_too_deep(path: str, status: int, answer: Any, limit: int = 128) -> None:
    assert status == 400
    if path == MESSAGES:
        assert answer["type"] == "error" and answer["error"]["type"] == "invalid_request_error"
        message = answer["error"]["message"]
    else:
        assert answer["error"]["type"] == "invalid_request_error"
        assert answer["error"]["code"] == "nested_too_deep"
        message = answer["error"]["message"]
    assert f"deeper than {limit} levels" in message


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize(("path", "bridge"), ROUTES, ids=ROUTE_IDS)
def test_a_body_1000_deep_is_a_400_in_the_apis_error_shape(path: str, bridge: str | None, where: str) -> None:
    raw = deep_text(path, where, 1000)
    assert len(raw) < 32_000  # a small body: the depth, not the size, is the attack
    seen: list[bytes] = []
    send = Recorder()
    call(middleware(bridge, seen), scope(path), Receive([request(raw)]), send)
    assert_too_deep(path, send.status, send.json())
    assert seen == []  # the host never saw it


async def ask(app: Any, path: str, payload: dict[str, Any]) -> Exception:
    """What the route's official SDK raises for `payload` (asserts it raises)."""
    try:
        if path == MESSAGES:
            await anthropic_client(app).messages.create(**payload)
        elif path == RESPONSES:
            await openai_client(app).responses.create(**payload)
        else:
            await openai_client(app).chat.completions.create(**payload)
    except (openai.APIStatusError, anthropic.APIStatusError) as error:
        return error
    raise AssertionError("the request went through")


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize(("path", "bridge"), ROUTES, ids=ROUTE_IDS)
def test_the_sdks_raise_their_bad_request_error_for_a_body_300_deep(path: str, bridge: str | None, where: str) -> None:
    seen: list[bytes] = []
    payload = json.loads(deep_text(path, where, 300))
    error = run(lambda: ask(middleware(bridge, seen), path, payload))
    assert isinstance(error, (openai.BadRequestError, anthropic.BadRequestError))
    assert "deeper than 128 levels" in str(error)
    if path != MESSAGES:
        assert isinstance(error, openai.BadRequestError)
        assert isinstance(error.body, dict) and error.body["code"] == "nested_too_deep"
        assert error.body["param"] == ("tools" if where == "tools" else "input" if path == RESPONSES else "messages")
    assert seen == []


@pytest.mark.parametrize(("path", "bridge"), ROUTES, ids=ROUTE_IDS)
def test_an_agents_deep_tool_schema_goes_through(path: str, bridge: str | None) -> None:
    """Sixty schemas deep is far deeper than agents' tools go, and still within the limit."""
    seen: list[bytes] = []
    send = Recorder()
    call(middleware(bridge, seen), scope(path), Receive([request(deep_text(path, "tools", 60))]), send)
    assert len(seen) == 1  # the host was asked
    # (its answer, `{"never": "read"}`, is no answer: a bridged client gets the 502 that says so)
    assert send.status == (200 if bridge is None else 502)


def test_the_limit_is_the_configured_one() -> None:
    raw = deep_text(CHAT, "content", 20)  # (deep where Chat allows any value: a part's own field)
    send = Recorder()
    call(middleware(None, [], limits={"max_depth": 16}), scope(CHAT), Receive([request(raw)]), send)
    assert_too_deep(CHAT, send.status, send.json(), limit=16)
    message = send.json()["error"]["message"]
    assert "(at 'messages[0].content[0].extra[0][0][0][0]…')" in message  # where, the first steps of it
    send = Recorder()
    call(middleware(None, [], limits={"max_depth": 32}), scope(CHAT), Receive([request(raw)]), send)
    assert send.status == 200


def test_the_limit_cannot_be_set_past_what_the_decoder_can_read() -> None:
    with pytest.raises(ValueError, match="max_depth"):
        middleware(None, [], limits={"max_depth": 5000})


DEEP = "[" * 1000 + "]" * 1000
WHOLE = (
    '{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,'
    '"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"extra":' + DEEP + "}"
).encode()
CHUNK = (
    'data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
    '"delta":{"content":"hi"},"finish_reason":null}],"extra":' + DEEP + "}\n\n"
).encode()
FIRST = (
    b'data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
    b'"delta":{"content":"a"},"finish_reason":null}]}\n\n'
)


@pytest.mark.parametrize(
    "messages",
    [
        [start(200, json_headers(WHOLE)), body(WHOLE)],
        [start(200, SSE_HEADERS), body(CHUNK, True), body(b"data: [DONE]\n\n")],
        [start(200, SSE_HEADERS), body(FIRST, True), body(CHUNK, True), body(b"data: [DONE]\n\n")],
    ],
    ids=["whole", "first-event", "later-event"],
)
def test_a_host_answer_too_deep_passes_through_without_an_error(
    messages: list[Any], caplog: pytest.LogCaptureFixture
) -> None:
    app = ToolCallMiddleware(scripted(messages), dialect="hermes")
    raw = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    send = Recorder()
    with caplog.at_level(logging.ERROR, logger="toolcall_middleware"):
        call(app, scope(CHAT), Receive([request(raw)]), send)
    assert send.status == 200
    assert DEEP.encode() in send.body  # the host's deep object, as it sent it
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]  # no "rewriting failed" bug


def answer_with_a_call(extra_depth: int, stream: bool) -> list[Any]:
    """A host answer that writes a hermes call, with an `extra` field nested `extra_depth` deep."""
    call_text = json.dumps('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>')
    extra = "[" * extra_depth + "]" * extra_depth
    if not stream:
        whole = (
            '{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,'
            f'"message":{{"role":"assistant","content":{call_text}}},"finish_reason":"stop"}}],"extra":{extra}}}'
        ).encode()
        return [start(200, json_headers(whole)), body(whole)]
    chunk = (
        'data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
        f'"delta":{{"content":{call_text}}},"finish_reason":null}}],"extra":{extra}}}\n\n'
    ).encode()
    return [start(200, SSE_HEADERS), body(FIRST, True), body(chunk, True), body(b"data: [DONE]\n\n")]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_the_answer_limit_is_the_configured_one_on_every_python(stream: bool) -> None:
    """An answer deeper than `limits.max_depth` is not read, at any depth JSON's decoder reads
    (which differs between Python versions): it passes through as the host sent it."""
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
    raw = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [tool]}).encode()
    for limit, read in ((16, False), (32, True)):
        messages = answer_with_a_call(20, stream)
        app = ToolCallMiddleware(scripted(messages), dialect="hermes", limits={"max_depth": limit})
        send = Recorder()
        call(app, scope(CHAT), Receive([request(raw)]), send)
        assert send.status == 200
        sent = b"".join(m["body"] for m in messages[1:])
        if read:
            assert b'"tool_calls"' in send.body and b"<tool_call>" not in send.body
        else:
            assert b"<tool_call>" in send.body and b'"tool_calls"' not in send.body
            if not stream:
                assert send.body == sent  # byte for byte
