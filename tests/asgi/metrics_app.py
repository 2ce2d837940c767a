"""A served app for the metrics tests: `examples.fake_model` behind the middleware, its records
counted by `PrometheusMetrics` on a registry of its own, answered at `GET /metrics`."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from examples.fake_model import app as raw_app
from toolcall_middleware import ToolCallMiddleware
from toolcall_middleware.metrics import MetricsRoute, PrometheusMetrics

metrics = PrometheusMetrics(registry=CollectorRegistry())
app = MetricsRoute(ToolCallMiddleware(raw_app, dialect="hermes", on_report=metrics.observe), metrics)
