"""What a block is: the part of the output after a format's opening marker, as a dialect reads it.

`BlockParser` (`base.py`) finds an opening marker in the text and feeds what follows to the
dialect's `Block` until the block says where it ends. The block reports the calls it holds, the
raw text of malformed ones (which becomes content) and, for incremental streaming, each call's
name (`Opened`) and the certain part of its arguments (`Fragment`) as they arrive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ._dialect import Call


@dataclass(frozen=True, slots=True)
class Opened:
    """Incremental streaming: the current call's name is known (its `ToolCallStart` may go out)."""

    name: str
    id: str | None = None


@dataclass(frozen=True, slots=True)
class Fragment:
    """Incremental streaming: argument text of the opened call that is now certain.

    The fragments of a call are a prefix of the final `Call.arguments`; a block that cannot know
    that (repair, schema coercion, a duplicate key) stops sending fragments, and `BlockParser`
    abandons a call whose final arguments do not continue what was streamed.
    """

    text: str


BlockItem = Call | str | Opened | Fragment


class Block(Protocol):
    """The part of the output after an opening marker, up to the end of its calls.

    A block may also have `size`: the characters it holds (for `max_call_chars`), where that is
    not simply what it was fed.
    """

    def feed(self, text: str) -> str | None:
        """Consume text; return what follows the block's end, or `None` while it is still open."""
        ...

    def take(self) -> Sequence[BlockItem]:
        """Calls completed since the last `take`, and raw text of malformed ones (shown as content).

        With `ParseContext.incremental`, a block that supports it also reports, in text order,
        `Opened` when a call's name is known and `Fragment`s of its arguments; the call then ends
        with its `Call`, or breaks with its raw text (see `BlockParser._take`).
        """
        ...

    def finish(self) -> str | None:
        """The output ended inside the block: return the raw text of the unfinished call, if any.

        Text that the block held after its last complete call may be left for a last `take`.
        """
        ...


__all__ = ["Block", "BlockItem", "Fragment", "Opened"]
