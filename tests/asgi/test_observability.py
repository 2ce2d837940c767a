"""What an operator watches: one record per exchange (a readable line, or JSON), Prometheus
metrics from the records, and an OpenTelemetry span per exchange."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prometheus_client import CollectorRegistry, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from toolcall_middleware import ToolCallMiddleware
from toolcall_middleware._records import record_line
from toolcall_middleware.metrics import MetricsRoute, PrometheusMetrics

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'


async def answer(request: Request) -> Response:
    body = await request.json()
    text = CALL if body.get("model") != "unknown-tool" else CALL.replace("get_weather", "rm_rf")
    choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
    return JSONResponse({"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [choice]})


HOST = Starlette(routes=[Route("/v1/chat/completions", answer, methods=["POST"])])


def post(
    app: Any, *bodies: Any, path: str = "/v1/chat/completions", headers: dict[str, str] | None = None
) -> list[httpx.Response]:
    async def go() -> list[httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://h") as client:
            return [await client.post(path, content=json.dumps(body), headers=headers) for body in bodies]

    return asyncio.run(go())


def ask(model: str = "qwen3", **extra: Any) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": "hi"}], "tools": TOOLS, **extra}


def test_the_record_is_a_readable_line_or_json(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="toolcall_middleware")
    (answer,) = post(ToolCallMiddleware(HOST, dialect="hermes"), ask())
    (line,) = [r.getMessage() for r in caplog.records if "exchange" in r.getMessage()]
    assert line.startswith("toolcall-middleware exchange chat POST /v1/chat/completions 200 rewritten")
    # The time, then the request id: none was sent, so one was made for the record alone (in
    # process the answer's head is the app's own).
    assert re.search(r"dialect=hermes model=qwen3 calls=1/1 \d+\.\dms id=[0-9a-f]{32}$", line)
    assert "x-request-id" not in answer.headers
    caplog.clear()
    post(ToolCallMiddleware(HOST, dialect="hermes", log_format="json"), ask(parallel_tool_calls="x"))
    (line,) = [r.getMessage() for r in caplog.records if "exchange" in r.getMessage()]
    record = json.loads(line.removeprefix("toolcall-middleware exchange "))
    assert record["outcome"] == "refused" and record["refused"] == "invalid_value" and record["api"] == "chat"


def test_record_line_names_each_outcome() -> None:
    base = {"api": "chat", "path": "/v1/chat/completions", "status": 200, "dialect": "hermes", "seconds": 0.0123}
    assert record_line({**base, "outcome": "rewritten", "calls_emitted": 2, "calls_found": 3, "stream": True}) == (
        "chat POST /v1/chat/completions 200 rewritten dialect=hermes stream calls=2/3 12.3ms"
    )
    passed = record_line({**base, "outcome": "passthrough", "passthrough_reason": "status 200 / b'text/plain'"})
    assert "passthrough (status 200 / b'text/plain')" in passed
    failed = record_line({**base, "outcome": "policy_error", "policy_error": "tool_choice", "unknown_tools": ["x"]})
    assert "policy_error (tool_choice)" in failed and "unknown_tools=x" in failed


def test_prometheus_metrics_count_the_exchanges() -> None:
    registry = CollectorRegistry()
    metrics = PrometheusMetrics(registry=registry)
    app = MetricsRoute(ToolCallMiddleware(HOST, dialect="hermes", on_report=metrics.observe), metrics)
    post(app, ask(), ask(), ask("unknown-tool"), ask(parallel_tool_calls="x"))
    text = generate_latest(registry).decode()
    route = 'route="/v1/chat/completions"'
    assert f'toolcall_exchanges_total{{api="chat",dialect="hermes",outcome="rewritten",{route}}} 3.0' in text
    assert f'toolcall_exchanges_total{{api="chat",dialect="hermes",outcome="refused",{route}}} 1.0' in text
    assert 'toolcall_calls_emitted_total{api="chat",dialect="hermes"} 2.0' in text
    assert 'toolcall_unknown_tools_total{api="chat",dialect="hermes"} 1.0' in text
    assert 'toolcall_exchange_seconds_count{api="chat",stream="false"} 4.0' in text

    async def scrape() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://h") as client:
            return await client.get("/metrics")

    scraped = asyncio.run(scrape())
    assert scraped.status_code == 200 and "toolcall_exchanges_total" in scraped.text


def traced(*bodies: Any, headers: dict[str, str] | None = None) -> tuple[list[Any], list[httpx.Response]]:
    """The exchange spans of `bodies` posted to a traced middleware, and the answers."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    original = trace.get_tracer

    def get_tracer(name: str, *args: Any, **kwargs: Any) -> Any:
        return provider.get_tracer(name)

    trace.get_tracer = get_tracer  # type: ignore[assignment]
    try:
        with tracer.start_as_current_span("request"):
            answers = post(ToolCallMiddleware(HOST, dialect="hermes", tracing=True), *bodies, headers=headers)
    finally:
        trace.get_tracer = original  # type: ignore[assignment]
    return [s for s in exporter.get_finished_spans() if s.name == "toolcall.exchange"], answers


def test_a_span_per_exchange() -> None:
    spans, _ = traced(ask(), ask(parallel_tool_calls="x"))
    assert len(spans) == 2
    ok, refused = spans
    assert ok.attributes is not None and ok.attributes["toolcall.outcome"] == "rewritten"
    assert ok.attributes["toolcall.calls_emitted"] == 1 and ok.attributes["http.route"] == "/v1/chat/completions"
    assert ok.status.is_ok and not refused.status.is_ok
    assert ok.end_time is not None and ok.start_time is not None and ok.end_time >= ok.start_time


