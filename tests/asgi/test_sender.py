"""The send the app is given (`ASGIRequest._send`) and the keep-alive around the server's send.

The keep-alive reads a message as being written until the server's awaitable for it ends (no ping
starts meanwhile, and the silence counts from its end), however it ends (done, failed, cancelled),
whatever the awaitable is (a coroutine, a future, another); a fast path that raises is logged and
the rest passes through.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from tests.asgi.harness import (
    RAW_CALL,
    SSE_HEADERS,
    Receive,
    Recorder,
    body,
    chat_request,
    chat_stream,
    request,
    run,
    scope,
    start,
)
from toolcall_middleware import ToolCallMiddleware
from toolcall_middleware._asgi_request import ASGIRequest
from toolcall_middleware._keepalive import PING_COMMENT, KeepAlive
from toolcall_middleware.core._answer import Answer


def events(stream: bytes) -> list[bytes]:
    """The stream as a host sends it: one SSE event per message."""
    return [e + b"\n\n" for e in stream.split(b"\n\n") if e]


def streaming_app(stall_at: int | None = None, stall: float = 0.0, piece: int = 4) -> Any:
    # Prose in small chunks (the lane's), then a call (the general path's).
    stream = events(chat_stream("Sure, I can look up the weather in Paris for you right now. " + RAW_CALL, piece))

    async def app(scope_: Any, receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        await send(start(200, SSE_HEADERS))
        for n, event in enumerate(stream):
            if n == stall_at:
                await asyncio.sleep(stall)
            await send(body(event, n < len(stream) - 1))

    return app


def exchange(middleware: ToolCallMiddleware, send: Recorder) -> None:
    run(middleware(scope(), Receive([request(chat_request(stream=True))]), send))


def keepalives(monkeypatch: pytest.MonkeyPatch) -> list[KeepAlive]:
    made: list[KeepAlive] = []
    real = ASGIRequest._keep_alive

    def keep_alive(self: ASGIRequest) -> None:
        real(self)
        if self.keepalive is not None and self.keepalive not in made:
            made.append(self.keepalive)

    monkeypatch.setattr(ASGIRequest, "_keep_alive", keep_alive)
    return made


def test_the_answer_is_rewritten_through_the_send() -> None:
    send = Recorder()
    exchange(ToolCallMiddleware(streaming_app(), dialect="hermes"), send)
    text = send.body
    assert text.endswith(b"data: [DONE]\n\n") and b'"tool_calls"' in text and b"<tool_call>" not in text
    assert b"".join(m.get("body", b"") for m in send.bodies) == text


def test_no_ping_while_the_server_writes_a_message(monkeypatch: pytest.MonkeyPatch) -> None:
    """A slow client: the server's send takes longer than the interval. The keep-alive reads the
    message as being written the whole time, so no ping starts; once it is written, silence counts
    from then: the app's next message, less than an interval later, comes with no ping before it."""
    made = keepalives(monkeypatch)
    order: list[str] = []

    class Slow(Recorder):
        async def __call__(self, message: Any) -> None:
            data = bytes(message.get("body", b""))
            slow = len(self.bodies) == 6  # a text chunk well into the stream: the lane's
            order.append("ping" if data == PING_COMMENT else "message")
            await super().__call__(message)
            if slow:
                order.append("slow")
                assert made and made[0].writing()
                await asyncio.sleep(0.35)
                order.append("end")

    send = Slow()
    # The app waits 0.02 s (a fifth of the interval) after the slow message before its next one.
    middleware = ToolCallMiddleware(streaming_app(stall_at=7, stall=0.02), dialect="hermes", keepalive_interval=0.1)
    exchange(middleware, send)
    assert "slow" in order
    assert "ping" not in order[order.index("slow") : order.index("end") + 2]  # nor before the next message
    assert not made[0].writing() and made[0].pings == 0
    assert send.body.endswith(b"data: [DONE]\n\n")


def test_pings_still_come_when_the_host_is_silent(monkeypatch: pytest.MonkeyPatch) -> None:
    made = keepalives(monkeypatch)
    send = Recorder()
    middleware = ToolCallMiddleware(streaming_app(stall_at=5, stall=0.35), dialect="hermes", keepalive_interval=0.1)
    exchange(middleware, send)
    bodies = [bytes(m.get("body", b"")) for m in send.bodies]
    assert bodies.count(PING_COMMENT) >= 2 and made[0].pings == bodies.count(PING_COMMENT)
    assert not made[0].writing()


def test_a_failing_or_cancelled_server_send_is_no_longer_being_written(monkeypatch: pytest.MonkeyPatch) -> None:
    made = keepalives(monkeypatch)

    async def go(fail: type[BaseException]) -> None:
        calls = 0

        async def send(message: Any) -> None:
            nonlocal calls
            calls += 1
            if calls == 4:  # a text chunk of the stream under way
                if fail is asyncio.CancelledError:
                    await asyncio.sleep(10)
                raise fail("the client is gone")

        middleware = ToolCallMiddleware(streaming_app(), dialect="hermes", keepalive_interval=30)
        task = asyncio.ensure_future(middleware(scope(), Receive([request(chat_request(stream=True))]), send))
        if fail is asyncio.CancelledError:
            await asyncio.sleep(0.05)
            task.cancel()
        with pytest.raises(fail):
            await task

    for fail in (OSError, asyncio.CancelledError):
        made.clear()
        run(go(fail))
        assert made and not made[0].writing()


