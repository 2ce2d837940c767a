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
  parsing, the rules, writing the client's bytes), never the host's time.

The routes are the configured ones (a client cannot make new label values).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


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

    def asgi_app(self) -> Any:
        """An ASGI app that serves the registry in Prometheus's text format."""
        return self._prom.make_asgi_app(registry=self.registry)

    def wsgi_app(self) -> Any:
        """The same, as a WSGI app."""
        return self._prom.make_wsgi_app(registry=self.registry)


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


__all__ = ["MetricsRoute", "PrometheusMetrics", "observers"]
