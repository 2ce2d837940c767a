"""What one request costs the host, and what a client gets when the middleware refuses, through
real servers: the ASGI middleware under uvicorn, the WSGI middleware under gunicorn, and `serve`
as a process, driven by the official openai and anthropic SDKs with their default retries.

The host (`tests.generations`) counts its generations per request. An answer that broke the
request's tool rules was a 500, which the SDKs retry: one `create()` cost three generations. It
is a 502 marked `x-should-retry: false` now, and costs one, unless `regenerate` asks the host
again, at most that many times. A body that is not JSON never reaches the host, on any route.
The ends of streams are final: nothing after a failure the middleware found at the end of an
incremental stream, and a store that fails at the end of a Responses stream ends it in `error`.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.generations import LOOKUP, host
from tests.servers import free_port, gunicorn, serve, uvicorn
from toolcall_middleware import ToolCallMiddleware
from toolcall_middleware._records import record_line

CHAT_TOOL: Any = {"type": "function", "function": LOOKUP}
STRICT_TOOL: Any = {"type": "function", "function": {**LOOKUP, "strict": True}}


def serve_command(upstream: str, *flags: str) -> tuple[list[str], int]:
    port = free_port()
    command = [sys.executable, "-m", "toolcall_middleware.cli", "serve", "--upstream", upstream, "--port", str(port)]
    return [*command, "--dialect", "hermes", "--log-level", "warning", *flags], port


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with serve(*uvicorn("tests.generations:host")) as base:
        yield base


@pytest.fixture(scope="module", params=["uvicorn", "gunicorn", "serve"])
def plain(request: pytest.FixtureRequest, upstream: str) -> Iterator[tuple[str, str]]:
    """(the middleware's base URL, the base URL the host's count is read at), regenerate=0."""
    if request.param == "serve":
        with serve(*serve_command(upstream)) as base:
            yield base, upstream
        return
    command, port = (
        uvicorn("tests.generations:plain") if request.param == "uvicorn" else gunicorn("tests.generations:wsgi_plain")
    )
    with serve(command, port) as base:
        yield base, base


@pytest.fixture(scope="module", params=["uvicorn", "gunicorn", "serve"])
def regenerating(request: pytest.FixtureRequest, upstream: str) -> Iterator[tuple[str, str]]:
    """As `plain`, with regenerate=2."""
    if request.param == "serve":
        with serve(*serve_command(upstream, "--regenerate", "2")) as base:
            yield base, upstream
        return
    command, port = (
        uvicorn("tests.generations:regenerating")
        if request.param == "uvicorn"
        else gunicorn("tests.generations:wsgi_regenerating")
    )
    with serve(command, port) as base:
        yield base, base


def generations(counted_at: str, nonce: str) -> int:
    return int(httpx.get(counted_at + "/generations", params={"nonce": nonce}).json()["generations"])


def ask(
    base: str, script: str, *, tools: Any = (CHAT_TOOL,), stream: bool = False, retries: int = 2, **extra: Any
) -> tuple[Any, str]:
    """One `create()`, by default with the SDK's default retries (2); (its completion, or the error
    it raised; the nonce)."""
    nonce = uuid.uuid4().hex
    client = openai.OpenAI(base_url=base + "/v1", api_key="test", max_retries=retries)
    messages: Any = [{"role": "user", "content": f"nonce={nonce} script={script}"}]
    try:
        if stream:
            for _ in client.chat.completions.create(
                model="qwen3", messages=messages, tools=tools, stream=True, **extra
            ):
                pass
            return None, nonce
        return client.chat.completions.create(model="qwen3", messages=messages, tools=tools, **extra), nonce
    except openai.APIError as error:
        return error, nonce


# -- our refusals are not retried blindly ---------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "tools", "extra", "code"),
    [
        ("text", [CHAT_TOOL], {"tool_choice": "required"}, "tool_call_required"),
        ("badargs", [STRICT_TOOL], {}, "invalid_tool_arguments"),
    ],
    ids=["tool_choice", "strict"],
)
def test_a_broken_answer_costs_one_generation(
    plain: tuple[str, str], script: str, tools: Any, extra: dict[str, Any], code: str
) -> None:
    base, counted_at = plain
    error, nonce = ask(base, script, tools=tools, **extra)
    assert isinstance(error, openai.InternalServerError), error
    assert error.status_code == 502 and error.response.headers["x-should-retry"] == "false"
    assert isinstance(error.body, dict) and error.body["code"] == code
    assert generations(counted_at, nonce) == 1  # (was 3: the SDK's two retries)


def test_regenerate_asks_the_host_again_until_the_call_comes(regenerating: tuple[str, str]) -> None:
    """No retry of the SDK's (`max_retries=0`): the second generation is the middleware's."""
    base, counted_at = regenerating
    completion, nonce = ask(base, "text,call", retries=0, tool_choice="required")
    assert not isinstance(completion, Exception), completion
    calls = completion.choices[0].message.tool_calls
    assert calls and calls[0].function.name == "lookup" and json.loads(calls[0].function.arguments) == {"q": "paris"}
    assert generations(counted_at, nonce) == 2
    completion, nonce = ask(base, "badargs,call", retries=0, tools=[STRICT_TOOL])
    assert not isinstance(completion, Exception) and completion.choices[0].finish_reason == "tool_calls"
    assert generations(counted_at, nonce) == 2


def test_the_record_counts_the_generations() -> None:
    """Each exchange's record (`on_report`, the log line) says how many generations it took."""
    records: list[dict[str, Any]] = []
    app = ToolCallMiddleware(host, dialect="hermes", regenerate=1, on_report=records.append)
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    client = openai.AsyncOpenAI(
        api_key="test", base_url="http://model.test/v1", http_client=httpx.AsyncClient(transport=transport)
    )

    async def create(script: str) -> Any:
        messages: Any = [{"role": "user", "content": f"nonce={uuid.uuid4().hex} script={script}"}]
        try:
            return await client.chat.completions.create(
                model="qwen3", messages=messages, tools=[CHAT_TOOL], tool_choice="required"
            )
        except openai.APIStatusError as error:
            return error

    assert not isinstance(asyncio.run(create("text,call")), Exception)
    assert isinstance(asyncio.run(create("text")), openai.InternalServerError)
    assert [(r["generations"], r["outcome"]) for r in records] == [(2, "rewritten"), (2, "policy_error")]
    assert "generations=2" in record_line(records[0])
    assert any("generation 1 failed (tool_call_required)" in note for note in records[0]["notes"])


