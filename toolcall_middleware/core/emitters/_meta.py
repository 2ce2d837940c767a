"""What an emitter carries through from the upstream response: ids, model, time, usage."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._ids import chat_completion_id


def token_count(usage: Any, key: str, *more: str) -> int:
    """The first of `key`, `more` that `usage` has as a count (a non-negative whole number), else
    0: a host's usage object is read, never trusted (a list or a string there is no count)."""
    if not isinstance(usage, Mapping):
        return 0
    for name in (key, *more):
        value = usage.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            continue
        if value >= 0 and value == int(value):
            return int(value)
    return 0


def usage_details(usage: Any, key: str, *more: str) -> Mapping[str, Any]:
    """The first of the usage's `…_details` objects named that is an object, else `{}`."""
    if isinstance(usage, Mapping):
        for name in (key, *more):
            value = usage.get(name)
            if isinstance(value, Mapping):
                return value
    return {}


@dataclass
class Upstream:
    """The upstream's metadata. Fields the upstream did not send get OpenAI-style defaults.

    `finish_reason` is the upstream's own (`length` tells that the model was cut off);
    `usage` is the upstream's Chat-style usage object, passed through; `stop_sequence` the stop
    sequence that ended the output, where the upstream says which.
    """

    id: str = field(default_factory=chat_completion_id)
    model: str = "unknown"
    created: int = field(default_factory=lambda: int(time.time()))
    system_fingerprint: str | None = None
    service_tier: str | None = None
    usage: Mapping[str, Any] | None = None
    finish_reason: str | None = None
    stop_sequence: str | None = None


__all__ = [
    "Upstream",
    "token_count",
    "usage_details",
]
