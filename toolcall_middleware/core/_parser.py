"""`parse()` and `StreamParser`: raw model output in, content, reasoning and tool calls out."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from ._events import Event, ReasoningDelta, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart, TruncatedCall
from ._memo import remembered
from ._reasoning import Channel, ReasoningSplitter
from ._result import ParseResult, join_text, merge_events
from ._schema import JSON_OBJECT
from .dialects import ParseContext, resolve
from .dialects._arguments import REPAIR, repairing
from .dialects._mismatch import DialectMismatch, MismatchWatch
from .policy._repair import repair_arguments


def tool_schemas(tools: Iterable[Mapping[str, Any]] | Mapping[str, Any] | None) -> dict[str, Mapping[str, Any]]:
    """Tool name -> parameters schema, from either OpenAI tool shape (or a ready mapping)."""
    if not tools:
        return {}
    if not isinstance(tools, list) and isinstance(tools, JSON_OBJECT):  # (a list: no ABC check)
        return {str(k): v if isinstance(v, JSON_OBJECT) else {} for k, v in tools.items()}
    schemas: dict[str, Mapping[str, Any]] = {}
    for tool in tools:
        if not isinstance(tool, JSON_OBJECT):
            continue
        inner = tool.get("function")
        fn: Mapping[str, Any] = inner if isinstance(inner, JSON_OBJECT) else tool
        name = fn.get("name")
        if isinstance(name, str):
            params = fn.get("parameters", fn.get("input_schema"))
            schemas[name] = params if isinstance(params, JSON_OBJECT) else {}
    return schemas


ArgumentsStreaming = Literal["whole", "incremental"]
ReasoningCalls = Literal["keep", "fallback"]
MAX_DRAFT_CHARS = 1 << 20  # reasoning kept for `reasoning_calls="fallback"`; a longer one gives no drafts
# A longer piece of text is parsed in pieces of this size (`_in_pieces`). The machines hand the
# rest of a piece along at every marker (`text[end:]`) and search it again for each marker: on a
# piece of bounded size that is bounded work per character, on a whole answer of megabytes of
# repeated markers it was quadratic. Any split gives the same events (split invariance).
PIECE = 1024


class StreamParser:
    """Incremental parser: `feed(delta)` returns events at once, `close()` the rest.

    ```python
    p = StreamParser(model="Qwen/Qwen3-8B")
    events = p.feed('<tool_call>{"name": "f", ') + p.feed('"arguments": {}}</tool_call>') + p.close()
    ```
    Any split of the same text gives the same merged events as `parse()`.

    `arguments_streaming="whole"` (the default) emits each call when its closing marker arrives.
    With `"incremental"` the dialects that support it (`Dialect.incremental`) emit a call's
    `ToolCallStart` once its name is known and `ToolCallDelta`s as its argument text becomes
    certain: JSON formats stream the model's own text of the arguments object (so the final
    arguments are that text, not a re-dump), parameter-tagged formats one typed member per
    completed parameter. The merged events are those of whole mode (arguments equal as JSON),
    except for a call whose final arguments would differ from what was streamed (a repaired
    body, a repeated key) or that breaks after its start: it is left without its `ToolCallEnd`,
    and a broken call's text follows as content as in whole mode; `PolicyFilter(streaming=
    "incremental")` fails the response on such a call.

    `max_call_chars`: a call still open that holds more characters is let go at once, reported
    as `OversizedCall`, and nothing after it is read (the parser's memory stays bounded however
    long the output); `None`, the default: no limit.

    `model_ids=False` leaves `ToolCallStart.id` `None` where the format writes an id of its own
    (Kimi's `functions.f:0` restarts at 0 in every answer), so the emitters mint unique ones.

    `reasoning_calls`: what becomes of a call the model wrote inside its reasoning block (a
    draft, or the only call it makes: some models call from inside `<think>` and never again).
    `"keep"` (the default): it stays reasoning, as every engine that splits reasoning first does.
    `"fallback"`: when the output ends with no call outside its reasoning, the complete calls
    written in the reasoning are read as if written after it, at `close()` (marked `drafted`:
    the rules drop one they refuse rather than show it as text); the reasoning keeps its text
    either way (nothing of it moves into content). A call cut off after the reasoning counts as a
    call; a reasoning over `MAX_DRAFT_CHARS` gives none.

    `dialect_mismatch`: what becomes of a complete call the output writes in another dialect's
    markup (its own marker, outside code) where the dialect in force finds none, as when a
    model name selects one dialect and the model writes another (`dialects/_mismatch.py`).
    `"read"` (the default): it is read as that dialect's call, and so is the rest of the output;
    `"warn"`: it stays text; either way `dialect_found` names that dialect. `"off"`: not looked for.
    """

    def __init__(
        self,
        dialect: str | None = None,
        *,
        model: str | None = None,
        tools: Iterable[Mapping[str, Any]] | Mapping[str, Any] | None = None,
        generation_prompt: str | None = None,
        thinking: bool | None = None,
        repair: bool = False,
        arguments_streaming: ArgumentsStreaming = "whole",
        model_ids: bool = True,
        reasoning_calls: ReasoningCalls = "keep",
        max_call_chars: int | None = None,
        dialect_mismatch: DialectMismatch = "read",
    ) -> None:
        if arguments_streaming not in ("whole", "incremental"):
            raise ValueError(f"arguments_streaming must be 'whole' or 'incremental', not {arguments_streaming!r}")
        if dialect_mismatch not in ("read", "warn", "off"):
            raise ValueError(f"dialect_mismatch must be 'read', 'warn' or 'off', not {dialect_mismatch!r}")
        if reasoning_calls not in ("keep", "fallback"):
            raise ValueError(f"reasoning_calls must be 'keep' or 'fallback', not {reasoning_calls!r}")
        # The reasoning's text, kept for `reasoning_calls="fallback"` (`None`: not kept).
        self._drafts: list[str] | None = [] if reasoning_calls == "fallback" else None
        self._drafted_chars = 0
        self.dialect = resolve(dialect, model)
        # Opt-in: one safe repair pass on a call body that is almost JSON (trailing commas,
        # single quotes, Python literals), never on a cut-off one; without it such a body is text.
        self._repair = repair_arguments if repair else None
        self.context = ParseContext(
            tools=remembered("schemas", tools, lambda: tool_schemas(tools)),
            model=model,
            incremental=arguments_streaming == "incremental",
            model_ids=model_ids,
            max_call_chars=max_call_chars,
            stray_pairs=self.dialect.reasoning.stray_pairs if self.dialect.reasoning is not None else (),
        )
        self._tools = self.dialect.machine(self.context)
        self._watch: MismatchWatch | None = None
        if dialect_mismatch != "off" and self.dialect.name != "auto":
            self._tools = self._watch = MismatchWatch(
                self._tools, self.dialect.name, self.context, read=dialect_mismatch == "read"
            )
        # `feed(delta)` for a piece the tool machine takes as plain text (`ToolMachine.take_plain`):
        # the text of its one `TextDelta` (`""` when it gives none: held back); `None` for any other
        # piece, with nothing consumed: call `feed`. The fast path's question (`Answer.feed_event`),
        # asked of the tool machine itself once the parser is past any reasoning (a call less on
        # every chunk than a method of ours that asks it); before then, and once closed, no piece.
        self.take_plain: Callable[[str], str | None] = _no_plain
        self._splitter: ReasoningSplitter | None = None
        self._reasoning_channel: ReasoningSplitter | None = None
        syntax = self.dialect.reasoning
        if syntax is not None:
            if generation_prompt is not None:
                inside = syntax.open_in(generation_prompt)
            else:
                inside = thinking is not False and self.dialect.prefills_reasoning(model, thinking)
            self._splitter = ReasoningSplitter(syntax, start_inside=inside)
        self._content_fed = False
        self._closed = False
        # Content went to the tools past any reasoning: from then on the splitter passes all through
        # (nothing turns it back once content was fed, and the splitter is no longer replaced).
        self._past_reasoning = False
        if self._splitter is None:  # (no reasoning in this format: every piece goes to the tools)
            self._past_reasoning = True
            self.take_plain = self._tools.take_plain

    @property
    def dialect_found(self) -> str | None:
        """The other dialect whose complete call the output held where the dialect in force
        found none (`dialect_mismatch`): read as that dialect's unless `"warn"`; else `None`."""
        return self._watch.found if self._watch is not None else None

    def feed(self, delta: str) -> list[Event]:
        """Parse the next piece of the output's text."""
        if self._closed:
            raise RuntimeError("feed() after close()")
        if len(delta) > PIECE:
            return _in_pieces(self.feed, delta)
        self._content_fed = True
        splitter = self._splitter
        direct = self._past_reasoning
        if not direct and (splitter is None or splitter.passes_through):
            # Past the reasoning: straight to the tools, and so from now on.
            direct = self._past_reasoning = True
            self.take_plain = self._tools.take_plain
        if direct and delta:
            plain = self.take_plain(delta)  # (the usual piece: no marker in sight)
            if plain is not None:
                return [TextDelta(plain)] if plain else []
        token = REPAIR.set(self._repair)  # (`repairing`, inline: it wraps every piece that gets here)
        try:
            if splitter is None:
                return self._tools.feed(delta)
            if direct:
                return self._tools.feed(delta) if delta else []
            return self._route(splitter.feed(delta))
        finally:
            REPAIR.reset(token)

    def feed_reasoning(self, delta: str) -> list[Event]:
        """Parse text the host already labelled reasoning (a `reasoning_content` delta).

        Some hosts put the model's whole raw stream, tool-call tokens included, in the reasoning
        channel; calls found there are still calls, and the text around them stays reasoning.
        A host that separates reasoning itself also sends the content without the template's
        opening `<think>`, so the content channel then starts outside reasoning.
        """
        if self._closed:
            raise RuntimeError("feed_reasoning() after close()")
        if len(delta) > PIECE:
            return _in_pieces(self.feed_reasoning, delta)
        syntax = self.dialect.reasoning
        if syntax is None:
            if self._drafts is not None and delta:
                self._keep_draft(delta)
            return [ReasoningDelta(delta)] if delta else []
        if self._reasoning_channel is None:
            self._reasoning_channel = ReasoningSplitter(syntax, start_inside=True)
            if not self._content_fed:
                self._splitter = ReasoningSplitter(syntax, start_inside=False)
        with repairing(self._repair):
            routed = self._route(self._reasoning_channel.feed(delta))
        return [ReasoningDelta(e.text) if isinstance(e, TextDelta) else e for e in routed]

    def close(self, *, drafts: bool = True, stopped: bool = False) -> list[Event]:
        """The output has ended: flush held-back text, report an unfinished call (and, with
        `reasoning_calls="fallback"`, read the calls drafted in the reasoning when none came
        after it; `drafts=False`: a call came another way, a host's own).

        `stopped`: the model ended the output itself, the host says (`finish_reason` `stop`).
        Where the format can tell (hermes' JSON body), a call left open whose body is one whole
        call is that call (a stop sequence took its end marker), and a marker named in prose
        (no JSON object after it) is text; a body cut inside its JSON stays a `TruncatedCall`."""
        if self._closed:
            return []
        self._closed = True
        self.take_plain = _no_plain
        self.context.stopped = stopped
        token = REPAIR.set(self._repair)  # (`repairing`, inline)
        try:
            out = self._close()
            if drafts and self._drafts and self.context.next_index == 0:
                # (no call after the reasoning, not even one cut off: a `TruncatedCall` takes no index)
                if not any(isinstance(e, TruncatedCall) for e in out):
                    out.extend(self._drafted_calls(self._drafts))
            return out
        finally:
            REPAIR.reset(token)

    def _close(self) -> list[Event]:
        out: list[Event] = []
        if self._reasoning_channel is not None:
            tail = self._route(self._reasoning_channel.close())
            out.extend(ReasoningDelta(e.text) if isinstance(e, TextDelta) else e for e in tail)
        if self._splitter is not None:
            out.extend(self._route(self._splitter.close()))
        out.extend(self._tools.close())
        return out

    def _drafted_calls(self, pieces: list[str]) -> list[Event]:
        """The complete calls in the reasoning's text, read by a tool machine of their own (its
        text and unfinished calls are left out: they are reasoning, already given). The text goes
        in pieces of at most `PIECE` characters: the same result as whole (any split is),
        without a machine scanning one long buffer again for every marker in it."""
        machine = self.dialect.machine(self.context)
        events: list[Event] = []
        for piece in pieces:
            events += _in_pieces(machine.feed, piece)
        events += machine.close()
        complete = {e.index for e in events if isinstance(e, ToolCallEnd)}
        out: list[Event] = []
        for event in events:
            if isinstance(event, ToolCallStart) and event.index in complete:
                out.append(ToolCallStart(event.index, event.id, event.name, drafted=True))
            elif isinstance(event, (ToolCallDelta, ToolCallEnd)) and event.index in complete:
                out.append(event)
        return out

    def _route(self, pieces: list[tuple[Channel, str]]) -> list[Event]:
        out: list[Event] = []
        for channel, text in pieces:
            if channel is Channel.REASONING:
                out.append(ReasoningDelta(text))
                if self._drafts is not None:
                    self._keep_draft(text)
            else:
                out.extend(self._tools.feed(text))
        return out

    def _keep_draft(self, text: str) -> None:
        """Keep reasoning text for `reasoning_calls="fallback"`: until a call came outside the
        reasoning (then none is read from it), and up to `MAX_DRAFT_CHARS` in all (past that,
        none is: the same for any split, as it counts characters)."""
        drafts = self._drafts
        if drafts is None:
            return
        self._drafted_chars += len(text)
        if self.context.next_index or self._drafted_chars > MAX_DRAFT_CHARS:
            self._drafts = None  # (the reasoning lanes may run again)
            return
        drafts.append(text)


def _no_plain(delta: str) -> None:
    """`StreamParser.take_plain` while the parser is in the reasoning or closed: no piece is plain."""
    return None


def _in_pieces(feed: Callable[[str], list[Event]], text: str) -> list[Event]:
    """`feed(text)`, fed `PIECE` characters at a time; adjacent text (and reasoning) deltas joined,
    as one feed of the whole gives them."""
    out: list[Event] = []
    for start in range(0, len(text), PIECE):
        out += feed(text[start : start + PIECE])
    return join_text(out)


def parse(
    text: str,
    dialect: str | None = None,
    *,
    model: str | None = None,
    tools: Iterable[Mapping[str, Any]] | Mapping[str, Any] | None = None,
    generation_prompt: str | None = None,
    thinking: bool | None = None,
    repair: bool = False,
    reasoning_calls: ReasoningCalls = "keep",
    dialect_mismatch: DialectMismatch = "read",
) -> ParseResult:
    """Parse a whole output: `.content`, `.reasoning`, `.tool_calls` (and `.truncated`)."""
    parser = StreamParser(
        dialect,
        model=model,
        tools=tools,
        generation_prompt=generation_prompt,
        thinking=thinking,
        repair=repair,
        reasoning_calls=reasoning_calls,
        dialect_mismatch=dialect_mismatch,
    )
    return merge_events(parser.feed(text) + parser.close())


__all__ = [
    "MAX_DRAFT_CHARS",
    "PIECE",
    "ArgumentsStreaming",
    "DialectMismatch",
    "ReasoningCalls",
    "StreamParser",
    "parse",
    "tool_schemas",
]
