"""Prometheus metrics of the exchanges (`prometheus-client`, the `metrics` extra; `serve` has them
at `GET /metrics`).

```python
from toolcall_middleware.metrics import PrometheusMetrics

metrics = PrometheusMetrics()                       # the default registry, or registry=…
app.add_middleware(ToolCallMiddleware, dialect="hermes", on_report=metrics.observe)
app.mount("/metrics", metrics.asgi_app())           # Flask/WSGI: metrics.wsgi_app()
```

Each exchange's record (`on_report`) counts into:

- `toolcall_exchanges_total{route, api, dialect, outcome}`: outcome `rewritten`, `passthrough`,
  `truncated`, `policy_error` or `refused`;
- `toolcall_calls_emitted_total{api, dialect}` and `toolcall_calls_found_total{api, dialect}`;
- `toolcall_truncated_total{api, dialect}`: answers cut off inside a call;
- `toolcall_policy_errors_total{api, dialect}`: answers that broke the request's tool rules;
- `toolcall_unknown_tools_total{api, dialect}`: calls to tools the request did not offer;
- `toolcall_dialect_mismatches_total{api, dialect, found}`: answers whose model wrote a call in
  another dialect's markup (`found`) where the dialect in force found none (`dialect_mismatch`);
- `toolcall_exchange_seconds{api, stream}`: the exchange's time, request to last byte (the parse
  is inside it: what the middleware adds is in docs/benchmarks.md);
- `toolcall_request_bytes_total{api}`: the request bodies read;
- `toolcall_response_bytes_total{api}`: the response bodies sent to clients (ours, or the host's
  as it came);
- `toolcall_parse_seconds{api, stream}`: the middleware's own work on each response (decoding,
  parsing, the rules, writing the client's bytes), never the host's time;
- `toolcall_upstream_seconds{api, stream}`: the host's (the upstream's, through `serve`) time,
  request handed on to the answer's last byte;
- `toolcall_first_byte_seconds{api, stream}`: the same to the host's first body byte (its time
  to the first token, for a stream);
- `toolcall_input_tokens_total{api, dialect}` and `toolcall_output_tokens_total{api, dialect}`:
  the tokens the host's answers say they used (their `usage`; a stream says it only when asked,
  `stream_options.include_usage`).

With a response store (`watch_state`, which `serve` calls):

- `toolcall_store_operations_total{operation, backend}` and `toolcall_store_seconds{operation,
  backend}`: each store operation (`get`, `put`, `update`, … and the job leases');
- `toolcall_store_errors_total{operation, backend, error}`: those that failed, `error` being
  `full` (a limit refused a write), `unavailable` (the backend failed) or `other`;
- `toolcall_background_running` and `toolcall_background_queued`: this process's background
  responses running and waiting for a slot.

Every label has a bounded set of values a client cannot add to: the routes are the configured
ones, the APIs, dialects, operations and backends are the library's own; no model name (a client
writes any), id or credential is a label.

Several processes (`serve --workers N`, or gunicorn's workers): with `PROMETHEUS_MULTIPROC_DIR`
set before prometheus-client is imported (`serve` makes and removes a folder for its workers),
each process writes its values there and `GET /metrics` answers, from whichever process, their
sum over the processes (prometheus-client's multiprocess mode): the counters and histograms of
every process that ever served, the background gauges of those alive, as of each one's last store
operation.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .store._layer import ResponsesState

MULTIPROCESS_FOLDER = "PROMETHEUS_MULTIPROC_DIR"  # (prometheus-client's own variable)
# The histograms' buckets for the host's time: a first token in milliseconds, a long generation in minutes.
HOST_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)


class PrometheusMetrics:
    """The collectors, registered once on `registry` (the default one when not given)."""

    def __init__(self, registry: Any = None, *, namespace: str = "toolcall") -> None:
        try:
            import prometheus_client as prom
        except ImportError:
            raise ImportError(
                "metrics need the prometheus-client package: pip install 'toolcall-middleware[metrics]'",
                name="prometheus_client",
            ) from None
        self._prom = prom
        self.registry = registry if registry is not None else prom.REGISTRY
        # Several processes write their values in one folder (see the module doc).
        self.multiprocess = bool(os.environ.get(MULTIPROCESS_FOLDER))
        self._refresh: Callable[[], None] = lambda: None  # the gauges, written where the others read them
        by_answer = ("api", "dialect")
        made: dict[str, Any] = {"namespace": namespace, "registry": self.registry}
        self.exchanges = prom.Counter(
            "exchanges", "exchanges by route, API, dialect and outcome", ("route", "api", "dialect", "outcome"), **made
        )
        self.calls_emitted = prom.Counter("calls_emitted", "tool calls sent to clients", by_answer, **made)
        self.calls_found = prom.Counter("calls_found", "tool calls the parser found", by_answer, **made)
        self.truncated = prom.Counter("truncated", "answers cut off inside a call", by_answer, **made)
        self.policy_errors = prom.Counter("policy_errors", "answers that broke the tool rules", by_answer, **made)
        self.unknown_tools = prom.Counter("unknown_tools", "calls to tools not offered", by_answer, **made)
        self.dialect_mismatches = prom.Counter(
            "dialect_mismatches",
            "answers with a call in another dialect's markup than the one in force",
            ("api", "dialect", "found"),
            **made,
        )
        self.seconds = prom.Histogram(
            "exchange_seconds", "an exchange's time, request to last byte", ("api", "stream"), **made
        )
        self.request_bytes = prom.Counter("request_bytes", "request bodies read", ("api",), **made)
        self.response_bytes = prom.Counter("response_bytes", "response bodies sent to clients", ("api",), **made)
        self.parse_seconds = prom.Histogram(
            "parse_seconds",
            "the middleware's own work on a response: decoding, parsing, rules, writing",
            ("api", "stream"),
            buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0),
            **made,
        )

        by_stream = ("api", "stream")
        self.upstream_seconds = prom.Histogram(
            "upstream_seconds", "the host's time, request to its last byte", by_stream, buckets=HOST_BUCKETS, **made
        )
        self.first_byte_seconds = prom.Histogram(
            "first_byte_seconds", "the host's time to its first byte", by_stream, buckets=HOST_BUCKETS, **made
        )
        self.input_tokens = prom.Counter("input_tokens", "input tokens the host's answers used", by_answer, **made)
        self.output_tokens = prom.Counter("output_tokens", "output tokens the host's answers used", by_answer, **made)
        by_operation = ("operation", "backend")
        self.store_operations = prom.Counter("store_operations", "response store operations", by_operation, **made)
        self.store_errors = prom.Counter(
            "store_errors", "response store operations that failed", (*by_operation, "error"), **made
        )
        self.store_seconds = prom.Histogram(
            "store_seconds",
            "a response store operation's time",
            by_operation,
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0),
            **made,
        )
        # (several processes: the sum over those alive)
        self.background_running = prom.Gauge(
            "background_running", "background responses running", multiprocess_mode="livesum", **made
        )
        self.background_queued = prom.Gauge(
            "background_queued", "background responses waiting", multiprocess_mode="livesum", **made
        )

    def observe(self, record: Mapping[str, Any]) -> None:
        """Count one exchange's record (an `on_report` callback)."""
        api, dialect = str(record.get("api")), str(record.get("dialect"))
        self.exchanges.labels(str(record.get("path")), api, dialect, str(record.get("outcome"))).inc()
        self.calls_emitted.labels(api, dialect).inc(int(record.get("calls_emitted") or 0))
        self.calls_found.labels(api, dialect).inc(int(record.get("calls_found") or 0))
        if record.get("truncated"):
            self.truncated.labels(api, dialect).inc()
        if record.get("policy_error"):
            self.policy_errors.labels(api, dialect).inc()
        self.unknown_tools.labels(api, dialect).inc(len(record.get("unknown_tools") or ()))
        if record.get("dialect_found"):
            self.dialect_mismatches.labels(api, dialect, str(record["dialect_found"])).inc()
        stream = str(bool(record.get("stream"))).lower()
        self.seconds.labels(api, stream).observe(float(record.get("seconds") or 0))
        self.request_bytes.labels(api).inc(int(record.get("request_bytes") or 0))
        self.response_bytes.labels(api).inc(int(record.get("response_bytes") or 0))
        self.parse_seconds.labels(api, stream).observe(float(record.get("parse_seconds") or 0))
        if record.get("upstream_seconds") is not None:
            self.upstream_seconds.labels(api, stream).observe(float(record["upstream_seconds"]))
        if record.get("first_byte_seconds") is not None:
            self.first_byte_seconds.labels(api, stream).observe(float(record["first_byte_seconds"]))
        if record.get("input_tokens") is not None:
            self.input_tokens.labels(api, dialect).inc(int(record["input_tokens"]))
        if record.get("output_tokens") is not None:
            self.output_tokens.labels(api, dialect).inc(int(record["output_tokens"]))

    def observe_store(self, operation: str, backend: str, seconds: float, error: str | None) -> None:
        """Count one store operation (`ObservedStore`'s callback)."""
        self.store_operations.labels(operation, backend).inc()
        self.store_seconds.labels(operation, backend).observe(seconds)
        if error is not None:
            self.store_errors.labels(operation, backend, error).inc()
        self._refresh()

    def watch_state(self, state: ResponsesState) -> None:
        """Count the store operations of the Responses state `state` from now on, and show its
        background responses running and queued (read when scraped; with several processes,
        written at each store operation and scrape, where the others read them)."""
        state.observe_store(self.observe_store)
        admission = state.background.admission
        if not self.multiprocess:
            self.background_running.set_function(lambda: admission.running_count)
            self.background_queued.set_function(lambda: admission.queued_count)
            return

        def refresh() -> None:
            self.background_running.set(admission.running_count)
            self.background_queued.set(admission.queued_count)

        self._refresh = refresh

    def _served_registry(self) -> Any:
        """What `/metrics` serves: the registry, or with several processes the sum of theirs."""
        if not self.multiprocess:
            return self.registry
        from prometheus_client import multiprocess

        summed = self._prom.CollectorRegistry()
        multiprocess.MultiProcessCollector(summed)  # type: ignore[no-untyped-call]
        return summed

    def asgi_app(self) -> Any:
        """An ASGI app that serves the registry in Prometheus's text format."""
        served = self._prom.make_asgi_app(registry=self._served_registry())

        async def metrics(scope: Any, receive: Any, send: Any) -> None:
            self._refresh()  # (this process's gauges, as of now)
            await served(scope, receive, send)

        return metrics

    def wsgi_app(self) -> Any:
        """The same, as a WSGI app."""
        served = self._prom.make_wsgi_app(registry=self._served_registry())

        def metrics(environ: Any, start_response: Any) -> Any:
            self._refresh()
            return served(environ, start_response)

        return metrics


def observers(*callbacks: Callable[[dict[str, Any]], None] | None) -> Callable[[dict[str, Any]], None]:
    """One `on_report` callback that calls each given one in turn (`None`s left out)."""
    given = [c for c in callbacks if c is not None]

    def observe(record: dict[str, Any]) -> None:
        for callback in given:
            callback(record)

    return observe


class MetricsRoute:
    """`app` with `GET /metrics` answered by `metrics` (as `serve` runs it)."""

    def __init__(self, app: Any, metrics: PrometheusMetrics, path: str = "/metrics") -> None:
        self.app = app
        self.path = path
        self.metrics_app = metrics.asgi_app()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("method") == "GET" and scope.get("path") == self.path:
            await self.metrics_app(scope, receive, send)
        else:
            await self.app(scope, receive, send)


__all__ = ["MULTIPROCESS_FOLDER", "MetricsRoute", "PrometheusMetrics", "observers"]
