"""`auto`: the dialect the output itself shows, when the served model name selects none.

The text streams as content until the first marker that only one format writes; from there on
that dialect's parser takes the rest of the output. Markers several formats share are told apart
by what follows them: `<tool_call>` followed by `{` is hermes, by `<function=` qwen3_coder, by a
name GLM; `<function=` followed by `name>{` is llama_function, by `name>` and a `<parameter=` line
qwen3_coder. Leading reasoning (`<think>`) is split off before, as for every dialect. A marker in
code (a fenced block, an inline code span: `inline_code`) is text and picks nothing.
"""

from __future__ import annotations

import re

from ..events import Event, TextDelta
from ..inline_code import FENCE, TICK, skip_backticks
from ..reasoning import DEFAULT_PAIRS, ReasoningInText, ReasoningSyntax
from ..textscan import WHITESPACE, find_first, hold_whitespace, partial_marker_len
from .base import Dialect, ParseContext, ToolMachine

# Markers one format alone writes, longest first where one is a prefix of another.
UNIQUE: dict[str, str] = {
    "<|tool_calls_section_begin|>": "kimi_k2",
    "<|tool_call_section_begin|>": "kimi_k2",
    "<|open|>tools<|sep|>": "kimi_k3",
    "<｜tool▁calls▁begin｜>": "deepseek_v31",
    "<｜DSML｜function_calls>": "deepseek_v32",
    "<｜DSML｜tool_calls>": "deepseek_v4",
    "[TOOL_CALLS]": "mistral",
    "<|python_tag|>": "llama3_json",
    "<|python_start|>": "pythonic",
    "<|channel|>": "gpt_oss",
    "<|start|>assistant": "gpt_oss",
    "<|tool_call>": "gemma4",
    "<minimax:tool_call>": "minimax_m2",
    "<seed:tool_call>": "seed_oss",
}
SHARED = ("<tool_call>", "<function=")
KIMI_VL_THINK = ("◁think▷", "◁/think▷")
# What follows a shared marker (after optional whitespace) decides; `None` = cannot tell yet.
_AFTER_TOOL_CALL = re.compile(
    r"[ \t\r\n]*(?:(\{)|(<function=)|[A-Za-z_][\w.\-]*(\n)?[ \t\r\n]*(?:<arg_key>|</tool_call>))"
)
_AFTER_FUNCTION = re.compile(r"[\w.\-]+>[ \t\r\n]*(?:(\{)|(<parameter=|</function>))")
_LOOKAHEAD = 128  # a shared marker still undecided after this much text is text


def _decide(marker: str, text: str, at: int, final: bool) -> str | bool | None:
    """The dialect a shared marker starts (what follows it is `text[at:]`), `None` while
    undecided, `False` when it starts none. (`at`, not a slice: a rest copied at every marker
    of a long text is quadratic.)"""
    pattern = _AFTER_TOOL_CALL if marker == "<tool_call>" else _AFTER_FUNCTION
    m = pattern.match(text, at)
    if m is not None:
        if marker == "<tool_call>":
            if m.group(1) or m.group(2):
                return "hermes" if m.group(1) else "qwen3_coder"
            return "glm45" if m.group(3) else "glm47"  # GLM-4.5 writes each key on a line
        return "llama_function" if m.group(1) else "qwen3_coder"
    return False if final or len(text) - at > _LOOKAHEAD else None


class AutoParser:
    """Content streams until a marker picks the dialect, which then parses the rest."""

    def __init__(self, ctx: ParseContext) -> None:
        self.ctx = ctx
        self._inner: ToolMachine | None = None
        self._pending = ""
        self._held_ws = ""  # trailing whitespace: the chosen dialect decides whether it is layout
        self._reasoning = ReasoningInText(ctx.stray_pairs)  # a stray closing marker is dropped
        self._strays = self._reasoning.markers
        self._markers = (*UNIQUE, *SHARED, FENCE, TICK, *self._strays)
        self._in_fence = False
        self._prev = "\n"  # the character before `_pending`: the output starts a line

    def feed(self, text: str) -> list[Event]:
        if self._inner is not None:
            return self._inner.feed(text)
        self._pending += text
        return self._scan(final=False)

    def take_plain(self, text: str) -> str | None:
        """The chosen dialect's shortcut (`ToolMachine.take_plain`); none before one is chosen."""
        return self._inner.take_plain(text) if self._inner is not None else None

    def close(self) -> list[Event]:
        out = self._scan(final=True) if self._inner is None else []
        if self._inner is not None:
            return out + self._inner.close()
        if self._held_ws:
            out.append(TextDelta(self._held_ws))
            self._held_ws = ""
        return out

    def _scan(self, final: bool) -> list[Event]:
        out: list[Event] = []
        s, start = self._pending, 0
        while True:
            hit = find_first(s, (FENCE,) if self._in_fence else self._markers, start)
            if hit is None:
                keep = 0 if final else min(partial_marker_len(s, self._markers), len(s) - start)
                self._text(out, s[: len(s) - keep])
                self._pending = s[len(s) - keep :]
                return out
            pos, marker = hit
            if marker == FENCE or marker == TICK:
                step = skip_backticks(s, pos, s[pos - 1] if pos else self._prev, self._in_fence, final)
                if step is not None:
                    start, fence = step
                    self._in_fence ^= fence
                    continue
                name: str | bool | None = None  # code not decided yet: hold from its run
            elif marker in self._strays:
                if self._reasoning.is_text(marker):
                    start = pos + len(marker)
                else:
                    self._text(out, s[:pos])
                    s, start = s[pos + len(marker) :], 0
                continue
            else:
                name = UNIQUE.get(marker)
                if name is None:
                    name = _decide(marker, s, pos + len(marker), final)
            if name is None:  # undecided: hold from the marker on
                self._text(out, s[:pos])
                self._pending = s[pos:]
                return out
            if name is False:
                start = pos + 1
                continue
            from . import get_dialect

            self._text(out, s[:pos])
            self._inner = get_dialect(str(name)).machine(self.ctx)
            rest, self._pending = self._held_ws + s[pos:], ""
            self._held_ws = ""
            out.extend(self._inner.feed(rest))
            if final:
                out.extend(self._inner.close())
                self._inner = _Closed()
            return out

    def _text(self, out: list[Event], text: str) -> None:
        if text:
            self._prev = text[-1]
        body = text.rstrip(WHITESPACE)
        held = self._held_ws
        if body:
            given, self._held_ws = hold_whitespace(text[len(body) :])
            out.append(TextDelta(held + body + given))
            return
        given, self._held_ws = hold_whitespace(held + text)  # whitespace only: the run held grows
        if given:
            out.append(TextDelta(given))


class _Closed:
    def feed(self, text: str) -> list[Event]:
        return []

    def take_plain(self, text: str) -> str | None:
        """No plain-text shortcut (`ToolMachine.take_plain`): every piece takes `feed`."""
        return None

    def close(self) -> list[Event]:
        return []


DIALECTS = [
    Dialect(
        name="auto",
        description="the format the output shows: the first marker only one format writes picks the dialect",
        machine=AutoParser,
        models=(),
        # Kimi-VL-Thinking and k1.5 think in `◁think▷…◁/think▷` and have no tool format of their
        # own: their names select this dialect, which reads those markers too (SGLang's `kimi`).
        reasoning=ReasoningSyntax(pairs=(*DEFAULT_PAIRS, KIMI_VL_THINK)),
    )
]


__all__ = [
    "DIALECTS",
    "SHARED",
    "UNIQUE",
    "AutoParser",
]