def test_the_span_carries_the_request_id(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="toolcall_middleware")
    (given,), (answer,) = traced(ask(), headers={"x-request-id": "trace-me-42"})
    assert given.attributes is not None and given.attributes["toolcall.request_id"] == "trace-me-42"
    assert answer.headers["x-request-id"] == "trace-me-42"  # echoed on the answer
    (made,), _ = traced(ask())  # none sent: one is made, the same in the span and the log line
    assert made.attributes is not None and re.fullmatch(r"[0-9a-f]{32}", str(made.attributes["toolcall.request_id"]))
    lines = [r.getMessage() for r in caplog.records if "exchange" in r.getMessage()]
    assert lines[-1].endswith(f" id={made.attributes['toolcall.request_id']}")


def test_tracing_without_the_api_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    monkeypatch.setitem(sys.modules, "opentelemetry.trace", None)
    with pytest.raises(ValueError, match=r"toolcall-middleware\[tracing\]"):
        ToolCallMiddleware(HOST, dialect="hermes", tracing=True)


def _metric(text: str, name: str) -> float:
    """The value of the sample `name` (with its labels) in Prometheus's text format."""
    (line,) = [line for line in text.splitlines() if line.startswith(name + " ")]
    return float(line.split()[-1])


def test_response_bytes_and_parse_time_reach_metrics_on_a_served_app() -> None:
    """Under uvicorn on loopback: the bytes the client read, streamed and whole, are what
    `toolcall_response_bytes_total` counts, and each response's own work is one observation of
    `toolcall_parse_seconds` (more than nothing, less than the exchange's whole time)."""
    from tests.servers import serve, uvicorn

    command, port = uvicorn("tests.asgi.metrics_app:app")
    request = {"model": "qwen3", "messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": TOOLS}
    with serve(command, port) as base, httpx.Client(base_url=base, timeout=10) as client:
        read = 0
        with client.stream("POST", "/v1/chat/completions", json={**request, "stream": True}) as streamed:
            for chunk in streamed.iter_raw():
                read += len(chunk)
        assert read > 0
        whole = client.post("/v1/chat/completions", json=request)
        assert whole.json()["choices"][0]["message"]["tool_calls"]
        read += len(whole.content)
        text = client.get("/metrics").text
    assert _metric(text, 'toolcall_response_bytes_total{api="chat"}') == read
    for stream in ("true", "false"):
        assert _metric(text, f'toolcall_parse_seconds_count{{api="chat",stream="{stream}"}}') == 1
        parse = _metric(text, f'toolcall_parse_seconds_sum{{api="chat",stream="{stream}"}}')
        assert 0 < parse < _metric(text, f'toolcall_exchange_seconds_sum{{api="chat",stream="{stream}"}}')


def test_the_record_and_the_span_carry_response_bytes_and_parse_time() -> None:
    records: list[dict[str, Any]] = []
    (response,) = post(ToolCallMiddleware(HOST, dialect="hermes", on_report=records.append), ask())
    (record,) = records
    assert record["response_bytes"] == len(response.content)
    assert 0 < record["parse_seconds"] <= record["seconds"]
    from toolcall_middleware._tracing import span_attributes

    attributes = span_attributes(record)
    assert attributes["toolcall.response_bytes"] == len(response.content)
    assert attributes["toolcall.parse_seconds"] == record["parse_seconds"]


def hermes_stream() -> list[bytes]:
    """A Chat stream of a tool call in hermes markup, with the host's usage last."""
    pieces = [CALL[:20], CALL[20:]]
    chunks = [
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": d}],
        }
        for d in ({"content": pieces[0]}, {"content": pieces[1]})
    ]
    end = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12},
    }
    return [f"data: {json.dumps(c)}\n\n".encode() for c in [*chunks, end]] + [b"data: [DONE]\n\n"]


def test_the_host_timings_and_tokens_in_process_asgi_and_wsgi() -> None:
    """In process the host is the app: its time to the first body and to its end are measured at
    the middleware, under ASGI and WSGI alike, and its usage becomes the record's tokens."""
    import time as clock

    from starlette.responses import StreamingResponse

    from tests.wsgi.driver import Server, environ, wrapped

    pause = 0.15

    async def streamed(request: Request) -> Response:
        async def body() -> Any:
            await asyncio.sleep(pause)
            for chunk in hermes_stream():
                yield chunk
                await asyncio.sleep(pause)

        return StreamingResponse(body(), media_type="text/event-stream")

    def wsgi_host(env: dict[str, Any], start_response: Any) -> Any:
        clock.sleep(pause)
        start_response("200 OK", [("Content-Type", "text/event-stream")])
        for chunk in hermes_stream():
            yield chunk
            clock.sleep(pause)

    asgi_records: list[dict[str, Any]] = []
    host = Starlette(routes=[Route("/v1/chat/completions", streamed, methods=["POST"])])
    post(ToolCallMiddleware(host, dialect="hermes", on_report=asgi_records.append), ask(stream=True))
    wsgi_records: list[dict[str, Any]] = []
    app = wrapped(wsgi_host, dialect="hermes", on_report=wsgi_records.append)
    Server().run(app, environ(json.dumps(ask(stream=True)).encode()))
    for (record,) in (asgi_records, wsgi_records):
        assert record["calls_emitted"] == 1
        assert pause * 0.9 <= record["first_byte_seconds"] < pause * 3
        assert pause * 3.5 <= record["upstream_seconds"] <= record["seconds"]  # (4 or 5 pauses)
        assert (record["input_tokens"], record["output_tokens"]) == (7, 5)
