"""The host app fails in the middle of a stream the middleware rewrites.

Text the parser held back (a possible marker prefix) still reaches the client as text, a call the
model had not finished never does, and the client's stream ends with an error it can see: a Chat
chunk with `error` (the openai SDK raises `APIError`) then `[DONE]`, or `response.failed`. The
app's exception still reaches the server. A stream that just stops without its end marker is
finished normally (`length` when it stopped inside a call). Real uvicorn with the openai SDK, and
the raw ASGI harness for the exact messages.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.asgi.failing_app import UpstreamBroke, app
from tests.asgi.harness import CHAT, RESPONSES, Receive, Recorder, call, request, scope
from tests.servers import serve, uvicorn
from toolcall_middleware import ToolCallMiddleware

HELD = "Sure, let me look <tool"  # ends in what may be the start of `<tool_call>`: held back
UNFINISHED = 'Let me check.\n<tool_call>\n{"name": "get_weather", "argu'
TOOLS: Any = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


@pytest.fixture(scope="module")
def client() -> Iterator[openai.OpenAI]:
    command, port = uvicorn("tests.asgi.failing_app:app")
    with serve(command, port) as base:
        yield openai.OpenAI(api_key="none", base_url=base + "/v1", max_retries=0)


def _chat_stream(client: openai.OpenAI, raw: str) -> tuple[str, list[Any], list[str | None], Exception | None]:
    """Content, tool-call deltas and finish reasons the client saw, and what it raised."""
    content, calls, reasons = "", [], []
    messages: Any = [{"role": "user", "content": raw}]
    try:
        for chunk in client.chat.completions.create(model="m", messages=messages, tools=TOOLS, stream=True):
            for choice in chunk.choices:
                content += choice.delta.content or ""
                calls += choice.delta.tool_calls or []
                reasons.append(choice.finish_reason)
    except openai.APIError as error:
        return content, calls, reasons, error
    return content, calls, reasons, None


def test_chat_held_text_reaches_the_client_and_the_stream_ends_in_an_error(client: openai.OpenAI) -> None:
    content, calls, _, error = _chat_stream(client, HELD)
    assert content == HELD and not calls
    assert isinstance(error, openai.APIError) and "upstream failed mid-stream" in error.message
    assert isinstance(error.body, dict) and error.body["code"] == "upstream_error"


def test_chat_an_unfinished_call_never_reaches_the_client(client: openai.OpenAI) -> None:
    content, calls, _, error = _chat_stream(client, UNFINISHED)
    assert content == "Let me check." and not calls and error is not None


def test_chat_failure_before_any_text_is_an_error_the_sdk_raises(client: openai.OpenAI) -> None:
    content, calls, _, error = _chat_stream(client, "")
    assert content == "" and not calls
    assert isinstance(error, openai.APIError) and "upstream failed mid-stream" in error.message


def test_chat_stream_that_stops_without_its_end_marker_is_finished(client: openai.OpenAI) -> None:
    content, calls, reasons, error = _chat_stream(client, "END:" + HELD)
    assert error is None and content == HELD and reasons[-1] == "stop"
    content, calls, reasons, error = _chat_stream(client, "END:" + UNFINISHED)
    assert error is None and content == "Let me check." and not calls and reasons[-1] == "length"


def test_responses_held_text_reaches_the_client_and_the_response_fails(client: openai.OpenAI) -> None:
    events = list(client.responses.create(model="m", input=HELD, tools=[], stream=True))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == HELD
    last = events[-1]
    assert last.type == "response.failed"
    assert last.response.error is not None and "upstream failed mid-stream" in last.response.error.message
    assert [o.type for o in last.response.output] == ["message"]


# -- the exact ASGI messages ----------------------------------------------------------------


def _run(path: str, raw: str) -> Recorder:
    payload: dict[str, Any] = {"model": "m", "stream": True, "tools": TOOLS}
    payload.update({"messages": [{"role": "user", "content": raw}]} if path == CHAT else {"input": raw})
    send = Recorder()
    with pytest.raises(UpstreamBroke):  # the server still gets the app's exception, to log it
        call(app, scope(path), Receive([request(json.dumps(payload).encode())]), send)
    return send


def _datas(body: bytes) -> list[str]:
    return [line[6:] for line in body.decode().split("\n") if line.startswith("data: ")]


def test_harness_chat_stream_ends_with_an_error_chunk_then_done() -> None:
    send = _run(CHAT, HELD)
    assert send.status == 200
    datas = _datas(send.body)  # well formed: one final body message, after every other
    assert datas[-1] == "[DONE]"
    chunks = [json.loads(d) for d in datas[:-1]]
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks) == HELD
    last = chunks[-1]
    assert last["choices"][0]["finish_reason"] == "error"
    assert last["error"]["type"] == "server_error" and last["error"]["code"] == "upstream_error"


def test_harness_responses_stream_ends_with_response_failed() -> None:
    send = _run(RESPONSES, UNFINISHED)
    events = [json.loads(d) for d in _datas(send.body)]
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert events[-1]["type"] == "response.failed"
    assert "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta") == "Let me check."
    assert not any(e["type"].startswith("response.function_call") for e in events)


def test_harness_chat_failure_before_any_body_ends_the_stream_in_an_error() -> None:
    """No body yet, but the stream's head went out when the app sent it (as it does without the
    middleware): the client's stream still ends in an error it can read, not a cut connection."""
    send = _run(CHAT, "")
    assert send.status == 200 and send.types[0] == "http.response.start"
    datas = _datas(send.body)
    assert datas[-1] == "[DONE]"
    (chunk,) = [json.loads(d) for d in datas[:-1]]
    assert chunk["choices"][0]["finish_reason"] == "error" and chunk["choices"][0]["delta"] == {"role": "assistant"}
    assert chunk["error"]["code"] == "upstream_error" and "upstream failed mid-stream" in chunk["error"]["message"]
    assert chunk["model"] == "m"  # the request's model: the host said none


