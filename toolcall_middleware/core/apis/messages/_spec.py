"""Anthropic Messages (`/v1/messages`): `message` objects and their typed stream events."""

from __future__ import annotations

from typing import Any

from ..._api import ApiSpec, Output, Whole
from ..._events import Event
from ..._exchange_data import AnswerSetup
from ..._result import merge_events
from ...emitters._meta import Upstream
from ...framing.sse import encode_event
from ...inbound import UpstreamDone
from ...inbound._base import ReaderBase
from ...policy import PolicyError
from ._checks import check_messages
from ._emitter import MessagesBuilder, MessagesStreamEmitter
from ._errors import anthropic_error
from ._reader import MessagesReader, is_anthropic_message
from ._rewrite import rewrite_messages_request

PING_EVENT = b'event: ping\ndata: {"type": "ping"}\n\n'  # Anthropic's own keep-alive event


class MessagesOutput(Output):
    """A Messages stream's events (`MessagesStreamEmitter`), as SSE."""

    def __init__(self, upstream: Upstream, setup: AnswerSetup, choice: int, legacy: bool) -> None:
        self.emitter = MessagesStreamEmitter(upstream, reasoning=setup.config.reasoning_field != "none")
        self.upstream = upstream

    def start(self) -> bytes:
        return b"".join(encode_event(e) for e in self.emitter.start())

    def feed(self, events: list[Event]) -> bytes:
        return b"".join(encode_event(e) for e in self.emitter.feed(events))

    def fail(self, error: PolicyError) -> bytes:
        return self.cut(error.message)

    def cut(self, message: str) -> bytes:
        return b"".join(encode_event(e) for e in self.emitter.fail(message))

    def finish(self, done: UpstreamDone, choices: list[Output]) -> bytes:
        self.upstream.finish_reason = done.finish_reason
        self.upstream.stop_sequence = done.stop_sequence
        return b"".join(encode_event(e) for e in self.emitter.finish(usage=done.usage))


def _whole(whole: Whole) -> dict[str, Any]:
    builder = MessagesBuilder(whole.upstream, reasoning=whole.setup.config.reasoning_field != "none")
    return builder.build(merge_events(whole.kept_by[0]), usage=whole.done.usage if whole.done else None)


def _reader(stream: bool) -> ReaderBase:
    return MessagesReader()


SPEC = ApiSpec(
    name="messages",
    path="/v1/messages",
    routes=("/v1/messages", "/messages"),
    # Anthropic's route; other `…/messages` paths are sub-resources (`/v1/threads/<id>/messages`).
    route_suffixes=("/v1/messages",),
    route_paths=("/messages",),
    recognizes=is_anthropic_message,
    reader=_reader,
    error_body=anthropic_error,
    check_request=check_messages,
    rewrite=rewrite_messages_request,
    output=MessagesOutput,
    whole=_whole,
    ping_event=PING_EVENT,
    x_api_key=True,
)

__all__ = ["PING_EVENT", "SPEC", "MessagesOutput"]
