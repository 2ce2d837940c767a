"""One record per exchange, as a log line: readable by default, JSON on request (`log_format`).

```
chat POST /v1/chat/completions 200 rewritten dialect=hermes model=qwen3 stream calls=1/1 12.3ms id=4f0c…
{"api": "chat", "path": "/v1/chat/completions", "status": 200, "outcome": "rewritten", …}
```

The readable line has the API, the route, the host's status, the outcome (`rewritten`,
`passthrough` and why, `truncated`, `policy_error` and its message, `refused` and its code), the
dialect and model, whether it streamed, the calls emitted of those found (and `mismatch=` the other
dialect whose call the model wrote, `dialect_mismatch`), the generations the answer took when the
host was asked again (`regenerate`), the unknown tools and dropped tool types where there were any,
the time, and the request id (`x-request-id`, kept or made). The JSON is the whole record
(`Exchange.report`, through `reporting.report`), as `on_report` gets it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def record_line(record: Mapping[str, Any]) -> str:
    """The readable line of one record (see the module doc)."""
    parts = [str(record.get("api")), "POST", str(record.get("path") or "-"), str(record.get("status") or "-")]
    outcome = str(record.get("outcome"))
    if outcome == "passthrough" and record.get("passthrough_reason"):
        outcome += f" ({record['passthrough_reason']})"
    elif outcome == "policy_error":
        outcome += f" ({record.get('policy_error')})"
    elif outcome == "refused":
        outcome += f" ({record.get('refused')})"
    parts.append(outcome)
    parts.append(f"dialect={record.get('dialect')}")
    if record.get("model"):
        parts.append(f"model={record['model']}")
    if record.get("stream"):
        parts.append("stream")
    parts.append(f"calls={record.get('calls_emitted', 0)}/{record.get('calls_found', 0)}")
    if record.get("dialect_found"):
        parts.append(f"mismatch={record['dialect_found']}")
    if (record.get("generations") or 1) > 1:
        parts.append(f"generations={record['generations']}")
    if record.get("unknown_tools"):
        parts.append("unknown_tools=" + ",".join(record["unknown_tools"]))
    if record.get("dropped_tool_types"):
        parts.append("dropped=" + ",".join(record["dropped_tool_types"]))
    parts.append(f"{float(record.get('seconds') or 0) * 1000:.1f}ms")
    if record.get("request_id"):
        parts.append(f"id={record['request_id']}")
    return " ".join(parts)


def record_json(record: Mapping[str, Any]) -> str:
    """The whole record as one line of JSON."""
    return json.dumps(record, ensure_ascii=False, default=str, separators=(", ", ": "))


__all__ = ["record_json", "record_line"]
