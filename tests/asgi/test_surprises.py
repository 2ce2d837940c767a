"""What would surprise an operator is logged as a warning, once per cause, rate-limited."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

import toolcall_middleware._reporting as reporting_module
import toolcall_middleware._routing as routing_module
from toolcall_middleware import ToolCallMiddleware
from toolcall_middleware._surprises import Surprises

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


async def answer(request: Request) -> Response:
    body = await request.json()
    if body.get("model") == "plain":
        return PlainTextResponse('<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>')
    text = '<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>'
    choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
    return JSONResponse({"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [choice]})


HOST = Starlette(
    routes=[Route(p, answer, methods=["POST"]) for p in ("/v1/chat/completions", "/api/v1/chat/completions")]
)


@pytest.fixture
def warnings(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    fresh = Surprises()  # (the routes warn as they are matched, the rest from the report)
    monkeypatch.setattr(routing_module, "SURPRISES", fresh)
    monkeypatch.setattr(reporting_module, "SURPRISES", fresh)
    caplog.set_level(logging.WARNING, logger="toolcall_middleware")
    return caplog


def post(app: Any, path: str, model: str, times: int = 2) -> list[httpx.Response]:
    async def go() -> list[httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://h") as client:
            body = {"model": model, "messages": [{"role": "user", "content": "hi"}], "tools": TOOLS}
            return [await client.post(path, content=json.dumps(body)) for _ in range(times)]

    return asyncio.run(go())


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_an_api_path_no_route_matches(warnings: pytest.LogCaptureFixture) -> None:
    post(ToolCallMiddleware(HOST, dialect="hermes"), "/api/v1/chat/completions", "m")
    (line,) = said(warnings)
    assert "POST /api/v1/chat/completions looks like an API route" in line and "route_prefixes" in line


def test_a_rewritten_request_whose_answer_passed_through(warnings: pytest.LogCaptureFixture) -> None:
    answers = post(ToolCallMiddleware(HOST, dialect="hermes"), "/v1/chat/completions", "plain")
    assert answers[0].text.startswith("<tool_call>")  # what the warning is about: raw markup
    (line,) = said(warnings)
    assert "passed through untouched" in line and "text/plain" in line


def test_a_call_to_a_tool_not_offered(warnings: pytest.LogCaptureFixture) -> None:
    post(ToolCallMiddleware(HOST, dialect="hermes"), "/v1/chat/completions", "m")
    (line,) = said(warnings)
    assert "'delete_everything', a tool the request did not offer" in line


def test_a_model_no_dialect_matches(warnings: pytest.LogCaptureFixture) -> None:
    post(ToolCallMiddleware(HOST), "/v1/chat/completions", "in-house-llm-7")
    lines = said(warnings)
    assert any("no dialect matches the model 'in-house-llm-7'" in line for line in lines)
    warnings.clear()
    post(ToolCallMiddleware(HOST, dialect="auto"), "/v1/chat/completions", "another-model")
    assert not any("no dialect matches" in line for line in said(warnings))  # asked for: no surprise


def test_once_per_cause_and_at_most_so_many_a_minute(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    surprises = Surprises(per_minute=2, clock=lambda: now[0])
    caplog.set_level(logging.WARNING, logger="toolcall_middleware")
    assert surprises.warn("a", "first") and not surprises.warn("a", "first again")
    assert surprises.warn("b", "second") and not surprises.warn("c", "over the quota")
    now[0] = 61.0
    assert surprises.warn("c", "said in the next minute") and not surprises.warn("a", "never twice")
    assert said(caplog) == [
        "toolcall-middleware: first",
        "toolcall-middleware: second",
        "toolcall-middleware: said in the next minute",
    ]
