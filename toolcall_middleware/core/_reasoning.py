"""The reasoning splitter: separates a leading reasoning block from the rest of the output.

It runs before tool parsing, as every serving engine does, so a call drafted inside a closed
reasoning block stays reasoning. Reasoning is recognised only at the start of the output (a
`<think>` written later, for example inside an argument, is text), or from the first character
when the chat template already opened it (`generation_prompt` ends inside a reasoning block).

A reasoning block ends at its closing marker or, implicitly, where the dialect's tool-call syntax
begins (Kimi's section token, Qwen3.5's `<tool_call><function=`), for the models that call before
closing their reasoning. Others draft a whole call in their reasoning and close it later, so the
text from such a call on is held: a closing marker after it makes all of it reasoning (a draft);
the output ending first, or `TENTATIVE_CAP` characters without one, hands it to the tool parser
(the call). Such a call therefore goes out at the end of the output. Whitespace next to the
reasoning markers is layout, not text, and is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from ._textscan import WHITESPACE, Match, hold_whitespace, match_spaced, partial_marker_len

# The most text held after a call inside the reasoning while a closing marker may still come;
# past it the call is taken as one (the same for any split: it counts characters).
TENTATIVE_CAP = 1 << 20

DEFAULT_PAIRS: tuple[tuple[str, str], ...] = (
    ("<think>", "</think>"),
    ("<reasoning>", "</reasoning>"),
    ("<thought>", "</thought>"),
)


@dataclass(frozen=True)
class ReasoningSyntax:
    """How a dialect marks reasoning.

    `pairs` are (open, close) markers. `implicit_ends` are tool-call openings that also end an
    unclosed reasoning block, unless the block closes after the call (then the call was a
    draft); each is a sequence of literal parts that may be separated by whitespace, so
    `("<tool_call>", "<function=")` ends reasoning while a mere mention of `<tool_call>` does
    not. `answer_starts` are the same for a section that opens the answer (Kimi K3's response
    section): it ends the reasoning at once.

    `stray_pairs` are the pairs whose closing marker is markup wherever it stands: such a close
    in the answer with no reasoning open (the template opened the block and the parser was not
    told) is dropped by the tool parser (`ReasoningInText`). They are all the pairs but those
    closed by one of the `prose_closes`: phrases a model may also write as text (Granite's
    `Here is my response:`), which stay.
    """

    pairs: tuple[tuple[str, str], ...] = DEFAULT_PAIRS
    implicit_ends: tuple[tuple[str, ...], ...] = ()
    answer_starts: tuple[tuple[str, ...], ...] = ()
    prose_closes: tuple[str, ...] = ()
    opens: tuple[str, ...] = field(init=False)
    closes: tuple[str, ...] = field(init=False)
    stray_pairs: tuple[tuple[str, str], ...] = field(init=False)
    implicit_heads: tuple[str, ...] = field(init=False)  # the first part of each implicit end

    def __post_init__(self) -> None:
        object.__setattr__(self, "opens", tuple(o for o, _ in self.pairs))
        object.__setattr__(self, "closes", tuple(c for _, c in self.pairs))
        object.__setattr__(self, "stray_pairs", tuple(p for p in self.pairs if p[1] not in self.prose_closes))
        ends = self.implicit_ends + self.answer_starts
        object.__setattr__(self, "implicit_heads", tuple(parts[0] for parts in ends))

    def open_in(self, generation_prompt: str) -> bool:
        """Does the generation prompt leave a reasoning block open?"""
        last_open = max(generation_prompt.rfind(o) for o in self.opens)
        last_close = max(generation_prompt.rfind(c) for c in self.closes)
        return last_open >= 0 and last_open > last_close


class ReasoningInText:
    """Reasoning markers a tool parser meets in the answer's text (outside code and calls).

    A closing marker with no opening one before it is markup (the template opened the block and
    the parser was not told): it is dropped. An opening marker in the answer is text (reasoning
    counts only at the start), and so is the close that pairs with it: the model wrote the pair.
    """

    __slots__ = ("_open", "_opens", "markers")

    def __init__(self, pairs: tuple[tuple[str, str], ...]) -> None:
        self._opens = frozenset(o for o, _ in pairs)
        self._open = False
        self.markers = tuple(dict.fromkeys(m for pair in pairs for m in pair))

    def is_text(self, marker: str) -> bool:
        """Whether `marker`, one of `markers`, is text where it stands (else: drop it)."""
        if marker in self._opens:
            self._open = True
            return True
        kept, self._open = self._open, False
        return kept


class Channel(str, Enum):
    """Where a piece of model text goes: the reasoning or the answer's content. A `str`, so a
    channel also compares equal to its name (`Channel.CONTENT == "content"`)."""

    REASONING = "reasoning"
    CONTENT = "content"


class _State(Enum):
    START = "start"  # nothing seen yet: the output may open a reasoning block
    REASONING = "reasoning"
    TENTATIVE = "tentative"  # a call inside the reasoning: a draft if the block closes later
    DONE = "done"  # everything from here on is content


class ReasoningSplitter:
    """`feed(text)` -> [(Channel, text)]; `close()` flushes what was held back.

    ```python
    splitter = ReasoningSplitter(ReasoningSyntax(), start_inside=True)
    splitter.feed("Let me think.</think>Hi")  # [(REASONING, "Let me think."), (CONTENT, "Hi")]
    ```
    """

    def __init__(self, syntax: ReasoningSyntax, *, start_inside: bool = False) -> None:
        self._syntax = syntax
        self._state = _State.REASONING if start_inside else _State.START
        self._closes: tuple[str, ...] = syntax.closes
        self._pending = ""
        self._skip_ws = start_inside  # whitespace right after an opening marker is layout
        self._may_reopen = start_inside
        self._held_ws = ""  # trailing reasoning whitespace: dropped if the block closes next
        self._implicit_heads = syntax.implicit_heads
        self._strip_content = False
        self._tentative = ""  # the text from a call inside the reasoning on (`_State.TENTATIVE`)
        self._scanned = 0  # how much of `_tentative` holds no closing marker

    @property
    def in_reasoning(self) -> bool:
        return self._state is _State.REASONING

    @property
    def passes_through(self) -> bool:
        """Past the reasoning, nothing held: `feed(text)` is `[(CONTENT, text)]` from here on."""
        return self._state is _State.DONE and not self._pending and not self._strip_content

    def force_reasoning(self) -> None:
        """Treat what follows as reasoning (the host delivered it in a reasoning channel)."""
        if self._state is not _State.REASONING:
            self._state = _State.REASONING
            self._closes = self._syntax.closes

    def feed(self, text: str) -> list[tuple[Channel, str]]:
        if self._state is _State.DONE and not self._pending and not self._strip_content:
            return [(Channel.CONTENT, text)] if text else []
        self._pending += text
        out: list[tuple[Channel, str]] = []
        self._run(out, final=False)
        return out

    def close(self) -> list[tuple[Channel, str]]:
        out: list[tuple[Channel, str]] = []
        self._run(out, final=True)
        if self._state is _State.REASONING and self._held_ws:
            # Cut off inside reasoning: the trailing whitespace is the model's text.
            out.append((Channel.REASONING, self._held_ws))
            self._held_ws = ""
        return out

    def _run(self, out: list[tuple[Channel, str]], final: bool) -> None:
        while self._pending or (final and self._state is _State.TENTATIVE):
            if self._state is _State.START:
                if not self._start(out, final):
                    return
            elif self._state is _State.REASONING:
                if not self._reasoning(out, final):
                    return
            elif self._state is _State.TENTATIVE:
                if not self._held_call(out, final):
                    return
            else:
                if self._strip_content:
                    self._pending = self._pending.lstrip(WHITESPACE)
                    if not self._pending:
                        return
                    self._strip_content = False
                out.append((Channel.CONTENT, self._pending))
                self._pending = ""

    def _start(self, out: list[tuple[Channel, str]], final: bool) -> bool:
        s = self._pending
        body = s.lstrip(WHITESPACE)
        given, held = hold_whitespace(s[: len(s) - len(body)])
        if given:  # a long run of whitespace first: the most of it is content (`HELD_WHITESPACE`)
            out.append((Channel.CONTENT, given))
            s = self._pending = held + body
        for open_marker, close_marker in self._syntax.pairs:
            if body.startswith(open_marker):
                self._state = _State.REASONING
                self._closes = (close_marker,)
                self._pending = body[len(open_marker) :]
                self._skip_ws = True
                return True
        if not final:
            if not body:
                return False
            for opener in self._syntax.opens:  # (a loop, not `any(...)`: no generator per piece)
                if opener.startswith(body):
                    return False  # could still become an opening marker
        self._state = _State.DONE
        return True

    def _reasoning(self, out: list[tuple[Channel, str]], final: bool) -> bool:
        s = self._pending
        if self._skip_ws:
            s = s.lstrip(WHITESPACE)
            if not s:
                self._pending = ""
                return False
            if self._may_reopen:
                # The template opened the block and the output opens it again (deployments that
                # add the tag back): the repeated tag is markup too.
                opener = next((o for o in self._syntax.opens if s.startswith(o)), None)
                if opener is not None:
                    self._pending, self._may_reopen = s[len(opener) :], False
                    return True
                if not final and any(o.startswith(s) for o in self._syntax.opens):
                    self._pending = s
                    return False
                self._may_reopen = False
            self._skip_ws = False
        start = 0
        while True:
            hit = self._next_marker(s, start)
            if hit is None:
                keep = 0 if final else partial_marker_len(s, self._closes + self._implicit_heads)
                self._emit_reasoning(out, s[: len(s) - keep], closing=False)
                self._pending = s[len(s) - keep :]
                return False
            pos, marker, is_close = hit
            if is_close:
                self._emit_reasoning(out, s[:pos], closing=True)
                self._end_reasoning()
                self._pending = s[pos + len(marker) :]
                self._strip_content = True  # whitespace after the closing marker is layout
                return True
            verdict, is_call = self._implicit_end(s, pos, final)
            if verdict is Match.YES:
                if final or not is_call:  # the answer begins, or no closing marker can follow
                    self._emit_reasoning(out, s[:pos], closing=True)
                    self._end_reasoning()
                    self._pending = s[pos:]
                    return True
                self._emit_reasoning(out, s[:pos], closing=False)
                self._state = _State.TENTATIVE
                self._pending, self._tentative, self._scanned = "", s[pos:], 0
                return True
            if verdict is Match.MAYBE:
                self._emit_reasoning(out, s[:pos], closing=False)
                self._pending = s[pos:]
                return False
            start = pos + 1

    def _end_reasoning(self) -> None:
        """The block closed: the rest is content."""
        self._state = _State.DONE

    def _held_call(self, out: list[tuple[Channel, str]], final: bool) -> bool:
        """A call inside the reasoning: held until a closing marker (a draft: all of it is
        reasoning), the output's end or `TENTATIVE_CAP` (a call: all of it is content)."""
        text = self._tentative = self._tentative + self._pending
        self._pending = ""
        close = self._first_close(text, self._scanned)
        if close is not None and close[0] <= TENTATIVE_CAP:
            pos, marker = close
            self._emit_reasoning(out, text[:pos], closing=True)
            self._tentative = ""
            self._end_reasoning()
            self._pending = text[pos + len(marker) :]
            self._strip_content = True
            return True
        keep = 0 if final else partial_marker_len(text, self._closes)
        if not final and len(text) - keep <= TENTATIVE_CAP:
            self._scanned = len(text) - keep
            return False
        self._held_ws = ""  # whitespace before the call is layout, as before a closing marker
        self._tentative = ""
        self._end_reasoning()
        out.append((Channel.CONTENT, text))
        return True

    def _first_close(self, s: str, start: int) -> tuple[int, str] | None:
        best: tuple[int, str] | None = None
        for marker in self._closes:
            pos = s.find(marker, start)
            if pos >= 0 and (best is None or pos < best[0]):
                best = (pos, marker)
        return best

    def _next_marker(self, s: str, start: int) -> tuple[int, str, bool] | None:
        best: tuple[int, str, bool] | None = None
        for marker in self._closes:
            pos = s.find(marker, start)
            if pos >= 0 and (best is None or pos < best[0]):
                best = (pos, marker, True)
        for head in self._implicit_heads:
            pos = s.find(head, start)
            if pos >= 0 and (best is None or pos < best[0]):
                best = (pos, head, False)
        return best

    def _implicit_end(self, s: str, pos: int, final: bool) -> tuple[Match, bool]:
        """Whether an implicit end starts at `pos`, and whether it is a call's (not the answer's)."""
        maybe = False
        syntax = self._syntax
        for parts in syntax.implicit_ends + syntax.answer_starts:
            verdict, _ = match_spaced(s, pos, parts)
            if verdict is Match.YES:
                return Match.YES, parts in syntax.implicit_ends
            maybe = maybe or verdict is Match.MAYBE
        return (Match.MAYBE if maybe and not final else Match.NO), False

    def _emit_reasoning(self, out: list[tuple[Channel, str]], text: str, *, closing: bool) -> None:
        if closing:
            text = (self._held_ws + text).rstrip(WHITESPACE)
            self._held_ws = ""
            if text:
                out.append((Channel.REASONING, text))
            return
        given = self.reasoning_text(text)
        if given:
            out.append((Channel.REASONING, given))

    def reasoning_text(self, text: str) -> str:
        """Reasoning `text` that does not close the block: what goes out now, after the
        whitespace held before it; its trailing whitespace is held back (a closing marker that
        follows drops it), at most `HELD_WHITESPACE` of it (`hold_whitespace`)."""
        if not text:
            return ""
        body = text.rstrip(WHITESPACE)
        held = self._held_ws
        if not body:  # whitespace only: the run held grows (and its start goes out past the cap)
            given, self._held_ws = hold_whitespace(held + text)
            return given
        given, self._held_ws = hold_whitespace(text[len(body) :])
        return held + body + given


__all__ = [
    "DEFAULT_PAIRS",
    "Channel",
    "ReasoningInText",
    "ReasoningSplitter",
    "ReasoningSyntax",
]