def test_regenerate_is_bounded(regenerating: tuple[str, str]) -> None:
    base, counted_at = regenerating
    error, nonce = ask(base, "text", tool_choice="required")
    assert isinstance(error, openai.InternalServerError) and error.status_code == 502
    assert generations(counted_at, nonce) == 3  # the first and two more, and no retry of the SDK's


def test_a_stream_is_one_generation(regenerating: tuple[str, str]) -> None:
    """A stream's head goes out before its verdict: its failure is in the stream, and final."""
    base, counted_at = regenerating
    error, nonce = ask(base, "text", stream=True, tool_choice="required")
    assert isinstance(error, openai.APIError) and "tool_choice" in error.message
    assert generations(counted_at, nonce) == 1


def test_a_refused_request_is_final(plain: tuple[str, str]) -> None:
    base, _ = plain
    answer = httpx.post(base + "/v1/chat/completions", json={"model": "qwen3", "messages": [], "tools": "nope"})
    assert answer.status_code == 400 and answer.headers["x-should-retry"] == "false"


@pytest.fixture(scope="module")
def messages_bridged() -> Iterator[str]:
    with serve(*uvicorn("tests.generations:bridged")) as base:
        yield base


def test_the_anthropic_sdk_does_not_retry_a_broken_answer(messages_bridged: str) -> None:
    nonce = uuid.uuid4().hex
    client = anthropic.Anthropic(base_url=messages_bridged, api_key="test")  # max_retries: the default, 2
    with pytest.raises(anthropic.InternalServerError) as failed:
        client.messages.create(
            model="qwen3",
            max_tokens=64,
            tools=[{"name": "lookup", "input_schema": LOOKUP["parameters"]}],
            tool_choice={"type": "any"},
            messages=[{"role": "user", "content": f"nonce={nonce} script=text"}],
        )
    assert failed.value.status_code == 502 and failed.value.response.headers["x-should-retry"] == "false"
    assert generations(messages_bridged, nonce) == 1


