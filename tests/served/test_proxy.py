"""`toolcall-middleware serve --upstream`: the reverse proxy on loopback, in front of the raw demo model
and of a misbehaving upstream, driven by the official `openai` and `openai-agents` SDKs and httpx."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest
from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled

from tests.servers import ROOT, free_port, serve, uvicorn

set_tracing_disabled(True)

PARAMS = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
CHAT_TOOLS: Any = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather", "parameters": PARAMS}}
]
RESPONSES_TOOLS: Any = [{"type": "function", "name": "get_weather", "description": "Weather", "parameters": PARAMS}]
QUESTION = "What is the weather in Paris?"


def proxy(upstream: str, *flags: str) -> tuple[list[str], int]:
    port = free_port()
    command = [sys.executable, "-m", "toolcall_middleware.cli", "serve", "--upstream", upstream, "--port", str(port)]
    return [*command, "--log-level", "warning", *flags], port


@pytest.fixture(scope="module")
def raw_model() -> Iterator[str]:
    command, port = uvicorn("examples.demo_model:app")
    with serve(["env", "DEMO_DIALECT=kimi_k2", *command], port) as base:
        yield base


@pytest.fixture(scope="module")
def proxied(raw_model: str) -> Iterator[str]:
    with serve(*proxy(raw_model, "--dialect", "kimi_k2")) as base:
        yield base


@pytest.fixture(scope="module")
def odd_upstream() -> Iterator[str]:
    with serve(*uvicorn("tests.served.upstream:app")) as base:
        yield base


@pytest.fixture(scope="module")
def odd_proxied(odd_upstream: str) -> Iterator[str]:
    with serve(*proxy(odd_upstream, "--dialect", "hermes", "--timeout", "5", "--read-timeout", "0.5")) as base:
        yield base


def client(base: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base + "/v1", api_key="test", max_retries=0)


def test_raw_model_alone_writes_markup(raw_model: str) -> None:
    """Without the proxy the client sees the model's raw Kimi markup as text, and no tool call."""
    answer = client(raw_model).chat.completions.create(
        model="demo", messages=[{"role": "user", "content": QUESTION}], tools=CHAT_TOOLS
    )
    message = answer.choices[0].message
    assert message.tool_calls is None
    assert "<|tool_calls_section_begin|>" not in (message.content or "")  # no manifest reached it: no call
    assert message.content is not None and message.content.startswith("<think>")


@pytest.mark.parametrize("stream", [False, True])
def test_chat_full_tool_turn(proxied: str, stream: bool) -> None:
    sdk = client(proxied)
    messages: list[Any] = [{"role": "user", "content": QUESTION}]

    def ask() -> Any:
        if not stream:
            return sdk.chat.completions.create(model="demo", messages=messages, tools=CHAT_TOOLS)
        with sdk.chat.completions.stream(model="demo", messages=messages, tools=CHAT_TOOLS) as events:
            return events.get_final_completion()

    first = ask().choices[0]
    assert first.finish_reason == "tool_calls"
    assert first.message.content is None
    calls = first.message.tool_calls or []
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [("get_weather", {"city": "Paris"})]
    # Kimi writes its own ids (`functions.get_weather:0`, restarting in every answer); the client gets
    # a unique OpenAI-style one (`call_ids="openai"`), mapped back to Kimi's in the next request.
    assert re.fullmatch(r"call_[A-Za-z0-9]{24}", calls[0].id)
    messages.append(first.message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": calls[0].id, "content": "Sunny, 21 C"})
    second = ask().choices[0]
    assert second.finish_reason == "stop"
    assert second.message.tool_calls is None
    assert second.message.content == "get_weather returned: Sunny, 21 C"


@pytest.mark.parametrize("stream", [False, True])
def test_responses_full_tool_turn(proxied: str, stream: bool) -> None:
    sdk = client(proxied)
    items: list[Any] = [{"role": "user", "content": QUESTION}]

    def ask() -> Any:
        if not stream:
            return sdk.responses.create(model="demo", input=items, tools=RESPONSES_TOOLS)
        with sdk.responses.stream(model="demo", input=items, tools=RESPONSES_TOOLS) as events:
            return events.get_final_response()

    first = ask()
    calls = [item for item in first.output if item.type == "function_call"]
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("get_weather", {"city": "Paris"})]
    assert [item.type for item in first.output] == ["reasoning", "function_call"]
    items.append(
        {"type": "function_call", "call_id": calls[0].call_id, "name": "get_weather", "arguments": calls[0].arguments}
    )
    items.append({"type": "function_call_output", "call_id": calls[0].call_id, "output": "Sunny, 21 C"})
    second = ask()
    assert second.output_text == "get_weather returned: Sunny, 21 C"
    assert not any(item.type == "function_call" for item in second.output)


CITIES: list[str] = []


@function_tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    CITIES.append(city)
    return f"Sunny, 21 C in {city}"


