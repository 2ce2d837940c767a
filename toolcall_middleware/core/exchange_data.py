"""What an exchange is given and what it records, and what its answer sees of it.

`Settings` is what an exchange needs of the configuration (the middleware builds it once from
`ToolCallConfig`); `Report` is the telemetry of one exchange (the record `on_report`, the log
line, the metrics and the span are made from); `AnswerSetup` is what an exchange gives its
answer (`core.answer.Answer`), declared here so that the answer does not import the exchange.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .depth import MAX_DEPTH
from .grammar import Engine


@dataclass(frozen=True)
class Settings:
    """What an exchange needs of the configuration (the middleware builds it from `ToolCallConfig`)."""

    dialect_for: Callable[[str | None], str]
    generation_prompt: str | None = None
    thinking: bool | None = None
    forward_tools: bool = False
    inject_manifest: bool = True
    strict: bool = False
    repair: bool = True
    arguments_streaming: Literal["whole", "incremental"] = "whole"
    reasoning_calls: Literal["keep", "fallback"] = "keep"
    dialect_mismatch: Literal["read", "warn", "off"] = "read"
    reasoning_field: Literal["reasoning_content", "reasoning", "both", "none"] = "reasoning_content"
    responses_reasoning: bool = True
    profiles: frozenset[str] = frozenset()
    max_response_bytes: int = 64 * 1024 * 1024
    max_sse_event_bytes: int = 8 * 1024 * 1024
    max_calls: int = 128
    max_call_bytes: int = 4 * 1024 * 1024
    max_depth: int = MAX_DEPTH
    call_ids: Literal["openai", "model"] = "openai"
    expand_compactions: bool = True  # compaction items of ours in Responses input become their summary
    regenerate: int = 0  # times a whole answer that broke a rule another may keep is asked again
    # The host's engine (`constrain`): a request that must call gets the engine's grammar field.
    constrain: Engine | None = None
    # The host is another process (the reverse proxy's upstream): a 2xx answer on a rewritten route
    # that is not its API's JSON or SSE is the client's 502 (a stream: its API's error), not passed on.
    remote_host: bool = False
    # Checks of a request beyond the core's, by client API, from outside the core: AG-UI runs
    # by the protocol's own (pydantic) types, where its extra is installed (`toolcall_middleware.agui`).
    request_checks: Mapping[str, Callable[[Mapping[str, Any]], None]] = field(default_factory=dict)


@dataclass
class Report:
    """Telemetry of one exchange (DESIGN: dialect, calls found, failures, repairs, echoes)."""

    api: str
    dialect: str
    path: str = ""  # the route the client called
    request_id: str | None = None  # its `x-request-id`, kept or made (`core.request_id`)
    model: str | None = None
    stream: bool = False
    request_bytes: int = 0
    refused: str | None = None  # the code of the error the request was refused with (a 400, 413)
    rewritten_request: bool = False
    rewritten_response: bool = False
    passthrough_reason: str | None = None
    status: int | None = None  # the client's (the host's, unless the middleware answered another)
    unreadable: str | None = None  # what a host sent instead of its API's answer (type, first bytes)
    unknown_tools: list[str] = field(default_factory=list)  # names the model called, not offered
    calls_found: int = 0
    calls_emitted: int = 0
    truncated: bool = False
    # Another dialect whose complete call the answer held where the dialect in force found none
    # (`dialect_mismatch`): read as that dialect's call, unless the option says only warn.
    dialect_found: str | None = None
    notes: list[str] = field(default_factory=list)
    policy_error: str | None = None
    echoed_function_calls: int = 0
    dropped_tool_types: list[str] = field(default_factory=list)
    response_bytes: int = 0  # the response body the client was sent (ours, or the host's as it came)
    generations: int = 1  # the host's answers to this request (more than one: `regenerate`)
    parse_seconds: float = 0.0  # our own work on the response (decoding, parsing, rules, writing)
    # The host's timings, from the request handed to it: to its answer's first body message, and
    # to its end (None: the host was never asked, or never answered). The shells measure them.
    first_byte_seconds: float | None = None
    upstream_seconds: float | None = None
    # The tokens the host's answer says it used (its `usage`, Chat, Responses or Messages style);
    # None when it said nothing (a stream without `stream_options.include_usage`, an answer passed on).
    input_tokens: int | None = None
    output_tokens: int | None = None
    started: float = field(default_factory=time.monotonic)

    @property
    def outcome(self) -> str:
        """`refused` (the request), `unreadable` (the host's answer was not its API's),
        `policy_error` (the answer broke the rules), `truncated` (cut off inside a call),
        `rewritten`, or `passthrough` (not ours: the host's answer as it came)."""
        if self.refused is not None:
            return "refused"
        if self.unreadable is not None:
            return "unreadable"
        if self.policy_error is not None:
            return "policy_error"
        if self.rewritten_response:
            return "truncated" if self.truncated else "rewritten"
        return "passthrough"

    def as_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "started"}
        out["outcome"] = self.outcome
        out["parse_seconds"] = round(self.parse_seconds, 6)
        for timing in ("first_byte_seconds", "upstream_seconds"):
            if out[timing] is not None:
                out[timing] = round(out[timing], 6)
        out["seconds"] = round(time.monotonic() - self.started, 6)
        return out


@dataclass(frozen=True)
class AnswerSetup:
    """What an answer (`core.answer.Answer`) is given of its exchange, made once the request is
    read: it reads nothing else of the exchange and writes nothing into it."""

    api: Any  # the client's API (`core.api.Api`)
    upstream: Any  # the host's API
    settings: Settings
    request: Mapping[str, Any]
    rules: Mapping[str, Any]  # tools, tool_choice, parallel_tool_calls (an OpenAI shape)
    dialect: str
    model: str | None


__all__ = ["AnswerSetup", "Report", "Settings"]