def test_a_fast_path_that_raises_is_logged_and_the_rest_passes_through(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real = Answer.feed_event

    def broken(self: Answer, raw: bytes) -> bytes | None:
        out = real(self, raw)
        if out is not None:  # the first chunk the fast path takes: a bug
            raise ValueError("a bug in the fast path")
        return out

    monkeypatch.setattr(Answer, "feed_event", broken)
    send = Recorder()
    with caplog.at_level(logging.ERROR, logger="toolcall_middleware"):
        exchange(ToolCallMiddleware(streaming_app(), dialect="hermes"), send)
    assert "rewriting failed" in caplog.text and "a bug in the fast path" in caplog.text
    datas = [line[6:] for line in send.body.split(b"\n") if line.startswith(b"data: {")]
    content = "".join(json.loads(d)["choices"][0]["delta"].get("content") or "" for d in datas)
    assert "<tool_call>" in content  # passed through from there on, as the host wrote it
    assert send.body.endswith(b"data: [DONE]\n\n")


def test_a_server_send_that_is_not_a_coroutine_is_awaited_as_such(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server whose `send` returns another awaitable (a future its transport resolves, here a
    step of the loop later): each message is written, in order, and read as being written until
    its future is done."""
    made = keepalives(monkeypatch)
    written: list[bytes] = []
    counted: list[int] = []

    def send(message: Any) -> asyncio.Future[None]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        if made:
            counted.append(made[0].writing())  # (the message before this one has ended)

        def done() -> None:
            written.append(bytes(message.get("body", b"")))
            future.set_result(None)

        loop.call_soon(done)
        return future

    middleware = ToolCallMiddleware(streaming_app(), dialect="hermes", keepalive_interval=30)
    run(middleware(scope(), Receive([request(chat_request(stream=True))]), send))
    stream = b"".join(written)
    assert stream.endswith(b"data: [DONE]\n\n") and b'"tool_calls"' in stream and b"<tool_call>" not in stream
    assert made and not made[0].writing()
    assert counted and set(counted) == {False}  # never two at once: each awaited to its end


def test_a_server_send_that_never_suspends_counts_each_message_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server whose send writes to its transport and returns without yielding (uvicorn's, while
    the client keeps up): every message is written once, in order, each read as being written
    while the server writes it, and none left so after."""
    made = keepalives(monkeypatch)
    written: list[bytes] = []
    counted: list[int] = []

    async def send(message: Any) -> None:
        if made:
            counted.append(made[0].writing())
        written.append(bytes(message.get("body", b"")))

    middleware = ToolCallMiddleware(streaming_app(), dialect="hermes", keepalive_interval=30)
    run(middleware(scope(), Receive([request(chat_request(stream=True))]), send))
    stream = b"".join(written)
    assert stream.endswith(b"data: [DONE]\n\n") and b'"tool_calls"' in stream and b"<tool_call>" not in stream
    assert made and not made[0].writing() and set(counted) == {True}  # each read as written while it is


@pytest.mark.parametrize("interval", [30.0, 0.0])
def test_the_usual_piece_runs_nothing_of_the_keepalives(monkeypatch: pytest.MonkeyPatch, interval: float) -> None:
    """What the keep-alive does (set up, timer, the awaitables it reads) is the same for a stream
    in large chunks as for one in four times as many: nothing of it runs per piece; with the
    keep-alive off, none of it runs at all."""
    calls: list[str] = []

    def counted(name: str, real: Any) -> Any:
        def method(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return real(*args, **kwargs)

        return method

    monkeypatch.setattr(ASGIRequest, "_keep_alive", counted("_keep_alive", ASGIRequest._keep_alive))
    for name in ("__init__", "start", "stop", "readable", "writing", "after_ping", "_wake"):
        monkeypatch.setattr(KeepAlive, name, counted(name, getattr(KeepAlive, name)))
    ran, written = [], []
    for piece in (16, 4):
        calls.clear()
        send = Recorder()
        exchange(ToolCallMiddleware(streaming_app(piece=piece), dialect="hermes", keepalive_interval=interval), send)
        assert send.body.endswith(b"data: [DONE]\n\n")
        ran.append(list(calls))
        written.append(len(send.bodies))
    assert written[1] > written[0] + 10  # (many more pieces written)
    assert ran[0] == ran[1] and ("__init__" in ran[0]) == bool(interval)


def test_a_server_send_that_returns_another_awaitable_is_read_through_a_coroutine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server whose `send` returns an awaitable that is neither a coroutine nor a future (an
    object with `__await__`): each message is written once, in order, and read as being written
    until it is awaited to its end."""
    made = keepalives(monkeypatch)
    written: list[bytes] = []
    during: list[bool] = []

    class Write:
        def __init__(self, message: Any) -> None:
            self.message = message

        def __await__(self) -> Any:
            yield from asyncio.sleep(0).__await__()  # (a step of the loop, as a transport's write may take)
            if made:
                during.append(made[0].writing())
            written.append(bytes(self.message.get("body", b"")))

    middleware = ToolCallMiddleware(streaming_app(), dialect="hermes", keepalive_interval=30)
    run(middleware(scope(), Receive([request(chat_request(stream=True))]), Write))
    stream = b"".join(written)
    assert stream.endswith(b"data: [DONE]\n\n") and b'"tool_calls"' in stream and b"<tool_call>" not in stream
    assert during and set(during) == {True} and not made[0].writing()
