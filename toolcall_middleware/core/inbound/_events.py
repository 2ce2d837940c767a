"""Frozen values an inbound reader produces from what the host app (the upstream) sent back.

A reader's output over one response, `feed(...)`s then `flush()`, is:

- exactly one `UpstreamMeta`, before the first `RawText` and before `UpstreamDone`;
- `RawText` pieces in the order the upstream wrote them, never empty, keyed by channel and choice;
- exactly one `UpstreamDone`, last (from the upstream's end marker, a whole body, or `flush()`);
- `UpstreamError` and `Unrecognized` wherever the upstream sent such objects.

Concatenating the `RawText` of one (choice, channel) gives exactly the raw text the upstream sent
there. Content-channel text goes to `StreamParser.feed`, reasoning-channel text to
`StreamParser.feed_reasoning` (a host may put the whole raw output, tool-call tokens included,
in its reasoning field).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._api_names import Api
from .._reasoning import Channel
from ..emitters._ids import chat_completion_id
from ..emitters._meta import Upstream


@dataclass(frozen=True, slots=True)
class RawText:
    """Raw model text for one choice (`n > 1` Chat/completions requests have several; Responses has 0)."""

    text: str
    channel: Channel = Channel.CONTENT
    choice: int = 0
    # The host's log probabilities of this text's tokens (`logprobs.content` of a Chat choice),
    # when it sent them: carried to the client where the text goes out as it came.
    logprobs: list[Any] | None = None


@dataclass(frozen=True, slots=True)
class UpstreamMeta:
    """What the emitters echo, read from the upstream's first object of the response.

    Usage and finish reasons are not here: a stream tells them only at its end (`UpstreamDone`);
    `to_upstream(done)` merges both into the emitters' `Upstream`. For the Responses API `id` is the
    response id (`resp_…`), `created_at` its own timestamp, and `response` the upstream response's
    other top-level fields (`instructions`, `tools`, `tool_choice`, `metadata`, …) for echoing.
    """

    kind: Api  # the upstream's API
    id: str | None = None
    model: str | None = None
    created: int | None = None
    system_fingerprint: str | None = None
    service_tier: str | None = None
    created_at: float | None = None
    response: Mapping[str, Any] | None = None

    def to_upstream(self, done: UpstreamDone | None = None) -> Upstream:
        """The emitters' `Upstream`: fields the upstream did not send get the emitters' defaults."""
        upstream = Upstream(
            id=self.id or chat_completion_id(),  # (made only when the upstream sent none)
            model=self.model or "unknown",
            created=self.created if self.created is not None else int(time.time()),
            system_fingerprint=self.system_fingerprint,
            service_tier=self.service_tier,
        )
        if done is not None:
            upstream.usage = done.usage
            upstream.finish_reason = done.finish_reason
            upstream.stop_sequence = done.stop_sequence
        return upstream


@dataclass(frozen=True, slots=True)
class UpstreamDone:
    """The upstream response ended.

    `finish_reason` is the first choice's, as the upstream said it (Responses statuses are mapped:
    `completed` -> `stop`, `incomplete` -> `length` or `content_filter`, `failed` -> `error`);
    `finish_reasons` has every choice seen, by index (`None` where the upstream gave no reason).
    `usage` is the upstream's own object, Chat-style or Responses-style. `complete` is `False`
    when the stream stopped without its end marker (`[DONE]`, a terminal Responses event): the
    output may be cut off. `stop_sequence` is the client's stop sequence that ended the first
    choice, where the host says which (Anthropic's `stop_sequence`, vLLM's `stop_reason`).
    """

    finish_reason: str | None = None
    usage: Mapping[str, Any] | None = None
    finish_reasons: Mapping[int, str | None] = field(default_factory=dict)
    complete: bool = True
    stop_sequence: str | None = None


@dataclass(frozen=True, slots=True)
class UpstreamError:
    """The upstream reported an error (`{"error": …}`, a Responses `error` event, `response.failed`).

    Never text: the middleware turns it into its own error (`ChatStreamEmitter.error`,
    `ResponsesStreamEmitter.fail`) or passes it through. `body` is the object as received.
    """

    message: str
    type: str | None = None
    code: str | None = None
    param: str | None = None
    body: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class UpstreamCall:
    """A piece of a structured tool call the upstream made itself (an Anthropic `tool_use` block,
    a Chat host's own `tool_calls`, a Responses host's `function_call` item).

    Not raw text: it bypasses the dialect parser (`NativeCalls` turns the pieces into
    `ToolCallStart` / `ToolCallDelta` / `ToolCallEnd`). `index` counts the response's calls from 0;
    the first piece of a call has `id` and `name`, each piece may carry an `arguments` fragment
    (the concatenation is the arguments' JSON text), and the last has `done=True`.
    """

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    done: bool = False
    choice: int = 0  # the choice it belongs to (Chat, `n > 1`)


@dataclass(frozen=True, slots=True)
class Unrecognized:
    """An object this reader does not understand (Azure's `prompt_filter_results` chunk, a vendor
    keep-alive, anything after the end): handed back so the middleware forwards it or drops it."""

    obj: object


InboundEvent = RawText | UpstreamMeta | UpstreamDone | UpstreamError | UpstreamCall | Unrecognized

__all__ = [
    "Channel",
    "InboundEvent",
    "RawText",
    "Unrecognized",
    "UpstreamCall",
    "UpstreamDone",
    "UpstreamError",
    "UpstreamMeta",
]
