"""Frozen event values that every parser stage produces.

Concatenating the events of a stream gives exactly the result of a whole parse: text deltas
join into content, reasoning deltas into reasoning, and each call is `ToolCallStart`, zero or
more `ToolCallDelta` and one `ToolCallEnd` on the same index. Don't subclass these.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TextDelta:
    """Visible text (content) with the format's markers removed."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """Reasoning text with the reasoning markers removed."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """A call begins: `index` counts calls from 0; `id` is the model's own id, if the format has one.
    `drafted`: written inside the reasoning, read because no call came after it
    (`reasoning_calls="fallback"`); the rules drop such a call rather than show it as text."""

    index: int
    id: str | None
    name: str
    drafted: bool = False


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A fragment of the call's arguments (JSON text); fragments of one index concatenate."""

    index: int
    arguments: str


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    """The call is complete; `arguments` is the whole JSON object text."""

    index: int
    arguments: str


@dataclass(frozen=True, slots=True)
class TruncatedCall:
    """The output ended inside a call (cut off by `max_tokens`, or the stream stopped).

    `text` is the raw text of the unfinished call. It is never a call and never content: a
    client must not run a call the model did not finish, and must not show half of its markup.
    The response's `finish_reason` is `length`.
    """

    text: str


@dataclass(frozen=True, slots=True)
class OversizedCall:
    """A call still open grew past the parser's `max_call_chars` (`ParseContext`): its text was
    let go as it passed the limit, and nothing the output writes after it is read. Only a parser
    given a limit reports one (the middleware's, from `Limits.max_call_bytes`); the policy stage
    fails the response with `tool_arguments_too_large`, as for a closed call over the limit."""

    chars: int


Event = TextDelta | ReasoningDelta | ToolCallStart | ToolCallDelta | ToolCallEnd | TruncatedCall | OversizedCall

__all__ = [
    "Event",
    "OversizedCall",
    "ReasoningDelta",
    "TextDelta",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "TruncatedCall",
]
