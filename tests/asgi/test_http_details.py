"""HTTP details of `ToolCallMiddleware`, driven message by message through the raw harness.

Each test scripts what a server (`receive`) and an app (`send`) would do and asserts on the exact
messages the middleware lets through: held `start`, header fixes, split-anywhere SSE, content
codings, byte-for-byte pass-through, extension messages, request replay, disconnects, errors,
per-request state, telemetry and configuration errors (reference/asgi.md sections 2-5 and 8).
"""

from __future__ import annotations

import asyncio
import gc
import gzip
import json
import logging
import re
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.shared import ErrorObject
from pydantic import TypeAdapter
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from tests.wire import replay_chat
from toolcall_middleware import ToolCallMiddleware
from toolcall_middleware.core import _answer as answer_module
from toolcall_middleware.core import _exchange as core_exchange

from .harness import (
    CHAT,
    RAW_CALL,
    RESPONSES,
    SSE_HEADERS,
    Message,
    Receive,
    Recorder,
    Scope,
    body,
    call,
    chat_answer,
    chat_request,
    chat_stream,
    json_headers,
    request,
    responses_request,
    responses_stream,
    run,
    scope,
    scripted,
    split_every_byte,
    sse_events,
    start,
)

_IDS = re.compile(rb"\b(call|fc|msg|rs|resp)_[A-Za-z0-9]{8,}")


def normalized(data: bytes) -> bytes:
    """Generated ids are random per response: compare bodies with the ids blanked out."""
    return _IDS.sub(rb"\1_ID", data)


def through(
    script: list[Message],
    *,
    req: bytes | list[Message] | None = None,
    scope_: Scope | None = None,
    seen: list[bytes] | None = None,
    **options: Any,
) -> Recorder:
    """One request through `ToolCallMiddleware(scripted(script))`; the recorded client side."""
    options.setdefault("dialect", "hermes")
    app = ToolCallMiddleware(scripted(script, seen=seen), **options)
    messages = req if isinstance(req, list) else [request(chat_request() if req is None else req)]
    send = Recorder()
    call(app, scope_ or scope(), Receive(messages), send)
    return send


def tool_calls_of(message: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message.get("tool_calls") or []]


def streamed_calls(data: bytes) -> list[tuple[str, str]]:
    """(name, joined arguments) of the tool calls in a Chat Completions SSE body."""
    calls: dict[int, list[str]] = {}
    for chunk in sse_events(data):
        if chunk == "[DONE]":
            continue
        for choice in chunk["choices"]:
            for tc in choice["delta"].get("tool_calls") or []:
                entry = calls.setdefault(tc["index"], ["", ""])
                entry[0] += tc.get("function", {}).get("name") or ""
                entry[1] += tc.get("function", {}).get("arguments") or ""
    return [(name, args) for name, args in calls.values()]


# -- the response head -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("req", "head", "payload", "early"),
    [
        (chat_request(), json_headers(chat_answer()), chat_answer(), False),
        (chat_request(stream=True), SSE_HEADERS, chat_stream(), True),
        (
            chat_request(stream=True),
            [*SSE_HEADERS, (b"Content-Encoding", b"gzip")],
            gzip.compress(chat_stream()),
            False,
        ),
        (
            chat_request(stream=True),
            [*SSE_HEADERS, (b"Content-Length", str(len(chat_stream())).encode())],
            chat_stream(),
            False,
        ),
        (chat_request(), [(b"content-type", b"text/plain")], b"not ours", False),
    ],
    ids=["json", "sse", "gzipped-sse", "sized-sse", "passthrough"],
)
def test_the_head_goes_out_at_once_only_when_no_body_can_change_it(
    req: bytes, head: list[tuple[bytes, bytes]], payload: bytes, early: bool
) -> None:
    """A stream being made (no length, not content-encoded) has its head go out when the app
    sends it, as without the middleware: the client reads it while the app computes its first
    body (a model server's prefill). Any other head waits for the first body: a JSON answer's
    (its length changes), an encoded or sized stream's (the body may live in a file, which
    needs the app's own head), one passed through (a failure before its body stays the server's)."""
    gate, parked = asyncio.Event(), asyncio.Event()

    async def app(
        scope: Scope, receive: Callable[[], Awaitable[Message]], send: Callable[[Message], Awaitable[None]]
    ) -> None:
        await receive()
        await send(start(200, head))
        parked.set()
        await gate.wait()
        await send(body(payload))

    async def main() -> None:
        send = Recorder()
        task = asyncio.ensure_future(ToolCallMiddleware(app, dialect="hermes")(scope(), Receive([request(req)]), send))
        await parked.wait()
        for _ in range(5):
            await asyncio.sleep(0)
        early_messages = list(send.messages)
        gate.set()
        await task
        assert send.types == ["http.response.start", "http.response.body"]
        # What went out early is the head the client gets in any case: sent once, not changed after.
        assert early_messages == (send.messages[:1] if early else [])
        if b"event-stream" in dict(head).get(b"content-type", b""):  # rewritten (decoded if it was gzipped)
            events = sse_events(send.body)
            assert events[-1] == "[DONE]"
            assert any(c["choices"] and c["choices"][0]["delta"].get("tool_calls") for c in events[:-1])

    run(main())


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
def test_the_answer_parts_are_made_when_the_head_arrives(monkeypatch: pytest.MonkeyPatch, stream: bool) -> None:
    """The parser and the rules are made at `http.response.start`, before the app computes its
    first body (a model server's prefill), and that answer uses them: nothing of them is left for
    the first text to wait on. A stream's head goes to the client before they are made (they
    are not in it); a JSON answer's head waits for its body, as always."""
    log: list[str] = []

    class Recorded(core_exchange.Prepared):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            log.append("prepared")
            made.append(self)
            heads_out.append(len(send.messages))

    made: list[core_exchange.Prepared] = []
    monkeypatch.setattr(core_exchange, "Prepared", Recorded)
    used: list[Any] = []
    original = answer_module.Answer.__init__

    def recording_init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        used.append(self.parser)

    monkeypatch.setattr(answer_module.Answer, "__init__", recording_init)
    payload = chat_stream() if stream else chat_answer()
    head = SSE_HEADERS if stream else json_headers(payload)

    async def app(
        scope: Scope, receive: Callable[[], Awaitable[Message]], send: Callable[[Message], Awaitable[None]]
    ) -> None:
        await receive()
        await send(start(200, head))
        log.append("first body")
        await send(body(payload))

    heads_out: list[int] = []
    send = Recorder()
    call(ToolCallMiddleware(app, dialect="hermes"), scope(), Receive([request(chat_request(stream=stream))]), send)
    assert log == ["prepared", "first body"]
    assert heads_out == [1 if stream else 0]  # messages the server had when the parts were made
    assert [p.parser for p in made] == used[:1]  # the answer took the parser made at the head
    calls = streamed_calls(send.body) if stream else tool_calls_of(send.json()["choices"][0]["message"])
    assert [name for name, _ in calls] == ["get_weather"]


