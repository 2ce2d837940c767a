"""`auto`: the dialect the output itself shows, when the served model name selects none.

The text streams as content until the first marker that picks a format; from there on that
dialect's parser takes the rest of the output. Each format declares its markers on its `Dialect`
(`markers`, `shared_markers`); the tables here are read from the registry once, as this module
is imported. Most markers are a format's own special token or tag (`UNIQUE`). A marker that
several formats write, or that is a plain word prose may use, picks a format only by what follows
it (`SHARED`, after optional whitespace): `<tool_call>` followed by
`{` is hermes, by `<function=` qwen3_coder, by a name GLM; `<function=` followed by `name>{` is
llama_function, by `name>` and a `<parameter=` line qwen3_coder; `<tool_calls>` followed by `[`
is Jamba, by `{` MiniMax-M1; `<answer>` followed by `<tool_calls>[` is Hunyuan-A13B; `<function_calls>`
followed by `name(` is Olmo 3; `<function_call>` followed by `{` is granite-20b-functioncalling.
Anything else after it, and a marker undecided after `_LOOKAHEAD` characters, is text.

Formats with no marker of their own are not detected (their model names select them): a bare
JSON call array (xLAM, Granite 3.0 decoded without its token), `functools[` (Phi-4-mini and
FireFunction v2 both write it as plain text, and read the space before it differently),
`<tool_call>[` (Granite 3.1-3.3 and xLAM, which differ on the closing tag), Functionary v3.2's
`>>>name` and bare first line, and Granite's plain-text thinking. Leading reasoning is split off
before, as for every dialect, in `<think>` and the other markers of `REASONING`. A marker in
code (a fenced block, an inline code span: `inline_code`) is text and picks nothing.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from .._events import Event, TextDelta
from .._inline_code import FENCE, TICK
from .._reasoning import DEFAULT_PAIRS, ReasoningInText, ReasoningSyntax
from .._textscan import WHITESPACE, hold_whitespace
from ._base import Dialect, ParseContext, ToolMachine
from ._code_aware import CodeAwareScanner
from ._dialect import SharedMarker


@dataclass(frozen=True)
class Lookahead:
    """What must follow a shared marker for it to pick a format.

    `pattern` is matched right after the marker; the named group that took part names the dialect
    (one group a dialect, around the `then` patterns it declares). `starts` matches the characters
    that may begin the text after the whitespace: any other, and the marker is text at once rather
    than after `_LOOKAHEAD`.
    """

    pattern: re.Pattern[str]
    starts: re.Pattern[str]

    def decide(self, text: str, at: int, final: bool) -> str | bool | None:
        """The dialect the marker starts (what follows it is `text[at:]`), `None` while undecided,
        `False` when it starts none. (`at`, not a slice: a rest copied at every marker of a long
        text is quadratic.)"""
        m = self.pattern.match(text, at)
        if m is not None:
            return str(m.lastgroup)
        first = _SPACE.match(text, at).end()  # type: ignore[union-attr]  # (it matches "" at least)
        if first < len(text) and self.starts.match(text, first) is None:
            return False
        return False if final or len(text) - at > _LOOKAHEAD else None


_SPACE = re.compile(r"[ \t\r\n]*")
_LOOKAHEAD = 128  # a shared marker still undecided after this much text is text

KIMI_VL_THINK = ("◁think▷", "◁/think▷")


class AutoParser:
    """Content streams until a marker picks the dialect, which then parses the rest."""

    # A dialect whose markers pick nothing (`mismatch.py`: the one in force already read them).
    passed_over: str | None = None

    def __init__(self, ctx: ParseContext) -> None:
        self.ctx = ctx
        self.chosen: str | None = None  # the dialect the output showed, once a marker picks one
        self._inner: ToolMachine | None = None
        self._pending = ""
        self._held_ws = ""  # trailing whitespace: the chosen dialect decides whether it is layout
        self._reasoning = ReasoningInText(ctx.stray_pairs)  # a stray closing marker is dropped
        self._strays = self._reasoning.markers
        self._scanner = CodeAwareScanner((*UNIQUE, *SHARED, FENCE, TICK, *self._strays))
        self._prev = "\n"  # the character before `_pending`: the output starts a line
        self._sent = ""  # the last text that went out (the chosen dialect's parser is told it)

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
            pos, marker = self._scanner.next_stop(s, final, self._prev, start)
            name: str | bool | None
            if marker is None:  # all text, or text up to what must wait for more
                name = None
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
                    name = SHARED[marker].decide(s, pos + len(marker), final)
                if name and name == self.passed_over:
                    name = False
            if name is None:  # undecided: hold from the marker (or the partial one, the code) on
                self._text(out, s[:pos])
                self._pending = s[pos:]
                return out
            if name is False:
                start = pos + 1
                continue
            self._text(out, s[:pos])
            rest, self._pending = self._held_ws + s[pos:], ""
            self._held_ws = ""
            self._choose(str(name), rest, out, final)
            return out

    def _choose(self, name: str, rest: str, out: list[Event], final: bool) -> None:
        """From now on the dialect `name` parses the output: `rest` (the text from its marker on,
        with the whitespace held before it) first."""
        from . import get_dialect

        self.chosen = name
        self.ctx.text_before = self._sent
        self._inner = get_dialect(name).machine(self.ctx)
        out.extend(self._inner.feed(rest))
        if final:
            out.extend(self._inner.close())
            self._inner = _Closed()

    def _text(self, out: list[Event], text: str) -> None:
        if text:
            self._prev = text[-1]
        body = text.rstrip(WHITESPACE)
        held = self._held_ws
        if body:
            given, self._held_ws = hold_whitespace(text[len(body) :])
            self._sent = held + body + given
            out.append(TextDelta(self._sent))
            return
        given, self._held_ws = hold_whitespace(held + text)  # whitespace only: the run held grows
        if given:
            self._sent = given
            out.append(TextDelta(given))


class _Closed:
    def feed(self, text: str) -> list[Event]:
        return []

    def take_plain(self, text: str) -> str | None:
        """No plain-text shortcut (`ToolMachine.take_plain`): every piece takes `feed`."""
        return None

    def close(self) -> list[Event]:
        return []


def detection_tables(dialects: Iterable[Dialect]) -> tuple[dict[str, str], dict[str, Lookahead]]:
    """`UNIQUE` and `SHARED` from the markers `dialects` declare (in the registry's order: where
    two dialects share a marker, the first whose `then` matches picks).

    A marker declared by two dialects as their own, or as one's own and another's shared, is an
    error: it could not pick either."""
    unique: dict[str, str] = {}
    shared: dict[str, dict[str, list[SharedMarker]]] = {}
    for dialect in dialects:
        for marker in dialect.markers:
            if marker in unique:
                raise ValueError(f"{marker!r} is declared as their own by {unique[marker]} and {dialect.name}")
            unique[marker] = dialect.name
        for declared in dialect.shared_markers:
            shared.setdefault(declared.marker, {}).setdefault(dialect.name, []).append(declared)
    if both := unique.keys() & shared.keys():
        raise ValueError(f"markers declared both as a format's own and as shared: {sorted(both)}")
    lookaheads = {
        marker: Lookahead(
            re.compile("|".join(f"(?P<{name}>{_either(d.then for d in found)})" for name, found in by_name.items())),
            re.compile(_either(d.starts for found in by_name.values() for d in found)),
        )
        for marker, by_name in shared.items()
    }
    return unique, lookaheads  # (in any order: the scanner reads the longest of two at one place)


def _either(patterns: Iterable[str]) -> str:
    return "|".join(f"(?:{pattern})" for pattern in patterns)


def _other_dialects() -> list[Dialect]:
    """Every registered dialect but this module's, in the registry's order. (This module is one
    of the registry's, being imported: the registry is not built yet, so its modules are read.)"""
    from . import _MODULES

    return [
        dialect
        for module in _MODULES
        if module != __name__.rpartition(".")[2]
        for dialect in importlib.import_module(f"{__package__}.{module}").DIALECTS
    ]


_OTHERS = _other_dialects()
UNIQUE, SHARED = detection_tables(_OTHERS)
# The reasoning markers no other text writes, of the formats detected here (each declares its
# own: `Dialect.detected_reasoning`), and Kimi-VL's, whose models have no tool format of their
# own: read at the start of the output, as every dialect's.
REASONING = ReasoningSyntax(
    pairs=(*DEFAULT_PAIRS, KIMI_VL_THINK, *dict.fromkeys(p for d in _OTHERS for p in d.detected_reasoning))
)

DIALECTS = [
    Dialect(
        name="auto",
        description="the format the output shows: the first marker only one format writes picks the dialect",
        machine=AutoParser,
        models=(),
        # Kimi-VL-Thinking and k1.5 think in `◁think▷…◁/think▷` and have no tool format of their
        # own: their names select this dialect, which reads those markers too (SGLang's `kimi`).
        reasoning=REASONING,
    )
]


__all__ = [
    "DIALECTS",
    "REASONING",
    "SHARED",
    "UNIQUE",
    "AutoParser",
    "Lookahead",
    "detection_tables",
]
