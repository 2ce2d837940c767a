"""Spans that leave the process: `serve --tracing` exports them over OTLP/HTTP (the `otlp` extra).

```
pip install 'toolcall-middleware[serve,otlp]'
OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 OTEL_SERVICE_NAME=toolcall \\
    toolcall-middleware serve --upstream http://localhost:8000 --tracing
```

The OpenTelemetry SDK's own `OTEL_*` variables configure it, read by the SDK and the exporter
themselves: `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), `…_HEADERS`,
`…_TIMEOUT`, `…_COMPRESSION`, `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` (the service is
`toolcall-middleware` when neither names one), `OTEL_BSP_*` for the batching, and
`OTEL_SDK_DISABLED=true` to export nothing. Spans go out in batches from a thread, never on a
request's path; `serve` flushes what is left when it stops.

A process where a tracer provider is already set (run under `opentelemetry-instrument`, or an
app that set up its own) keeps it: its spans go where that one sends them.
"""

from __future__ import annotations

import os
from collections.abc import Callable

DEFAULT_SERVICE = "toolcall-middleware"
EXTRA = "pip install 'toolcall-middleware[otlp]'"


def start_export() -> Callable[[], None]:
    """Set up the SDK to export spans over OTLP/HTTP; returns what flushes and stops it. Raises
    ImportError naming the extra when the SDK or the exporter is missing."""
    from opentelemetry import trace

    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return _nothing
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return _nothing  # someone set a provider up already: theirs stands
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        raise ImportError(
            f"exporting spans needs the OpenTelemetry SDK and its OTLP exporter: {EXTRA}", name="opentelemetry"
        ) from None
    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: DEFAULT_SERVICE}))
    # (the SDK's own exit hook would flush too, but only at interpreter exit: `serve` stops it first)
    provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return provider.shutdown


def _nothing() -> None:
    pass


__all__ = ["DEFAULT_SERVICE", "start_export"]
