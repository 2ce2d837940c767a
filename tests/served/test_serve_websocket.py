"""`toolcall-middleware serve` takes WebSockets and compacts: the official SDK's
`responses.connect()` and `responses.compact()` against `serve` in front of the demo model (built
in, and as an upstream behind the proxy through the responses-to-chat bridge)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from openai import OpenAI

from tests.servers import free_port, serve, uvicorn

SERVE = [sys.executable, "-m", "toolcall_middleware.cli", "serve", "--log-level", "warning"]
WEATHER: Any = {
    "type": "function",
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


@pytest.fixture(params=["demo", "proxy-bridge"])
def base_url(request: pytest.FixtureRequest) -> Iterator[str]:
    port = free_port()
    if request.param == "demo":
        with serve([*SERVE, "--dialect", "hermes", "--port", str(port)], port) as base:
            yield base
        return
    command, upstream_port = uvicorn("examples.demo_model:app")
    with serve(command, upstream_port) as upstream:
        flags = ["--upstream", upstream, "--dialect", "hermes", "--bridge", "responses-to-chat", "--port", str(port)]
        with serve([*SERVE, *flags], port) as base:
            yield base


def last_event(connection: Any) -> Any:
    while True:
        event = connection.recv()
        if event.type in ("response.completed", "response.failed", "error"):
            return event


def test_a_tool_loop_over_one_socket_with_store_false(base_url: str) -> None:
    client = OpenAI(base_url=base_url + "/v1", api_key="sk-test", max_retries=0)
    with client.responses.connect() as connection:
        connection.response.create(model="demo", input="Weather in Paris?", tools=[WEATHER], store=False)
        called = last_event(connection).response
        call = next(item for item in called.output if item.type == "function_call")
        assert (call.name, json.loads(call.arguments)) == ("get_weather", {"city": "Paris"})
        output = {"type": "function_call_output", "call_id": call.call_id, "output": "rain, 9 C"}
        connection.response.create(
            model="demo", input=[output], tools=[WEATHER], store=False, previous_response_id=called.id
        )
        answered = last_event(connection)
        connection.response.create(model="demo", input="Hi", store=False, previous_response_id="resp_gone")
        missing = last_event(connection)
    assert answered.type == "response.completed" and answered.response.previous_response_id == called.id
    assert "rain, 9 C" in json.dumps(answered.response.model_dump())
    assert (missing.type, missing.error.code) == ("error", "previous_response_not_found")


def test_compaction_through_serve(base_url: str) -> None:
    client = OpenAI(base_url=base_url + "/v1", api_key="sk-test", max_retries=0)
    history: Any = [{"role": "user", "content": "The code word is slate."}, {"role": "assistant", "content": "OK."}]
    compacted = client.responses.compact(model="demo", input=history)
    assert compacted.output[-1].type == "compaction"
    window = [item.model_dump(exclude_none=True, warnings=False) for item in compacted.output]
    assert client.responses.create(model="demo", input=[*window, {"role": "user", "content": "Go on."}]).output


def test_serve_refuses_a_socket_past_max_websockets() -> None:
    from websockets.exceptions import InvalidStatus

    port = free_port()
    with serve([*SERVE, "--dialect", "hermes", "--port", str(port), "--max-websockets", "1"], port) as base:
        client = OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
        with client.responses.connect() as one:
            with pytest.raises(InvalidStatus) as refused:
                with client.responses.connect() as two:
                    two.response.create(model="demo", input="Hi")
            one.response.create(model="demo", input="Hi", store=False)
            assert last_event(one).type == "response.completed"
    assert refused.value.response.status_code == 503
    assert json.loads(refused.value.response.body)["error"]["code"] == "too_many_websockets"