@pytest.mark.parametrize("opening", ["with_text", "role_alone"])
def test_what_a_piece_sets_up_for_the_next_is_done_after_it_is_sent(
    monkeypatch: pytest.MonkeyPatch, opening: str
) -> None:
    """After a piece of a stream takes the general path, its bytes go to the server before the
    chunk template learns from it (what the fast path takes the next pieces by): learning is not
    on the way of the text it came with. (A host opening with the role alone, as vLLM does, has
    its first text in the second chunk, the one that teaches.)"""
    from toolcall_middleware.core.apis.chat._reader import ChatReader

    log: list[str] = []
    real_learn = ChatReader._learn

    def learn(self: ChatReader, *args: Any) -> None:
        log.append("learn")
        real_learn(self, *args)

    monkeypatch.setattr(ChatReader, "_learn", learn)
    meta = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "qwen3"}
    deltas = [{"role": "assistant", "content": "Hello"}, {"content": " there"}, {"content": " you"}]
    if opening == "role_alone":
        deltas.insert(0, {"role": "assistant", "content": ""})
    chunks = [{**meta, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]

    async def app(
        scope: Scope, receive: Callable[[], Awaitable[Message]], send: Callable[[Message], Awaitable[None]]
    ) -> None:
        await receive()
        await send(start(200, SSE_HEADERS))
        for chunk in chunks:
            await send(body(b"data: " + json.dumps(chunk).encode() + b"\n\n", more=True))
        await send(body(b"data: [DONE]\n\n"))

    def sent(recorder: Recorder, message: Message) -> None:
        if message["type"] == "http.response.body" and b'"content"' in message.get("body", b""):
            log.append("text")

    send = Recorder(on_send=sent)
    call(ToolCallMiddleware(app, dialect="hermes"), scope(), Receive([request(chat_request(stream=True))]), send)
    texts = [e["choices"][0]["delta"].get("content") for e in sse_events(send.body)[:-1] if e["choices"]]
    assert "".join(t or "" for t in texts) == "Hello there you"
    first_text = log.index("text")
    assert "learn" not in log[:first_text] and "learn" in log  # learned from the first text after it went out


def test_a_failure_to_prepare_leaves_the_parts_to_the_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Making the parts at the head is a head start only: if it fails, the answer makes them
    with its first body, and the client gets the same stream."""

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("not now")

    expected = through([start(200, SSE_HEADERS), body(chat_stream())], req=chat_request(stream=True)).body
    monkeypatch.setattr(core_exchange, "Prepared", broken)
    send = through([start(200, SSE_HEADERS), body(chat_stream())], req=chat_request(stream=True))
    assert normalized(send.body) == normalized(expected)
    assert [name for name, _ in streamed_calls(send.body)] == ["get_weather"]


def test_a_streamed_rewrite_drops_every_case_variant_of_content_length_and_transfer_encoding() -> None:
    data = chat_stream()
    head = [
        (b"Content-Type", b"text/event-stream"),
        (b"Content-Length", str(len(data)).encode()),
        (b"content-length", str(len(data)).encode()),
        (b"CONTENT-LENGTH", b"12"),
        (b"Transfer-Encoding", b"chunked"),
        (b"transfer-encoding", b"chunked"),
        (b"X-Request-Id", b"abc"),
        (b"Cache-Control", b"no-cache"),
    ]
    send = through([start(200, head), *split_every_byte(data)], req=chat_request(stream=True))
    assert send.header(b"content-length") == [] and send.header(b"transfer-encoding") == []
    # Every other header goes out as the app wrote it, name case and order included.
    assert send.headers == [
        (b"Content-Type", b"text/event-stream"),
        (b"X-Request-Id", b"abc"),
        (b"Cache-Control", b"no-cache"),
    ]
    assert streamed_calls(send.body) == [("get_weather", '{"city": "Paris"}')]


def test_a_buffered_json_rewrite_recomputes_content_length() -> None:
    data = chat_answer()
    head = [
        (b"content-type", b"application/json"),
        (b"Content-Length", str(len(data)).encode()),
        (b"content-length", str(len(data)).encode()),
        (b"ETag", b'"abc"'),
    ]
    send = through([start(200, head), body(data[:10], more=True), body(data[10:], more=True), body(b"")])
    assert send.header(b"content-length") == [str(len(send.body)).encode()]
    assert send.header(b"etag") == []  # the body changed: a strong validator of the old one is wrong
    assert len(send.bodies) == 1
    completion = ChatCompletion.model_validate(send.json())
    assert completion.choices[0].finish_reason == "tool_calls"
    assert tool_calls_of(send.json()["choices"][0]["message"]) == [("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize("stream", [False, True])
def test_mixed_case_header_names_from_the_app_are_understood(stream: bool) -> None:
    # Django's ASGI handler keeps header case: b"Content-Type", b"Content-Length", b"Set-Cookie".
    data = chat_stream() if stream else chat_answer()
    ctype = b"text/event-stream" if stream else b"application/json; charset=utf-8"
    head = [(b"Content-Type", ctype), (b"Content-Length", str(len(data)).encode()), (b"Set-Cookie", b"a=1")]
    send = through([start(200, head), body(data)], req=chat_request(stream=stream))
    assert (b"Content-Type", ctype) in send.headers and (b"Set-Cookie", b"a=1") in send.headers
    if stream:
        assert send.header(b"content-length") == []
        assert streamed_calls(send.body) == [("get_weather", '{"city": "Paris"}')]
    else:
        assert send.header(b"content-length") == [str(len(send.body)).encode()]
        assert tool_calls_of(send.json()["choices"][0]["message"]) == [("get_weather", {"city": "Paris"})]


# -- SSE framing and content codings ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "req", "data"),
    [
        (CHAT, chat_request(stream=True), chat_stream()),
        (CHAT, chat_request(stream=True), chat_stream().replace(b"\n", b"\r\n")),
        (CHAT, chat_request(stream=True), chat_stream().replace(b"\n", b"\r")),
        (RESPONSES, responses_request(stream=True), responses_stream()),
    ],
    ids=["chat-lf", "chat-crlf", "chat-cr", "responses"],
)
def test_sse_split_at_every_byte_gives_the_same_client_stream(path: str, req: bytes, data: bytes) -> None:
    whole = through([start(200, SSE_HEADERS), body(data)], req=req, scope_=scope(path))
    split = through([start(200, SSE_HEADERS), *split_every_byte(data)], req=req, scope_=scope(path))
    assert normalized(split.body) == normalized(whole.body)
    assert split.headers == whole.headers
    if path == CHAT:
        chunks = [c for c in sse_events(whole.body) if c != "[DONE]"]
        for chunk in chunks:
            ChatCompletionChunk.model_validate(chunk)
        assert streamed_calls(whole.body) == [("get_weather", '{"city": "Paris"}')]
        assert sse_events(whole.body)[-1] == "[DONE]"
    else:
        kinds = [e["type"] for e in sse_events(whole.body)]
        assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
        assert "response.function_call_arguments.done" in kinds


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=30))
def test_sse_split_anywhere_gives_the_same_client_stream(cuts: list[int]) -> None:
    data = chat_stream()
    points = sorted({c % (len(data) + 1) for c in cuts})
    pieces = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    whole = through([start(200, SSE_HEADERS), body(data)], req=chat_request(stream=True))
    split = through(
        [start(200, SSE_HEADERS), *[body(p, more=True) for p in pieces], body(b"")], req=chat_request(stream=True)
    )
    assert normalized(split.body) == normalized(whole.body)


@pytest.mark.parametrize("split", [False, True], ids=["whole", "every-byte"])
def test_a_gzipped_sse_upstream_is_decoded_and_rewritten(split: bool) -> None:
    data = gzip.compress(chat_stream())
    head = [*SSE_HEADERS, (b"Content-Encoding", b"gzip"), (b"Content-Length", str(len(data)).encode())]
    messages = split_every_byte(data) if split else [body(data)]
    send = through([start(200, head), *messages], req=chat_request(stream=True))
    assert send.header(b"content-encoding") == [] and send.header(b"content-length") == []
    assert streamed_calls(send.body) == [("get_weather", '{"city": "Paris"}')]
    assert sse_events(send.body)[-1] == "[DONE]"


@pytest.mark.parametrize(
    ("coding", "encode"),
    [
        (b"gzip", gzip.compress),
        (b"deflate", zlib.compress),
        (b"deflate", lambda d: zlib.compress(d)[2:-4]),  # raw deflate, as many servers send it
    ],
    ids=["gzip", "deflate-zlib", "deflate-raw"],
)
def test_a_compressed_json_upstream_is_decoded_and_rewritten(coding: bytes, encode: Callable[[bytes], bytes]) -> None:
    data = encode(chat_answer())
    head = [
        (b"Content-Type", b"application/json"),
        (b"Content-Encoding", coding),
        (b"Content-Length", str(len(data)).encode()),
    ]
    send = through([start(200, head), *split_every_byte(data)])
    assert send.header(b"content-encoding") == []
    assert send.header(b"content-length") == [str(len(send.body)).encode()]
    assert tool_calls_of(send.json()["choices"][0]["message"]) == [("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize("stream", [False, True])
def test_a_brotli_upstream_passes_through_byte_for_byte(stream: bool) -> None:
    data = b"\x1b\x7f\x00\xf8\x05not-really-brotli-but-opaque\x00\xff"
    ctype = b"text/event-stream" if stream else b"application/json"
    head = [(b"content-type", ctype), (b"Content-Encoding", b"br"), (b"content-length", str(len(data)).encode())]
    script = [start(200, head), body(data[:5], more=True), body(data[5:])]
    send = through(script, req=chat_request(stream=stream))
    assert send.messages == script


# -- pass-through, byte for byte ------------------------------------------------------------------------

_ANSWER = chat_answer()
_PASS_CASES: dict[str, tuple[Scope, bytes, list[Message]]] = {
    "500": (scope(), chat_request(), [start(500, json_headers(_ANSWER)), body(_ANSWER)]),
    "400-error": (
        scope(),
        chat_request(),
        [start(400, json_headers(b'{"error": {"message": "no"}}')), body(b'{"error": {"message": "no"}}')],
    ),
    "206": (scope(), chat_request(), [start(206, json_headers(_ANSWER)), body(_ANSWER)]),
    "head": (scope(method="HEAD"), b"", [start(200, json_headers(_ANSWER)), body(b"")]),
    "204": (scope(), chat_request(), [start(204, []), body(b"")]),
    "304": (scope(), chat_request(), [start(304, [(b"ETag", b'"x"')]), body(b"")]),
    "other-route": (scope("/v1/embeddings"), chat_request(), [start(200, json_headers(_ANSWER)), body(_ANSWER)]),
    "get": (scope(method="GET"), b"", [start(200, json_headers(_ANSWER)), body(_ANSWER)]),
    "text-plain": (scope(), chat_request(), [start(200, [(b"Content-Type", b"text/plain")]), body(RAW_CALL.encode())]),
    "html": (
        scope(),
        chat_request(),
        [start(200, [(b"content-type", b"text/html")]), body(b"<tool_call>x</tool_call>")],
    ),
    "unparseable-json": (
        scope(),
        chat_request(),
        [
            start(200, [(b"Content-Type", b"application/json"), (b"Content-Length", b"9"), (b"ETag", b'"e"')]),
            body(b'{"id": 1,'),
        ],
    ),
    "json-not-an-answer": (
        scope(),
        chat_request(),
        [
            start(200, [(b"content-type", b"application/json"), (b"ETag", b'"e"'), (b"Content-Length", b"18")]),
            body(b'{"hello": ', more=True),
            body(b'"world"}', more=True),
            body(b""),
        ],
    ),
    "json-array": (scope(), chat_request(), [start(200, json_headers(b"[1, 2]")), body(b"[1, 2]")]),
    "compressed-request": (
        scope(headers=[(b"content-type", b"application/json"), (b"Content-Encoding", b"gzip")]),
        gzip.compress(chat_request()),
        [start(200, json_headers(_ANSWER)), body(_ANSWER)],
    ),
}
_REQUEST_UNTOUCHED = {
    "head",
    "get",
    "other-route",
    "compressed-request",
}


@pytest.mark.parametrize("case", list(_PASS_CASES))
def test_what_is_not_ours_passes_through_byte_for_byte(case: str) -> None:
    scope_, req, script = _PASS_CASES[case]
    seen: list[bytes] = []
    # Several request chunks, so "unchanged" also means "same bytes, whatever the framing".
    messages = [request(req[:3], more=True), request(req[3:], more=True), request(b"")]
    send = through(script, req=messages, scope_=scope_, seen=seen)
    assert send.messages == script
    if case in _REQUEST_UNTOUCHED:  # the other cases are ours on the way in: their request is rewritten
        assert seen == [req]


@pytest.mark.parametrize(
    ("req", "code"), [(b"model=qwen3&tools=1", "invalid_json"), (b'["tools"]', "invalid_body")], ids=["form", "array"]
)
@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses", "/v1/messages"])
def test_a_body_that_is_no_json_object_is_refused_on_every_route(req: bytes, code: str, path: str) -> None:
    """It went to the host on the Chat route (a 400 on the others, when bridged): now a 400 in the
    route's error shape everywhere, marked final, and the host never sees it."""
    seen: list[bytes] = []
    messages = [request(req[:3], more=True), request(req[3:], more=True), request(b"")]
    send = through([start(200, json_headers(_ANSWER)), body(_ANSWER)], req=messages, scope_=scope(path), seen=seen)
    assert send.status == 400 and seen == []
    assert (b"x-should-retry", b"false") in send.messages[0]["headers"]
    error = send.json()["error"]
    assert error["type"] == "invalid_request_error"
    if path != "/v1/messages":
        assert error["code"] == code


def test_a_json_body_over_the_response_cap_passes_through_byte_for_byte() -> None:
    # Over the cap the exchange stops holding the body and the app's own messages go out as sent.
    data = chat_answer()
    head = [(b"ETag", b'"e"'), *json_headers(data)]
    script = [start(200, head), *[body(data[i : i + 50], more=True) for i in range(0, len(data), 50)], body(b"")]
    reports: list[dict[str, Any]] = []
    send = through(script, limits={"max_response_bytes": 100}, on_report=reports.append)
    assert send.messages == script
    assert reports[0]["rewritten_response"] is False and "max_response_bytes" in reports[0]["passthrough_reason"]


def test_an_sse_stream_that_is_not_an_openai_answer_loses_no_byte() -> None:
    # Several events per chunk and a chunk ending inside an event: when the exchange gives up,
    # the bytes it had already taken in must still reach the client.
    data = b'data: {"hello": 1}\n\ndata: {"hello": 2}\n\nevent: x\ndata: {"hel' + b'lo": 3}\n\n: keep-alive\n\n'
    script = [start(200, SSE_HEADERS), body(data[:50], more=True), body(data[50:], more=True), body(b"")]
    send = through(script, req=chat_request(stream=True))
    assert send.body == data


def test_an_oversized_sse_event_gives_up_without_losing_a_byte() -> None:
    data = chat_stream()
    big = b'data: {"filler": "' + b"x" * 300 + b'"}\n\n'
    data = data.replace(b"data: [DONE]", big + b"data: [DONE]")
    cut = len(data) - len(big) - 30
    script = [start(200, SSE_HEADERS), body(data[:cut], more=True), *split_every_byte(data[cut:])]
    send = through(script, req=chat_request(stream=True), limits={"max_sse_event_bytes": 200})
    assert send.body.endswith(big + b"data: [DONE]\n\n")


def test_a_gzipped_stream_given_up_midway_stays_decoded() -> None:
    # Content-Encoding was dropped when the stream was taken on: the rest must go out decoded.
    data = b'data: {"hello": 1}\n\n' * 3
    packed = gzip.compress(data)
    head = [*SSE_HEADERS, (b"content-encoding", b"gzip")]
    send = through([start(200, head), *split_every_byte(packed)], req=chat_request(stream=True))
    assert send.header(b"content-encoding") == []
    assert send.body == data


# -- other messages ---------------------------------------------------------------------------------


def test_debug_before_start_is_forwarded_first() -> None:
    debug = {"type": "http.response.debug", "info": {"template": "x.html", "context": {}}}
    data = chat_answer()
    send = through([debug, start(200, json_headers(data)), body(data)])
    assert send.types == ["http.response.debug", "http.response.start", "http.response.body"]
    assert send.messages[0] == debug
    assert tool_calls_of(send.json()["choices"][0]["message"]) == [("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize("stream", [False, True])
def test_trailers_follow_the_final_rewritten_body(stream: bool) -> None:
    data = chat_stream() if stream else chat_answer()
    head = SSE_HEADERS if stream else json_headers(data)
    trailers = {"type": "http.response.trailers", "headers": [(b"x-checksum", b"1")], "more_trailers": False}
    script = [
        start(200, head, trailers=True),
        body(data[:40], more=True),
        body(data[40:], more=True),
        body(b""),
        trailers,
    ]
    send = through(script, req=chat_request(stream=stream))
    assert send.types[0] == "http.response.start" and send.start["trailers"] is True
    assert send.types[-1] == "http.response.trailers" and send.messages[-1] == trailers
    assert send.types[-2] == "http.response.body" and not send.messages[-2].get("more_body", False)
    # Trailers declared: the length is not fixed up front (as Starlette's GZip does).
    assert send.header(b"content-length") == []
    if stream:
        assert sse_events(send.body)[-1] == "[DONE]"
    else:
        assert tool_calls_of(send.json()["choices"][0]["message"]) == [("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize("kind", ["http.response.pathsend", "http.response.zerocopysend"])
def test_pathsend_sends_start_unmodified_and_passes_through(kind: str) -> None:
    head = [(b"content-type", b"application/json"), (b"Content-Length", b"1234"), (b"ETag", b'"f"')]
    file_message = (
        {"type": kind, "path": "/tmp/answer.json"} if kind.endswith("pathsend") else {"type": kind, "file": 3}
    )
    script = [start(200, head), file_message]
    send = through(script)
    assert send.messages == script


@pytest.mark.parametrize("kind", ["http.response.pathsend", "http.response.zerocopysend"])
@pytest.mark.parametrize("sized", [True, False], ids=["sized", "unsized"])
def test_a_stream_whose_body_lives_in_a_file_passes_through(kind: str, sized: bool) -> None:
    """An SSE head with a length is held, so a file body gets it as the app sent it; one without
    a length went out at once, and the file's bytes follow it as they are. Either way nothing
    is rewritten, and a failure after the file is the app's, not an error stream of ours."""
    head = [*SSE_HEADERS, (b"ETag", b'"f"')] + ([(b"Content-Length", b"1234")] if sized else [])
    file_message = (
        {"type": kind, "path": "/tmp/answer.sse", "more_body": True}
        if kind.endswith("pathsend")
        else {"type": kind, "file": 3, "more_body": True}
    )
    send = through([start(200, head), file_message], req=chat_request(stream=True))
    assert send.types == ["http.response.start", kind]
    assert send.messages[1] == file_message
    if sized:
        assert send.messages[0] == start(200, head)
    else:  # the head the stream would have had: no length, validators dropped
        assert send.header(b"content-type") == [b"text/event-stream; charset=utf-8"]
        assert send.header(b"etag") == []

    async def failing(scope: Scope, receive: Any, send_: Any) -> None:
        await receive()
        await send_(start(200, head))
        await send_(file_message)
        raise RuntimeError("the file went away")

    recorder = Recorder()
    with pytest.raises(RuntimeError):
        call(
            ToolCallMiddleware(failing, dialect="hermes"),
            scope(),
            Receive([request(chat_request(stream=True))]),
            recorder,
        )
    assert recorder.types == ["http.response.start", kind]  # no error chunk after the file's bytes


@pytest.mark.parametrize("stream", [False, True])
def test_unknown_messages_are_forwarded_in_order(stream: bool) -> None:
    data = chat_stream() if stream else chat_answer()
    head = SSE_HEADERS if stream else json_headers(data)
    hint = {"type": "http.response.early_hint", "links": [b"</style.css>; rel=preload"]}
    x = {"type": "http.response.x-custom", "n": 1}
    y = {"type": "http.response.x-custom", "n": 2}
    script = [hint, start(200, head), x, body(data[:60], more=True), y, body(data[60:], more=True), body(b"")]
    send = through(script, req=chat_request(stream=stream))
    others = [m for m in send.messages if m["type"] not in ("http.response.start", "http.response.body")]
    assert others == [hint, x, y]
    assert send.types[0] == "http.response.early_hint" and send.types[1] == "http.response.start"
    assert send.types.index("http.response.start") < send.messages.index(x)
    if stream:  # streamed: y stays after what the first chunk produced, before what the rest did
        assert send.messages.index(x) < send.messages.index(y) < len(send.messages) - 1
        assert streamed_calls(send.body) == [("get_weather", '{"city": "Paris"}')]
    else:
        assert tool_calls_of(send.json()["choices"][0]["message"]) == [("get_weather", {"city": "Paris"})]


# -- the request body ----------------------------------------------------------------------------------


def _recording_app(log: dict[str, Any], script: list[Message] | None = None) -> Any:
    """A raw app that logs every message `receive` gives it and the scope headers it saw."""

    async def app(
        scope: Scope, receive: Callable[[], Awaitable[Message]], send: Callable[[Message], Awaitable[None]]
    ) -> None:
        log["called"] = True
        log["headers"] = list(scope["headers"])
        log["received"] = []
        while True:
            message = await receive()
            log["received"].append(message)
            if not message.get("more_body", False):
                break
        data = chat_answer()
        for message in script or [start(200, json_headers(data)), body(data)]:
            await send(message)
        log["after"] = await receive()  # blocks until the client goes away

    return app


def test_a_chunked_request_is_read_whole_and_replayed_once_then_the_real_receive() -> None:
    req = chat_request()
    log: dict[str, Any] = {}
    pieces = [req[i : i + 17] for i in range(0, len(req), 17)]
    messages = [request(p, more=True) for p in pieces] + [request(b"", more=False)]  # hypercorn: empty final one
    receive = Receive(messages)
    send = Recorder(on_send=lambda rec, m: receive.disconnect() if m["type"] == "http.response.body" else None)
    headers = [(b"content-type", b"application/json"), (b"Transfer-Encoding", b"chunked")]
    call(ToolCallMiddleware(_recording_app(log), dialect="hermes"), scope(headers=headers), receive, send)
    (replayed,) = log["received"]  # one message: the rewritten body
    assert replayed["type"] == "http.request" and replayed["more_body"] is False
    rewritten = json.loads(replayed["body"])
    assert "tools" not in rewritten and "get_weather" in json.dumps(rewritten["messages"])
    assert log["after"] == {"type": "http.disconnect"}  # the real receive, once the body was replayed
    lengths = [v for k, v in log["headers"] if k.lower() == b"content-length"]
    assert lengths == [str(len(replayed["body"])).encode()]
    assert not [k for k, _ in log["headers"] if k.lower() == b"transfer-encoding"]
    assert send.status == 200


def test_the_rewritten_request_content_length_replaces_every_stale_variant() -> None:
    req = chat_request()
    log: dict[str, Any] = {}
    headers = [
        (b"Content-Type", b"application/json"),
        (b"Content-Length", str(len(req)).encode()),
        (b"content-length", str(len(req)).encode()),
        (b"X-Trace", b"t"),
    ]
    scope_ = scope(headers=headers)
    receive = Receive([request(req)])
    send = Recorder(on_send=lambda rec, m: receive.disconnect())
    call(ToolCallMiddleware(_recording_app(log), dialect="hermes"), scope_, receive, send)
    new = log["received"][0]["body"]
    assert new != req
    assert [v for k, v in log["headers"] if k.lower() == b"content-length"] == [str(len(new)).encode()]
    assert (b"X-Trace", b"t") in log["headers"]
    assert scope_["headers"] == headers  # the server's scope is never mutated


def test_the_app_still_sees_the_disconnect_of_a_streaming_starlette_response() -> None:
    # Starlette (spec < 2.4) listens for http.disconnect beside the stream: a replay that repeated
    # the body would spin, one that reported a disconnect at once would cut the stream.
    async def endpoint(request: Request) -> Response:
        await request.body()

        async def events() -> AsyncIterator[bytes]:
            for part in [chat_stream()[i : i + 64] for i in range(0, len(chat_stream()), 64)]:
                await asyncio.sleep(0.002)
                yield part

        return StreamingResponse(events(), media_type="text/event-stream")

    receive = Receive([request(chat_request(stream=True))])
    send = Recorder()
    app = ToolCallMiddleware(Starlette(routes=[Route(CHAT, endpoint, methods=["POST"])]), dialect="hermes")
    call(app, scope(), receive, send)
    assert streamed_calls(send.body) == [("get_weather", '{"city": "Paris"}')]
    assert receive.calls <= 3


def test_each_request_is_routed_by_its_own_path_and_coding() -> None:
    """One middleware, many requests: the route found for a path is its own (remembered, never
    another's), and a request body in the identity coding is rewritten as one with none."""
    mw = ToolCallMiddleware(_recording_app({}), dialect="hermes", route_prefixes=("", "/api"))
    cases = [
        ("/v1/chat/completions", [], True),
        ("/v1/models", [], False),
        ("/api/v1/chat/completions", [], True),
        ("/v1/chat/completions", [(b"Content-Encoding", b"identity")], True),
        ("/v1/chat/completions", [(b"content-encoding", b"br")], False),
        ("/api/v1/chat/completions/", [], True),
        ("/v1/models", [], False),
        ("/v1/chat/completions", [], True),
    ]
    for path, extra, rewritten in cases:
        log: dict[str, Any] = {}
        mw.app = _recording_app(log)
        receive = Receive([request(chat_request())])
        send = Recorder(on_send=lambda rec, m, receive=receive: receive.disconnect())
        call(mw, scope(path=path, headers=[(b"content-type", b"application/json"), *extra]), receive, send)
        forwarded = json.loads(b"".join(m["body"] for m in log["received"]))
        assert ("tools" not in forwarded) is rewritten, path
        assert ("<tools>" in forwarded["messages"][0]["content"]) is rewritten, path


def test_a_disconnect_while_reading_the_body_never_calls_the_app() -> None:
    log: dict[str, Any] = {}
    receive = Receive([request(chat_request()[:20], more=True), {"type": "http.disconnect"}])
    send = Recorder()
    call(ToolCallMiddleware(_recording_app(log), dialect="hermes"), scope(), receive, send)
    assert "called" not in log and send.messages == []


@pytest.mark.parametrize(
    ("declared", "size"),
    [(None, 40), (b"content-length", 40), (b"Content-Length", 40), (None, 10_000)],
    ids=["chunked", "content-length", "Content-Length", "one-message"],
)
def test_an_oversized_request_is_replayed_unchanged(declared: bytes | None, size: int) -> None:
    req = chat_request()
    log: dict[str, Any] = {}
    pieces = [req[i : i + size] for i in range(0, len(req), size)]
    headers = [(b"content-type", b"application/json")]
    if declared:
        headers.append((declared, str(len(req)).encode()))
    # Hypercorn style (chunks, then an empty final one), or the whole body in one final message.
    messages = [request(req)] if len(pieces) == 1 else [*[request(p, more=True) for p in pieces], request(b"")]
    receive = Receive(messages)
    send = Recorder(on_send=lambda rec, m: receive.disconnect())
    mw = ToolCallMiddleware(_recording_app(log), dialect="hermes", limits={"max_request_bytes": 100})
    call(mw, scope(headers=headers), receive, send)
    assert log["received"] == messages  # the same messages, in the same pieces
    assert log["headers"] == headers
    # Not rewritten, so the answer is not either: the raw markup reaches the client untouched.
    assert send.body == chat_answer()


# -- client disconnect mid-stream ---------------------------------------------------------------------


@pytest.mark.parametrize("spec_version", ["2.3", "2.4"])
def test_a_client_disconnect_mid_stream_stops_the_app(spec_version: str) -> None:
    state = {"closed": False, "yielded": 0}

    async def endpoint(request: Request) -> Response:
        await request.body()

        async def events() -> AsyncIterator[bytes]:
            try:
                n = 0
                while True:  # an endless stream: only the disconnect can end it
                    chunk = {
                        "id": "c",
                        "object": "chat.completion.chunk",
                        "created": 1,
                        "model": "qwen3",
                        "choices": [{"index": 0, "delta": {"content": f"word{n} "}, "finish_reason": None}],
                    }
                    state["yielded"] += 1
                    yield b"data: " + json.dumps(chunk).encode() + b"\n\n"
                    n += 1
                    await asyncio.sleep(0.001)
            finally:
                state["closed"] = True

        return StreamingResponse(events(), media_type="text/event-stream")

    receive = Receive([request(chat_request(stream=True))])
    gone = {"flag": False}

    def on_send(rec: Recorder, message: Message) -> None:
        if len(rec.bodies) == 5:
            receive.disconnect()
            gone["flag"] = True
        elif gone["flag"] and spec_version == "2.4":
            raise OSError("client gone")  # spec 2.4: send on a closed connection raises

    send = Recorder(on_send=on_send)
    app = ToolCallMiddleware(Starlette(routes=[Route(CHAT, endpoint, methods=["POST"])]), dialect="hermes")

    async def main() -> None:
        before = asyncio.all_tasks()
        try:
            await app(scope(spec_version=spec_version), receive, send)
        except ClientDisconnect:
            assert spec_version == "2.4"  # Starlette's own signal, carried through, never swallowed
        # Starlette cancels the stream while the generator sits at a `yield`; it is closed when
        # the last reference goes (a cycle through the cancelled frames): collect, then let the
        # loop run the finalizer. A middleware keeping a reference would keep it open.
        gc.collect()
        for _ in range(5):
            await asyncio.sleep(0)
        assert state["closed"] is True
        assert asyncio.all_tasks() - before == set()  # nothing of the request left running

    run(main())
    yielded = state["yielded"]
    assert 5 <= yielded < 50
    assert len(send.bodies) <= yielded + 1


# -- malformed requests -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("req", "param"),
    [
        (chat_request(tools={"get_weather": {}}), "tools"),
        (chat_request(tool_choice={"type": "function", "function": {"name": "nope"}}), "tool_choice"),
    ],
    ids=["tools-not-a-list", "forced-unknown-tool"],
)
def test_a_malformed_request_is_a_400_naming_the_field(req: bytes, param: str) -> None:
    log: dict[str, Any] = {}
    receive = Receive([request(req)])
    send = Recorder()
    call(ToolCallMiddleware(_recording_app(log), dialect="hermes"), scope(), receive, send)
    assert "called" not in log
    assert send.status == 400
    assert send.header(b"content-type") == [b"application/json"]
    assert send.header(b"content-length") == [str(len(send.body)).encode()]
    error = TypeAdapter(ErrorObject).validate_python(send.json()["error"])
    assert error.param == param and error.type == "invalid_request_error"
    assert param in error.message


# -- per-request state --------------------------------------------------------------------------------


def test_concurrent_requests_through_one_instance_do_not_mix() -> None:
    async def endpoint(request: Request) -> Response:
        payload = await request.json()
        city = "Paris" if "Paris" in json.dumps(payload["messages"]) else "Oslo"
        text = RAW_CALL.replace("Paris", city)
        if payload.get("stream"):

            async def events() -> AsyncIterator[bytes]:
                for part in [chat_stream(text)[i : i + 9] for i in range(0, len(chat_stream(text)), 9)]:
                    await asyncio.sleep(0)  # interleave with the other request
                    yield part

            return StreamingResponse(events(), media_type="text/event-stream")
        await asyncio.sleep(0.01)
        return Response(chat_answer(text), media_type="application/json")

    reports: list[dict[str, Any]] = []
    app = ToolCallMiddleware(
        Starlette(routes=[Route(CHAT, endpoint, methods=["POST"])]), dialect="hermes", on_report=reports.append
    )

    def req(city: str, stream: bool) -> bytes:
        return chat_request(stream=stream, messages=[{"role": "user", "content": f"Weather in {city}?"}])

    sends = [Recorder() for _ in range(4)]
    cases = [("Paris", True), ("Oslo", True), ("Paris", False), ("Oslo", False)]

    async def main() -> None:
        await asyncio.gather(
            *[
                app(scope(), Receive([request(req(city, stream))]), send)
                for (city, stream), send in zip(cases, sends, strict=True)
            ]
        )

    run(main())
    for (city, stream), send in zip(cases, sends, strict=True):
        if stream:
            assert streamed_calls(send.body) == [("get_weather", json.dumps({"city": city}))]
        else:
            assert tool_calls_of(send.json()["choices"][0]["message"]) == [("get_weather", {"city": city})]
    assert sorted(r["stream"] for r in reports) == [False, False, True, True]


# -- telemetry ---------------------------------------------------------------------------------------


def test_on_report_gets_one_record_per_rewritten_exchange() -> None:
    reports: list[dict[str, Any]] = []
    answer = chat_answer()
    through([start(200, json_headers(answer)), body(answer)], on_report=reports.append)
    through([start(200, SSE_HEADERS), body(chat_stream())], req=chat_request(stream=True), on_report=reports.append)
    through(
        [start(200, SSE_HEADERS), body(responses_stream())],
        req=responses_request(stream=True),
        scope_=scope(RESPONSES),
        on_report=reports.append,
    )
    # Not an exchange of ours: another route. A body that is not JSON is ours to refuse.
    through([start(200, json_headers(answer)), body(answer)], scope_=scope("/v1/models"), on_report=reports.append)
    through([start(200, json_headers(answer)), body(answer)], req=b"not json", on_report=reports.append)
    refused = reports.pop()
    assert (refused["outcome"], refused["refused"], refused["dialect"]) == ("refused", "invalid_json", "hermes")
    assert [(r["api"], r["stream"]) for r in reports] == [("chat", False), ("chat", True), ("responses", True)]
    for record in reports:
        assert record["dialect"] == "hermes" and record["model"] == "qwen3"
        assert record["rewritten_request"] and record["rewritten_response"]
        assert record["calls_found"] == 1 and record["calls_emitted"] == 1
        assert record["seconds"] >= 0
        json.dumps(record)  # plain data, ready for a log line


def test_the_telemetry_is_logged_at_info_without_a_callback(caplog: pytest.LogCaptureFixture) -> None:
    answer = chat_answer()
    with caplog.at_level(logging.INFO, logger="toolcall_middleware"):
        through([start(200, json_headers(answer)), body(answer)])
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("toolcall-middleware exchange")]
    assert len(lines) == 1 and "chat POST /v1/chat/completions 200 rewritten dialect=hermes" in lines[0]
    assert "calls=1/1" in lines[0]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="toolcall_middleware"):
        through([start(200, json_headers(answer)), body(answer)])
    assert not caplog.records  # nobody listening: nothing logged (and no record built)


def test_a_raising_on_report_does_not_break_the_response(caplog: pytest.LogCaptureFixture) -> None:
    def broken(record: dict[str, Any]) -> None:
        raise RuntimeError("telemetry down")

    answer = chat_answer()
    with caplog.at_level(logging.ERROR, logger="toolcall_middleware"):
        send = through([start(200, json_headers(answer)), body(answer)], on_report=broken)
    assert tool_calls_of(send.json()["choices"][0]["message"]) == [("get_weather", {"city": "Paris"})]
    assert "on_report" in caplog.text


# -- configuration ---------------------------------------------------------------------------------


async def _noop(scope: Scope, receive: Any, send: Any) -> None:
    return None


@pytest.mark.parametrize(
    ("options", "names"),
    [
        ({"dialect": "nope"}, ["dialect", "nope"]),
        ({"limits": {"max_calls": 0}}, ["max_calls"]),
        ({"limits": {"max_request_bytes": -1}}, ["max_request_bytes"]),
        ({"chat_routes": ("v1/chat/completions",)}, ["chat_routes", "v1/chat/completions"]),
        ({"reasoning_field": "sometimes"}, ["reasoning_field"]),
        ({"no_such_option": True}, ["no_such_option"]),
    ],
)
def test_bad_configuration_fails_at_construction_naming_the_field(options: dict[str, Any], names: list[str]) -> None:
    with pytest.raises(ValueError) as info:
        ToolCallMiddleware(_noop, **options)
    for name in names:
        assert name in str(info.value)


def test_lifespan_and_websocket_scopes_pass_straight_through() -> None:
    seen: list[str] = []

    async def app(scope: Scope, receive: Any, send: Any) -> None:
        seen.append(scope["type"])
        await send({"type": "x", "scope": scope["type"]})

    for kind in ("lifespan", "websocket"):
        send = Recorder()
        call(ToolCallMiddleware(app, dialect="hermes"), {"type": kind, "path": CHAT}, Receive(), send)
        assert send.messages == [{"type": "x", "scope": kind}]
    assert seen == ["lifespan", "websocket"]


def test_config_limits_reach_the_policy() -> None:
    """`limits.max_calls` is enforced on the answer: a third call fails the response."""
    from toolcall_middleware.config import ToolCallConfig
    from toolcall_middleware.core._exchange import Exchange, RouteMatch

    config = ToolCallConfig(dialect="hermes", limits={"max_calls": 2})
    exchange = Exchange(config, RouteMatch("chat", "chat"))
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    exchange.forward(
        json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": tools}).encode()
    )
    exchange.start("POST", 200, [(b"content-type", b"application/json")])
    raw = "".join('<tool_call>{"name": "f", "arguments": {}}</tool_call>' for _ in range(3))
    body = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": raw}, "finish_reason": "stop"}],
    }
    out = json.loads(exchange.feed(json.dumps(body).encode()) + exchange.end())
    assert exchange.status == 502 and out["error"]["code"] == "too_many_tool_calls" and exchange.no_retry


def test_repair_option_reaches_the_parser() -> None:
    from toolcall_middleware.config import ToolCallConfig
    from toolcall_middleware.core._exchange import Exchange, RouteMatch

    raw = "<tool_call>{'name': 'f', 'arguments': {'a': True,}}</tool_call>"
    body = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": raw}, "finish_reason": "stop"}],
    }
    for repair, calls in ((True, 1), (False, 0)):
        exchange = Exchange(ToolCallConfig(dialect="hermes", repair=repair), RouteMatch("chat", "chat"))
        tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
        request = {"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": tools}
        exchange.forward(json.dumps(request).encode())
        exchange.start("POST", 200, [(b"content-type", b"application/json")])
        out = json.loads(exchange.feed(json.dumps(body).encode()) + exchange.end())
        assert len(out["choices"][0]["message"].get("tool_calls") or []) == calls


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
def test_a_legacy_completions_client_gets_its_answer_as_the_host_wrote_it(stream: bool) -> None:
    """`/v1/completions` has no way to carry a tool call and its client writes its own prompt:
    request and answer go through byte for byte (`choices[].text`, `text_completion`), never
    turned into Chat objects the client cannot read."""
    meta = {"id": "cmpl-1", "object": "text_completion", "created": 1, "model": "m"}
    text = 'Hi <tool_call>{"name": "get_weather", "arguments": {}}</tool_call>'
    if stream:
        chunks = [
            {**meta, "choices": [{"index": 0, "text": text, "finish_reason": None}]},
            {**meta, "choices": [{"index": 0, "text": "", "finish_reason": "stop"}]},
        ]
        data = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
        head = SSE_HEADERS
    else:
        data = json.dumps({**meta, "choices": [{"index": 0, "text": text, "finish_reason": "stop"}]}).encode()
        head = json_headers(data)
    req = json.dumps({"model": "m", "prompt": "hi", "stream": stream}).encode()
    seen: list[bytes] = []
    send = through([start(200, head), body(data)], req=req, scope_=scope("/v1/completions"), seen=seen)
    assert seen == [req]
    assert send.messages == [start(200, head), body(data)]


