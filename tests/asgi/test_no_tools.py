"""A request that offers no function gets no tool calls, as from OpenAI: a call the model writes
anyway is one whose name the request did not offer, so it reaches the client as text (the
call's JSON), and the answer finishes with `stop`. Real uvicorn and the openai SDK's stream
helper; the whole answer through the exchange."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.servers import serve, uvicorn
from toolcall_middleware.config import ToolCallConfig
from toolcall_middleware.core._exchange import Exchange, RouteMatch

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
WRITTEN = '{"name": "get_weather", "arguments": {"city": "Paris"}}'


@pytest.fixture(scope="module")
def client() -> Iterator[openai.OpenAI]:
    command, port = uvicorn("tests.asgi.failing_app:app")  # writes the user's message as its answer
    with serve(command, port) as base:
        yield openai.OpenAI(api_key="none", base_url=base + "/v1", max_retries=0)


@pytest.mark.parametrize("offered", ["absent", "empty"])
def test_a_streamed_answer_to_a_request_without_tools_has_no_calls(client: openai.OpenAI, offered: str) -> None:
    extra: Any = {} if offered == "absent" else {"tools": []}
    messages: Any = [{"role": "user", "content": "END:Sure.\n" + CALL}]  # (END: the host ends cleanly)
    with client.chat.completions.stream(model="m", messages=messages, **extra) as stream:
        for _ in stream:
            pass
        completion = stream.get_final_completion()
    choice = completion.choices[0]
    assert choice.message.tool_calls in (None, [])
    assert choice.finish_reason == "stop"
    assert choice.message.content is not None and WRITTEN in choice.message.content
    assert choice.message.content.startswith("Sure.")


def test_a_whole_answer_to_a_request_without_tools_has_no_calls() -> None:
    exchange = Exchange(ToolCallConfig(dialect="hermes"), RouteMatch("chat", "chat"))
    exchange.forward(json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}]}).encode())
    exchange.start("POST", 200, [(b"content-type", b"application/json")])
    message = {"role": "assistant", "content": "Sure.\n" + CALL}
    body = {"id": "c", "object": "chat.completion", "created": 1, "model": "m"}
    body["choices"] = [{"index": 0, "message": message, "finish_reason": "stop"}]
    out = json.loads(exchange.feed(json.dumps(body).encode()) + exchange.end())
    choice = out["choices"][0]
    assert "tool_calls" not in choice["message"] and choice["finish_reason"] == "stop"
    assert WRITTEN in choice["message"]["content"]
    assert exchange.record.calls_found == 1 and exchange.record.calls_emitted == 0


def test_hosted_tools_alone_offer_no_function() -> None:
    """A Responses request whose tools are all hosted ones (`web_search`): no function is offered,
    so a call the model writes is text too."""
    exchange = Exchange(ToolCallConfig(dialect="hermes"), RouteMatch("responses", "chat"))
    request = {"model": "m", "input": "x", "tools": [{"type": "web_search"}]}
    exchange.forward(json.dumps(request).encode())
    exchange.start("POST", 200, [(b"content-type", b"application/json")])
    message = {"role": "assistant", "content": CALL}
    body = {"id": "c", "object": "chat.completion", "created": 1, "model": "m"}
    body["choices"] = [{"index": 0, "message": message, "finish_reason": "stop"}]
    out = json.loads(exchange.feed(json.dumps(body).encode()) + exchange.end())
    assert [item["type"] for item in out["output"]] == ["message"]
    assert WRITTEN in out["output"][0]["content"][0]["text"]
