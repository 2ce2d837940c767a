"""The merged result of a parse, and the merge of a stream's events into it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ._events import Event, ReasoningDelta, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart, TruncatedCall


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One complete call: `arguments` is the JSON text of an object."""

    name: str
    arguments: str
    id: str | None = None


@dataclass(frozen=True, slots=True)
class ParseResult:
    """What the model wrote, separated: `content` and `reasoning` are `None` when empty.

    `truncated` holds the raw text of a call the output ended inside (see `TruncatedCall`).
    """

    content: str | None
    reasoning: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    truncated: str | None = None

    @property
    def finish_reason(self) -> str:
        """`length` when a call was cut off, `tool_calls` when a call was made, else `stop`."""
        if self.truncated is not None:
            return "length"
        return "tool_calls" if self.tool_calls else "stop"


def merge_events(events: Iterable[Event]) -> ParseResult:
    """Merge a stream's events the way an OpenAI client accumulates deltas."""
    content: list[str] = []
    reasoning: list[str] = []
    truncated: list[str] = []
    starts: dict[int, ToolCallStart] = {}
    fragments: dict[int, list[str]] = {}
    finals: dict[int, str] = {}
    for event in events:
        if isinstance(event, TextDelta):
            content.append(event.text)
        elif isinstance(event, ReasoningDelta):
            reasoning.append(event.text)
        elif isinstance(event, ToolCallStart):
            starts[event.index] = event
            fragments[event.index] = []
        elif isinstance(event, ToolCallDelta):
            fragments[event.index].append(event.arguments)
        elif isinstance(event, ToolCallEnd):
            finals[event.index] = event.arguments
        elif isinstance(event, TruncatedCall):
            truncated.append(event.text)
    calls = []
    for index in sorted(starts):
        if index not in finals:
            continue
        start = starts[index]
        calls.append(ToolCall(name=start.name, arguments=finals[index], id=start.id))
    return ParseResult(
        content="".join(content) or None,
        reasoning="".join(reasoning) or None,
        tool_calls=calls,
        truncated="".join(truncated) or None,
    )


def join_text(events: list[Event]) -> list[Event]:
    """`events` with each run of adjacent `TextDelta`s (or `ReasoningDelta`s) joined into one."""
    out: list[Event] = []
    run: list[str] = []
    kind: type[TextDelta] | type[ReasoningDelta] | None = None
    for event in events:
        if kind is not None and type(event) is kind:
            run.append(event.text)
            continue
        if kind is not None:
            out.append(kind("".join(run)))
            kind, run = None, []
        if type(event) is TextDelta or type(event) is ReasoningDelta:
            kind, run = type(event), [event.text]
        else:
            out.append(event)
    if kind is not None:
        out.append(kind("".join(run)))
    return out


__all__ = [
    "ParseResult",
    "ToolCall",
    "join_text",
    "merge_events",
]