def test_several_choices_are_each_parsed_and_legacy_completions_pass_through() -> None:
    """`n > 1`: every Chat choice is parsed on its own index (none is lost); legacy completions,
    which are not parsed per choice, reach the client as the host wrote them."""
    from toolcall_middleware.config import ToolCallConfig
    from toolcall_middleware.core._exchange import Exchange, RouteMatch

    def answer(kind: str) -> bytes:
        key = "message" if kind == "chat.completion" else "text"
        call = '<tool_call>{{"name": "f{}", "arguments": {{}}}}</tool_call>'
        return json.dumps(
            {
                "id": "c",
                "object": kind,
                "created": 1,
                "model": "m",
                "choices": [
                    {
                        "index": i,
                        key: {"role": "assistant", "content": call.format(i)}
                        if key == "message"
                        else f"<tool_call>{i}",
                        "finish_reason": "stop",
                    }
                    for i in range(2)
                ],
            }
        ).encode()

    headers = [(b"content-type", b"application/json"), (b"content-length", b"99")]
    exchange = Exchange(ToolCallConfig(dialect="hermes"), RouteMatch("chat", "chat"))
    tools = [{"type": "function", "function": {"name": f"f{i}", "parameters": {"type": "object"}}} for i in range(2)]
    request = {"model": "m", "n": 2, "messages": [{"role": "user", "content": "x"}], "tools": tools}
    exchange.forward(json.dumps(request).encode())
    exchange.start("POST", 200, headers)
    out = json.loads(exchange.feed(answer("chat.completion")) + exchange.end())
    assert [c["index"] for c in out["choices"]] == [0, 1]
    assert [c["message"]["tool_calls"][0]["function"]["name"] for c in out["choices"]] == ["f0", "f1"]
    assert [c["finish_reason"] for c in out["choices"]] == ["tool_calls", "tool_calls"]

    exchange = Exchange(ToolCallConfig(dialect="hermes"), RouteMatch("completions", "completions"))
    exchange.forward(b'{"model": "m", "n": 2, "prompt": "x"}')
    assert exchange.start("POST", 200, headers) == headers
    body = answer("text_completion")
    assert exchange.state is core_exchange.PASS and exchange.feed(body) + exchange.end() == body


