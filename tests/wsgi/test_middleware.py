"""`ToolCallWSGIMiddleware` driven chunk by chunk, under `wsgiref.validate` on both sides.

The same upstream bytes as the ASGI tests (the raw harness's answers), the same rules: streamed
and whole rewrites, recomputed or dropped Content-Length, pass-through byte for byte, the 400,
content codings, the request rewrite as the app reads it, and the WSGI specifics: the server's
start_response called only once the head is decided, one piece per app chunk (`b""` while text
is held back), `close()` reaching the app, `exc_info`, `write()`, threads sharing one instance.
"""

from __future__ import annotations

import gzip
import itertools
import json
import re
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.asgi import harness
from tests.wire import replay_chat, replay_responses
from toolcall_middleware import ToolCallConfig, ToolCallMiddleware, ToolCallWSGIMiddleware
from toolcall_middleware.core import _exchange as core_exchange
from toolcall_middleware.core._stream_body import StreamBody

from .driver import (
    CHAT,
    RESPONSES,
    Closing,
    Environ,
    Server,
    environ,
    exc_info,
    json_headers,
    scripted,
    sse_headers,
    wrapped,
)

_IDS = re.compile(rb"\b(call|fc|msg|rs|resp)_[A-Za-z0-9]{8,}")


def normalized(data: bytes) -> bytes:
    return _IDS.sub(rb"\1_ID", data)


def split(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def through_asgi(path: str, req: bytes, head: list[tuple[bytes, bytes]], data: bytes) -> bytes:
    """The same exchange through the ASGI middleware: what its client gets."""
    app = ToolCallMiddleware(
        harness.scripted([harness.start(200, head), harness.body(data, more=True), harness.body(b"")]), dialect="hermes"
    )
    send = harness.Recorder()
    harness.call(app, harness.scope(path), harness.Receive([harness.request(req)]), send)
    return send.body


# -- rewriting -----------------------------------------------------------------------------------


def test_a_streamed_chat_answer_becomes_tool_calls_one_piece_per_app_chunk() -> None:
    upstream = split(harness.chat_stream(), 40)
    app = scripted("200 OK", sse_headers(), upstream)
    server = Server().run(wrapped(app), environ(harness.chat_request(stream=True)))
    assert server.code == 200 and not server.header("content-length")
    # Block boundaries (PEP 3333): a piece for each chunk of the app, plus the end; b"" while held.
    assert len(upstream) <= len(server.chunks) <= len(upstream) + 1
    assert b"" in server.chunks
    completion = replay_chat([c for c in harness.sse_events(server.body) if c != "[DONE]"])
    message = completion.choices[0].message
    assert message.content == "Let me check."
    assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert completion.choices[0].finish_reason == "tool_calls"


def test_a_streamed_responses_answer_replays_through_the_sdk() -> None:
    upstream = split(harness.responses_stream(), 33)
    app = scripted("200 OK", sse_headers(), upstream)
    server = Server().run(wrapped(app), environ(harness.responses_request(stream=True), path=RESPONSES))
    response = replay_responses(harness.sse_events(server.body))
    calls = [item for item in response.output if item.type == "function_call"]
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize("path", [CHAT, RESPONSES])
def test_a_whole_json_answer_is_rewritten_with_its_new_length(path: str) -> None:
    if path == CHAT:
        req, answer = harness.chat_request(), harness.chat_answer()
    else:
        req = harness.responses_request()
        answer = json.dumps(
            {
                "id": "resp_1",
                "object": "response",
                "created_at": 1,
                "model": "qwen3",
                "status": "completed",
                "output": [
                    {
                        "id": "msg_1",
                        "type": "message",
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": harness.RAW_CALL, "annotations": []}],
                    }
                ],
            }
        ).encode()
    app = scripted("200 OK", json_headers(answer), split(answer, 50))
    server = Server().run(wrapped(app), environ(req, path=path))
    assert server.code == 200
    assert server.header("Content-Length") == [str(len(server.body))]
    body = server.json()
    if path == CHAT:
        assert body["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "get_weather"
    else:
        assert [item["type"] for item in body["output"]][-1] == "function_call"


@pytest.mark.parametrize("stream", [False, True])
def test_the_client_gets_what_the_asgi_middleware_gives(stream: bool) -> None:
    req = harness.chat_request(stream=stream)
    data = harness.chat_stream() if stream else harness.chat_answer()
    wsgi_head = sse_headers() if stream else json_headers(data)
    asgi_head = [(k.encode(), v.encode()) for k, v in wsgi_head]
    server = Server().run(wrapped(scripted("200 OK", wsgi_head, split(data, 25))), environ(req))
    assert normalized(server.body) == normalized(through_asgi(CHAT, req, asgi_head, data))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=400), max_size=12))
