"""What a Responses client reads off the response object besides its items: a host that stopped
on its content filter gives `incomplete` with that reason (streamed and whole), and the request's
settings are echoed as OpenAI echoes them (`reasoning`, `text`, `user`)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai.types.responses import Response

from toolcall_middleware.config import ToolCallConfig
from toolcall_middleware.core._exchange import Exchange, RouteMatch
from toolcall_middleware.core.framing.sse import SSEDecoder

META = {"id": "chatcmpl-1", "created": 7, "model": "m"}


def _response(raw: str, finish: str, *, stream: bool, **request: Any) -> dict[str, Any]:
    """The response object a Responses client gets from a Chat host (the final event's, streamed)."""
    exchange = Exchange(ToolCallConfig(dialect="hermes"), RouteMatch("responses", "chat"))
    body = {"model": "m", "input": "x", "tools": [{"type": "function", "name": "f"}], "stream": stream, **request}
    exchange.forward(json.dumps(body).encode())
    if not stream:
        exchange.start("POST", 200, [(b"content-type", b"application/json")])
        choice = {"index": 0, "message": {"role": "assistant", "content": raw}, "finish_reason": finish}
        answer = {**META, "object": "chat.completion", "choices": [choice]}
        whole: dict[str, Any] = json.loads(exchange.feed(json.dumps(answer).encode()) + exchange.end())
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
    out = exchange.feed(data + b"data: [DONE]\n\n") + exchange.end()
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


# What the Open Responses schema requires of every response object (beyond what the SDK's types
# check): the field and the type its value must have.
REQUIRED = {
    "completed_at": (int, type(None)),
    "temperature": (int, float),
    "top_p": (int, float),
    "presence_penalty": (int, float),
    "frequency_penalty": (int, float),
    "top_logprobs": (int,),
    "service_tier": (str,),
    "safety_identifier": (str, type(None)),
    "prompt_cache_key": (str, type(None)),
    "store": (bool,),
    "background": (bool,),
}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_the_response_object_is_complete(stream: bool) -> None:
    """Every field the API reference and the Open Responses schema require, with the API's
    defaults where the request gave nothing, the request's values where it did."""
    response = _response("Done.", "stop", stream=stream)
    Response.model_validate(response)
    for field, kinds in REQUIRED.items():
        value = response[field]
        assert isinstance(value, kinds) and (kinds == (bool,)) == isinstance(value, bool), field
    assert isinstance(response["completed_at"], int) and response["completed_at"] >= response["created_at"]
    assert (response["temperature"], response["top_p"]) == (1.0, 1.0)
    assert (response["presence_penalty"], response["frequency_penalty"], response["top_logprobs"]) == (0.0, 0.0, 0)
    assert response["service_tier"] == "default"
    assert response["tools"] == [
        {"type": "function", "name": "f", "description": None, "parameters": None, "strict": None}
    ]
    given = _response(
        "Done.",
        "stop",
        stream=stream,
        temperature=0.2,
        top_p=0.9,
        presence_penalty=0.5,
        frequency_penalty=0.25,
        top_logprobs=3,
        safety_identifier="user-hash",
        prompt_cache_key="k1",
    )
    assert (given["temperature"], given["top_p"], given["presence_penalty"]) == (0.2, 0.9, 0.5)
    assert (given["frequency_penalty"], given["top_logprobs"]) == (0.25, 3)
    assert (given["safety_identifier"], given["prompt_cache_key"]) == ("user-hash", "k1")
    cut = _response("Partly", "length", stream=stream)
    assert cut["completed_at"] is None  # only a completed response has completed it


def reasoning_event_types(**config: Any) -> list[str]:
    exchange = Exchange(ToolCallConfig(dialect="hermes", **config), RouteMatch("responses", "chat"))
    exchange.forward(json.dumps({"model": "m", "input": "x", "stream": True}).encode())
    exchange.start("POST", 200, [(b"content-type", b"text/event-stream")])
    chunk = {**META, "object": "chat.completion.chunk"}
    data = b"".join(
        b"data: " + json.dumps({**chunk, "choices": [c]}).encode() + b"\n\n"
        for c in (
            {"index": 0, "delta": {"role": "assistant", "content": "<think>hm</think>Hi"}},
            {"index": 0, "delta": {}, "finish_reason": "stop"},
        )
    )
    out = exchange.feed(data + b"data: [DONE]\n\n") + exchange.end()
    types = [json.loads(e.data)["type"] for e in SSEDecoder().feed(out) if e.data]
    return [t for t in types if "reasoning" in t]


def test_reasoning_events_keep_openais_names_unless_the_open_responses_profile_asks() -> None:
    assert reasoning_event_types() == ["response.reasoning_text.delta", "response.reasoning_text.done"]
    assert reasoning_event_types(profiles={"open_responses"}) == ["response.reasoning.delta", "response.reasoning.done"]