def test_a_model_no_pattern_knows_is_shown_the_hermes_manifest_and_read_back_by_auto() -> None:
    # No `dialect`, a served name no pattern matches: the request still gets a manifest (not a 500)
    # and the raw `<tool_call>` answer is read by `auto`.
    seen: list[bytes] = []
    answer = chat_answer(RAW_CALL)
    app = scripted([start(200, json_headers(answer)), body(answer)], seen=seen)
    req = json.loads(chat_request())
    req["model"] = "in-house-model-v7"
    receive = Receive([request(json.dumps(req).encode())])
    send = Recorder()
    call(ToolCallMiddleware(app), scope(), receive, send)
    assert send.status == 200
    forwarded = json.loads(seen[0])
    assert "tools" not in forwarded and "<tool_call>" in json.dumps(forwarded["messages"])
    message = send.json()["choices"][0]["message"]
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["get_weather"]
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}


@pytest.mark.parametrize(
    ("options", "tools_forwarded", "manifest"),
    [
        ({}, False, True),
        ({"forward_tools": True}, True, False),  # the backend's template writes its tools itself
        ({"forward_tools": True, "inject_manifest": True}, True, True),  # tools for its grammar only
        ({"inject_manifest": False}, False, False),  # the app's own prompt describes the tools
    ],
)
def test_the_backend_gets_the_tools_and_the_manifest_as_configured(
    options: dict[str, Any], tools_forwarded: bool, manifest: bool
) -> None:
    """`forward_tools` sends the tools on, and then leaves the prompt alone unless
    `inject_manifest` says otherwise; the tool history is written as the dialect's text either way,
    and the answer is read back the same."""
    seen: list[bytes] = []
    answer = chat_answer(RAW_CALL)
    app = scripted([start(200, json_headers(answer)), body(answer)], seen=seen)
    history = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Lyon"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "12 C"},
    ]
    receive = Receive([request(chat_request(messages=history, tool_choice="auto"))])
    send = Recorder()
    call(ToolCallMiddleware(app, dialect="hermes", **options), scope(), receive, send)
    forwarded = json.loads(seen[0])
    assert ("tools" in forwarded) is tools_forwarded
    assert ("tool_choice" in forwarded) is tools_forwarded
    system = forwarded["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("Be brief.")
    assert ("<tools>" in system["content"]) is manifest
    turns = json.dumps(forwarded["messages"][1:])
    assert "<tool_call>" in turns and "<tool_response>" in turns and "12 C" in turns
    assert all(m["role"] != "tool" and "tool_calls" not in m for m in forwarded["messages"])
    message = send.json()["choices"][0]["message"]
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["get_weather"]


@pytest.mark.parametrize("forward", [False, True], ids=["injected", "forwarded"])
def test_a_responses_backend_given_the_tools_keeps_its_instructions(forward: bool) -> None:
    """The same for Responses: `instructions` carries the manifest, unless the backend takes the
    tools itself; echoed `function_call` items and their outputs are text either way."""
    seen: list[bytes] = []
    answer = responses_stream(RAW_CALL)
    app = scripted([start(200, SSE_HEADERS), *split_every_byte(answer)], seen=seen)
    req = json.loads(responses_request(stream=True))
    req["instructions"] = "Be brief."
    req["input"] = [
        {"role": "user", "content": "Weather in Lyon?"},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city": "Lyon"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "12 C"},
        {"role": "user", "content": "And in Paris?"},
    ]
    send = Recorder()
    middleware = ToolCallMiddleware(app, dialect="hermes", forward_tools=forward)
    call(middleware, scope(RESPONSES), Receive([request(json.dumps(req).encode())]), send)
    forwarded = json.loads(seen[0])
    assert ("tools" in forwarded) is forward
    assert (forwarded["instructions"] == "Be brief.") is forward
    assert forwarded["instructions"].startswith("Be brief.") and ("<tools>" in forwarded["instructions"]) is not forward
    items = json.dumps(forwarded["input"])
    assert "<tool_call>" in items and "12 C" in items and '"function_call"' not in items
    done = [e for e in sse_events(send.body) if e.get("type") == "response.completed"]
    assert [o["name"] for o in done[0]["response"]["output"] if o["type"] == "function_call"] == ["get_weather"]


def _completion_shaped(text: str, *, stream: bool) -> bytes:
    """An in-house host's answer on the chat route in the legacy completions shape."""
    meta = {"id": "cmpl-1", "object": "text_completion", "created": 1, "model": "qwen3"}
    if not stream:
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": "stop"}
        usage = {"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14}
        return json.dumps({**meta, "choices": [choice], "usage": usage}).encode()
    pieces = [text[i : i + 6] for i in range(0, len(text), 6)]
    chunks = [{**meta, "choices": [{"index": 0, "text": p, "logprobs": None, "finish_reason": None}]} for p in pieces]
    chunks.append({**meta, "choices": [{"index": 0, "text": "", "logprobs": None, "finish_reason": "stop"}]})
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_chat_route_answered_in_the_completions_shape_is_read_and_answered_as_chat(stream: bool) -> None:
    data = _completion_shaped(RAW_CALL, stream=stream)
    head = start(200, SSE_HEADERS if stream else json_headers(data))
    app = scripted([head, *split_every_byte(data)] if stream else [head, body(data)])
    send = Recorder()
    call(ToolCallMiddleware(app, dialect="hermes"), scope(), Receive([request(chat_request(stream=stream))]), send)
    if stream:
        payloads = sse_events(send.body)
        assert payloads[-1] == "[DONE]"
        message = replay_chat(payloads[:-1]).choices[0].message  # the SDK's own accumulator
        calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]
        content = message.content
    else:
        completion = ChatCompletion.model_validate(send.json())
        assert completion.choices[0].finish_reason == "tool_calls" and completion.usage is not None
        message = completion.choices[0].message
        calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]
        content = message.content
    assert content == "Let me check." and calls == [("get_weather", {"city": "Paris"})]