def test_an_sse_stream_split_anywhere_gives_the_same_client_stream(cuts: list[int]) -> None:
    data = harness.chat_stream()
    points = sorted({c % len(data) for c in cuts} | {0, len(data)})
    upstream = [data[a:b] for a, b in itertools.pairwise(points)]
    req = harness.chat_request(stream=True)
    whole = Server().run(wrapped(scripted("200 OK", sse_headers(), [data])), environ(req))
    pieces = Server().run(wrapped(scripted("200 OK", sse_headers(), upstream)), environ(req))
    assert normalized(pieces.body) == normalized(whole.body)


@pytest.mark.parametrize("stream", [False, True])
def test_a_gzipped_upstream_is_decoded_and_rewritten(stream: bool) -> None:
    data = gzip.compress(harness.chat_stream() if stream else harness.chat_answer())
    head = (sse_headers() if stream else json_headers(data)) + [("Content-Encoding", "gzip")]
    app = scripted("200 OK", head, split(data, 30))
    server = Server().run(wrapped(app), environ(harness.chat_request(stream=stream)))
    assert not server.header("content-encoding")
    assert b"get_weather" in server.body and b"<tool_call>" not in server.body


# -- pass-through --------------------------------------------------------------------------------

ANSWER = harness.chat_answer()
PASS_CASES: dict[str, tuple[Environ, str, list[tuple[str, str]], bytes]] = {
    "GET": (environ(method="GET"), "200 OK", json_headers(ANSWER), ANSWER),
    "HEAD": (environ(method="HEAD"), "200 OK", json_headers(ANSWER), b""),
    "another route": (environ(harness.chat_request(), path="/v1/embeddings"), "200 OK", json_headers(ANSWER), ANSWER),
    "non-2xx": (environ(harness.chat_request()), "500 Internal Server Error", json_headers(ANSWER), ANSWER),
    "plain text": (environ(harness.chat_request()), "200 OK", [("Content-Type", "text/plain")], b"<tool_call>"),
    "JSON that is no answer": (environ(harness.chat_request()), "200 OK", json_headers(b'{"ok": 1}'), b'{"ok": 1}'),
    "brotli": (
        environ(harness.chat_request()),
        "200 OK",
        [("Content-Type", "application/json"), ("Content-Encoding", "br")],
        b"\x1b\x05\x00\xf8\xa5\x04",
    ),
}


@pytest.mark.parametrize("case", list(PASS_CASES))
def test_what_is_not_ours_passes_through_byte_for_byte(case: str) -> None:
    env, status, head, data = PASS_CASES[case]
    bare = Server().run(scripted(status, head, split(data, 7)), {**env, "wsgi.input": env["wsgi.input"].__class__()})
    env["wsgi.input"].seek(0)
    server = Server().run(wrapped(scripted(status, head, split(data, 7))), env)
    assert (server.status, server.headers, server.body) == (bare.status, bare.headers, bare.body)
    assert server.body == data


