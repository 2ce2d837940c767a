"""`functionary_v3_2`: MeetKai Functionary v3.2 (v3.1's `<function=f>{…}</function>` is `llama_function`).

```
all
I'll look that up.>>>get_weather
{"city": "Paris"}>>>get_time
{"tz": "UTC"}
```

The answer is a run of segments, each opened by `>>>` and a recipient line: `all` is text for the
user, any other recipient a call whose JSON arguments follow on the next line. The template
opens the first segment itself (the prompt ends with `>>>`), so the output starts with a bare
recipient line, `all\\n…` or `NAME\\n{…}`, as llama.cpp's FUNCTIONARY_V3_2 parser reads it. The
recipient lines are markup; a segment whose arguments are not a JSON object is text as written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .._events import Event
from .._reasoning import ReasoningSyntax
from ._base import BlockItem, BlockParser, Call, Dialect, ParseContext, dump_arguments
from ._json_calls import JsonCallsBlock, JsonCallsSyntax
from ._rendering import Renderer, ToolSpec, dumps, join_turn
from .call_grammar import Args, CallGrammar, Lit, Name

OPEN = ">>>"
TEXT_RECIPIENT = "all"
_NAME = re.compile(r"[A-Za-z_][\w.:\-]*")  # names as the tool list spells them (`ns:get`)
_NAME_CHARS = re.compile(r"[\w.:\-]*")
_NAME_MAX = 256  # a longer first line is not a recipient


class FunctionaryBlock:
    """After `>>>`: the recipient line, then (for a call) its JSON arguments object."""

    def __init__(self, opener: str) -> None:
        self._opener = opener
        self._head: list[str] = []
        self._size = 0
        self._args: JsonCallsBlock | None = None
        self._items: list[BlockItem] = []

    def feed(self, text: str) -> str | None:
        if self._args is not None:
            return self._args.feed(text)
        # The recipient line is name characters up to its newline. A character that cannot be in
        # it ends the segment as text there, whatever piece it came in: what follows it is text
        # read again for `>>>`, as the same text would be were it split before that character.
        end = _NAME_CHARS.match(text).end()  # type: ignore[union-attr]  # (it matches "" at least)
        self._head.append(text[:end])
        self._size += end
        if end < len(text) and text[end] != "\n":
            return self._malformed(text[end:])  # not a recipient line: text
        if end == len(text):
            return self._malformed("") if self._size > _NAME_MAX else None
        name = "".join(self._head)
        rest = text[end + 1 :]
        if name == TEXT_RECIPIENT:
            return rest  # the user's text follows
        if _NAME.fullmatch(name) is None or len(name) > _NAME_MAX:
            return self._malformed("\n" + rest)
        self._args = JsonCallsBlock(f"{self._opener}{name}\n", JsonCallsSyntax(shape="object", read=_reader(name)))
        return self._args.feed(rest) if rest else None

    def _malformed(self, rest: str) -> str:
        self._items.append(self._opener + "".join(self._head))
        self._head = []
        return rest

    def take(self) -> list[BlockItem]:
        items, self._items = self._items, []
        return items + self._args.take() if self._args is not None else items

    def finish(self) -> str | None:
        if self._args is not None:
            if not self._opener and not self._args.started:
                # A bare first line and nothing after it: a line of text, not a call begun.
                raw = self._args.finish()
                self._items.append(raw or "")
                return None
            return self._args.finish()
        return self._opener + "".join(self._head)


def _reader(name: str) -> Any:
    return lambda obj: Call(name=name, arguments=dump_arguments(obj)) if isinstance(obj, dict) else None


class FunctionaryParser(BlockParser):
    """The segments after the first; `FunctionaryMachine` reads the first recipient line."""

    openers = (OPEN,)

    def __init__(self, ctx: ParseContext, first: str = OPEN) -> None:
        super().__init__(ctx)
        self._first_opener = first

    def open_block(self, opener: str) -> FunctionaryBlock:
        first, self._first_opener = self._first_opener, OPEN
        return FunctionaryBlock(first)


class FunctionaryMachine:
    """The output opens a segment without `>>>`: hold its first line, then hand the rest on."""

    def __init__(self, ctx: ParseContext) -> None:
        self._ctx = ctx
        self._head = ""
        self._parser: FunctionaryParser | None = None

    def feed(self, text: str) -> list[Event]:
        if self._parser is not None:
            return self._parser.feed(text)
        self._head += text
        line, newline, _ = self._head.partition("\n")
        if not newline and len(line) <= _NAME_MAX and (not line or _NAME.fullmatch(line) or line == OPEN[: len(line)]):
            return []  # (the first line may still be a recipient)
        return self._start(final=False)

    def take_plain(self, text: str) -> str | None:
        """The parser's shortcut once the first line is read (`ToolMachine.take_plain`)."""
        return None if self._parser is None else self._parser.take_plain(text)

    def close(self) -> list[Event]:
        out = self._start(final=True) if self._parser is None else []
        assert self._parser is not None
        return out + self._parser.close()

    def _start(self, final: bool) -> list[Event]:
        head, self._head = self._head, ""
        line = head.partition("\n")[0]
        bare = "\n" in head and _NAME.fullmatch(line) is not None and not head.startswith(OPEN)
        # A bare recipient line opens the first segment, as `>>>` opens the others.
        self._parser = FunctionaryParser(self._ctx, first="" if bare else OPEN)
        return self._parser.feed(OPEN + head if bare else head)


def _tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    # Functionary v3.2's template: the tools as a TypeScript namespace in its own words; here
    # their JSON schemas, with the template's preamble.
    listing = "\n".join(dumps(t.function()) for t in tools)
    return (
        "You are capable of executing available function(s) if required.\nOnly execute function(s) when "
        "absolutely necessary.\nAsk for the required input to:recipient==all\nUse JSON for function arguments.\n"
        "Respond in this format:\n>>>${recipient}\n${content}\nAvailable functions:\n// Supported function "
        "definitions that should be called when necessary.\nnamespace functions {\n" + listing + "\n} // namespace "
        "functions"
    )


RENDERER = Renderer(
    calls=lambda calls: "".join(f"{OPEN}{c.name}\n{dumps(dict(c.arguments))}" for c in calls),
    tools=_tools,
    assistant=lambda content, calls: join_turn(f"{TEXT_RECIPIENT}\n{content}" if content else "", calls, ""),
)

# The template writes the first segment's `>>>`: the output's first call opens with the name.
# Under `auto` the output is the calls, or `all\n` and text in which `>>>` opens a call.
FUNCTIONARY_GRAMMAR = CallGrammar(call=(Lit(OPEN), Name(), Lit("\n"), Args()), opened=OPEN, prose=TEXT_RECIPIENT + "\n")

DIALECTS = [
    Dialect(
        name="functionary_v3_2",
        description=">>>f\\n{json} segments (all\\ntext for the user): Functionary v3.2",
        machine=FunctionaryMachine,
        models=(r"functionary.*v3\.2", r"functionary-(?:small|medium)-v3\.2"),
        reasoning=ReasoningSyntax(),
        renderer=RENDERER,
        grammar=FUNCTIONARY_GRAMMAR,
    )
]

__all__ = [
    "DIALECTS",
    "FUNCTIONARY_GRAMMAR",
    "OPEN",
    "RENDERER",
    "TEXT_RECIPIENT",
    "FunctionaryBlock",
    "FunctionaryMachine",
    "FunctionaryParser",
]
