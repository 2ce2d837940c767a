"""The text-mode machine most dialects are built on (what a dialect is: `dialect.py`).

A dialect turns the content part of the output (after the reasoning splitter) into events. Most
formats are "text, then a delimited block, then text": `BlockParser` runs the text mode (find
an opening marker outside markdown code, hold back a partial one: `code_aware.py`) and hands
everything after an opening marker to a `Block`, which the dialect implements (`block.py`). A
block says where it ends and what calls it holds; malformed calls come back as their raw text,
which becomes content. Between the blocks, the text mode keeps the text's layout: whitespace
that belongs to a block goes with it, and text on both sides of a call stays apart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .._events import Event, OversizedCall, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart, TruncatedCall
from .._inline_code import FENCE, TICK
from .._reasoning import ReasoningInText
from .._textscan import HELD_WHITESPACE, WHITESPACE, head_pattern, hold_whitespace

# (Declared in `dialect.py`, `block.py` and `arguments.py`: the dialect modules import them from here.)
from ._arguments import arguments_object, dump_arguments, load_object, repairing
from ._block import Block, BlockItem, Fragment, Opened
from ._code_aware import CodeAwareScanner
from ._dialect import Call, Dialect, ParseContext, ToolMachine


class PendingTextMachine:
    """The `feed`/`close` driver of a machine that holds back text it cannot decide yet.

    Text accumulates in `_pending`. Subclasses implement `_run(out, final)`, which consumes what
    it can decide (all of it when `final`: no more text comes), and `_flush(out)`, which settles
    what is still open when the output ends.
    """

    def __init__(self, ctx: ParseContext) -> None:
        self.ctx = ctx
        self._pending = ""

    def feed(self, text: str) -> list[Event]:
        out: list[Event] = []
        self._pending += text
        self._run(out, final=False)
        return out

    def close(self) -> list[Event]:
        out: list[Event] = []
        self._run(out, final=True)
        self._flush(out)
        return out

    def take_plain(self, text: str) -> str | None:
        """No shortcut by default: every piece takes `feed` (see `ToolMachine.take_plain`)."""
        return None

    def _run(self, out: list[Event], final: bool) -> None:
        raise NotImplementedError

    def _flush(self, out: list[Event]) -> None:
        raise NotImplementedError


class BlockParser(PendingTextMachine):
    """Text mode around blocks; subclasses set `openers` and implement `open_block`.

    `strip_around_blocks` drops the whitespace on both sides of a block, for formats whose
    template writes the block on lines of its own (`\\n<tool_call>\\n…\\n</tool_call>`). A format
    whose whitespace before a block is layout only in some places overrides `layout_before_block`.
    """

    openers: Sequence[str] = ()
    strip_around_blocks = False
    # The format's special tokens that can only be markup (a section's end, an argument start):
    # one standing in the text outside a block is dropped, as a stray `</think>` is, never content.
    stray_tokens: Sequence[str] = ()

    def __init__(self, ctx: ParseContext) -> None:
        super().__init__(ctx)
        self._block: Block | None = None
        self._skip_ws = False
        before = ctx.text_before  # (text `auto` sent before this parser took over)
        self._prev = before[-1:] or "\n"  # the character before `_pending`: the output starts a line
        self._held_ws = self._dropped_ws = ""  # trailing whitespace a block would drop; what the open block dropped
        self._last = before.rstrip(WHITESPACE)[-1:]  # the last non-whitespace character of the text so far
        self._after_call = False  # a call came after `_last`
        # Text on both sides of a call keeps a separator (`_set_apart`): whether the last text that
        # went out ended in whitespace, whether the next text must be set apart, and the layout
        # whitespace dropped before the first call of a run and after its last.
        self._ws_out, self._apart = bool(before) and before[-1] in WHITESPACE, False
        self._ws_before = self._ws_after = ""
        self._reasoning = ReasoningInText(ctx.stray_pairs)
        self._strays = tuple(m for m in self._reasoning.markers if m not in self.openers)
        self._tokens = tuple(t for t in self.stray_tokens if t not in self.openers and t not in self._strays)
        self._scanner = CodeAwareScanner(
            (*self.openers, FENCE, TICK, *self._strays, *self._tokens),
            fenced_openers=tuple(o for o in self.openers if o.startswith(FENCE) and o != FENCE),
        )
        # `take_plain`'s one scan: a character a marker of this format (or code) starts with, and
        # while a watch reads the text for another format (`stop_plain_at`), one of its markers'.
        self._plain_stop: Callable[[str], object] = self._scanner.first_head
        # The last text `_text_piece` gave out: what a watch reading the text for another format
        # (`MismatchWatch`) is told of the plain pieces it let this parser take (`take_plain`).
        self.given = ""
        self._live: tuple[int, str, list[str]] | None = None  # the streamed call: index, name, fragments
        self._block_chars = 0  # what the open block was given the general way (`ctx.max_call_chars`)
        self._limit = ctx.max_call_chars

    def feed(self, text: str) -> list[Event]:
        kept = self.take_plain(text)  # (most pieces: text, with nothing in it to stop at)
        if kept is None:
            return super().feed(text)
        return [TextDelta(kept)] if kept else []

    def take_plain(self, text: str) -> str | None:
        """`feed(text)` for most pieces (`ToolMachine.take_plain`): no character that starts a
        marker (or a fence), nothing held but whitespace, so it is text and the text mode would
        find nothing in it to stop at. The text of its one `TextDelta` ("" for none: all held
        back), or `None` for any other piece (nothing consumed). It parses no block: no repair
        can apply."""
        if text and self._block is None and not self._pending and not self._skip_ws:
            if self._plain_stop(text) is None:
                return self._text_piece(text)
        return None

    def stop_plain_at(self, markers: tuple[str, ...] | None) -> None:
        """`take_plain` also declines a piece with a character one of `markers` starts with
        (a watch's, read in the same scan as this format's; `()`: this format's only), or every
        piece (`None`: the watch reads the text itself for now)."""
        scanner = self._scanner
        if markers is None:
            self._plain_stop = _every_piece
        else:
            self._plain_stop = head_pattern((*scanner.markers, *markers)).search if markers else scanner.first_head

    def open_block(self, opener: str) -> Block:
        raise NotImplementedError

    def layout_before_block(self, last: str, after_call: bool) -> bool:
        """Is whitespace at the end of the text so far layout, should a block follow it?

        Layout whitespace is held back until the next character decides: before a block it is
        dropped (and given back if the block turns out malformed), before text it is text after
        all. Other whitespace streams at once. `last` is the last non-whitespace character of the
        text ("" at the start of the output), `after_call` whether a call came after it. By
        default all of it is layout with `strip_around_blocks`, and none of it without.
        """
        return self.strip_around_blocks

    def _flush(self, out: list[Event]) -> None:
        if self._block is not None:
            self._take(out)
            block = self._block
            rest = block.finish()
            self._take(out)  # what `finish` settled as content
            if rest and self.ctx.stopped and self._live is None:
                # The model stopped inside a block by itself, the host says: a block whose calls
                # are whole but for the end marker a stop sequence removed is those calls, in
                # every dialect; a call cut off all the same (a host may say `stop` at any end)
                # is still cut off. A block may say more (`at_stop`: hermes also tells a marker
                # named in prose, which is text with its layout, as a malformed block is).
                at_stop = getattr(block, "at_stop", None)
                settled = at_stop() if at_stop is not None else closed_at_stop(block)
                if settled is not None:
                    self._take_items([settled] if isinstance(settled, (str, Call)) else settled, out)
                    rest = None
            self._block = None
            self._live = None  # a call cut off while streaming is left without its end
            if rest:
                out.append(TruncatedCall(rest))
        if self._held_ws:
            out.append(TextDelta(self._held_ws))
            self._held_ws = ""

    # -- text mode -------------------------------------------------------------------------

    def _run(self, out: list[Event], final: bool) -> None:
        while self._pending:
            if self._block is not None:
                self._block_chars += len(self._pending)
                rest = self._block.feed(self._pending)
                self._pending = ""
                self._take(out)
                if rest is None:
                    if self._limit is not None:
                        self._bound_block(out, self._limit)
                    return
                self._block = None
                self._pending = rest
                continue
            if self._skip_ws:
                stripped = self._pending.lstrip(WHITESPACE)
                skipped = len(self._pending) - len(stripped)
                if skipped and len(self._ws_after) < HELD_WHITESPACE:
                    self._ws_after = (self._ws_after + self._pending[:skipped])[:HELD_WHITESPACE]
                if not stripped:
                    self._pending = ""
                    return
                self._pending = stripped
                self._skip_ws = False
            s = self._pending
            pos, opener = self._scanner.next_stop(s, final, self._prev)
            if opener is None:  # all text, or text up to what must wait for more
                self._text(out, s[:pos])
                self._pending = s[pos:]
                return
            if opener in self._strays:  # a reasoning marker in the text: a stray close is dropped
                self._text(out, s[: pos + len(opener)] if self._reasoning.is_text(opener) else s[:pos])
                self._pending = s[pos + len(opener) :]
                continue
            if opener in self._tokens:  # a stray special token of the format: markup, dropped
                self._text(out, s[:pos])
                self._pending = s[pos + len(opener) :]
                continue
            self._text(out, s[:pos])
            # The layout whitespace held before the block goes with it (given back if it is malformed).
            self._dropped_ws, self._held_ws = self._held_ws, ""
            self._prev = opener[-1]
            self._block = self.open_block(opener)
            self._block_chars = 0
            self._pending = s[pos + len(opener) :]

    def _bound_block(self, out: list[Event], limit: int) -> None:
        """The open block over `limit` (`ctx.max_call_chars`): let it go (`OversizedCall`); the
        rest of the output goes to a block that keeps nothing."""
        if self._block is None or self._block is _SPENT:
            return
        size = getattr(self._block, "size", self._block_chars)
        if size > limit:
            self._block, self._live, self._dropped_ws = _SPENT, None, ""
            out.append(OversizedCall(size))

    def _text(self, out: list[Event], text: str) -> None:
        kept = self._text_piece(text)
        if kept:
            out.append(TextDelta(kept))

    def _text_piece(self, text: str) -> str:
        """Take `text` as text: what goes out now; trailing layout whitespace is held back
        (`_held_ws`). (What is held, and what went out, is written once per case: this runs on
        every plain piece.)"""
        held = self._held_ws
        full = held + text if held else text
        if self._apart and full:
            full = self._set_apart(full)
        body = full.rstrip(WHITESPACE)
        if len(body) == len(full):  # no trailing whitespace: nothing to hold, whatever the format's layout
            self._held_ws = ""
            if body:  # (its last character is the text's: what is held and set apart is whitespace)
                self._prev = self._last = body[-1]
                self._after_call = self._ws_out = False
                self.given = body
            return body
        if text:
            self._prev = text[-1]
        if body:
            self._last, self._after_call = body[-1], False
        layout = self.layout_before_block(self._last, self._after_call)
        self._held_ws = tail = hold_whitespace(full[len(body) :])[1] if layout else ""
        given = full[: len(full) - len(tail)] if tail else full
        if given:
            self._ws_out = given[-1] in WHITESPACE
            self.given = given
        return given

    def _set_apart(self, text: str) -> str:
        """The first text after a call that came after a word: it starts with the layout whitespace
        the model wrote around the call (after it, else before it), which went with the call's
        markup, so the two texts do not read as one run-on sentence. Where the model wrote none,
        or the text starts with whitespace of its own, it stays as it is."""
        self._apart = False
        if text[0] in WHITESPACE:
            return text
        return (self._ws_after or self._ws_before) + text

    # -- blocks ----------------------------------------------------------------------------

    def _take(self, out: list[Event]) -> None:
        assert self._block is not None
        self._take_items(self._block.take(), out)

    def _take_items(self, items: Sequence[BlockItem], out: list[Event]) -> None:
        for item in items:
            if isinstance(item, Opened):
                index = self.ctx.next_index
                self.ctx.next_index += 1
                self._live = (index, item.name, [])
                out.append(ToolCallStart(index=index, id=item.id if self.ctx.model_ids else None, name=item.name))
                continue
            if isinstance(item, Fragment):
                if self._live is not None and item.text:
                    self._live[2].append(item.text)
                    out.append(ToolCallDelta(index=self._live[0], arguments=item.text))
                continue
            if isinstance(item, str):
                # A malformed block is text: give back the whitespace dropped before it too. A
                # call that was streaming is abandoned without its end (the policy stage fails
                # the response: its start already went out).
                self._live = None
                text = self._dropped_ws + item
                if self._apart and text:
                    text = self._set_apart(text)
                if text:
                    self._ws_out = text[-1] in WHITESPACE
                out.append(TextDelta(text))
                self._dropped_ws = ""
                self._prev = item[-1] if item else self._prev
                body = text.rstrip(WHITESPACE)
                if body:
                    self._last, self._after_call = body[-1], False
                continue
            if not self._after_call:  # the first call after some text (or at the start)
                self._apart = bool(self._last) and not self._ws_out
                self._ws_before = self._dropped_ws
            self._ws_after = ""
            self._dropped_ws = ""
            self._skip_ws = self.strip_around_blocks
            self._after_call = True
            if self._live is None:
                out.extend(self.emit_call(item))
            else:
                out.extend(self._end_live(item))

    def _end_live(self, call: Call) -> list[Event]:
        """The end of a streamed call: the rest of its arguments, then its end.

        Final arguments that do not continue what was streamed (a repaired body, a duplicate key),
        or a name the body later overrode, cannot go out silently changed: the call is abandoned
        without its end.
        """
        assert self._live is not None
        index, name, fragments = self._live
        self._live = None
        streamed = "".join(fragments)
        if call.name != name or not call.arguments.startswith(streamed):
            return []
        rest = call.arguments[len(streamed) :]
        events: list[Event] = [ToolCallDelta(index=index, arguments=rest)] if rest or not streamed else []
        events.append(ToolCallEnd(index=index, arguments=call.arguments))
        return events

    def emit_call(self, call: Call) -> list[Event]:
        return call_events(self.ctx, call)


def _every_piece(text: str) -> str:
    """`BlockParser._plain_stop` while a watch reads the text itself: every piece stops."""
    return text


class _Spent:
    """The block after a call that grew past the limit: it takes the rest of the output and keeps
    none of it (the response has failed; nothing after the call is read)."""

    def feed(self, text: str) -> str | None:
        return None

    def take(self) -> list[BlockItem]:
        return []

    def finish(self) -> str | None:
        return None


_SPENT = _Spent()


def closed_at_stop(block: Block) -> list[Call] | None:
    """The calls of a block that ends with its `end_marker` (the marker a stop sequence takes),
    when it holds only whole calls once that marker is added; `None` otherwise. The block is
    spent either way: this runs once the output is over."""
    marker = getattr(block, "end_marker", "")
    if not marker or block.feed(marker) != "":
        return None
    items = list(block.take())
    if not items or not all(isinstance(item, Call) for item in items):
        return None
    return [item for item in items if isinstance(item, Call)]


def call_events(ctx: ParseContext, call: Call) -> list[Event]:
    """The events of one complete call, on the next free index."""
    index = ctx.next_index
    ctx.next_index += 1
    return [
        ToolCallStart(index=index, id=call.id if ctx.model_ids else None, name=call.name),
        ToolCallDelta(index=index, arguments=call.arguments),
        ToolCallEnd(index=index, arguments=call.arguments),
    ]


__all__ = [
    "FENCE",
    "Block",
    "BlockItem",
    "BlockParser",
    "Call",
    "Dialect",
    "Fragment",
    "Opened",
    "ParseContext",
    "PendingTextMachine",
    "ToolMachine",
    "arguments_object",
    "call_events",
    "closed_at_stop",
    "dump_arguments",
    "load_object",
    "repairing",
]