def test_a_malformed_request_is_a_400_naming_the_field() -> None:
    seen: list[Environ] = []
    app = scripted("200 OK", json_headers(ANSWER), [ANSWER], seen=seen)
    server = Server().run(wrapped(app), environ(harness.chat_request(tools="nope")))
    assert server.code == 400 and server.header("content-type") == ["application/json"]
    assert server.json()["error"]["param"] == "tools"
    assert server.header("content-length") == [str(len(server.body))]
    assert seen == []  # the app never ran


def test_a_bug_of_ours_passes_the_rest_through(monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure inside the rewrite (simulated: nothing real fails on these bytes) must not take
    the answer down: a buffered body goes out as the app sent it, a stream from there on."""

    def broken(self: object, *data: object) -> bytes:
        raise RuntimeError("a bug")

    # (both roads a body takes: a whole one gathered, a stream read)
    monkeypatch.setattr(core_exchange.Exchange, "_piece", broken)
    monkeypatch.setattr(StreamBody, "feed", broken)
    server = Server().run(wrapped(scripted("200 OK", json_headers(ANSWER), [ANSWER])), environ(harness.chat_request()))
    assert server.body == ANSWER and server.header("content-length") == [str(len(ANSWER))]
    data = harness.chat_stream()
    server = Server().run(
        wrapped(scripted("200 OK", sse_headers(), split(data, 50))), environ(harness.chat_request(stream=True))
    )
    assert server.body == data


# -- the request side ------------------------------------------------------------------------------


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "input_terminated"])
def test_the_app_reads_the_rewritten_request_with_its_own_length(chunked: bool) -> None:
    seen: list[Environ] = []
    app = scripted("200 OK", json_headers(ANSWER), [ANSWER], seen=seen)
    original = harness.chat_request()
    Server().run(wrapped(app), environ(original, chunked=chunked, HTTP_TRANSFER_ENCODING="chunked"))
    (env,) = seen
    body = json.loads(env["_body"])
    assert "tools" not in body and "get_weather" in body["messages"][0]["content"]  # the manifest, injected
    assert env["CONTENT_LENGTH"] == str(len(env["_body"])) and env["_body"] != original
    assert "HTTP_TRANSFER_ENCODING" not in env


def test_without_length_or_end_marker_there_is_no_body_to_read() -> None:
    seen: list[Environ] = []
    env = environ(harness.chat_request())
    del env["CONTENT_LENGTH"]
    server = Server().run(wrapped(scripted("200 OK", json_headers(ANSWER), [ANSWER], seen=seen)), env)
    # Nothing is read (no wait on an input that never ends), and an empty body is no request:
    # refused as on every route, before the app sees it (it used to reach it).
    assert server.code == 400 and json.loads(server.body)["error"]["code"] == "invalid_json"
    assert seen == [] and ("x-should-retry", "false") in server.headers


@pytest.mark.parametrize("chunked", [False, True], ids=["declared", "input_terminated"])
def test_an_oversized_request_reaches_the_app_unchanged(chunked: bool) -> None:
    seen: list[Environ] = []
    original = harness.chat_request(padding="x" * 300_000)
    app = scripted("200 OK", json_headers(ANSWER), [ANSWER], seen=seen)
    limits = {"max_request_bytes": 100_000}
    server = Server().run(wrapped(app, limits=limits), environ(original, chunked=chunked))
    assert seen[0]["_body"] == original
    assert server.body == ANSWER  # no exchange of ours: the answer passes through too


# -- WSGI specifics ------------------------------------------------------------------------------


def test_lazy_start_response_inside_the_first_iteration() -> None:
    app = scripted("200 OK", sse_headers(), split(harness.chat_stream(), 60), lazy=True)
    server = Server().run(wrapped(app), environ(harness.chat_request(stream=True)))
    assert b'"tool_calls"' in server.body


def test_the_answer_parts_are_made_at_start_response(monkeypatch: pytest.MonkeyPatch) -> None:
    """The parser and the rules are made when the app calls start_response, before it computes
    its first chunk (a model server's prefill), not with that chunk."""
    log: list[str] = []

    class Recorded(core_exchange.Prepared):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            log.append("prepared")

    monkeypatch.setattr(core_exchange, "Prepared", Recorded)
    upstream = split(harness.chat_stream(), 40)

    def app(env: Environ, start_response: Any) -> Iterator[bytes]:
        env["wsgi.input"].read(int(env["CONTENT_LENGTH"]))
        start_response("200 OK", sse_headers())

        def body() -> Iterator[bytes]:
            log.append("first chunk")
            yield from upstream

        return body()

    server = Server().run(wrapped(app), environ(harness.chat_request(stream=True)))
    assert log == ["prepared", "first chunk"]
    completion = replay_chat([c for c in harness.sse_events(server.body) if c != "[DONE]"])
    assert [c.function.name for c in completion.choices[0].message.tool_calls or []] == ["get_weather"]


def test_the_server_start_response_waits_for_the_head_to_be_decided() -> None:
    """A buffered body: the server's start_response is called once, with the new length, only
    when the whole body is in (the app's own start_response call was held)."""
    calls: list[tuple[str, list[tuple[str, str]]]] = []
    server = Server()

    def start_response(status: str, headers: list[tuple[str, str]], exc: Any = None) -> Any:
        calls.append((status, headers))
        return server.start_response(status, headers, exc)

    answer = harness.chat_answer()
    middleware = ToolCallWSGIMiddleware(scripted("200 OK", json_headers(answer), split(answer, 20)), dialect="hermes")
    result = middleware(environ(harness.chat_request()), start_response)
    assert calls == []  # the app has called start_response; the server has not been told yet
    out = list(result)
    result.close()
    assert len(calls) == 1 and ("Content-Length", str(len(b"".join(out)))) in calls[0][1]


@pytest.mark.parametrize("stop_after", [None, 1])
def test_close_reaches_the_app_iterable_once(stop_after: int | None) -> None:
    returned: list[Closing] = []
    app = scripted("200 OK", sse_headers(), split(harness.chat_stream(), 40), returned=returned)
    Server(stop_after=stop_after).run(wrapped(app), environ(harness.chat_request(stream=True)))
    assert [r.closed for r in returned] == [1]


def test_an_error_response_before_the_body_replaces_the_held_head() -> None:
    def app(env: Environ, start_response: Any) -> list[bytes]:
        env["wsgi.input"].read(int(env["CONTENT_LENGTH"]))
        start_response("200 OK", json_headers(ANSWER))
        try:
            raise ValueError("the model server fell over")
        except ValueError:
            error = b'{"error": {"message": "boom"}}'
            start_response("500 Internal Server Error", json_headers(error), exc_info())
            return [error]

    server = Server().run(wrapped(app), environ(harness.chat_request()))
    assert server.code == 500 and server.body == b'{"error": {"message": "boom"}}'


def test_exc_info_after_the_head_went_out_is_re_raised_into_the_app() -> None:
    data = harness.chat_stream()

    def app(env: Environ, start_response: Any) -> Iterator[bytes]:
        env["wsgi.input"].read(int(env["CONTENT_LENGTH"]))
        start_response("200 OK", sse_headers())
        yield data[:200]
        try:
            raise ValueError("generation failed")
        except ValueError:
            start_response("500 Internal Server Error", [("Content-Type", "text/plain")], exc_info())
            yield b"never"

    with pytest.raises(ValueError, match="generation failed"):
        Server().run(ToolCallWSGIMiddleware(app, dialect="hermes"), environ(harness.chat_request(stream=True)))


@pytest.mark.parametrize("stream", [False, True])
def test_the_write_callable_takes_the_same_road(stream: bool) -> None:
    data = harness.chat_stream() if stream else harness.chat_answer()

    def app(env: Environ, start_response: Any) -> list[bytes]:
        env["wsgi.input"].read(int(env["CONTENT_LENGTH"]))
        write = start_response("200 OK", sse_headers() if stream else json_headers(data))
        for piece in split(data, 64):
            write(piece)
        return []

    server = Server().run(wrapped(app), environ(harness.chat_request(stream=stream)))
    assert b'"tool_calls"' in server.body and b"<tool_call>" not in server.body
    if not stream:
        assert server.header("content-length") == [str(len(server.body))]


def test_threads_sharing_one_instance_do_not_mix() -> None:
    def app(env: Environ, start_response: Any) -> list[bytes]:
        city = json.loads(env["wsgi.input"].read(int(env["CONTENT_LENGTH"])))["messages"][-1]["content"]
        text = harness.RAW_CALL.replace("Paris", city)
        start_response("200 OK", sse_headers())
        return split(harness.chat_stream(text), 9)

    middleware = ToolCallWSGIMiddleware(app, dialect="hermes")
    cities = [f"City{n}" for n in range(24)]
    barrier = threading.Barrier(8)

    def one(city: str) -> str:
        req = json.loads(harness.chat_request(stream=True))
        req["messages"][-1]["content"] = city
        if cities.index(city) < 8:
            barrier.wait(timeout=10)
        body = Server().run(middleware, environ(json.dumps(req).encode())).body
        chunks = [c for c in harness.sse_events(body) if c != "[DONE]"]
        call = replay_chat(chunks).choices[0].message.tool_calls[0]
        return str(json.loads(call.function.arguments)["city"])

    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(one, cities)) == cities


def test_on_report_gets_one_record_per_exchange() -> None:
    records: list[dict[str, Any]] = []
    config = ToolCallConfig(dialect="hermes", on_report=records.append)
    app = scripted("200 OK", sse_headers(), [harness.chat_stream()])
    Server().run(validator_free := ToolCallWSGIMiddleware(app, config), environ(harness.chat_request(stream=True)))
    assert validator_free.config is config
    assert len(records) == 1 and records[0]["calls_emitted"] == 1 and records[0]["rewritten_request"]


class _AppBroke(RuntimeError):
    pass


def test_an_app_failing_mid_stream_ends_the_client_stream_then_reaches_the_server() -> None:
    # The WSGI twin of tests/asgi/test_upstream_failure.py: text held back as a possible marker
    # goes out as text, the stream ends with an error chunk and [DONE], then the server sees the
    # app's own exception (and closes the iterable).
    held = "Sure, let me look <tool"
    events = harness.chat_stream(held, piece=5).split(b"\n\n")[:-3]  # no finish chunk, no [DONE]

    def app(env: Any, start_response: Any) -> Iterator[bytes]:
        env["wsgi.input"].read(int(env["CONTENT_LENGTH"]))
        start_response("200 OK", sse_headers())
        for event in events:
            yield event + b"\n\n"
        raise _AppBroke("the model server went away")

    server = Server()
    with pytest.raises(_AppBroke):
        server.run(ToolCallWSGIMiddleware(app, dialect="hermes"), environ(harness.chat_request(stream=True)))
    payloads = harness.sse_events(b"".join(server.chunks))
    assert payloads[-1] == "[DONE]"
    chunks = payloads[:-1]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == held
    last = chunks[-1]
    assert last["choices"][0]["finish_reason"] == "error" and last["error"]["code"] == "upstream_error"


def test_an_app_failing_before_its_first_chunk_is_left_to_the_server() -> None:
    def app(env: Any, start_response: Any) -> Iterator[bytes]:
        env["wsgi.input"].read(int(env["CONTENT_LENGTH"]))
        start_response("200 OK", sse_headers())
        raise _AppBroke("nothing was sent")
        yield b""  # a generator: it fails on its first iteration

    server = Server()
    with pytest.raises(_AppBroke):
        server.run(ToolCallWSGIMiddleware(app, dialect="hermes"), environ(harness.chat_request(stream=True)))
    assert b"".join(server.chunks) == b""
