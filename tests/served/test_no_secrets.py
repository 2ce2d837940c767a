"""No credential is ever printed or served: a secret planted in the upstream URL (`user:password`
and an `api_key` in its query) and in the Redis store URL (a password-protected `redis-server`)
appears on no output surface of `toolcall-middleware serve` run as a process: its standard output
and error (start-up lines, exchange records as JSON, the proxy's warnings, the store's errors),
`/healthz`, `/readyz`, `/metrics`, and the error bodies of an upstream that fails, is unreachable,
or a store that goes away. In process, the same for the spans and the `on_report` records."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.served.test_proxy import proxy
from tests.servers import free_port, serve
from tests.store.redis_server import redis_server
from toolcall_middleware._serve import build_app
from toolcall_middleware._serve_options import ServeOptions
from toolcall_middleware.config import ToolCallConfig
from toolcall_middleware.redact import redact

SECRET = "s3cr3t"
TOKEN = f"tok-{SECRET}"  # (a query token with the secret in it: one grep finds both)
CHAT = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


def with_secret(base: str) -> str:
    """`base` (http://127.0.0.1:PORT) as an operator might write it with credentials."""
    return base.replace("http://", f"http://user:{SECRET}@") + f"/v1?api_key={TOKEN}"


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    port = free_port()
    with serve([sys.executable, "-m", "tests.served.failing_upstream", str(port)], port) as base:
        yield base


@contextlib.contextmanager
def serving_logged(upstream: str, store: str, log: Path) -> Iterator[str]:
    flags = ("--store", store, "--dialect", "hermes", "--read-timeout", "0.5", "--log-level", "info")
    command, port = proxy(upstream, *flags, "--log-format", "json", "--keepalive-interval", "0")
    # (`exec`: the server replaces the shell, so stopping it stops the server, not only the shell)
    with serve(["sh", "-c", "exec " + shlex.join(command) + " >" + shlex.quote(str(log)) + " 2>&1"], port) as base:
        yield base


def ask(base: str, path: str, body: dict[str, Any]) -> str:
    """What the client gets of one request: status, headers and body, as text."""
    try:
        answer = httpx.post(base + path, json=body, timeout=20)
    except httpx.HTTPError as e:
        return repr(e)
    return f"{answer.status_code} {answer.headers} {answer.text}"


def chat(model: str, stream: bool) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": "Weather?"}], "tools": CHAT, "stream": stream}


def test_no_surface_shows_a_planted_secret(upstream: str, tmp_path: Path) -> None:
    seen: list[str] = []
    with contextlib.ExitStack() as stack:
        store = stack.enter_context(redis_server(user="user", password=SECRET))
        assert SECRET in store
        log = tmp_path / "serve.log"
        base = stack.enter_context(serving_logged(with_secret(upstream), store, log))
        for path in ("/healthz", "/readyz"):
            seen.append(httpx.get(base + path, timeout=20).text)
        for model in ("break-off", "reset", "silent"):  # streamed and whole, each API
            for stream in (True, False):
                seen.append(ask(base, "/v1/chat/completions", chat(model, stream)))
                responses = {"model": model, "input": "Weather?", "stream": stream, "store": True}
                seen.append(ask(base, "/v1/responses", responses))
                messages = {"model": model, "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
                seen.append(ask(base, "/v1/messages", {**messages, "stream": stream}))
        seen.append(ask(base, "/v2/chat/completions", chat("break-off", True)))  # a route passed through
        seen.append(ask(base, "/v1/responses", {"model": "two-calls", "input": "hi", "store": True}))
        seen.append(httpx.get(base + "/metrics", timeout=20).text)
        stack.close()  # the store goes away under the server: its errors are said too
        # (the server is stopped by then: a second one, whose store is gone from the start)
        unreachable = with_secret(f"http://127.0.0.1:{free_port()}")
        with serving_logged(unreachable, store, tmp_path / "down.log") as down:
            seen.append(httpx.get(down + "/healthz", timeout=20).text)
            ready = httpx.get(down + "/readyz", timeout=20)
            assert ready.status_code == 503
            seen.append(ready.text)
            seen.append(ask(down, "/v1/chat/completions", chat("m", False)))
            seen.append(ask(down, "/v1/responses", {"model": "m", "input": "hi"}))
            seen.append(httpx.get(down + "/v1/responses/resp_123", timeout=20).text)
    output = log.read_text() + (tmp_path / "down.log").read_text()
    everything = "\n".join([output, *seen])
    assert SECRET not in everything, [line for line in everything.splitlines() if SECRET in line][:5]
    # What the surfaces say is still useful: where the upstream and the store are, and why it failed.
    assert "user:***@127.0.0.1" in seen[0] and "api_key=***" in seen[0]
    assert "responses stored in redis://user:***@127.0.0.1" in output
    assert "could not be reached" in everything and "store_unavailable" in everything
    assert "broke off mid-answer" in output and '"outcome": "truncated"' in output


def test_spans_and_records_show_no_secret(upstream: str) -> None:
    """In process: `serve`'s app with tracing on, spans to an in-memory exporter, the records as
    `on_report` hands them."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    records: list[dict[str, Any]] = []
    options = ServeOptions(upstream=with_secret(upstream), read_timeout=0.5)
    config = ToolCallConfig(dialect="hermes", tracing=True, store="memory", on_report=records.append)
    original = trace.get_tracer
    trace.get_tracer = lambda name, *args, **kwargs: provider.get_tracer(name)  # type: ignore[assignment]

    async def go() -> list[str]:
        app = build_app(options, config)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://serve", timeout=20) as client:
            out = []
            for model in ("break-off", "silent"):
                for stream in (True, False):
                    out.append((await client.post("/v1/chat/completions", json=chat(model, stream))).text)
                    body = {"model": model, "input": "hi", "stream": stream}
                    out.append((await client.post("/v1/responses", json=body)).text)
            return out

    try:
        answers = asyncio.run(go())
    finally:
        trace.get_tracer = original  # type: ignore[assignment]
    spans = exporter.get_finished_spans()
    assert len(spans) == len(records) == 8
    shown = [str(span.to_json()) for span in spans] + [str(record) for record in records] + answers
    assert SECRET not in "\n".join(shown)
    assert any("***" in answer for answer in answers)  # the upstream named, redacted


def test_a_configuration_error_shows_no_secret() -> None:
    with pytest.raises(ValueError) as refused:
        ToolCallConfig(store=f"redis+sentinel://user:{SECRET}@127.0.0.1:26379/0")
    assert "redis+sentinel://user:***@127.0.0.1" in str(refused.value) and SECRET not in str(refused.value)


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("http://user:pw@h:1/v1?api_key=k&v=2", "http://user:***@h:1/v1?api_key=***&v=***"),
        ("redis://:pw@127.0.0.1:6379/0", "redis://:***@127.0.0.1:6379/0"),
        ("https://sk-token@host/path#frag", "https://***@host/path#***"),
        ('{"upstream": "http://u:p@h/x"}', '{"upstream": "http://u:***@h/x"}'),
        ("URL('http://a:b@c/?q')", "URL('http://a:***@c/?***')"),
        (
            "sqlite:////var/lib/state.db and http://plain:8000/v1",
            "sqlite:////var/lib/state.db and http://plain:8000/v1",
        ),
        ("no URL at all: user:pw@host", "no URL at all: user:pw@host"),
    ],
)
def test_redact(written: str, shown: str) -> None:
    assert redact(written) == shown
