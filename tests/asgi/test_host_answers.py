"""Host answers the middleware cannot take as they come: a stream that stops inside an event, a
usage object of the wrong types, an answer a bridged client's API cannot carry. Each ends in a
well-formed answer of the client's API (found by the fuzz suite)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai.types.responses import Response

from toolcall_middleware import ToolCallMiddleware

from .harness import (
    Receive,
    Recorder,
    body,
    call,
    chat_answer,
    chat_request,
    chat_stream,
    json_headers,
    responses_request,
    scope,
    scripted,
    sse_events,
    start,
)

SSE = [(b"content-type", b"text/event-stream")]
TERMINAL = {"chat": "[DONE]", "responses": "response.", "messages": "message_stop"}
PATHS = {"chat": "/v1/chat/completions", "responses": "/v1/responses", "messages": "/v1/messages"}


def messages_request(*, stream: bool = False) -> bytes:
    ask = {"model": "m", "max_tokens": 64, "stream": stream, "messages": [{"role": "user", "content": "hi"}]}
    return json.dumps(ask).encode()


REQUESTS = {"chat": chat_request, "responses": responses_request, "messages": messages_request}


def through(client: str, host_messages: list[Any], *, stream: bool) -> Recorder:
    bridge = f"{client}-to-chat" if client != "chat" else set()
    app = ToolCallMiddleware(scripted(host_messages), dialect="hermes", bridge=bridge)
    send = Recorder()
    call(app, scope(PATHS[client]), Receive([{"type": "http.request", "body": REQUESTS[client](stream=stream)}]), send)
    return send


def names(client: str, data: bytes) -> list[str]:
    """The events' names (Chat's: the whole chunks, whose ids are the host's, the same each run)."""
    return [json.dumps(e, sort_keys=True) if client == "chat" else str(e["type"]) for e in sse_events(data)]


def last_event(client: str, data: bytes) -> str:
    events = sse_events(data)
    last = events[-1]
    if client == "chat":
        return str(last)
    return str(last["type"])


@pytest.mark.parametrize("tail", [b"d", b'data: {"cho', b": comment", b"data: x\n"])
@pytest.mark.parametrize("client", ["chat", "responses", "messages"])
def test_a_stream_that_stops_inside_an_event_still_ends_well_formed(client: str, tail: bytes) -> None:
    stream = chat_stream("Hi there", 3)
    cut = stream[: stream.index(b"data: [DONE]")]
    sent = through(client, [start(200, SSE), body(cut + tail)], stream=True)
    clean = through(client, [start(200, SSE), body(cut)], stream=True)
    events = sent.body.split(b"\n\n")
    assert events[-1] == b"" and all(e.startswith((b"data: ", b"event: ")) for e in events[:-1]), events[-3:]
    assert names(client, sent.body) == names(client, clean.body)  # the tail dropped, nothing else
    assert TERMINAL[client] in last_event(client, sent.body)


def test_a_whole_event_that_lacks_only_its_blank_line_is_read() -> None:
    stream = chat_stream("Hi there", 3)
    sent = through("chat", [start(200, SSE), body(stream.removesuffix(b"\n\n") + b"\n")], stream=True)
    assert sent.body.endswith(b"data: [DONE]\n\n") and sent.body.count(b"[DONE]") == 1


@pytest.mark.parametrize("stream", [False, True])
def test_a_usage_of_the_wrong_types_is_read_as_none(stream: bool) -> None:
    usage = {"prompt_tokens": "ten", "completion_tokens": [1], "prompt_tokens_details": ["x"]}
    if stream:
        last = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [], "usage": usage}
        usage_event = b"data: " + json.dumps(last).encode() + b"\n\ndata: [DONE]"
        data = chat_stream("Hi", 2).replace(b"data: [DONE]", usage_event)
        sent = through("responses", [start(200, SSE), body(data)], stream=True)
        final = sse_events(sent.body)[-1]["response"]
    else:
        whole = json.dumps({**json.loads(chat_answer("Hi")), "usage": usage}).encode()
        sent = through("responses", [start(200, json_headers(whole)), body(whole)], stream=False)
        final = json.loads(sent.body)
    Response.model_validate(final)
    assert final["usage"]["input_tokens"] == 0 and final["usage"]["output_tokens"] == 0
    assert final["output"][-1]["content"][0]["text"] == "Hi"


@pytest.mark.parametrize("client", ["responses", "messages"])
def test_a_bridged_client_never_gets_the_hosts_unreadable_answer(client: str) -> None:
    cut = chat_answer("Hi")[:40]
    sent = through(client, [start(200, json_headers(cut)), body(cut)], stream=False)
    assert sent.status == 502 and sent.body != cut
    answer = json.loads(sent.body)
    message = answer["error"]["message"]
    assert "could not be read as a chat answer" in message
    if client == "messages":
        assert answer["type"] == "error" and answer["error"]["type"] == "api_error"


@pytest.mark.parametrize("client", ["responses", "messages"])
def test_a_bridged_stream_that_is_no_answer_ends_in_the_clients_error(client: str) -> None:
    junk = b'data: {"not": "a chat chunk"}\n\ndata: [DONE]\n\n'
    sent = through(client, [start(200, SSE), body(junk)], stream=True)
    names = [e["type"] for e in sse_events(sent.body)]
    assert names[-1] in ("response.failed", "error"), names
    assert b"not a chat chunk" not in sent.body


@pytest.mark.parametrize(
    "data", [b"d", b": only a comment\n\n", b"", b"data: [DONE]\n\n", b'\x00data: {"x": 1}\n\ndata: [DONE]\n\n']
)
@pytest.mark.parametrize("client", ["responses", "messages"])
def test_a_bridged_stream_that_ends_before_any_answer_ends_in_the_clients_error(client: str, data: bytes) -> None:
    sent = through(client, [start(200, SSE), body(data)], stream=True)
    names = [e["type"] for e in sse_events(sent.body)]
    assert names[-1] in ("response.failed", "error"), names
    assert b"ended before any chat answer" in sent.body
    assert not sent.body.startswith(b"d") and sent.body.endswith(b"\n\n")
