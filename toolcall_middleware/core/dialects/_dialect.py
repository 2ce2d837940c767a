"""What a dialect is: the record each format declares, and what its parser reads and returns.

- `Dialect`: a registered format, declared whole in its own module (parser, reasoning syntax,
  incremental streaming, request-side renderer).
- `ToolMachine`: a dialect's parser for the content stream.
- `ParseContext`: what a parser knows of the request.
- `Call`: a complete call as a parser found it.
- `SharedMarker`: a marker other formats write too, and what must follow it to pick this one.

(`base.py` re-exports these for the dialect modules that import them from there.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .._events import Event
from .._reasoning import ReasoningSyntax

if TYPE_CHECKING:
    from ._rendering import Renderer
    from .call_grammar import CallGrammar


@dataclass(frozen=True, slots=True)
class Call:
    """A complete call as a block found it; `arguments` is the JSON text of an object."""

    name: str
    arguments: str
    id: str | None = None


@dataclass
class ParseContext:
    """What a parser knows of the request: the offered tools' parameter schemas, and the model."""

    tools: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    model: str | None = None
    next_index: int = 0
    incremental: bool = False  # blocks that can report `Opened` and `Fragment` items do so
    model_ids: bool = True  # False: calls go out without the id the model wrote (the emitter mints one)
    stopped: bool = False  # the output ended because the model stopped, not cut off (`StreamParser.close`)
    # A call still open that holds more characters than this is let go (`OversizedCall`): what
    # a parser holds of a call is bounded while it arrives, not only checked at its end. (Each
    # character is at least one UTF-8 byte: a call over it is over a byte limit of the figure.)
    max_call_chars: int | None = None
    # The reasoning pairs whose closing marker is markup wherever it stands
    # (`ReasoningSyntax.stray_pairs`): the text mode drops one with no opening one before it.
    stray_pairs: tuple[tuple[str, str], ...] = ()
    # The end of the text that went out before this parser took over (`auto` hands the rest of an
    # output to the dialect its marker picks): text after a call is set apart from it as from the
    # parser's own (`BlockParser._set_apart`).
    text_before: str = ""

    def schema_for(self, tool: str) -> Mapping[str, Any] | None:
        return self.tools.get(tool)

    def property_schema(self, tool: str, key: str) -> Mapping[str, Any] | None:
        schema = self.tools.get(tool)
        if not schema:
            return None
        props = schema.get("properties")
        if isinstance(props, Mapping):
            value = props.get(key)
            if isinstance(value, Mapping):
                return value
        return None


class ToolMachine(Protocol):
    """A dialect's parser for the content stream: `feed(text)` and `close()` return events.

    `take_plain(text)` is the fast path's question (`Answer.feed_event`): `feed(text)` for a piece
    the machine can tell at a glance is plain text (its one `TextDelta`'s text, `""` when all of
    it is held back), or `None`, with nothing consumed, for any other piece (then `feed`). A
    machine with no such shortcut returns `None` always (`PendingTextMachine`'s default).
    """

    def feed(self, text: str) -> list[Event]: ...

    def close(self) -> list[Event]: ...

    def take_plain(self, text: str) -> str | None: ...


@dataclass(frozen=True)
class SharedMarker:
    """A marker that several formats write, or that prose may use: it picks the dialect that
    declares it only when what follows it matches `then` (a regular expression matched right after
    the marker, leading whitespace included, with no capturing groups of its own). `starts` is a
    one-character pattern: what the text after the marker's whitespace may begin with for `then`
    to match in the end (any other character, and the marker is text at once)."""

    marker: str
    then: str
    starts: str


def never_prefills(model: str | None, thinking: bool | None) -> bool:
    """`Dialect.prefills_reasoning` of a format whose template never opens the reasoning block."""
    return False


@dataclass(frozen=True)
class Dialect:
    """A registered format, declared whole in its own module: its name, the served models that
    write it, its parser, its reasoning syntax and its request side.

    `models` are lower-case substrings or regular expressions matched against the served model
    name. `machine(ctx)` makes the parser of the content stream. `reasoning`: how the output marks
    reasoning (`None`: the parser reads it itself, as harmony's channels do).
    `prefills_reasoning(model, thinking)` says whether the model's chat template opens the
    reasoning block itself when no generation prompt is given. `renderer` writes the format's
    request side (calls, tool results, the tool manifest; `None` only for `auto`, which is not a
    format to write). `incremental`: the parser streams a call's arguments as they arrive with
    `StreamParser(arguments_streaming="incremental")` (its blocks report `Opened` and `Fragment`);
    the others emit each call whole at its end in either mode.

    `markers` and `shared_markers` are what `auto` (and the watch for another dialect's calls,
    `mismatch.py`) pick the format by: markers only this format writes (its own special tokens
    or tags), and markers it shares, each with what must follow it. A format with neither is not
    detected: only its model names select it. `detected_reasoning`: the format's reasoning pairs
    that no other text writes, which `auto` splits off the start of any output.

    `grammar`: the call syntax as a grammar the host's engine can hold the model to (`constrain`;
    `None`: not declared), built from the same markers as the parser and the renderer.
    """

    name: str
    description: str
    machine: Callable[[ParseContext], ToolMachine]
    models: tuple[str, ...] = ()
    reasoning: ReasoningSyntax | None = field(default_factory=ReasoningSyntax)
    prefills_reasoning: Callable[[str | None, bool | None], bool] = never_prefills
    renderer: Renderer | None = None
    incremental: bool = False
    markers: tuple[str, ...] = ()
    shared_markers: tuple[SharedMarker, ...] = ()
    detected_reasoning: tuple[tuple[str, str], ...] = ()
    grammar: CallGrammar | None = None


__all__ = ["Call", "Dialect", "ParseContext", "SharedMarker", "ToolMachine", "never_prefills"]
