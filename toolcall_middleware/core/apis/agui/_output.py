"""An AG-UI run's events for one answer of the host, as SSE (`data: <json>\\n\\n`), and its errors.

The run's ids are the client's own (`threadId`, `runId`, and `parentRunId` when it gave one). The
stream opens with `RUN_STARTED` and ends in exactly one terminal event: `RUN_FINISHED` with
nothing left open (after a `MESSAGES_SNAPSHOT`: the run's messages and the ones it made), or
`RUN_ERROR` (an answer that broke the tools' rules, a host that stopped
short). A whole body (a host that ignored the `stream: true` it was asked for) holds the same
events in order, as `{"events": [...]}`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._api import Output, Whole
from ..._events import Event
from ..._exchange_data import AnswerSetup
from ...emitters._meta import Upstream
from ...framing._utf8 import json_bytes
from ...framing.sse import encode_data
from ...inbound import UpstreamDone
from ...policy import PolicyError
from ._emitter import AGUIEmitter


def run_emitter(request: Mapping[str, Any], reasoning: bool) -> AGUIEmitter:
    """The emitter of the run `request` (a `RunAgentInput`) asked for, under its own ids."""

    def given(key: str) -> str | None:
        value = request.get(key)
        return value if isinstance(value, str) and value else None

    messages = request.get("messages")
    return AGUIEmitter(
        thread_id=given("threadId"),
        run_id=given("runId"),
        parent_run_id=given("parentRunId"),
        reasoning=reasoning,
        messages=messages if isinstance(messages, list) else None,
    )


def encode(events: list[dict[str, Any]]) -> bytes:
    return b"".join(encode_data(event) for event in events)


class AGUIOutput(Output):
    """A run's AG-UI events (`AGUIEmitter`) for the host's streamed answer."""

    def __init__(self, upstream: Upstream, setup: AnswerSetup, choice: int, legacy: bool) -> None:
        self.emitter = run_emitter(setup.request, setup.config.reasoning_field != "none")
        self.upstream = upstream

    def start(self) -> bytes:
        return encode(self.emitter.start())

    def feed(self, events: list[Event]) -> bytes:
        return encode(self.emitter.feed(events))

    def fail(self, error: PolicyError) -> bytes:
        return encode(self.emitter.error(error.message, code=error.code))

    def cut(self, message: str) -> bytes:
        return encode(self.emitter.error(message, code="upstream_error"))

    def finish(self, done: UpstreamDone, choices: list[Output]) -> bytes:
        self.upstream.finish_reason = done.finish_reason
        return encode(self.emitter.finish())


def whole_run(whole: Whole) -> dict[str, Any]:
    """A whole answer's run, its events in order (see the module doc)."""
    emitter = run_emitter(whole.setup.request, whole.setup.config.reasoning_field != "none")
    return {"events": emitter.feed(whole.kept_by[0]) + emitter.finish()}


def agui_error(
    message: str, status: int, *, code: str | None = None, param: str | None = None, kind: str | None = None
) -> bytes:
    """The body of an error answer on the AG-UI route: a `RUN_ERROR` event, with the field at fault
    (`param`) where there is one, so a client that reads the body as an event reads the error."""
    event: dict[str, Any] = {"type": "RUN_ERROR", "message": message}
    if code:
        event["code"] = code
    if param:
        event["param"] = param
    return json_bytes(event)


__all__ = ["AGUIOutput", "agui_error", "run_emitter", "whole_run"]