def test_harness_failure_after_the_stream_ended_adds_nothing() -> None:
    """`[DONE]` already went out: a failure after it is the app's; no error chunk follows the end."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        await send({"type": "http.response.body", "body": b"data: [DONE]\n\n", "more_body": True})
        raise UpstreamBroke("after the end")

    send = Recorder()
    payload = {"model": "m", "stream": True, "tools": TOOLS, "messages": [{"role": "user", "content": "hi"}]}
    with pytest.raises(UpstreamBroke):
        receive = Receive([request(json.dumps(payload).encode())])
        call(ToolCallMiddleware(app, dialect="hermes"), scope(CHAT), receive, send)
    sent = b"".join(m.get("body", b"") for m in send.messages if m["type"] == "http.response.body")
    assert sent == b"data: [DONE]\n\n"


def test_harness_responses_failure_before_any_body_ends_in_response_failed() -> None:
    send = _run(RESPONSES, "")
    events = [json.loads(d) for d in _datas(send.body)]
    assert [e["type"] for e in events] == ["response.created", "response.in_progress", "response.failed"]
    assert [e["sequence_number"] for e in events] == [0, 1, 2]
    assert "upstream failed mid-stream" in events[-1]["response"]["error"]["message"]


def test_harness_failure_before_a_held_head_is_left_to_the_server() -> None:
    """A head still held (a whole JSON answer's, which waits for its length): nothing is sent, and
    the server answers the app's error (a 500) as it does for any app that fails before its response."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        raise UpstreamBroke("the model server lost its GPU")

    send = Recorder()
    payload = {"model": "m", "tools": TOOLS, "messages": [{"role": "user", "content": "hi"}]}
    with pytest.raises(UpstreamBroke):
        receive = Receive([request(json.dumps(payload).encode())])
        call(ToolCallMiddleware(app, dialect="hermes"), scope(CHAT), receive, send)
    assert send.messages == []


@pytest.mark.parametrize("ending", ["response.failed", "error"])
def test_a_responses_host_that_fails_mid_stream_gives_one_failed_end(ending: str) -> None:
    """A Responses host whose stream ends in its own failure (`response.failed`, or an `error`
    event and nothing after): the client's stream ends in one `response.failed` of ours, on its
    own sequence numbers, never followed by a `response.completed` (which the SDK's stream
    helper would take as the final response, calls and all)."""
    from openai.types.responses import ResponseStreamEvent
    from pydantic import TypeAdapter

    from tests.asgi.harness import SSE_HEADERS, body, responses_stream, scripted, start

    text = 'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    blocks = responses_stream(text).split(b"\n\n")[:-2]  # the host's events without its `response.completed`
    seq = len(blocks)
    if ending == "error":
        last = {"type": "error", "code": "server_error", "message": "host blew up", "param": None}
    else:
        failed = {"id": "resp_1", "object": "response", "created_at": 1, "model": "qwen3", "status": "failed"}
        error = {"code": "server_error", "message": "host blew up"}
        last = {"type": "response.failed", "response": {**failed, "output": [], "error": error}}
    data = json.dumps({**last, "sequence_number": seq}).encode()
    blocks.append(b"event: " + str(last["type"]).encode() + b"\ndata: " + data)
    host = scripted([start(200, SSE_HEADERS), body(b"\n\n".join(blocks) + b"\n\n")])
    send = Recorder()
    payload = {"model": "m", "stream": True, "input": "x", "tools": [{"type": "function", **TOOLS[0]["function"]}]}
    receive = Receive([request(json.dumps(payload).encode())])
    call(ToolCallMiddleware(host, dialect="hermes"), scope(RESPONSES), receive, send)
    events = [json.loads(d) for d in _datas(send.body)]
    adapter: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
    for event in events:
        adapter.validate_python(event)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    terminal = ("response.completed", "response.failed", "response.incomplete", "error")
    ends = [e["type"] for e in events if e["type"] in terminal]
    assert ends == ["response.failed"]
    assert "host blew up" in events[-1]["response"]["error"]["message"]
    assert "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta").startswith("Checking.")
