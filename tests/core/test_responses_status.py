"""What a Responses client reads off the response object besides its items: a host that stopped
on its content filter gives `incomplete` with that reason (streamed and whole), and the request's
settings are echoed as OpenAI echoes them (`reasoning`, `text`, `user`)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai.types.responses import Response

from toolcall_middleware.asgi import settings_from
from toolcall_middleware.config import ToolCallConfig
from toolcall_middleware.core.framing.sse import SSEDecoder
from toolcall_middleware.core.pipeline import Exchange

META = {"id": "chatcmpl-1", "created": 7, "model": "m"}


def _response(raw: str, finish: str, *, stream: bool, **request: Any) -> dict[str, Any]:
    """The response object a Responses client gets from a Chat host (the final event's, streamed)."""
    exchange = Exchange("responses", settings_from(ToolCallConfig(dialect="hermes")), upstream="chat")
    body = {"model": "m", "input": "x", "tools": [{"type": "function", "name": "f"}], "stream": stream, **request}
    exchange.rewrite_request(json.dumps(body).encode())
    if not stream:
        exchange.start("POST", 200, [(b"content-type", b"application/json")])
        choice = {"index": 0, "message": {"role": "assistant", "content": raw}, "finish_reason": finish}
        answer = {**META, "object": "chat.completion", "choices": [choice]}
        whole: dict[str, Any] = json.loads(exchange.feed(json.dumps(answer).encode()) + exchange.close())
        return whole
    exchange.start("POST", 200, [(b"content-type", b"text/event-stream")])
    chunks = [
        {"index": 0, "delta": {"role": "assistant", "content": raw}},
        {"index": 0, "delta": {}, "finish_reason": finish},
    ]
    data = b"".join(
        b"data: " + json.dumps({**META, "object": "chat.completion.chunk", "choices": [c]}).encode() + b"\n\n"
        for c in chunks
    )
    out = exchange.feed(data + b"data: [DONE]\n\n") + exchange.close()
    final = [json.loads(e.data) for e in SSEDecoder().feed(out) if e.data][-1]
    assert final["type"].startswith("response.")
    response: dict[str, Any] = final["response"]
    return response


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_content_filter_stop_is_incomplete_with_that_reason(stream: bool) -> None:
    response = _response("Partly said", "content_filter", stream=stream)
    Response.model_validate(response)
    assert response["status"] == "incomplete"
    assert response["incomplete_details"] == {"reason": "content_filter"}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_length_stop_is_incomplete_for_max_output_tokens(stream: bool) -> None:
    response = _response("Partly said", "length", stream=stream)
    assert response["status"] == "incomplete"
    assert response["incomplete_details"] == {"reason": "max_output_tokens"}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_the_request_settings_are_echoed(stream: bool) -> None:
    response = _response(
        "Done.",
        "stop",
        stream=stream,
        user="u1",
        reasoning={"effort": "low"},
        text={"format": {"type": "json_object"}, "verbosity": "low"},
    )
    Response.model_validate(response)
    assert response["status"] == "completed" and response["incomplete_details"] is None
    assert response["user"] == "u1"
    assert response["reasoning"] == {"effort": "low", "summary": None}
    assert response["text"] == {"format": {"type": "json_object"}, "verbosity": "low"}
