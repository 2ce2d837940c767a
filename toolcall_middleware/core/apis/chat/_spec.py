"""OpenAI Chat Completions (`/v1/chat/completions`): `chat.completion` answers and their
`chat.completion.chunk` streams, with several choices (`n > 1`) and log probabilities."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._api import ApiSpec, Output, Whole
from ..._events import Event
from ..._exchange_data import AnswerSetup
from ..._logprobs import LogprobQueue
from ..._replaced import openai_error
from ..._result import merge_events
from ...emitters._meta import Upstream, token_count, usage_details
from ...framing.sse import DONE, encode_data
from ...inbound import UpstreamDone
from ...inbound._base import ReaderBase
from ...policy import PolicyError
from ._checks import check_chat
from ._emitter import ChatMessageBuilder, ChatStreamEmitter
from ._reader import ChatReader, chat_shape
from ._rewrite import rewrite_chat_request


def chat_usage(usage: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """An upstream's usage as Chat's: a bridged host counts in Responses or Anthropic terms."""
    if not usage:
        return None
    if "prompt_tokens" in usage or "input_tokens" not in usage:
        return dict(usage)
    cache_read = token_count(usage, "cache_read_input_tokens")  # Anthropic counts cache apart
    prompt = token_count(usage, "input_tokens") + cache_read + token_count(usage, "cache_creation_input_tokens")
    completion = token_count(usage, "output_tokens")
    in_details = usage_details(usage, "input_tokens_details")
    cached = token_count(in_details, "cached_tokens") if "cached_tokens" in in_details else cache_read
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
        "completion_tokens_details": {
            "reasoning_tokens": token_count(usage_details(usage, "output_tokens_details"), "reasoning_tokens")
        },
    }


def whole_choice(builder: ChatMessageBuilder, index: int, kept: list[Event], done: UpstreamDone | None) -> Any:
    """Choice `index` of a whole Chat answer with several, with its own finish reason."""
    builder.upstream.finish_reason = done.finish_reasons.get(index) if done is not None else None
    choice = builder.build(merge_events(kept))["choices"][0]
    choice["index"] = index
    return choice


def carry_logprobs(choices: list[Any], logprobs: Mapping[int, tuple[str, list[Any] | None]]) -> None:
    """Put on each whole Chat choice the host's log probabilities of the content the client reads,
    where it is the host's text as it came, or the start of it (the text before a call)."""
    for choice in choices:
        text, entries = logprobs.get(choice["index"], ("", None))
        content = choice["message"].get("content")
        if entries is not None and content:
            queue = LogprobQueue()
            queue.add(text, entries)
            carried = queue.take(content)
            if carried is not None:
                choice["logprobs"] = {"content": carried, "refusal": None}


class ChatOutput(Output):
    """A Chat stream's chunks for one choice (`ChatStreamEmitter`), as SSE `data:` lines."""

    def __init__(self, upstream: Upstream, setup: AnswerSetup, choice: int, legacy: bool) -> None:
        config = setup.config
        self.emitter = ChatStreamEmitter(
            upstream,
            reasoning_field=config.reasoning_field,
            include_usage=bool((setup.request.get("stream_options") or {}).get("include_usage")),
            legacy_functions=legacy,
            choice=choice,
        )
        self.upstream = upstream
        self.choice = choice
        self.text_sse = self.emitter.text_sse

    def start(self) -> bytes:
        return b""  # (the role goes out on the first chunk)

    def feed(self, events: list[Event]) -> bytes:
        return self.emitter.feed_sse(events)

    def fail(self, error: PolicyError) -> bytes:
        chunks = self.emitter.error(error.message, code=error.code, param=error.param)
        return b"".join(encode_data(c) for c in chunks) + DONE

    def cut(self, message: str) -> bytes:
        error = self.emitter.error(message, code="upstream_error", kind="server_error")
        return b"".join(encode_data(c) for c in error) + DONE

    def finish(self, done: UpstreamDone, choices: list[Output]) -> bytes:
        usage = chat_usage(done.usage)
        out = b""
        tail: list[dict[str, Any]] = []
        for choice in choices:
            assert isinstance(choice, ChatOutput)
            emitter = choice.emitter
            emitter.upstream.finish_reason = (
                done.finish_reasons.get(choice.choice) if len(choices) > 1 else done.finish_reason
            )
            closing, *tail = emitter.finish(usage=usage)  # the usage chunk, once, after every choice
            out += encode_data(closing)
        for chunk in tail:
            out += encode_data(chunk)
        return out + DONE

    def opening(self) -> bytes:
        return b"".join(encode_data(chunk) for chunk in self.emitter.opening())

    def logprobs_sse(self, text: str, logprobs: list[Any]) -> bytes | None:
        return self.emitter.logprobs_sse(text, logprobs)


def _whole(whole: Whole) -> dict[str, Any]:
    config, done = whole.setup.config, whole.done
    builder = ChatMessageBuilder(
        whole.upstream,
        reasoning_field=config.reasoning_field,
        legacy_functions=whole.legacy,
        extensions="extensions" in config.profiles,
    )
    payload = builder.build(merge_events(whole.kept_by[0]), usage=chat_usage(done.usage if done else None))
    if len(whole.kept_by) > 1:
        payload["choices"] = [
            whole_choice(builder, index, judged, done) if index else payload["choices"][0]
            for index, judged in sorted(whole.kept_by.items())
        ]
    carry_logprobs(payload["choices"], whole.logprobs)
    return payload


def _reader(stream: bool) -> ReaderBase:
    return ChatReader()


SPEC = ApiSpec(
    name="chat",
    path="/v1/chat/completions",
    routes=("/v1/chat/completions", "/chat/completions"),
    route_suffixes=("/chat/completions",),
    recognizes=lambda obj: chat_shape(obj) is not None,
    reader=_reader,
    error_body=openai_error,
    check_request=check_chat,
    rewrite=rewrite_chat_request,
    output=ChatOutput,
    whole=_whole,
    answered_as=("completions",),
    choices=True,
)

__all__ = ["SPEC", "ChatOutput", "carry_logprobs", "chat_usage", "whole_choice"]
