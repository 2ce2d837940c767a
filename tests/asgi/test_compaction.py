"""POST /v1/responses/compact for a host without it, driven by the official SDK's
`responses.compact()` against the middleware on a real uvicorn on loopback (natively and through
the responses-to-chat bridge), then continued the way Codex does: the compacted output as the
next request's input, over HTTP and over WebSocket mode."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from openai import OpenAI

from tests.asgi.ws_host import RecordingHost
from toolcall_middleware import ToolCallMiddleware
from toolcall_middleware.core.apis.responses._compaction import unseal
from toolcall_middleware.demo.run import serving

HISTORY = [
    {"role": "user", "content": "We agreed to launch on Tuesday and notify support first."},
    {"role": "assistant", "content": "Understood: Tuesday, support first."},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "And the code word is slate."}]},
]


@pytest.fixture(params=["native", "bridge"])
def served(request: pytest.FixtureRequest) -> Iterator[tuple[OpenAI, RecordingHost, str]]:
    host = RecordingHost()
    options: dict[str, Any] = {"bridge": "responses-to-chat"} if request.param == "bridge" else {}
    with serving(ToolCallMiddleware(host, dialect="hermes", **options)) as base:
        yield OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0), host, base


def test_the_host_model_summarizes_into_a_compaction_item(served: tuple[OpenAI, RecordingHost, str]) -> None:
    client, host, _ = served
    compacted = client.responses.compact(model="demo", input=HISTORY, instructions="Be terse.")  # type: ignore[arg-type]
    assert compacted.object == "response.compaction"
    *users, item = compacted.output
    assert item.type == "compaction" and item.id.startswith("cmp_") and item.encrypted_content
    # The user's messages as they were, as output items; the assistant's went into the summary.
    assert [(u.type, u.role, [p.text for p in u.content]) for u in users] == [  # type: ignore[union-attr]
        ("message", "user", ["We agreed to launch on Tuesday and notify support first."]),
        ("message", "user", ["And the code word is slate."]),
    ]
    assert compacted.usage.total_tokens >= 0
    # The host got one request for a summary of the whole conversation, instructions included.
    asked = host.last_text()
    assert len(host.bodies) == 1 and "summary" in asked.lower()
    assert "Be terse." in asked and "Understood: Tuesday, support first." in asked and "slate" in asked
    assert not host.bodies[0].get("stream")


def test_a_codex_style_continuation_reads_the_summary(served: tuple[OpenAI, RecordingHost, str]) -> None:
    client, host, _ = served
    summaries: list[str] = []
    host.demo.on_write = lambda written: summaries.append(written.raw)
    compacted = client.responses.compact(model="demo", input=HISTORY)  # type: ignore[arg-type]
    window = [item.model_dump(exclude_none=True, warnings=False) for item in compacted.output]
    response = client.responses.create(model="demo", input=[*window, {"role": "user", "content": "Go on."}])
    assert response.status == "completed"
    seen = host.last_text()
    assert summaries[0] in seen and "Go on." in seen  # the summary the host wrote, back as text
    assert "encrypted_content" not in seen and "tcm-summary" not in seen
    with client.responses.connect() as connection:  # a new chain on a socket, from the window
        connection.response.create(model="demo", input=[*window, {"role": "user", "content": "Again."}], store=False)
        while (event := connection.recv()).type not in ("response.completed", "error"):
            pass
    assert event.type == "response.completed" and summaries[0] in host.last_text()


def test_a_compact_request_without_a_model_is_a_400(served: tuple[OpenAI, RecordingHost, str]) -> None:
    _, host, base = served
    answer = httpx.post(base + "/v1/responses/compact", json={"input": HISTORY})
    assert answer.status_code == 400
    assert answer.json()["error"]["param"] == "model"
    assert answer.json()["error"]["code"] == "missing_required_parameter"
    assert answer.headers["x-should-retry"] == "false"  # a refusal the SDK would repeat as it is
    assert httpx.post(base + "/v1/responses/compact", content=b"{nope").json()["error"]["code"] == "invalid_json"
    assert host.bodies == []


def test_a_compaction_item_from_elsewhere_is_a_400_naming_it(served: tuple[OpenAI, RecordingHost, str]) -> None:
    client, host, _ = served
    foreign = {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAAB-opaque"}
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="demo", input=[foreign, {"role": "user", "content": "Hi"}])  # type: ignore[list-item]
    assert refused.value.body["param"] == "input[0]"  # type: ignore[index]
    assert host.bodies == []


def test_the_hosts_error_comes_back_as_it_was() -> None:
    async def failing(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = json.dumps({"error": {"message": "overloaded", "type": "server_error", "param": None, "code": None}})
        await send({"type": "http.response.start", "status": 503, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body.encode()})

    with serving(ToolCallMiddleware(failing, dialect="hermes")) as base:
        client = OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
        with pytest.raises(openai.InternalServerError) as failed:
            client.responses.compact(model="demo", input="Hi")
    assert failed.value.status_code == 503 and "overloaded" in str(failed.value)


def test_a_host_answer_nested_too_deep_is_a_502_on_every_python() -> None:
    """JSON nested past what the Python's decoder reads (about 1,000 on 3.11) is no summary: the
    client gets the 502 that says so, never a server error."""

    async def deep(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": b"[" * 1000 + b"]" * 1000})

    with serving(ToolCallMiddleware(deep, dialect="hermes")) as base:
        client = OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
        with pytest.raises(openai.APIStatusError) as failed:
            client.responses.compact(model="demo", input="Hi")
    assert failed.value.status_code == 502 and "was not a response" in str(failed.value)


DEPTH_LIMIT = 24  # (`limits.max_depth`, below JSON's own decoder's limit on every Python)
SUMMARY = "Launch on Tuesday, support first; the code word is slate."


def summary_answer(levels: int) -> bytes:
    """A host's Responses answer holding `SUMMARY`, nested `levels` deep in all (the answer itself
    is the first level; the nesting past its message's six is in a field of the host's own)."""
    nested: Any = "deep"
    for _ in range(levels - 1):
        nested = [nested]
    part = {"type": "output_text", "text": SUMMARY, "annotations": []}
    message = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [part]}
    answer = {"id": "resp_1", "object": "response", "status": "completed", "model": "demo", "output": [message]}
    return json.dumps({**answer, "host_trace": nested}).encode()


@pytest.mark.parametrize("levels", [DEPTH_LIMIT, DEPTH_LIMIT + 1])
def test_a_summary_answer_deeper_than_max_depth_is_a_502(levels: int) -> None:
    """The summary answer is read within the configured `limits.max_depth`, as every host answer
    is: one level deeper is no summary, though JSON's decoder would read it on any Python."""
    asked: list[str] = []

    async def host(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        asked.append(scope["path"])
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": summary_answer(levels)})

    with serving(ToolCallMiddleware(host, dialect="hermes", limits={"max_depth": DEPTH_LIMIT})) as base:
        client = OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
        if levels <= DEPTH_LIMIT:
            compacted = client.responses.compact(model="demo", input=HISTORY)  # type: ignore[arg-type]
            assert unseal(compacted.output[-1].encrypted_content) == SUMMARY  # type: ignore[union-attr]
        else:
            with pytest.raises(openai.APIStatusError) as failed:
                client.responses.compact(model="demo", input=HISTORY)  # type: ignore[arg-type]
            assert failed.value.status_code == 502 and "was not a response" in str(failed.value)
    assert asked == ["/v1/responses"]


def test_a_host_that_compacts_gets_the_request_untouched() -> None:
    host = RecordingHost()
    with serving(ToolCallMiddleware(host, dialect="hermes", compaction="host")) as base:
        body = {"model": "demo", "input": "Hi"}
        answer = httpx.post(base + "/v1/responses/compact", json=body)
        own = {"type": "compaction", "id": "cmp_1", "encrypted_content": "the host's own"}
        httpx.post(base + "/v1/responses", json={"model": "demo", "input": [own]})
    assert answer.status_code == 404 and "No route for POST /v1/responses/compact" in answer.text  # the host's
    assert host.paths == ["/v1/responses/compact", "/v1/responses"]
    assert host.bodies[0] == body and host.bodies[1]["input"] == [own]


def test_host_compaction_on_a_bridged_route_is_a_configuration_error() -> None:
    with pytest.raises(ValueError, match="compaction='host'"):
        ToolCallMiddleware(RecordingHost(), bridge="responses-to-chat", compaction="host")
