"""An upstream whose 2xx is not its API's body (a proxy's HTML error page), through `serve`.

The upstream (`failing_upstream.py`, model `html` / `html-as-sse`) answers `200 text/html`, or the
same page under `text/event-stream`. The client used to get the page as it came: the openai SDK
failed with `'str' object has no attribute 'choices'` and a stream yielded nothing. Now a whole
answer is a 502 in the client API's error shape and a stream ends in its API's stream error, each
raised by the official SDKs, and `serve` logs what came. In process the host is the user's own
code: its answer still passes through, with a warning (`tests/asgi/test_surprises.py`).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.served.test_proxy import CHAT_TOOLS, RESPONSES_TOOLS, proxy
from tests.served.test_proxy_failures import openai_client, upstream
from tests.servers import serve

ANTHROPIC_TOOLS: Any = [{"name": "get_weather", "input_schema": {"type": "object"}}]
MESSAGES: Any = [{"role": "user", "content": "Weather in Paris?"}]
HOW = ["html", "html-as-sse"]
__all__ = ["upstream"]  # (a fixture)


@pytest.fixture(scope="module")
def logged(upstream: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """`serve` in front of the upstream, its standard error in a file."""
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    command, port = proxy(upstream, "--dialect", "hermes", "--keepalive-interval", "0", "--store", "memory")
    with serve(["sh", "-c", "exec " + shlex.join(command) + " 2>" + shlex.quote(str(log))], port) as base:
        yield base, log


def anthropic_client(base: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=base, api_key="test", max_retries=0, timeout=20)


def test_a_whole_chat_answer_is_a_502_the_sdk_raises(logged: tuple[str, Path]) -> None:
    with pytest.raises(openai.APIStatusError) as caught:
        openai_client(logged[0]).chat.completions.create(model="html", messages=MESSAGES, tools=CHAT_TOOLS)
    assert caught.value.status_code == 502
    body = caught.value.response.json()
    assert set(body["error"]) >= {"message", "type", "code"} and "chat answer" in body["error"]["message"]
    assert "<html>" not in caught.value.response.text


@pytest.mark.parametrize("how", HOW)
def test_a_chat_stream_ends_in_its_error(logged: tuple[str, Path], how: str) -> None:
    with pytest.raises(openai.APIError) as caught:
        for _ in openai_client(logged[0]).chat.completions.create(
            model=how, messages=MESSAGES, tools=CHAT_TOOLS, stream=True
        ):
            pass
    assert "chat answer" in caught.value.message


def test_responses_whole_and_streamed(logged: tuple[str, Path]) -> None:
    client = openai_client(logged[0])
    for stream in (False, True):  # a page whose head is not out yet: a 502, streamed or not
        with pytest.raises(openai.APIStatusError) as whole:
            client.responses.create(model="html", input="Weather?", tools=RESPONSES_TOOLS, stream=stream)
        assert whole.value.status_code == 502
    # A page under text/event-stream: the stream's head is out; it ends in `response.failed`.
    events = list(client.responses.create(model="html-as-sse", input="Weather?", tools=RESPONSES_TOOLS, stream=True))
    assert events[-1].type == "response.failed"
    assert "responses answer" in str(events[-1].response.error)


@pytest.mark.parametrize("how", HOW)  # (the whole answer: a page under text/html)
def test_messages_whole_and_streamed(logged: tuple[str, Path], how: str) -> None:
    client = anthropic_client(logged[0])
    with pytest.raises(anthropic.APIStatusError) as whole:
        client.messages.create(model="html", max_tokens=64, messages=MESSAGES, tools=ANTHROPIC_TOOLS)
    assert whole.value.status_code == 502
    assert whole.value.response.json()["type"] == "error"
    with pytest.raises(anthropic.APIError) as streamed:
        with client.messages.stream(model=how, max_tokens=64, messages=MESSAGES, tools=ANTHROPIC_TOOLS) as stream:
            for _ in stream:
                pass
    assert "messages answer" in str(streamed.value)


def test_serve_logs_what_came_and_records_the_clients_status(logged: tuple[str, Path]) -> None:
    base, log = logged
    body = {"model": "html", "messages": MESSAGES, "tools": CHAT_TOOLS}
    assert httpx.post(base + "/v1/chat/completions", content=json.dumps(body), timeout=20).status_code == 502
    text = log.read_text()
    assert "is not a chat answer" in text and "502 Bad Gateway" in text  # what came, in the log
    assert "Traceback" not in text