# -- bad requests are refused the same way on every route -----------------------------------------


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses", "/v1/messages"])
def test_a_body_that_is_not_json_never_reaches_the_host(plain: tuple[str, str], path: str) -> None:
    base, counted_at = plain
    nonce = uuid.uuid4().hex
    answer = httpx.post(base + path, content=f"{{not json nonce={nonce}", headers={"content-type": "application/json"})
    assert answer.status_code == 400 and answer.headers["x-should-retry"] == "false"
    error = answer.json()["error"]
    assert error["type"] == "invalid_request_error"
    if path != "/v1/messages":
        assert error["code"] == "invalid_json"
    assert generations(counted_at, nonce) == 0  # (the Chat route's host got it, and failed on it)


# -- final means final -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def incremental() -> Iterator[str]:
    with serve(*uvicorn("tests.generations:incremental")) as base:
        yield base


def test_nothing_follows_a_failure_found_at_the_end_of_an_incremental_stream(incremental: str) -> None:
    """The second call is over `max_calls=1`, found once the stream ended (the first was broken off
    by reasoning): what the rules still held goes out before the error and `[DONE]`, nothing after."""
    nonce = uuid.uuid4().hex
    body = {
        "model": "qwen3",
        "stream": True,
        "tools": [CHAT_TOOL],
        "messages": [{"role": "user", "content": f"nonce={nonce} script=brokenoff"}],
    }
    data = httpx.post(incremental + "/v1/chat/completions", json=body).content
    events = [e for e in data.split(b"\n\n") if e.strip()]
    assert events[-1] == b"data: [DONE]" and data.count(b"[DONE]") == 1
    assert json.loads(events[-2][6:])["error"]["code"] == "too_many_tool_calls"
    client = openai.OpenAI(base_url=incremental + "/v1", api_key="test", max_retries=0)
    with pytest.raises(openai.APIError, match="more than 1 tool calls"):
        for _ in client.chat.completions.create(
            model="qwen3", messages=body["messages"], tools=[CHAT_TOOL], stream=True
        ):
            pass


@pytest.fixture(scope="module")
def small_store(upstream: str) -> Iterator[str]:
    flags = ("--bridge", "responses-to-chat", "--store", "memory", "--store-max-bytes", "1000")
    with serve(*serve_command(upstream, *flags)) as base:
        yield base


def test_a_store_failure_at_the_end_of_a_stream_ends_it_in_an_error_event(small_store: str) -> None:
    """The answer is over the store's record limit, found as its `response.completed` was due."""
    request = {"model": "qwen3", "stream": True, "input": f"nonce={uuid.uuid4().hex} script=text"}
    data = httpx.post(small_store + "/v1/responses", json=request).content
    last = [e for e in data.split(b"\n\n") if e.strip()][-1].decode()
    name, payload = last.split("\n", 1)
    event = json.loads(payload.removeprefix("data: "))
    assert name == "event: error" and event["type"] == "error"
    assert event["code"] == "store_unavailable" and "over the store's limit" in event["message"]
    assert b"response.completed" not in data
    client = openai.OpenAI(base_url=small_store + "/v1", api_key="test", max_retries=0)
    with pytest.raises(openai.APIError, match="store is unavailable"):
        for _ in client.responses.create(model="qwen3", input="script=text", stream=True):
            pass