@pytest.mark.parametrize("path", ["responses", "chat"])
def test_agents_sdk_completes_its_loop_through_the_proxy(proxied: str, path: str) -> None:
    async def run() -> Any:
        sdk = openai.AsyncOpenAI(base_url=proxied + "/v1", api_key="test", max_retries=0)
        model: Any = (
            OpenAIResponsesModel(model="demo", openai_client=sdk)
            if path == "responses"
            else OpenAIChatCompletionsModel(model="demo", openai_client=sdk)
        )
        agent = Agent(name="weather", instructions="Answer weather questions.", tools=[get_weather], model=model)
        whole = await Runner.run(agent, QUESTION)
        streamed = Runner.run_streamed(agent, QUESTION)
        kinds = [event.type async for event in streamed.stream_events()]
        await sdk.close()
        return whole, streamed, kinds

    CITIES.clear()
    whole, streamed, kinds = asyncio.run(run())
    assert whole.final_output == "get_weather returned: Sunny, 21 C in Paris"
    assert streamed.final_output == "get_weather returned: Sunny, 21 C in Paris"
    assert "run_item_stream_event" in kinds
    assert CITIES == ["Paris", "Paris"]


def test_health_is_answered_by_the_proxy() -> None:
    down = f"http://127.0.0.1:{free_port()}"
    with serve(*proxy(down)) as base:
        health = httpx.get(base + "/healthz")
        assert health.status_code == 200
        assert health.json() == {"status": "ok", "upstream": down}
        # Everything else goes to the upstream, which is down: an OpenAI-style 502.
        with pytest.raises(openai.APIStatusError) as caught:
            client(base).chat.completions.create(model="qwen3-8b", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.status_code == 502
    error = caught.value.body
    assert isinstance(error, dict) and error["code"] == "upstream_unreachable"
    assert set(error) == {"message", "type", "param", "code"} and down in error["message"]


def test_upstream_timeout_is_504(odd_proxied: str) -> None:
    answer = httpx.post(odd_proxied + "/v1/slow", json={"x": 1}, timeout=20)
    assert answer.status_code == 504
    assert answer.json()["error"]["code"] == "upstream_timeout"
    assert answer.json()["error"]["type"] == "upstream_error"


def test_upstream_error_status_passes_through(odd_proxied: str) -> None:
    with pytest.raises(openai.APIStatusError) as caught:
        client(odd_proxied).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], tools=CHAT_TOOLS
        )
    assert caught.value.status_code == 418
    assert caught.value.response.headers["x-upstream"] == "teapot"
    assert caught.value.body == {
        "message": "I am a teapot",
        "type": "invalid_request_error",
        "param": "model",
        "code": None,
    }


def test_headers_path_query_and_streamed_body(odd_upstream: str, odd_proxied: str) -> None:
    def body() -> Iterator[bytes]:
        yield b"first part, "
        yield b"second part"

    headers = {"x-custom": "yes", "connection": "keep-alive, x-hop", "x-hop": "1", "te": "trailers"}
    answer = httpx.post(odd_proxied + "/api/echo?a=1&b=two", content=body(), headers=headers)
    assert answer.status_code == 200
    seen = answer.json()
    sent = {k: v for k, v in seen["headers"]}
    assert seen["path"] == "/api/echo" and seen["query"] == "a=1&b=two" and seen["method"] == "POST"
    assert seen["body"] == "first part, second part"
    assert sent["host"] == odd_upstream.removeprefix("http://")
    assert sent["x-custom"] == "yes"
    assert "x-hop" not in sent and "te" not in sent
    assert answer.headers["x-upstream"] == "echo"
    assert "x-drop-me" not in answer.headers and "keep-alive" not in answer.headers
    assert answer.headers.get_list("server") == ["uvicorn"]  # the upstream's, and only one


def test_client_disconnect_closes_the_upstream_response(odd_upstream: str, odd_proxied: str) -> None:
    before = httpx.get(odd_upstream + "/stats").json()
    with httpx.stream("POST", odd_proxied + "/forever", content=b"{}") as response:
        lines = response.iter_lines()
        assert next(lines) == "tick" and next(lines) == "tick"
    deadline = time.monotonic() + 10
    while True:
        stats = httpx.get(odd_upstream + "/stats").json()
        if stats["forever_closed"] > before["forever_closed"]:
            break
        assert time.monotonic() < deadline, f"the upstream stream was never closed: {stats}"
        time.sleep(0.05)
    assert stats["forever_started"] == before["forever_started"] + 1


def test_a_request_nested_too_deep_is_a_400_from_the_proxy(proxied: str) -> None:
    """A 1,000-deep body is refused before it reaches the upstream (it was a 500 with a traceback)."""
    deep = b'{"model":"demo","messages":[{"role":"user","content":' + b"[" * 1000 + b"1" + b"]" * 1000 + b"}]}"
    answer = httpx.post(proxied + "/v1/chat/completions", content=deep, headers={"content-type": "application/json"})
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "nested_too_deep"
    with pytest.raises(openai.BadRequestError, match="deeper than 128 levels"):
        content: Any = json.loads("[" * 300 + '"hi"' + "]" * 300)
        client(proxied).chat.completions.create(model="demo", messages=[{"role": "user", "content": content}])


