"""The reverse proxy when its upstream fails after the head: a real raw HTTP server on loopback
(`failing_upstream.py`) that breaks off mid-answer, resets the connection, or goes silent past the
proxy's read timeout, in front of `toolcall-middleware serve` under uvicorn, driven by the official
`openai` and `anthropic` SDKs.

The client used to get a normal end (`finish_reason: "length"`, `[DONE]`), the half-written call
dropped in silence. Now the proxy does what an in-process host failure does: the stream ends in
the API's error shape (Chat `finish_reason: "error"` with `error`, Responses `response.failed`,
Anthropic `error`), the text before the failure still delivered and the half-written call not;
a request for a whole answer gets 502 (broken) or 504 (silent); the proxy logs the cause.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.served.test_proxy import CHAT_TOOLS, RESPONSES_TOOLS, proxy
from tests.servers import free_port, serve
from toolcall_middleware import ToolCallMiddleware
from toolcall_middleware.proxy import ProxyApp

ANTHROPIC_TOOLS: Any = [{"name": "get_weather", "input_schema": {"type": "object"}}]
FAILURES = ["break-off", "reset", "silent"]
SAID = {"break-off": "broke off", "reset": "broke off", "silent": "sent nothing for 0.5 s"}
READ_TIMEOUT = "0.5"


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    port = free_port()
    with serve([sys.executable, "-m", "tests.served.failing_upstream", str(port)], port) as base:
        yield base


@pytest.fixture(scope="module")
def proxied(upstream: str) -> Iterator[str]:
    flags = ("--dialect", "hermes", "--read-timeout", READ_TIMEOUT, "--max-calls", "1", "--keepalive-interval", "0")
    with serve(*proxy(upstream, *flags)) as base:
        yield base


def openai_client(base: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base + "/v1", api_key="test", max_retries=0, timeout=20)


@pytest.mark.parametrize("how", FAILURES)
def test_chat_stream_ends_in_an_error_the_sdk_raises(proxied: str, how: str) -> None:
    content, calls, reasons = "", [], []
    messages: Any = [{"role": "user", "content": "Weather in Paris?"}]
    with pytest.raises(openai.APIError) as caught:
        for chunk in openai_client(proxied).chat.completions.create(
            model=how, messages=messages, tools=CHAT_TOOLS, stream=True
        ):
            for choice in chunk.choices:
                content += choice.delta.content or ""
                calls += choice.delta.tool_calls or []
                reasons.append(choice.finish_reason)
    assert content == "Let me check." and not calls  # the text before it, never the half-written call
    assert "length" not in reasons
    assert SAID[how] in caught.value.message
    assert isinstance(caught.value.body, dict) and caught.value.body["code"] == "upstream_error"


@pytest.mark.parametrize("how", FAILURES)
def test_responses_stream_ends_in_response_failed(proxied: str, how: str) -> None:
    stream = openai_client(proxied).responses.create(model=how, input="Weather?", tools=RESPONSES_TOOLS, stream=True)
    events = list(stream)
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "Let me check."
    assert events[-1].type == "response.failed"
    assert not [e for e in events if e.type == "response.completed"]
    error = events[-1].response.error
    assert error is not None and SAID[how] in error.message


@pytest.mark.parametrize("how", FAILURES)
def test_messages_stream_ends_in_an_error_event(proxied: str, how: str) -> None:
    client = anthropic.Anthropic(api_key="none", base_url=proxied, max_retries=0, timeout=20)
    text = ""
    with pytest.raises(anthropic.APIStatusError) as caught:
        with client.messages.stream(
            model=how, max_tokens=100, messages=[{"role": "user", "content": "Weather?"}], tools=ANTHROPIC_TOOLS
        ) as events:
            for event in events:
                if event.type == "content_block_delta" and event.delta.type == "text_delta":
                    text += event.delta.text
    assert text == "Let me check." and SAID[how] in str(caught.value)


@pytest.mark.parametrize("how", FAILURES)
def test_a_whole_answer_cut_short_is_502_or_504(proxied: str, how: str) -> None:
    status = 504 if how == "silent" else 502
    with pytest.raises(openai.APIStatusError) as caught:
        openai_client(proxied).chat.completions.create(
            model=how, messages=[{"role": "user", "content": "Weather?"}], tools=CHAT_TOOLS
        )
    assert caught.value.status_code == status
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["code"] == ("upstream_timeout" if how == "silent" else "upstream_broke_off")
    assert SAID[how] in caught.value.body["message"]
    client = anthropic.Anthropic(api_key="none", base_url=proxied, max_retries=0, timeout=20)
    with pytest.raises(anthropic.APIStatusError) as anthropic_caught:
        client.messages.create(model=how, max_tokens=10, messages=[{"role": "user", "content": "Weather?"}])
    assert anthropic_caught.value.status_code == status
    body = anthropic_caught.value.body
    kind = "timeout_error" if how == "silent" else "api_error"  # Anthropic's types for 504 and 502
    assert isinstance(body, dict) and body["type"] == "error" and body["error"]["type"] == kind
    assert SAID[how] in body["error"]["message"]


def test_after_our_end_the_rest_is_dropped_and_the_upstream_closed(upstream: str, proxied: str) -> None:
    """A second call breaks `--max-calls 1`: the error, `[DONE]`, and the response ends there,
    while the upstream goes on writing text; its connection is then closed."""
    before = httpx.get(upstream + "/stats").json()
    messages = [{"role": "user", "content": "hi"}]
    request = {"model": "two-calls", "stream": True, "messages": messages, "tools": CHAT_TOOLS}
    answer = httpx.post(proxied + "/v1/chat/completions", json=request, timeout=20)
    body = answer.content
    assert body.endswith(b"data: [DONE]\n\n") and body.count(b"[DONE]") == 1
    assert b"more than 1 tool calls" in body and b"more " not in body.split(b"more than 1")[1]
    deadline = time.monotonic() + 10
    while httpx.get(upstream + "/stats").json()["two_calls_closed"] == before["two_calls_closed"]:
        assert time.monotonic() < deadline, "the upstream's stream was never closed"
        time.sleep(0.05)


def test_the_proxy_logs_the_cause(upstream: str, caplog: pytest.LogCaptureFixture) -> None:
    """In process: the proxy's warning names the upstream failure (here, a reset)."""

    async def ask() -> bytes:
        app = ToolCallMiddleware(ProxyApp(upstream, read_timeout=0.5), dialect="hermes")
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://proxy") as client:
            request = {"model": "reset", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
            answer = await client.post("/v1/chat/completions", json=request)
            return answer.content

    with caplog.at_level(logging.WARNING, logger="toolcall_middleware.proxy"):
        body = asyncio.run(asyncio.wait_for(ask(), 20))
    assert b'"finish_reason":"error"' in body.replace(b" ", b"") and body.endswith(b"data: [DONE]\n\n")
    [record] = [r for r in caplog.records if "broke off mid-answer" in r.getMessage()]
    assert "ReadError" in record.getMessage() or "RemoteProtocolError" in record.getMessage()


def test_a_route_passed_through_is_cut_not_ended(upstream: str, tmp_path: Path) -> None:
    """Not the middleware's route: no API to answer in, so the connection is cut mid-body, which
    every HTTP client reports, rather than ended as if the answer were complete. The proxy logs
    the cause once, and the server no traceback of it."""
    log = tmp_path / "proxy.log"
    command, port = proxy(upstream, "--dialect", "hermes")
    request = {"model": "break-off", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    # (`exec`: the server replaces the shell, so stopping it stops the server, not only the shell)
    with serve(["sh", "-c", "exec " + shlex.join(command) + " 2>" + shlex.quote(str(log))], port) as base:
        with pytest.raises(httpx.RemoteProtocolError):
            httpx.post(base + "/v2/chat/completions", json=request, timeout=20)
    logged = log.read_text()
    assert logged.count("broke off mid-answer: RemoteProtocolError") == 1
    assert "Traceback" not in logged
