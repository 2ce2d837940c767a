"""How `serve` writes its log: every line with a UTC timestamp, as text or as one JSON object.

```
2026-11-28T00:10:00.123Z INFO toolcall-middleware exchange chat POST /v1/chat/completions 200 rewritten … id=4f0c…
{"time": "2026-11-28T00:10:00.123Z", "level": "info", "message": "exchange", "request_id": "4f0c…", …}
```

`--log-format json` makes every line on standard error one JSON object and nothing else: the
exchange records (the message `exchange` and the record's fields: request id, route, status,
outcome, dialect, calls, timings), the start-up lines, the middleware's warnings, and uvicorn's
own lines (its access log has `client`, `method`, `path` and `status` besides). The formatters
are ordinary `logging.Formatter`s, for an application that wants the same lines in process.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timezone
from typing import Any, Literal

LogFormat = Literal["text", "json"]
RECORD = "toolcall_record"  # the exchange record a log record carries (`extra=`), for `JsonFormatter`
LOGGERS = ("toolcall_middleware", "uvicorn", "uvicorn.error", "uvicorn.access")


def utc_time(created: float) -> str:
    """ISO 8601 in UTC, to the millisecond: `2026-11-28T00:10:00.123Z`."""
    return datetime.fromtimestamp(created, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TextFormatter(logging.Formatter):
    """`TIME LEVEL message`, the time in UTC (`utc_time`)."""

    def format(self, record: logging.LogRecord) -> str:
        line = f"{utc_time(record.created)} {record.levelname} {record.getMessage()}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object per log record, on one line: `time` (UTC), `level`, `logger`, `message`;
    an exchange record's fields beside them; a traceback as `exception` (its newlines escaped)."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {"time": utc_time(record.created), "level": record.levelname.lower()}
        out["logger"] = record.name
        exchange = getattr(record, RECORD, None)
        if isinstance(exchange, dict):
            out["message"] = "exchange"
            out.update((k, v) for k, v in exchange.items() if k not in out)
        else:
            out["message"] = record.getMessage()
            if record.name == "uvicorn.access" and isinstance(record.args, tuple) and len(record.args) == 5:
                client, method, path, _, status = record.args
                out.update(client=client, method=method, path=path, status=status)
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


def formatter(log_format: LogFormat) -> logging.Formatter:
    return JsonFormatter() if log_format == "json" else TextFormatter()


def log_config(log_format: LogFormat, level: str) -> dict[str, Any]:
    """A `logging.config.dictConfig` (uvicorn's `log_config`) that writes the middleware's log
    and uvicorn's on standard error in `log_format`, at `level`."""
    factory = JsonFormatter if log_format == "json" else TextFormatter
    loggers = {name: {"handlers": ["stderr"], "level": level.upper(), "propagate": False} for name in LOGGERS}
    loggers["uvicorn.error"] = {"level": level.upper()}  # (propagates to "uvicorn", which writes it)
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"line": {"()": factory}},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "line", "stream": "ext://sys.stderr"}},
        "loggers": loggers,
    }


def line(message: str, log_format: LogFormat, level: int = logging.INFO) -> str:
    """`message` as a line of the log in `log_format` (`serve`'s start-up lines, which are
    written whatever the level)."""
    record = logging.LogRecord("toolcall_middleware", level, __file__, 0, message, None, None)
    return formatter(log_format).format(record)


__all__ = ["JsonFormatter", "LogFormat", "TextFormatter", "line", "log_config", "utc_time"]