@pytest.mark.parametrize("suffix", ["", "/v1", "/v1/"])
def test_an_upstream_base_url_with_or_without_v1_reaches_the_same_path(raw_model: str, suffix: str) -> None:
    """`--upstream http://host:8000/v1`, as vLLM and LiteLLM users write base URLs, works as the
    bare host does: the client's `/v1/chat/completions` is not sent to `/v1/v1/…`."""
    command, port = proxy(raw_model + suffix, "--dialect", "kimi_k2")
    with serve(command, port) as base:
        answer = client(base).chat.completions.create(
            model="demo", messages=[{"role": "user", "content": QUESTION}], tools=CHAT_TOOLS
        )
    call = (answer.choices[0].message.tool_calls or [None])[0]
    assert call is not None and call.function.name == "get_weather"


def test_url_for_keeps_a_prefix_the_client_did_not_write() -> None:
    from toolcall_middleware.proxy import ProxyApp

    assert str(ProxyApp("http://h:1/v1").url_for(b"/v1/chat/completions")) == "http://h:1/v1/chat/completions"
    assert str(ProxyApp("http://h:1").url_for(b"/v1/chat/completions", b"a=1")) == "http://h:1/v1/chat/completions?a=1"
    assert str(ProxyApp("http://h:1/api").url_for(b"/v1/models")) == "http://h:1/api/v1/models"
    assert str(ProxyApp("http://h:1/v1").url_for(b"/v10/x")) == "http://h:1/v1/v10/x"


def said_at_start(command: list[str]) -> str:
    """The first lines `serve` writes to standard error (what it serves, the route map)."""
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        lines = [proc.stderr.readline() for _ in range(5)] if proc.stderr else []
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return "".join(lines)


def test_serve_says_where_it_forwards(raw_model: str) -> None:
    command, _ = proxy(raw_model + "/v1", "--dialect", "kimi_k2")
    command[command.index("warning")] = "info"
    said = said_at_start(command)
    assert f"POST /v1/chat/completions -> {raw_model}/v1/chat/completions" in said
    # The demo model serves no Messages route: found at start, and bridged through its Chat route.
    bridged = f"POST /v1/messages -> {raw_model}/v1/chat/completions (bridged: messages-to-chat; the upstream lacks"
    assert bridged in said


def running(command: list[str], port: int) -> subprocess.Popen[str]:
    """`serve` started with its standard error kept, once it answers `/healthz`."""
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    deadline = time.monotonic() + 20
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=0.5)
            return proc
        except httpx.TransportError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise RuntimeError("serve did not start") from None
            time.sleep(0.1)


def test_serve_shows_its_exchanges_metrics_and_readiness(raw_model: str) -> None:
    """Out of the box: a record line per exchange at INFO, `/metrics`, and `/readyz`."""
    command, port = proxy(raw_model, "--dialect", "kimi_k2")
    command[command.index("warning")] = "info"  # serve's default level
    proc = running(command, port)
    base = f"http://127.0.0.1:{port}"
    try:
        client(base).chat.completions.create(
            model="demo", messages=[{"role": "user", "content": QUESTION}], tools=CHAT_TOOLS
        )
        metrics = httpx.get(base + "/metrics").text
        ready = httpx.get(base + "/readyz")
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert 'outcome="rewritten",route="/v1/chat/completions"} 1.0' in metrics
    assert 'toolcall_calls_emitted_total{api="chat",dialect="kimi_k2"} 1.0' in metrics
    assert ready.status_code == 200 and ready.json()["status"] == "ready"
    assert "toolcall-middleware exchange chat POST /v1/chat/completions 200 rewritten dialect=kimi_k2" in err


def test_readyz_says_the_upstream_is_down() -> None:
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    command, port = proxy(dead, "--dialect", "hermes")
    proc = running(command, port)
    try:
        ready = httpx.get(f"http://127.0.0.1:{port}/readyz")
        healthy = httpx.get(f"http://127.0.0.1:{port}/healthz")
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    assert ready.status_code == 503 and ready.json()["status"] == "unavailable" and "Connect" in ready.json()["error"]
    assert healthy.status_code == 200  # the proxy itself is alive


def test_the_proxys_own_errors_reach_anthropic_clients_in_their_shape() -> None:
    """An upstream that cannot be reached: a 502 in the client API's error shape, Anthropic's for
    an Anthropic client (the proxy's own error is OpenAI-shaped; the middleware writes it anew)."""
    down = f"http://127.0.0.1:{free_port()}"
    with serve(*proxy(down, "--dialect", "hermes")) as base:
        anthropic_client = anthropic.Anthropic(base_url=base, api_key="none", max_retries=0)
        with pytest.raises(anthropic.APIStatusError) as caught:
            anthropic_client.messages.create(model="m", max_tokens=8, messages=[{"role": "user", "content": "hi"}])
    assert caught.value.status_code == 502
    body = caught.value.body
    assert isinstance(body, dict) and body["type"] == "error" and body["error"]["type"] == "api_error"
    assert down in body["error"]["message"]
