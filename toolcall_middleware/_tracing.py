"""An OpenTelemetry span per exchange (`tracing=True`; needs `opentelemetry-api`, the `tracing`
extra), with the exchange record's figures as attributes.

The span is made when the exchange ends, with its start and end times, under whatever span is
current then (a server's request span, where the app is instrumented): `toolcall.exchange`, with
`toolcall.api`, `toolcall.dialect`, `toolcall.outcome`, `toolcall.calls_emitted`,
`toolcall.response_bytes`, `toolcall.parse_seconds` (the middleware's own work),
`toolcall.request_id` (the request's `x-request-id`), `toolcall.upstream_seconds` and
`toolcall.first_byte_seconds` (the host's), `toolcall.input_tokens` and `toolcall.output_tokens`
(the host's usage), … and
`http.route` and `http.response.status_code` (the host's status). A refused request or a policy
error sets the span's status to error. Without an SDK configured, the API's tracer does nothing;
`serve --tracing` configures one that exports over OTLP (`otlp.py`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

SPAN = "toolcall.exchange"
NUMBERS = ("calls_found", "calls_emitted", "request_bytes", "response_bytes", "parse_seconds", "echoed_function_calls")
HOST = ("upstream_seconds", "first_byte_seconds", "input_tokens", "output_tokens")  # what the host took
FLAGS = ("stream", "rewritten_request", "rewritten_response", "truncated")
TEXTS = ("api", "dialect", "model", "outcome", "policy_error", "refused", "passthrough_reason", "request_id")


def span_attributes(record: Mapping[str, Any]) -> dict[str, Any]:
    """The record's figures as span attributes (`None`s left out, as OpenTelemetry wants)."""
    out: dict[str, Any] = {}
    for key in (*NUMBERS, *HOST, *FLAGS, *TEXTS):
        if record.get(key) is not None:
            out[f"toolcall.{key}"] = record[key]
    if record.get("path"):
        out["http.route"] = record["path"]
    if record.get("status") is not None:
        out["http.response.status_code"] = record["status"]
    return out


def trace_exchange(record: Mapping[str, Any]) -> None:
    """One span for the exchange `record` describes, ending now and lasting its `seconds`."""
    from opentelemetry import trace

    end = time.time_ns()
    start = end - int(float(record.get("seconds") or 0) * 1e9)
    tracer = trace.get_tracer("toolcall_middleware")
    span = tracer.start_span(SPAN, start_time=start, attributes=span_attributes(record))
    if record.get("outcome") in ("refused", "policy_error"):
        span.set_status(trace.Status(trace.StatusCode.ERROR, str(record.get("policy_error") or record.get("refused"))))
    span.end(end_time=end)


__all__ = ["SPAN", "span_attributes", "trace_exchange"]
