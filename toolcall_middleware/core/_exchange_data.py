"""What an exchange is given and what it records, and what its answer sees of it.

`RouteMatch` is where one request goes (the client's API, the host's, the host's path);
`ExchangeConfig` is what an exchange reads of its configuration (`ToolCallConfig`, read where it
stands, never copied), and what it hands back to it (the record of an exchange that is over, a
failure of ours to log: outside the core, which does no I/O); `Report` is the telemetry of one
exchange (the record `on_report`, the log line, the metrics and the span are made from);
`AnswerSetup` is what an exchange gives its answer (`core._answer.Answer`), declared here so that
the answer does not import the exchange.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol

from ._api_names import Api
from ._response_hook import ResponseHook
from .grammar import Engine


class RouteMatch(NamedTuple):
    """A request path one of the configured routes matched, and so where the request goes: the
    client's API, the host's API, and the path the host gets (empty: the request's own, for an
    exchange driven without a path, as in a test). `count_tokens`: an Anthropic
    `…/messages/count_tokens` request (its API is `messages`); `asked`: the path the client called."""

    api: Api
    upstream: Api
    path: str = ""
    count_tokens: bool = False
    asked: str = ""


class ExchangeLimits(Protocol):
    """The bounds an exchange reads of its configuration (`config.Limits` is one)."""

    @property
    def max_request_bytes(self) -> int: ...

    @property
    def max_response_bytes(self) -> int: ...
    @property
    def max_sse_event_bytes(self) -> int: ...
    @property
    def max_calls(self) -> int: ...
    @property
    def max_call_bytes(self) -> int: ...
    @property
    def max_depth(self) -> int: ...


class ExchangeConfig(Protocol):
    """What an exchange reads of its configuration, as it is: `ToolCallConfig` (config.py) is
    one, read where it stands rather than copied (the core imports nothing of it: no pydantic
    here). A test may hand in any object with these attributes."""

    @property
    def generation_prompt(self) -> str | None: ...
    @property
    def thinking(self) -> bool | None: ...
    @property
    def forward_tools(self) -> bool: ...
    @property
    def inject_manifest(self) -> bool | None: ...  # None: unless the tools are forwarded
    @property
    def strict(self) -> bool: ...
    @property
    def repair(self) -> bool: ...
    @property
    def arguments_streaming(self) -> Literal["whole", "incremental"]: ...
    @property
    def reasoning_calls(self) -> Literal["keep", "fallback"]: ...
    @property
    def dialect_mismatch(self) -> Literal["read", "warn", "off"]: ...
    @property
    def reasoning_field(self) -> Literal["reasoning_content", "reasoning", "both", "none"]: ...
    @property
    def responses_reasoning(self) -> bool: ...
    @property
    def profiles(self) -> frozenset[str]: ...
    @property
    def call_ids(self) -> Literal["openai", "model"]: ...
    @property
    def compaction(self) -> Literal["emulate", "host"]: ...  # emulate: our compaction items expanded
    @property
    def regenerate(self) -> int: ...  # times a whole answer that broke a rule another may keep is asked again
    @property
    def limits(self) -> ExchangeLimits: ...
    @property
    def constrain(self) -> Engine | None: ...  # the host's engine: a request that must call gets its grammar field

    def request_checks(self) -> Mapping[str, Callable[[Mapping[str, Any]], None]]:
        """Checks of a request beyond the core's, by client API, from outside the core (AG-UI runs
        by the protocol's own pydantic types, where its extra is installed)."""
        ...

    def dialect_for(self, model: str | None) -> str: ...

    def report(self, record: Report, upstream: str) -> None:
        """An exchange of ours is over (`Exchange.report`, once): its record goes to whoever is
        told of it, outside the core (`ToolCallConfig`: the log line, `on_report`, a span, and
        the warnings of what would surprise an operator). `upstream`: the host's API."""
        ...

    def caught(self, error: Exception, doing: str) -> None:
        """A failure of ours the exchange recovered from (`doing` went wrong: the rest passes
        through): logged outside the core, with its traceback."""
        ...


@dataclass
class Report:
    """Telemetry of one exchange (DESIGN: dialect, calls found, failures, repairs, echoes)."""

    api: str
    dialect: str
    path: str = ""  # the route the client called
    request_id: str | None = None  # its `x-request-id`, kept or made (`core._request_id`)
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
    """What an answer (`core._answer.Answer`) is given of its exchange, made once the request is
    read: it reads nothing else of the exchange and writes nothing into it."""

    api: Any  # the client's API (`core._api.Api`)
    upstream: Any  # the host's API
    config: ExchangeConfig
    request: Mapping[str, Any]
    rules: Mapping[str, Any]  # tools, tool_choice, parallel_tool_calls (an OpenAI shape)
    dialect: str
    model: str | None
    # What the Responses state in front says of the answer and is told of it (`core._response_hook`).
    hook: ResponseHook | None = None


__all__ = ["AnswerSetup", "ExchangeConfig", "ExchangeLimits", "Report", "RouteMatch"]