# -- strings with no UTF-8 form ------------------------------------------------------------------

LONE = "half \ud83d of an emoji"  # JSON carries a lone surrogate as `\ud83d`; Python decodes it as is


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_lone_surrogate_from_the_client_or_the_host_is_carried_not_fatal(stream: bool) -> None:
    """A string JSON can hold but UTF-8 cannot goes out escaped, and the rest of the answer is
    still rewritten: the text around it, then the call."""
    text = f"Sure. {LONE}. More text follows here.\n" + RAW_CALL
    seen: list[bytes] = []
    req = chat_request(stream=stream, messages=[{"role": "user", "content": LONE}])
    if stream:
        # One event per message, as servers send them: the later text chunks go the lane.
        events = [e + b"\n\n" for e in chat_stream(text, piece=4).split(b"\n\n") if e]
        sent = through([start(200, SSE_HEADERS), *[body(e, more=True) for e in events], body(b"")], req=req, seen=seen)
        chunks = [c for c in sse_events(sent.body) if c != "[DONE]"]
        content = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
        assert streamed_calls(sent.body) == [("get_weather", '{"city": "Paris"}')]
    else:
        sent = through([start(200, json_headers(chat_answer(text))), body(chat_answer(text))], req=req, seen=seen)
        message = sent.json()["choices"][0]["message"]
        content = message["content"]
        assert tool_calls_of(message) == [("get_weather", {"city": "Paris"})]
    assert content == f"Sure. {LONE}. More text follows here.\nLet me check."
    seen[0].decode("utf-8")  # the rewritten request is UTF-8 (the string went escaped) ...
    assert json.loads(seen[0])["messages"][-1]["content"] == LONE  # ... and the host reads the client's string
    sent.body.decode("utf-8")
