"""Another dialect's calls in the text of the dialect in force (`dialect_mismatch`).

A served model name can select one dialect while the model writes another (a Llama fine-tune
trained on Hermes tags, a renamed Qwen): the dialect in force finds no call, and the other
format's markup would reach the client as text. `MismatchWatch` wraps the parser of the dialect
in force and reads the text it gives (never its calls) as `auto` does: the first marker outside
code that only another format writes (`auto.UNIQUE`, or a `auto.SHARED` one by what follows it:
the markers each `Dialect` declares) hands the text from there on to that format's parser, on
trial. That text is held until the trial ends:

- that parser reads a complete call: the held text goes out as it read it, the call with it, and
  it reads the rest of the output (`found` names the dialect);
- the output ends, or the held text passes the call limit (`ctx.max_call_chars`), or the dialect
  in force makes a call of its own (it was the right one): the held text goes out as it came.

From then on (but for the dialect found, which goes on reading) nothing is watched, so each
character is read at most twice and the work stays linear. Every decision depends on the text
alone, the limit counted in characters from the marker, so any split gives the same events.
Only a complete call changes the output: a marker in prose, a malformed or cut-off call of the
other format, is text exactly as without the watch.

With `read=False` (`dialect_mismatch="warn"`) the trial runs on the side: the output is the dialect
in force's, and `found` says which dialect's complete call it holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Literal

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
from .._inline_code import FENCE, TICK
from .._textscan import head_pattern
from ._base import BlockParser
from ._dialect import ParseContext, ToolMachine
from .auto import SHARED, UNIQUE, AutoParser

DialectMismatch = Literal["read", "warn", "off"]

# A piece none of whose characters starts one of these holds no marker of another format.
_WATCHED = (*UNIQUE, *SHARED, FENCE, TICK)
_first_head = head_pattern(_WATCHED).search


class _Trial(AutoParser):
    """`auto` over the text the dialect in force gave, passing over that dialect's own markers;
    it notes the text from the marker that chose another (`held`) and where, in the events of the
    feed that chose, the chosen parser's begin (`split`). The chosen parser is given at most
    `limit` characters of that text; what is over is `overflow`."""

    def __init__(self, ctx: ParseContext, passed_over: str, *, keep: bool) -> None:
        super().__init__(ctx)
        self.passed_over = passed_over
        self.keep = keep  # keep the held text (to give it back), not only count it
        self.held: list[str] | None = None
        self.held_chars = 0
        self.split: int | None = None
        self.overflow = ""
        self.final = False

    @property
    def idle(self) -> bool:
        """Nothing chosen and nothing waiting: a piece with no marker's first character is text."""
        return self._inner is None and not self._pending

    def text(self, text: str) -> str:
        """`feed(text)` for a piece with no marker's first character while `idle`: what goes out."""
        self._prev, self._sent = text[-1], text
        return text

    def _text(self, out: list[Event], text: str) -> None:
        """Text goes out at once, its whitespace too: the dialect in force held what it holds as
        layout, and text is not delayed further here."""
        if text:
            self._prev, self._sent = text[-1], text
            out.append(TextDelta(text))

    def hold(self, text: str) -> str:
        """Count `text` (after the marker) into the held text: the part the chosen parser may have
        within the limit (the rest is `overflow`)."""
        limit = self.ctx.max_call_chars
        if limit is not None and self.held_chars + len(text) > limit:
            room = max(limit - self.held_chars, 0)
            text, self.overflow = text[:room], self.overflow + text[room:]
        self.held_chars += len(text)
        return text

    def _choose(self, name: str, rest: str, out: list[Event], final: bool) -> None:
        self.held = [rest] if self.keep else []
        self.split = len(out)
        self.final = final  # chosen as the text ended: the chosen parser is closed at once
        super()._choose(name, self.hold(rest), out, final)


