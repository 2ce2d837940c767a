"""A served app for the dialect-mismatch tests: `examples.fake_model`, which writes Hermes
`<tool_call>` markup whatever the model is called, behind the middleware with no dialect set, so
a Llama model name selects `llama3_json`. The request's `x-mismatch` header picks the value of
`dialect_mismatch`; the records count into `PrometheusMetrics` at `GET /metrics`, and what the
middleware logged is answered at `GET /log`."""

from __future__ import annotations

import logging
from typing import Any

from prometheus_client import CollectorRegistry
from starlette.responses import JSONResponse

from examples.fake_model import app as raw_app
from toolcall_middleware import ToolCallMiddleware
from toolcall_middleware.metrics import MetricsRoute, PrometheusMetrics

LOGGED: list[dict[str, str]] = []


class _Kept(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        LOGGED.append({"level": record.levelname, "message": record.getMessage()})


_logger = logging.getLogger("toolcall_middleware")
_logger.setLevel(logging.INFO)
_logger.addHandler(_Kept())

metrics = PrometheusMetrics(registry=CollectorRegistry())
APPS = {
    mode: ToolCallMiddleware(raw_app, dialect_mismatch=mode, on_report=metrics.observe)
    for mode in ("read", "warn", "off")
}


async def by_mode(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "http" and scope["path"] == "/log":
        await JSONResponse(LOGGED)(scope, receive, send)
        return
    mode = dict(scope.get("headers") or []).get(b"x-mismatch", b"read").decode()
    await APPS[mode](scope, receive, send)


app = MetricsRoute(by_mode, metrics)
