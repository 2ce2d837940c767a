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
request's path; what is left is flushed when the server stops (`ExportSpans`, at the end of its
lifespan).

A process where a tracer provider is already set (run under `opentelemetry-instrument`, or an
app that set up its own) keeps it: its spans go where that one sends them.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Message = MutableMapping[str, Any]
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

DEFAULT_SERVICE = "toolcall-middleware"
EXTRA = "pip install 'toolcall-middleware[otlp]'"


class ExportSpans:
    """`app` with its spans exported from its lifespan's startup to its shutdown, which flushes
    what is still batched: each server process (each worker) sets up its own, and the spans go
    out however the server is stopped (uvicorn ends its process by the signal it was sent)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._stop: Callable[[], None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return

        async def starting() -> Message:
            message = await receive()
            if message["type"] == "lifespan.startup" and self._stop is None:
                self._stop = start_export()
            return message

        async def stopping(message: Message) -> None:
            if message["type"].startswith("lifespan.shutdown") and self._stop is not None:
                stop, self._stop = self._stop, None
                await asyncio.to_thread(stop)  # (it waits for the last export: not on the loop)
            await send(message)

        await self.app(scope, starting, stopping)


def check_export() -> None:
    """Raise ImportError naming the extra when the SDK or the exporter is missing (at start-up,
    before a server runs without them)."""
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        raise ImportError(
            f"exporting spans needs the OpenTelemetry SDK and its OTLP exporter: {EXTRA}", name="opentelemetry"
        ) from None


def start_export() -> Callable[[], None]:
    """Set up the SDK to export spans over OTLP/HTTP; returns what flushes and stops it. Raises
    ImportError naming the extra when the SDK or the exporter is missing."""
    from opentelemetry import trace

    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return _nothing
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return _nothing  # someone set a provider up already: theirs stands
    check_export()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: DEFAULT_SERVICE}))
    # (the SDK's own exit hook would flush at interpreter exit, which a server killed by its signal skips)
    provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return provider.shutdown


def _nothing() -> None:
    pass


__all__ = ["DEFAULT_SERVICE", "ExportSpans", "check_export", "start_export"]
