"""What an operator of `toolcall-middleware serve` watches, through `serve` as a real process and
the openai SDK: the exchanges' spans exported over OTLP/HTTP to a collector (a receiver on
loopback here), and `/metrics` with the host's timings and tokens, the store's operations and
errors, and the background responses running and queued."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from tests.served.otlp_receiver import otlp_receiver
from tests.served.test_proxy import CHAT_TOOLS, QUESTION, proxy, running
from tests.served.test_store_jobs import SLOW, instance, sdk, upstream, wait_for
from tests.servers import serve, uvicorn

__all__ = ["upstream"]  # (a fixture of the store's jobs' tests, used here)


@pytest.fixture(scope="module")
def raw_model() -> Iterator[str]:
    """The demo model served bare: raw hermes markup, and the `usage` a server reports."""
    command, port = uvicorn("examples.demo_model:app")
    with serve(["env", "DEMO_DIALECT=hermes", *command], port) as base:
        yield base


def client(base: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base + "/v1", api_key="test", max_retries=0)


def ask(sdk_client: openai.OpenAI, **extra: Any) -> Any:
    messages: Any = [{"role": "user", "content": QUESTION}]
    return sdk_client.chat.completions.create(model="demo", messages=messages, tools=CHAT_TOOLS, **extra)


def stop(proc: Any) -> str:
    """SIGTERM, as an orchestrator stops a process; what it wrote on standard error."""
    proc.terminate()
    _, err = proc.communicate(timeout=15)
    return str(err)


# -- traces --------------------------------------------------------------------------------------


def test_serve_tracing_exports_each_exchanges_span_over_otlp(raw_model: str) -> None:
    """Configured by the standard variables only; the spans batched (not sent before a minute
    here) reach the collector when `serve` is stopped: nothing is lost at shutdown."""
    with otlp_receiver() as receiver:
        command, port = proxy(raw_model, "--dialect", "hermes", "--tracing")
        settings = [
            f"OTEL_EXPORTER_OTLP_ENDPOINT={receiver.url}",
            "OTEL_SERVICE_NAME=weather-proxy",
            "OTEL_RESOURCE_ATTRIBUTES=deployment.environment=test",
            "OTEL_BSP_SCHEDULE_DELAY=60000",
        ]
        proc = running(["env", *settings, *command], port)
        try:
            whole = ask(client(f"http://127.0.0.1:{port}"))
            streamed = list(ask(client(f"http://127.0.0.1:{port}"), stream=True))
            with pytest.raises(openai.BadRequestError):
                ask(client(f"http://127.0.0.1:{port}"), parallel_tool_calls="x")
            assert receiver.spans == []  # (batched: nothing yet)
        finally:
            stop(proc)
        assert whole.choices[0].message.tool_calls and any(c.choices for c in streamed)
    assert receiver.paths and set(receiver.paths) == {"/v1/traces"}
    spans = [s for s in receiver.spans if s.name == "toolcall.exchange"]
    assert len(spans) == 3, receiver.spans
    first, second, refused = spans
    for span, stream in ((first, False), (second, True)):
        attributes = span.attributes
        assert attributes["http.route"] == "/v1/chat/completions" and attributes["http.response.status_code"] == 200
        assert attributes["toolcall.api"] == "chat" and attributes["toolcall.dialect"] == "hermes"
        assert attributes["toolcall.outcome"] == "rewritten" and attributes["toolcall.calls_emitted"] == 1
        assert attributes["toolcall.stream"] is stream and not span.error
        assert 0 < attributes["toolcall.first_byte_seconds"] <= attributes["toolcall.upstream_seconds"]
    assert first.attributes["toolcall.input_tokens"] == whole.usage.prompt_tokens
    assert first.attributes["toolcall.output_tokens"] == whole.usage.completion_tokens
    assert refused.error and refused.attributes["toolcall.outcome"] == "refused"
    assert refused.attributes["http.response.status_code"] == 400
    assert "toolcall.upstream_seconds" not in refused.attributes  # (the host was never asked)
    assert first.resource["service.name"] == "weather-proxy"
    assert first.resource["deployment.environment"] == "test"


def test_serve_tracing_names_the_extra_when_no_exporter_is_installed(raw_model: str) -> None:
    """Without the exporter package (hidden here), `serve --tracing` refuses to start and says
    what to install, rather than run with spans that go nowhere."""
    command, _ = proxy(raw_model, "--dialect", "hermes", "--tracing")
    hidden = "opentelemetry.exporter.otlp.proto.http.trace_exporter"
    code = f"import sys; sys.modules[{hidden!r}] = None; from toolcall_middleware.cli import main; sys.exit(main())"
    done = subprocess.run([sys.executable, "-c", code, *command[3:]], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2, done.stderr
    assert "pip install 'toolcall-middleware[otlp]'" in done.stderr and "[serve]" not in done.stderr


# -- metrics -------------------------------------------------------------------------------------


def sample(text: str, name: str) -> float:
    """The value of the sample `name` (its labels written as Prometheus writes them)."""
    found = [line for line in text.splitlines() if line.startswith(name + " ")]
    assert found, f"no {name} in:\n" + "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    return float(found[0].split()[-1])


def labels_of(text: str, metric: str, label: str) -> set[str]:
    return set(re.findall(rf'^{metric}{{[^}}]*{label}="([^"]*)"', text, flags=re.MULTILINE))


def test_metrics_show_the_hosts_timings_and_tokens_per_api(raw_model: str) -> None:
    command, port = proxy(raw_model, "--dialect", "hermes")
    proc = running(command, port)
    base = f"http://127.0.0.1:{port}"
    try:
        answers = [ask(client(base)) for _ in range(2)]
        chunks = list(ask(client(base), stream=True, stream_options={"include_usage": True}))
        text = httpx.get(base + "/metrics").text
    finally:
        stop(proc)
    whole = 'api="chat",stream="false"'
    streamed = 'api="chat",stream="true"'
    assert sample(text, f"toolcall_upstream_seconds_count{{{whole}}}") == 2
    assert sample(text, f"toolcall_first_byte_seconds_count{{{whole}}}") == 2
    assert sample(text, f"toolcall_upstream_seconds_count{{{streamed}}}") == 1
    for labels in (whole, streamed):
        first = sample(text, f"toolcall_first_byte_seconds_sum{{{labels}}}")
        assert 0 < first <= sample(text, f"toolcall_upstream_seconds_sum{{{labels}}}")
        # (the host's time is in the exchange's, which adds reading the request and our work)
        assert sample(text, f"toolcall_upstream_seconds_sum{{{labels}}}") < sample(
            text, f"toolcall_exchange_seconds_sum{{{labels}}}"
        )
    usage = [a.usage for a in answers] + [c.usage for c in chunks if c.usage is not None]
    assert len(usage) == 3
    by_answer = 'api="chat",dialect="hermes"'
    assert sample(text, f"toolcall_input_tokens_total{{{by_answer}}}") == sum(u.prompt_tokens for u in usage)
    assert sample(text, f"toolcall_output_tokens_total{{{by_answer}}}") == sum(u.completion_tokens for u in usage)
    # Bounded labels: the API and whether it streamed, never a model name or a path a client wrote.
    assert labels_of(text, "toolcall_upstream_seconds_bucket", "api") == {"chat"}
    assert "demo" not in "".join(re.findall(r"^toolcall_\w+{[^}]*}", text, flags=re.MULTILINE))


def test_the_first_byte_comes_before_the_end_of_a_slow_stream(upstream: str, tmp_path: Path) -> None:
    """A host that streams for about a second: its first byte early, its end late, each where
    it happened (not the exchange's whole time twice)."""
    with instance(upstream, f"sqlite:///{tmp_path / 'state.db'}") as (_, base):
        messages: Any = [{"role": "user", "content": SLOW}]
        chunks = list(sdk(base, "sk-a").chat.completions.create(model="m", messages=messages, stream=True))
        text = httpx.get(base + "/metrics").text
    assert chunks
    labels = 'api="chat",stream="true"'
    first = sample(text, f"toolcall_first_byte_seconds_sum{{{labels}}}")
    end = sample(text, f"toolcall_upstream_seconds_sum{{{labels}}}")
    assert first < 0.5 <= end, (first, end)


def test_metrics_show_store_operations_errors_and_background_jobs(upstream: str, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'state.db'}"
    bounds = ["--max-background-jobs", "1", "--store-max-bytes", "8000"]
    with instance(upstream, store, *bounds) as (_, base):
        alice = sdk(base, "sk-alice")
        jobs = [alice.responses.create(model="m", input=SLOW, background=True) for _ in range(2)]
        wait_for(alice, jobs[0].id, {"in_progress"}, 10)
        during = httpx.get(base + "/metrics").text
        for job in jobs:
            wait_for(alice, job.id, {"completed"}, 20)
        with pytest.raises(openai.APIStatusError) as full:  # a response over the store's record limit
            alice.responses.create(model="m", input="x" * 10_000)
        time.sleep(0.2)  # (the background task's release, after its last write)
        after = httpx.get(base + "/metrics").text
    assert full.value.status_code == 503
    assert sample(during, "toolcall_background_running") == 1
    assert sample(during, "toolcall_background_queued") == 1
    assert sample(after, "toolcall_background_running") == 0 and sample(after, "toolcall_background_queued") == 0
    sqlite = 'backend="sqlite"'
    assert sample(after, f'toolcall_store_operations_total{{{sqlite},operation="put"}}') >= 2
    assert sample(after, f'toolcall_store_operations_total{{{sqlite},operation="take_lease"}}') == 2
    assert sample(after, f'toolcall_store_operations_total{{{sqlite},operation="get"}}') >= 4
    assert sample(after, f'toolcall_store_errors_total{{{sqlite},error="full",operation="put"}}') == 1
    assert sample(after, f'toolcall_store_seconds_count{{{sqlite},operation="put"}}') == sample(
        after, f'toolcall_store_operations_total{{{sqlite},operation="put"}}'
    )
    assert labels_of(after, "toolcall_store_operations_total", "backend") == {"sqlite"}
