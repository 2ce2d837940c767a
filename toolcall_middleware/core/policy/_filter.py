"""`PolicyFilter`: the request's tool rules applied to the parser's events, before the emitters.

```python
policy = PolicyFilter(body.get("tools"), body.get("tool_choice"), body.get("parallel_tool_calls"))
events = policy.feed(parser.feed(delta)) ... + policy.feed(parser.close()) + policy.close()
record = policy.report.to_dict()
```

Text, reasoning and truncated calls pass through in order. Each call is decided on:

- its name, at its start: `tool_choice: "none"`, a name the request did not offer or that
  `tool_choice` rules out makes it ordinary text (`rejected="text"`, see `render_call_text`) or
  drops it (`"drop"`); with `strict=True` (the global option) an unoffered or ruled-out name
  fails the response instead (`PolicyError`);
- its arguments, at its end: a strict call (the tool's `strict: true`, or `strict=True`) must be
  a JSON object that fits the tool's schema, else the response fails; a loose call gets one safe
  repair pass (`repair_arguments`) when it is not a JSON object, becomes text when that fails, is
  typed by its schema when that makes it fit (`coerce_arguments`: `"42"` for an integer), and
  otherwise goes out with a note in the report when it does not fit the schema;
- the response so far, when it would go out: `parallel_tool_calls: false` lets only the first
  call out, `PolicyLimits` caps the number of calls and the size of each.

Calls that go out are renumbered 0, 1, 2… (the OpenAI accumulators index a list with it) and
keep the parser's id; the emitters make ids for the rest. With `required` or a forced function,
`close()` fails the response when no call went out, unless the output was cut off inside a call
(`TruncatedCall`: `finish_reason: "length"` says why). After a `PolicyError` nothing more is
emitted. Nothing is held longer than a call takes to end; with `streaming="incremental"` loose
calls stream their argument fragments as they come (their JSON can then only be checked at the
end, and a failure there fails the response, since the fragments already went out).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, Literal

from .._events import (
    Event,
    OversizedCall,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    TruncatedCall,
)
from .._memo import remembered
from . import _errors as errors
from ._calls import CallJudge, PendingCall, Rejected
from ._errors import PolicyConfigError, PolicyError, PolicyEvent
from ._options import PolicyLimits, render_call_text
from ._report import PolicyNote, PolicyReport
from ._tools import ToolRules

Streaming = Literal["whole", "incremental"]


class PolicyFilter:
    """Parser events in, the events the request allows out (plus `PolicyError`); see the module doc.

    Raises `PolicyConfigError` (message and `param`) for unreadable `tools`, `tool_choice` or
    `parallel_tool_calls`, including an invalid schema of a strict tool, and `MissingExtraError`
    when `strict=True` and jsonschema is not installed (a tool's own `strict: true` without it
    gets the JSON check only, and a `schema_unchecked` note per call).
    """

    def __init__(
        self,
        tools: Any = None,
        tool_choice: Any = None,
        parallel_tool_calls: Any = None,
        *,
        strict: bool = False,
        repair: bool = True,
        streaming: Streaming = "whole",
        rejected: Rejected = "text",
        limits: PolicyLimits | None = None,
        render: Callable[[str, str], str] = render_call_text,
    ) -> None:
        if parallel_tool_calls is not None and not isinstance(parallel_tool_calls, bool):
            raise PolicyConfigError(
                f"Invalid type for 'parallel_tool_calls': expected a boolean, got {type(parallel_tool_calls).__name__}",
                "parallel_tool_calls",
            )
        if streaming not in ("whole", "incremental"):
            raise ValueError(f"streaming must be 'whole' or 'incremental', not {streaming!r}")
        if rejected not in ("text", "drop"):
            raise ValueError(f"rejected must be 'text' or 'drop', not {rejected!r}")
        limits = limits if limits is not None else PolicyLimits()
        self._judge = CallJudge(
            remembered("rules", (tools, tool_choice), lambda: ToolRules.read(tools, tool_choice)),
            strict=strict,
            repair=repair,
            rejected=rejected,
            limits=limits,
        )
        self._max_arguments_bytes = limits.max_arguments_bytes
        if parallel_tool_calls is False:
            self._judge.serial()
        self._streaming = streaming
        self._render = render
        self._queue: deque[PendingCall | Event] = deque()  # what waits for a call before it to settle
        self._open: dict[int, PendingCall] = {}  # by the parser's index
        self._emitted = 0
        self._found = 0
        self._error: PolicyError | None = None
        self._truncated = False
        self._closed = False
        # Text fed now would come out at once, as it is: `feed([TextDelta(t)]) == [TextDelta(t)]`,
        # and the same for a `ReasoningDelta` (nothing waits before it, no error, not closed). Read
        # for every chunk by the one fast path (`Answer.feed_event`): kept by `feed` and `close`,
        # which alone change what it reads, rather than worked out on every read.
        self.passes_text = True

    @property
    def report(self) -> PolicyReport:
        """What the stage has done so far (complete after `close()`)."""
        return PolicyReport(self._found, self._emitted, tuple(self._judge.notes), self._error)

    def feed(self, events: Iterable[Event]) -> list[PolicyEvent]:
        """Apply the rules to the next events. A `ToolCallDelta`/`ToolCallEnd` without its start is
        a `ValueError` (the parser never writes one)."""
        if self._closed:
            raise RuntimeError("feed() after close()")
        if self.passes_text and type(events) is list and len(events) == 1:
            kind = type(events[0])
            if kind is TextDelta or kind is ReasoningDelta:
                return [events[0]]  # text with nothing waiting before it: out at once, as `_flush` would
        out: list[PolicyEvent] = []
        try:
            for event in events:
                if self._error is not None:
                    if isinstance(event, ToolCallStart):  # the response failed: count, do not emit
                        self._found += 1
                        self._judge.notes.append(PolicyNote("dropped", "after_error", event.index, event.name))
                    continue
                self._accept(event)
                self._flush(out)
        finally:  # (a `ValueError` for a delta without its start leaves what was accepted)
            self.passes_text = not self._queue and self._error is None
        return out

    def close(self) -> list[PolicyEvent]:
        """The output ended: settle unfinished calls and check that a required call went out."""
        if self._closed:
            return []
        self._closed = True
        self.passes_text = False
        out: list[PolicyEvent] = []
        if self._error is not None:
            return out
        # Calls the parser left without their end: the output ended inside them, or a call broke
        # off after its start went out (incremental streaming: its text followed as content).
        for call in self._open.values():
            if call.live is not None and call.fate == "go":
                message = f"The call to {call.start.name!r} never ended after its arguments began to stream."
                self._judge.fail(call, "unfinished", errors.INCOMPLETE_TOOL_CALL, message)
            elif call.fate in ("go", "text"):
                self._judge.decide(call, "drop", "unfinished")
        self._open.clear()
        self._flush(out)
        rules = self._judge.rules
        if self._error is None and rules.require and not self._emitted and not self._truncated:
            names = sorted(rules.allowed) if rules.allowed is not None else []
            which = f" to {names[0]!r}" if len(names) == 1 else f" to one of {names}" if names else ""
            self._error = PolicyError(
                f"'tool_choice' requires a tool call{which}, and the model made none.",
                errors.TOOL_CALL_REQUIRED,
                "tool_choice",
            )
            out.append(self._error)
        return out

    # -- events in ----------------------------------------------------------------------------

    def _accept(self, event: Event) -> None:
        if isinstance(event, ToolCallStart):
            if event.index in self._open:
                raise ValueError(f"ToolCallStart for index {event.index}, which is already open")
            self._found += 1
            call = self._judge.open(event, self._emitted)
            self._open[event.index] = call
            self._queue.append(call)
        elif isinstance(event, ToolCallDelta):
            call = self._call(event.index, "ToolCallDelta")
            if call.fate in ("go", "text") and self._judge.fits(call, event.arguments, whole=False):
                call.deltas.append(event.arguments)
        elif isinstance(event, ToolCallEnd):
            call = self._call(event.index, "ToolCallEnd")
            del self._open[event.index]
            call.end = event.arguments
            if call.fate in ("go", "text") and self._judge.fits(call, event.arguments, whole=True):
                call.arguments = event.arguments
                if call.fate == "go":
                    self._judge.check_arguments(call)
        elif type(event) is OversizedCall and self._open:
            # The call let go is one streaming already (its start went out): it fails where it
            # stands in the queue, at once, rather than wait for an end that never comes.
            message = self._oversized_message()
            for call in self._open.values():
                self._judge.fail(call, "max_arguments_bytes", errors.TOOL_ARGUMENTS_TOO_LARGE, message)
            self._open.clear()
        else:
            if isinstance(event, TruncatedCall):
                self._truncated = True
            self._queue.append(event)

    def _call(self, index: int, kind: str) -> PendingCall:
        try:
            return self._open[index]
        except KeyError:
            raise ValueError(f"{kind} for index {index} without an open ToolCallStart") from None

    # -- events out -----------------------------------------------------------------------------

    def _flush(self, out: list[PolicyEvent]) -> None:
        """Emit from the front of the queue up to the first call still unsettled."""
        queue = self._queue
        while queue and self._error is None:
            item = queue[0]
            if type(item) is OversizedCall:
                self._oversized(item, out)
                return
            if not isinstance(item, PendingCall):
                out.append(item)
                queue.popleft()
                continue
            call = item
            # (`call.settled`, written out: this loop runs for every event of every call)
            if call.end is None and call.fate != "drop" and call.fate != "error":
                if call.fate == "go" and self._streaming == "incremental" and not call.strict:
                    self._stream(call, out)
                if not call.settled:
                    return
                continue  # it could not go out after all: settle it
            queue.popleft()
            self._emit(call, out)

    def _oversized_message(self) -> str:
        cap = self._max_arguments_bytes
        limit = f"the limit of {cap} bytes" if cap is not None else "the parser's limit"
        return f"The arguments of a tool call grew past {limit} before the call ended."

    def _oversized(self, event: OversizedCall, out: list[PolicyEvent]) -> None:
        """A call the parser let go while it was still open, over `max_call_chars`: the error a
        closed call over `max_arguments_bytes` gives (the parser reads nothing after it)."""
        message = self._oversized_message()
        self._error = PolicyError(message, errors.TOOL_ARGUMENTS_TOO_LARGE)
        self._judge.notes.append(PolicyNote("error", "max_arguments_bytes", -1, "", message))
        out.append(self._error)
        self._queue.clear()

    def _stream(self, call: PendingCall, out: list[PolicyEvent]) -> None:
        if call.live is None:
            if not self._judge.may_go(call, self._emitted):
                return
            call.live = self._emitted
            self._emitted += 1
            out.append(ToolCallStart(call.live, call.start.id, call.start.name))
        out.extend(ToolCallDelta(call.live, piece) for piece in call.deltas)
        call.deltas.clear()

    def _emit(self, call: PendingCall, out: list[PolicyEvent]) -> None:
        if call.fate == "go" and call.live is not None:
            out.extend(ToolCallDelta(call.live, piece) for piece in call.deltas)
            out.append(ToolCallEnd(call.live, call.arguments or ""))
        elif call.fate == "go" and self._judge.may_go(call, self._emitted):
            index = self._emitted
            self._emitted += 1
            arguments = call.arguments or ""
            out.append(ToolCallStart(index, call.start.id, call.start.name))
            if arguments == call.end:
                for piece in call.deltas:  # (a loop: no generator per call)
                    out.append(ToolCallDelta(index, piece))
            elif arguments:
                out.append(ToolCallDelta(index, arguments))  # repaired: one fragment of the new text
            out.append(ToolCallEnd(index, arguments))
        if call.fate == "text":
            text = self._render(call.start.name, call.arguments or "")
            if text:
                out.append(TextDelta(text))
        elif call.fate == "error" and call.error is not None:
            self._error = call.error
            out.append(call.error)
            for later in self._queue:  # the response failed: what is queued behind it never goes out
                if isinstance(later, PendingCall) and later.fate in ("go", "text"):
                    self._judge.note("dropped", "after_error", later)
            self._queue.clear()


__all__ = ["PolicyFilter", "Streaming"]