class MismatchWatch:
    """The parser of the dialect in force (`inner`), with its text read for another dialect's
    calls (see the module doc). `read=False`: only `found` is told."""

    def __init__(self, inner: ToolMachine, dialect: str, ctx: ParseContext, *, read: bool) -> None:
        self._inner = inner
        self._dialect = dialect
        self._ctx = ctx
        self._read = read
        self._watching = True
        self._trial: _Trial | None = None
        self._trial_ctx: ParseContext | None = None
        self._base = 0  # the first index the trial's calls take
        self._committed = False  # a call of the dialect found went out: it reads the rest
        self._buffer: list[Event] = []  # what the chosen parser gave while on trial
        self._offset = 0  # indexes taken by the dialect found: the dialect in force's calls come after
        self.found: str | None = None
        # `feed(text)` for a piece that is plain text to the dialect in force and holds no
        # character another format's marker starts with, while nothing is held here either
        # (`ToolMachine.take_plain`). A block parser of the dialect in force answers it itself: it
        # looks for these markers' first characters in the scan it makes of a plain piece anyway
        # (`stop_plain_at`: one scan a piece, not two), declines every piece while the trial holds
        # text (`_plain_while_idle`), and keeps the text it gave (`given`), which the trial is told
        # before it reads on (`_catch_up`): no call of the watch's on a plain piece.
        self._joined: BlockParser | None = inner if isinstance(inner, BlockParser) else None
        self._plain_open = True  # the joined parser takes plain pieces (the trial is idle)
        self.take_plain: Callable[[str], str | None] = self._take_plain
        if isinstance(inner, BlockParser):
            inner.stop_plain_at(_WATCHED)
            self.take_plain = inner.take_plain

    def feed(self, text: str) -> list[Event]:
        joined = self._joined  # (not `None` only while watching; read inline: a call's body is fed here)
        if joined is not None and joined.given:
            self._catch_up()
        elif self._watching and self._trial is None:
            self._start()  # (before the dialect in force numbers a call: the trial's come first)
        events = self._inner.feed(text)
        if joined is not None:
            joined.given = ""  # (what it gave now goes through `_after`)
        return self._after(events, boundary=True)

    def close(self) -> list[Event]:
        if self._watching:
            self._catch_up()
        out = self._after(self._inner.close(), boundary=False)
        if self._watching:
            self._end(out, boundary=False)
        self._ctx.next_index += self._offset
        self._offset = 0
        return out

    def _take_plain(self, text: str) -> str | None:
        """`take_plain` over a tool machine that is no block parser: the watch's own look."""
        if not self._watching:
            return self._inner.take_plain(text)
        trial = self._trial or self._start()
        # (`trial.idle` and `trial.text`, inline: this runs on every plain piece)
        if trial._inner is not None or trial._pending or _first_head(text) is not None:
            return None
        plain = self._inner.take_plain(text)
        if plain:
            trial._prev, trial._sent = plain[-1], plain
        return plain

    def _catch_up(self) -> _Trial:
        """The trial (started now if not yet), told the last text the joined parser gave on its own
        (`take_plain`) since the watch last read: as `_watch` tells it of a plain piece."""
        trial = self._trial or self._start()
        joined = self._joined
        if joined is not None and joined.given:
            trial.text(joined.given)
            joined.given = ""
        return trial

    def _plain_while_idle(self) -> None:
        """The joined parser takes plain pieces itself while the trial is idle, none while it
        holds text (a marker's start, the text of a format it chose)."""
        trial = self._trial
        idle = trial is None or trial.idle
        if idle != self._plain_open:
            self._plain_open = idle
            assert self._joined is not None
            self._joined.stop_plain_at(_WATCHED if idle else None)

    # -- the events of the dialect in force --------------------------------------------------

    def _after(self, events: list[Event], *, boundary: bool) -> list[Event]:
        if not self._watching and not self._offset and not self._committed:
            return events
        out: list[Event] = []
        for event in events:
            if type(event) is TextDelta:
                if self._committed:
                    self._take(self._trial_feed(event.text), out, final=False)
                elif self._watching:
                    self._watch(event.text, out)
                else:
                    out.append(event)
            elif type(event) is ReasoningDelta:
                out.append(event)
            else:
                if self._watching or self._committed:
                    # A call of the dialect in force (or its end of the output): nothing before it
                    # waits past it, and nothing after it is watched.
                    self._end(out, boundary=boundary)
                if self._offset and isinstance(event, (ToolCallStart, ToolCallDelta, ToolCallEnd)):
                    event = replace(event, index=event.index + self._offset)
                out.append(event)
        return out

    def _start(self) -> _Trial:
        self._trial_ctx = replace(self._ctx, stray_pairs=(), text_before="")
        self._base = self._ctx.next_index
        self._trial = _Trial(self._trial_ctx, self._dialect, keep=self._read)
        return self._trial

    def _trial_feed(self, text: str) -> list[Event]:
        trial = self._trial
        assert trial is not None
        if trial.held is not None and not self._committed:
            if self._read:
                trial.held.append(text)
            text = trial.hold(text)
            if not text:
                return []
        return trial.feed(text)

    def _watch(self, text: str, out: list[Event]) -> None:
        trial = self._trial
        assert trial is not None
        if trial.idle and _first_head(text) is None:  # (the usual piece: plain text)
            given = trial.text(text) if self._read else (trial.text(text), text)[1]
            if given:
                out.append(TextDelta(given))
            return
        if not self._read:
            out.append(TextDelta(text))
        self._take(self._trial_feed(text), out, final=False)
        if self._joined is not None:  # (only a piece the trial read can make it hold text, or end that)
            self._plain_while_idle()

    def _take(self, events: list[Event], out: list[Event], *, final: bool) -> None:
        """What the trial gave: out as it is while it has chosen nothing or after a call it read;
        else held until it decides."""
        trial = self._trial
        assert trial is not None
        if self._committed:
            out.extend(events)
            return
        if trial.held is None:  # still looking: its text is the text
            if self._read:
                out.extend(events)
            return
        if trial.split is not None:  # chosen in this feed: the text before the marker goes out
            if self._read:
                out.extend(events[: trial.split])
            events, trial.split = events[trial.split :], None
        for event in events:
            if type(event) is ToolCallEnd:
                self._commit(events, out)
                return
            if type(event) is OversizedCall:
                break
        else:
            if self._read:
                self._buffer.extend(events)
            if not final and not trial.overflow:
                return
        self._release(out)

    def _commit(self, events: list[Event], out: list[Event]) -> None:
        trial = self._trial
        assert trial is not None
        self.found = trial.chosen
        if not self._read:
            self._stop()
            return
        self._committed = True
        out.extend(self._buffer)
        out.extend(events)
        self._buffer = []
        trial.held = []
        overflow, trial.overflow = trial.overflow, ""
        if overflow:  # (past a parser closed at the end: text, as it came)
            out.extend([TextDelta(overflow)] if trial.final else trial.feed(overflow))

    def _release(self, out: list[Event]) -> None:
        """The trial ends without a call: the held text goes out as it came."""
        trial = self._trial
        assert trial is not None and trial.held is not None
        if self._read and trial.held:
            out.append(TextDelta("".join(trial.held)))
        self._buffer = []
        self._stop()

    def _end(self, out: list[Event], *, boundary: bool) -> None:
        """The text the trial reads has ended (`boundary`: at a call of the dialect in force)."""
        trial = self._trial
        if trial is None:
            self._watching = False
            return
        assert self._trial_ctx is not None
        self._trial_ctx.stopped = self._ctx.stopped
        events = trial.close()
        if boundary:  # (a call of the other format cut by one of the dialect in force is none)
            events = [TextDelta(e.text) if isinstance(e, TruncatedCall) else e for e in events]
        self._take(events, out, final=True)
        if self._committed:
            self._offset = self._trial_ctx.next_index - self._base
        self._committed = False
        self._stop()

    def _stop(self) -> None:
        self._watching = False
        if self._joined is not None:
            self._joined.stop_plain_at(())  # (nothing watched: the dialect in force's own scan again)
            self._joined = None
        if not self._committed:
            self._trial = None


__all__ = ["DialectMismatch", "MismatchWatch"]
