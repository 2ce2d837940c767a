"""`serve` in front of an upstream that lacks API routes (`partial_upstream.py`, under uvicorn).

`serve` used to forward a Responses or Messages request to a Chat-only host as it came, and the
client got the host's bare 404; `/readyz` said ready when every route 404'd. Now `serve` probes
each route with an empty POST at start, serves a missing Responses or Messages route through the
Chat bridge (the route map says so; `--bridge` pins a choice), probes a route again when it
answers 404 / 405, names the flag that would serve a request no route can, and `/readyz` fails
while a route in use is missing. Clients are the official openai and anthropic SDKs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.served.test_proxy import RESPONSES_TOOLS, proxy, running, said_at_start
from tests.servers import serve, uvicorn

MESSAGES: Any = [{"role": "user", "content": "What is the weather in Paris?"}]
ANTHROPIC_TOOLS: Any = [
    {"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}
]


def upstream(routes: str) -> Iterator[str]:
    command, port = uvicorn("tests.served.partial_upstream:app")
    with serve(["env", f"ROUTES={routes}", "DEMO_DIALECT=hermes", *command], port) as base:
        yield base


@pytest.fixture(scope="module")
def chat_only() -> Iterator[str]:
    yield from upstream("chat")


@pytest.fixture
def both() -> Iterator[str]:
    yield from upstream("chat,responses")


class Serving:
    """`serve` running in front of `base`, its standard error read when it stops."""

    def __init__(self, base: str, *flags: str) -> None:
        command, port = proxy(base, "--dialect", "hermes", "--store", "memory", *flags)
        self.base = f"http://127.0.0.1:{port}"
        self.proc = running(command, port)

    def stop(self) -> str:
        self.proc.terminate()
        # (a stop may take up to the shutdown grace, 25 s, while a busy machine finishes the answers)
        _, err = self.proc.communicate(timeout=40)
        return err

    def openai(self) -> openai.OpenAI:
        return openai.OpenAI(base_url=self.base + "/v1", api_key="test", max_retries=0, timeout=20)

    def anthropic(self) -> anthropic.Anthropic:
        return anthropic.Anthropic(base_url=self.base, api_key="test", max_retries=0, timeout=20)


def test_a_chat_only_host_serves_responses_and_messages_through_the_bridge(chat_only: str) -> None:
    serving = Serving(chat_only)
    try:
        response = serving.openai().responses.create(model="m", input="Weather in Paris?", tools=RESPONSES_TOOLS)
        message = serving.anthropic().messages.create(
            model="m", max_tokens=256, messages=MESSAGES, tools=ANTHROPIC_TOOLS
        )
        ready = httpx.get(serving.base + "/readyz", timeout=10)
    finally:
        said = serving.stop()
    assert response.status == "completed" and response.output
    assert message.type == "message" and message.content
    assert ready.status_code == 200
    assert f"POST /v1/responses -> {chat_only}/v1/chat/completions (bridged: responses-to-chat" in said
    assert f"POST /v1/messages -> {chat_only}/v1/chat/completions (bridged: messages-to-chat" in said


def test_a_pinned_bridge_is_kept_and_the_error_names_the_flag(chat_only: str) -> None:
    serving = Serving(chat_only, "--bridge", "messages-to-chat")
    try:
        with pytest.raises(openai.NotFoundError) as caught:
            serving.openai().responses.create(model="m", input="Weather?", tools=RESPONSES_TOOLS)
        ready = httpx.get(serving.base + "/readyz", timeout=10)
    finally:
        said = serving.stop()
    assert "--bridge responses-to-chat" in caught.value.message
    assert ready.status_code == 503 and "--bridge responses-to-chat" in ready.json()["error"]
    assert f"POST /v1/responses -> {chat_only}/v1/responses (404/405: the upstream lacks it" in said


def test_readyz_fails_when_no_route_is_served() -> None:
    for base in upstream(""):
        serving = Serving(base)
        try:
            ready = httpx.get(serving.base + "/readyz", timeout=10)
            healthy = httpx.get(serving.base + "/healthz", timeout=10)
        finally:
            serving.stop()
        assert ready.status_code == 503 and "POST /v1/chat/completions answers 404/405" in ready.json()["error"]
        assert "is --upstream the right URL?" in ready.json()["error"]
        assert healthy.status_code == 200  # liveness only


def test_a_route_gone_while_running_is_found_and_bridged(both: str) -> None:
    serving = Serving(both)
    try:
        assert httpx.get(serving.base + "/readyz", timeout=10).status_code == 200
        client = serving.openai()
        # A 404 on a route that is there (vLLM's unknown model) is the host's, as it came.
        with pytest.raises(openai.NotFoundError) as unknown:
            client.chat.completions.create(model="no-such-model", messages=MESSAGES)
        httpx.post(both + "/drop?api=responses", timeout=10)
        with pytest.raises(openai.NotFoundError) as gone:
            client.responses.create(model="m", input="Weather?")
        again = client.responses.create(model="m", input="Weather in Paris?", tools=RESPONSES_TOOLS)
        ready = httpx.get(serving.base + "/readyz", timeout=10)
    finally:
        said = serving.stop()
    assert "does not exist" in unknown.value.message
    assert "does not serve POST /v1/responses" in gone.value.message and "send it again" in gone.value.message
    assert again.status == "completed" and again.output  # through the Chat bridge now
    assert ready.status_code == 200
    assert "does not serve POST /v1/responses" in said and "bridges now: messages-to-chat, responses-to-chat" in said


def test_readyz_finds_a_route_gone_under_a_pinned_bridge(both: str) -> None:
    serving = Serving(both, "--bridge", "messages-to-chat")
    try:
        assert httpx.get(serving.base + "/readyz", timeout=10).status_code == 200
        httpx.post(both + "/drop?api=responses", timeout=10)
        ready = httpx.get(serving.base + "/readyz", timeout=10)
    finally:
        serving.stop()
    assert ready.status_code == 503 and "POST /v1/responses answers 404/405" in ready.json()["error"]
    assert "--bridge responses-to-chat" in ready.json()["error"]


def test_an_upstream_down_at_start_is_learnt_when_it_answers() -> None:
    command, port = uvicorn("tests.served.partial_upstream:app")
    serving = Serving(f"http://127.0.0.1:{port}")  # nothing listens there yet: no route known
    try:
        with serve(["env", "ROUTES=chat", "DEMO_DIALECT=hermes", *command], port):
            client = serving.openai()
            with pytest.raises(openai.NotFoundError) as gone:
                client.responses.create(model="m", input="Weather?")
            again = client.responses.create(model="m", input="Weather in Paris?", tools=RESPONSES_TOOLS)
    finally:
        serving.stop()
    assert "send it again" in gone.value.message
    assert again.status == "completed" and again.output


def test_the_start_up_map_of_a_host_that_serves_everything_is_unchanged(both: str) -> None:
    said = said_at_start(proxy(both, "--dialect", "hermes")[0])
    assert f"POST /v1/responses -> {both}/v1/responses\n" in said
    assert f"POST /v1/messages -> {both}/v1/chat/completions (bridged: messages-to-chat" in said
