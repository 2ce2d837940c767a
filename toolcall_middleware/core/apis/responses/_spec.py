"""The Responses API (`/v1/responses`): `response` objects and their typed stream events."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._api import ApiSpec, Output, Whole
from ..._events import Event
from ..._exchange_data import AnswerSetup
from ..._replaced import openai_error
from ...emitters._meta import Upstream
from ...framing.sse import encode_events
from ...inbound import UpstreamDone
from ...inbound._base import ReaderBase
from ...policy import PolicyError
from ._checks import check_responses
from ._emitter import ResponsesBuilder, ResponsesStreamEmitter
from ._reader import ResponsesReader
from ._rewrite import rewrite_responses_request


class ResponsesOutput(Output):
    """A Responses stream's events (`ResponsesStreamEmitter`), numbered, as SSE. Under the
    Responses state (`setup.hook`), each response object says the state's fields, and every event
    encoded is noted on the hook (`core._response_hook`)."""

    def __init__(self, upstream: Upstream, setup: AnswerSetup, choice: int, legacy: bool) -> None:
        config = setup.config
        hook = self.hook = setup.hook
        self.emitter = ResponsesStreamEmitter(
            upstream,
            request=setup.request,
            reasoning=config.responses_reasoning,
            required_action="required_action" in config.profiles,
            open_responses="open_responses" in config.profiles,
            state=None if hook is None else hook.fields,
        )
        self.upstream = upstream
        self.text_sse = self.emitter.text_sse if hook is None else self._text_sse_noted

    def _text_sse_noted(self, text: str) -> bytes | None:
        out = self.emitter.text_sse(text)
        if out is not None:
            assert self.hook is not None
            self.hook.wrote(out)
        return out

    def _encoded(self, events: list[dict[str, Any]]) -> bytes:
        return encode_events(events) if self.hook is None else self.hook.encode(events)

    def start(self) -> bytes:
        return self._encoded(self.emitter.start())

    def feed(self, events: list[Event]) -> bytes:
        if self.hook is None:
            return self.emitter.feed_sse(events)
        return self.hook.encode(self.emitter.feed(events))  # (the same bytes as `feed_sse`'s, each noted)

    def fail(self, error: PolicyError) -> bytes:
        return self.cut(error.message)

    def cut(self, message: str) -> bytes:
        return self._encoded(self.emitter.fail(message, code="server_error"))

    def finish(self, done: UpstreamDone, choices: list[Output]) -> bytes:
        self.upstream.finish_reason = done.finish_reason
        return self._encoded(self.emitter.finish(usage=done.usage))


def _whole(whole: Whole) -> dict[str, Any]:
    setup, done, hook = whole.setup, whole.done, whole.setup.hook
    builder = ResponsesBuilder(
        whole.upstream,
        request=setup.request,
        reasoning=setup.config.responses_reasoning,
        state=None if hook is None else hook.fields,
    )
    response = builder.build_events(whole.kept_by[0], usage=done.usage if done else None)
    if hook is not None:
        hook.answered(response)
    return response


def _recognizes(obj: Mapping[str, Any]) -> bool:
    kind = obj.get("type")
    return obj.get("object") == "response" or (
        isinstance(kind, str) and kind.startswith("response.") and "object" not in obj
    )


def _reader(stream: bool) -> ReaderBase:
    return ResponsesReader()


SPEC = ApiSpec(
    name="responses",
    path="/v1/responses",
    routes=("/v1/responses", "/responses"),
    route_suffixes=("/responses",),
    recognizes=_recognizes,
    reader=_reader,
    error_body=openai_error,
    check_request=check_responses,
    rewrite=rewrite_responses_request,
    output=ResponsesOutput,
    whole=_whole,
    # Its stream's sequence numbers are ours, and it must end in one terminal event: the host's
    # `response.failed` passed on, then our `response.completed`, would read as a success.
    passes_host_errors=False,
)

__all__ = ["SPEC", "ResponsesOutput"]
