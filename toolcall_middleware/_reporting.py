"""What an exchange's end tells the world: its record as a log line, to `on_report` and as a span,
and the warnings of what would surprise an operator; and a failure of ours, logged.

The exchange (`core._exchange.Exchange`) does no I/O: it hands its record, once, to its
configuration (`ExchangeConfig.report`), and `ToolCallConfig` hands it here (`report`), as it
does a failure the exchange recovered from (`caught`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

from ._records import record_json, record_line
from ._surprises import SURPRISES
from ._tracing import trace_exchange
from .core._exchange_data import Report
from .logs import RECORD

logger = logging.getLogger("toolcall_middleware")


class Reported(Protocol):
    """What reporting reads of the configuration (`ToolCallConfig` is one)."""

    @property
    def on_report(self) -> Callable[[dict[str, Any]], None] | None: ...
    @property
    def tracing(self) -> bool: ...
    @property
    def log_format(self) -> str: ...
    @property
    def dialect(self) -> str | None: ...
    @property
    def dialect_mismatch(self) -> str: ...


def report(record: Report, upstream: str, config: Reported) -> None:
    """Log the exchange's telemetry and hand it to `on_report` (and a span); warn of what would
    surprise an operator (`surprises`). `upstream`: the host's API."""
    _warn_surprises(record, config)
    if record.dropped_tool_types:
        logger.info(
            "toolcall-middleware: tools of type %s are not offered to the host", ", ".join(record.dropped_tool_types)
        )
    if record.unreadable is not None:
        logger.warning(
            "toolcall-middleware: the host's answer to %s is not a %s answer: the client got the API's error; "
            "it sent %s",
            record.path,
            upstream,
            record.unreadable,
        )
    callback = config.on_report
    logged = logger.isEnabledFor(logging.INFO)
    tracing = config.tracing
    if not logged and callback is None and not tracing:
        return  # nobody to tell: no record built
    made = record.as_dict()
    if logged:
        line = record_json(made) if config.log_format == "json" else record_line(made)
        logger.info("toolcall-middleware exchange %s", line, extra={RECORD: made})
    if tracing:
        trace_exchange(made)
    if callback is not None:
        try:
            callback(made)
        except Exception:  # telemetry must never break a response
            logger.exception("toolcall-middleware: on_report callback failed")


def caught(error: Exception, doing: str) -> None:
    """A failure of ours the exchange recovered from: logged with its traceback (`doing` went wrong)."""
    logger.error("toolcall-middleware: %s", doing, exc_info=error)


def _warn_surprises(report: Report, config: Reported) -> None:
    api = report.api
    status = report.status if report.status is not None else 0
    reason = report.passthrough_reason
    if report.rewritten_request and not report.rewritten_response and reason and 200 <= status < 300:
        SURPRISES.warn(
            f"passthrough:{api}:{reason}",
            f"the answer to a rewritten {api} request passed through untouched ({reason}), so the client "
            "sees the host's raw text: a host answers JSON (application/json) or SSE (text/event-stream) "
            "in its API's shape",
        )
    for name in report.unknown_tools:
        SURPRISES.warn(
            f"unknown_tool:{name}",
            f"the model called {name!r}, a tool the request did not offer: it went to the client as text "
            "(strict=True makes it an error)",
        )
    if report.dialect_found is not None:
        read = config.dialect_mismatch == "read"
        SURPRISES.warn(
            f"mismatch:{report.model}:{report.dialect_found}",
            f"the model {report.model!r} is read as dialect {report.dialect!r} but wrote a call in "
            f"{report.dialect_found!r} markup: "
            + ("it was read as such" if read else "it went to the client as text")
            + f"; pin it with model_dialects={{{report.model!r}: {report.dialect_found!r}}} (serve: "
            f"--model-dialects {report.model}={report.dialect_found}), or dialect_mismatch='off' stops looking",
        )
    if report.dialect == "auto" and config.dialect is None and report.model:
        SURPRISES.warn(
            f"auto:{report.model}",
            f"no dialect matches the model {report.model!r}: its output is read as 'auto' (each format by its "
            f"markers); set dialect= or model_dialects={{{report.model!r}: ...}}",
        )


__all__ = ["Reported", "caught", "report"]
