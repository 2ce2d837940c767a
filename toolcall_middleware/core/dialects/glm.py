"""`glm45`, `glm47` and `poolside_v1`: GLM's `<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>`.

GLM-4.5, 4.5-Air and 4.6 (`glm45`) put the name, each key and each value on a line of its own;
GLM-4.7, 4.7-Flash and 5.x (`glm47`) write the same markup without newlines, and a call with no
arguments as `<tool_call>NAME</tool_call>`:

```
<tool_call>get_weather
<arg_key>city</arg_key>
<arg_value>Paris</arg_value>
</tool_call>
```
`<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>` (glm47).

Poolside's Laguna models (`poolside_v1`) write GLM-4.5's layout. The dialects read both layouts:
whitespace between the markers is layout. A value is raw text (newlines, quotes and backslashes
as written, surrounding whitespace kept). Unlike qwen3_coder it
is JSON-decoded by default: a property the schema types is typed by it (`schema.coerce_value`, so
a string property keeps `0042` and `{"a": 1}` as text); an untyped one is JSON, else a Python
literal (`{'a': True}`, `'x'`, `None`), else the text.

What models write, and how it is read:
- A value may mention the markers. `</arg_value>` ends it only when whitespace and then
  `<arg_key>` or `</tool_call>` follow (held back until that is known); `</tool_call>` inside a
  value is text, unless the output ends without the value's `</arg_value>`: then the model forgot
  it, the call ended at the value's first `</tool_call>`, and what follows is read again.
- A name is written right after `<tool_call>`, with no spaces in it; anything else (a mention of
  `<tool_call>` in prose) is text at once.
- A key without its `<arg_value>` is malformed: the call's raw text comes back as content, never
  as a call with fewer arguments. Output that ends inside a call is a `TruncatedCall`.
- Whitespace around a call is layout (`I'll check. <tool_call>…` gives `I'll check.`).

Reasoning is `<think>…</think>`; GLM-4.7 and later templates open it themselves, and a
`<tool_call>` before `</think>` ends it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from typing import Any

from .._events import Event
from .._reasoning import ReasoningSyntax
from .._schema import coerce_value, decode_json, schema_types
from .._textscan import WHITESPACE, Match, find_first, partial_marker_len
from ._base import BlockItem, BlockParser, Call, Dialect, Fragment, Opened, ParseContext, dump_arguments
from ._dialect import SharedMarker
from ._rendering import CallToRender, Renderer, ToolSpec, dumps, join_turn, results_joined, tool_response, value_text
from ._streaming import member_fragment
from .call_grammar import Args, CallGrammar, Lit, Name

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
KEY = "<arg_key>"
KEY_END = "</arg_key>"
VALUE = "<arg_value>"
VALUE_END = "</arg_value>"

_NAME_RUN = re.compile(r"[^ \t\r\n<>]*")
_WS = re.compile(r"[ \t\r\n]*")
_MARKER_MAX = len(VALUE_END)  # the longest marker a key or value can hold back
_NAME_MAX = 256  # a longer "name" is prose that happens to follow `<tool_call>`
# Untyped values that `ast.literal_eval` may read: containers, quoted strings and the constants.
# Bare Python numbers (`123_456`, `0x1F`) stay text: SGLang turned the id `123_456` into 123456.
_PY_LITERAL_START = ("{", "[", "(", "'", '"')
_PY_CONSTANTS = ("True", "False", "None")


class _State(Enum):
    NAME = "name"
    NAME_END = "name_end"  # the marker after the name, in a format that writes one (`<tool_sep>`)
    AFTER_NAME = "after_name"  # `<arg_key>` or `</tool_call>` comes next
    KEY = "key"
    AFTER_KEY = "after_key"  # `<arg_value>` must come next
    VALUE = "value"
    AFTER_VALUE = "after_value"  # after a `</arg_value>` in a value: is it the real end?
    SKIP = "skip"  # malformed: up to `</tool_call>`, then all of it is text
    DONE = "done"


def _expect(s: str, i: int, markers: tuple[str, ...]) -> tuple[Match, str]:
    """Does `s[i:]` start with one of `markers`? `MAYBE` while `s` ends inside one."""
    maybe = False
    for marker in markers:
        chunk = s[i : i + len(marker)]
        if chunk == marker:
            return Match.YES, marker
        maybe = maybe or marker.startswith(chunk)
    return (Match.MAYBE if maybe else Match.NO), ""


def typed_value(raw: str, schema: Mapping[str, Any] | None) -> Any:
    """The JSON value of a raw `<arg_value>` text: schema-typed, else JSON or a Python literal."""
    if schema_types(schema):
        return coerce_value(raw, schema, untyped="json")
    try:
        return decode_json(raw)
    except (ValueError, RecursionError):
        pass
    text = raw.strip(WHITESPACE)
    if text.startswith(_PY_LITERAL_START) or text in _PY_CONSTANTS:
        return coerce_value(raw, None, untyped="json")
    return raw


Typing = Callable[[str, Mapping[str, Any] | None], Any]


class GlmBlock:
    """One call, after its `<tool_call>`; every piece is scanned once (bar a held-back marker).

    `name_end`: the marker a format writes between the name and the arguments (Hunyuan's
    `<tool_sep>`), `""` for GLM's none. `typing`: a raw value and its property schema to the
    JSON value (`typed_value`, GLM's JSON-decoding default).
    """

    def __init__(self, ctx: ParseContext, *, name_end: str = "", typing: Typing = typed_value) -> None:
        self._ctx = ctx
        self._name_end = name_end
        self._typing = typing
        self._state = _State.NAME
        self._carry = ""  # an unfinished marker, scanned again with the next piece
        self._raw: list[str] = []  # everything fed: the text of a malformed or unfinished call
        self._raw_len = 0
        self._name: list[str] = []
        self._name_len = 0
        self._key = ""
        self._text: list[str] = []  # the key or value being read
        self._text_len = 0
        self._layout: list[str] = []  # whitespace after a `</arg_value>` that may be value text
        self._cut: tuple[int, int] | None = None  # value length and raw offset at its first `</tool_call>`
        self._args: dict[str, Any] = {}
        self._items: list[BlockItem] = []
        self._streaming = False  # incremental: each typed argument goes out as it is committed

    def feed(self, text: str) -> str | None:
        self._raw.append(text)
        self._raw_len += len(text)
        if self._state is _State.VALUE and not self._carry and "<" not in text:
            self._add(text)  # the bulk of a long value: no marker can start here
            return None
        s = self._carry + text
        self._carry = ""
        end = self._run(s)
        return None if end is None else s[end:]

    def take(self) -> list[BlockItem]:
        items, self._items = self._items, []
        return items

    def finish(self) -> str | None:
        return OPEN + "".join(self._raw)

    end_marker = CLOSE  # (`closed_at_stop`)

    def end_of_output(self) -> str | None:
        """The output ended inside the block: settle it if that is possible, returning the text
        that follows it (to be read again); `None` when the call is unfinished."""
        if self._state is _State.SKIP:
            self._items.append(OPEN + "".join(self._raw))
            self._state = _State.DONE
            return ""
        if self._state is _State.VALUE and self._cut is not None:
            # No `</arg_value>` came: the value ended at its first `</tool_call>` after all.
            value_len, offset = self._cut
            self._text = ["".join(self._text)[:value_len]]
            self._commit()
            self._complete()
            return "".join(self._raw)[offset:]
        return None

    # -- the state machine -----------------------------------------------------------------

    def _run(self, s: str) -> int | None:
        """Scan `s` (the carry and the new piece); the offset where the block ends, or `None`."""
        i, n = 0, len(s)
        while i < n:
            state = self._state
            if state is _State.NAME:
                run = _NAME_RUN.match(s, i)
                end = run.end() if run else i
                if end > i:
                    self._name.append(s[i:end])
                    self._name_len += end - i
                    i = end
                if self._name_len > _NAME_MAX:
                    return self._malformed(s, i)
                if i == n:
                    return None
                if not self._name or s[i] == ">":
                    return self._malformed(s, i)  # `<tool_call>` not followed by a name
                if self._name_end:
                    self._state = _State.NAME_END
                    continue
                self._named()
            elif state is _State.NAME_END:
                i = self._skip_ws(s, i, keep=False)
                if i == n:
                    return None
                verdict, marker = _expect(s, i, (self._name_end,))
                if verdict is Match.MAYBE:
                    self._carry = s[i:]
                    return None
                if verdict is Match.NO:
                    return self._malformed(s, i)
                i += len(marker)
                self._named()
            elif state is _State.AFTER_NAME or state is _State.AFTER_KEY:
                i = self._skip_ws(s, i, keep=False)
                if i == n:
                    return None
                wanted = (KEY, CLOSE) if state is _State.AFTER_NAME else (VALUE,)
                verdict, marker = _expect(s, i, wanted)
                if verdict is Match.MAYBE:
                    self._carry = s[i:]
                    return None
                if verdict is Match.NO:
                    if state is _State.AFTER_NAME:
                        return self._malformed(s, i)
                    self._state = _State.SKIP  # a key without a value: find the call's end
                    continue
                i += len(marker)
                if marker == CLOSE:
                    return self._complete(i)
                self._state = _State.KEY if marker == KEY else _State.VALUE
            elif state is _State.KEY:
                hit = find_first(s, (KEY_END, CLOSE), i)
                if hit is None:
                    self._hold(s, i, (KEY_END, CLOSE))
                    return None
                pos, marker = hit
                self._add(s[i:pos])
                i = pos + len(marker)
                if marker == CLOSE:
                    return self._malformed(s, i)
                self._key = "".join(self._text).strip(WHITESPACE)
                self._text, self._text_len = [], 0
                self._state = _State.AFTER_KEY if self._key else _State.SKIP
            elif state is _State.VALUE:
                hit = find_first(s, (VALUE_END, CLOSE), i)
                if hit is None:
                    self._hold(s, i, (VALUE_END, CLOSE))
                    return None
                pos, marker = hit
                self._add(s[i:pos])
                i = pos + len(marker)
                if marker == CLOSE:
                    if self._cut is None:
                        self._cut = (self._text_len, self._raw_len - n + i)
                    self._add(CLOSE)
                else:
                    self._layout = []
                    self._state = _State.AFTER_VALUE
            elif state is _State.AFTER_VALUE:
                i = self._skip_ws(s, i, keep=True)
                if i == n:
                    return None
                verdict, marker = _expect(s, i, (KEY, CLOSE))
                if verdict is Match.MAYBE:
                    self._carry = s[i:]
                    return None
                if verdict is Match.NO:
                    # Not followed by what follows a value: the `</arg_value>` was value text.
                    self._add(VALUE_END)
                    for ws in self._layout:
                        self._add(ws)
                    self._state = _State.VALUE
                    continue
                self._commit()
                i += len(marker)
                if marker == CLOSE:
                    return self._complete(i)
                self._state = _State.KEY
            else:  # SKIP
                pos = s.find(CLOSE, i)
                if pos < 0:
                    keep = partial_marker_len(s[i:], (CLOSE,))
                    self._carry = s[n - keep :] if keep else ""
                    return None
                return self._malformed(s, pos + len(CLOSE))
        return None

    def _named(self) -> None:
        """The name is read: the arguments (or the call's end) come next."""
        self._state = _State.AFTER_NAME
        if self._ctx.incremental:
            self._streaming = True
            self._items.append(Opened("".join(self._name)))

    def _skip_ws(self, s: str, i: int, *, keep: bool) -> int:
        run = _WS.match(s, i)
        end = run.end() if run else i
        if keep and end > i:
            self._layout.append(s[i:end])
        return end

    def _hold(self, s: str, i: int, markers: tuple[str, ...]) -> None:
        """No marker in `s[i:]`: it is key or value text, but for a possible marker prefix."""
        tail = s[i:]
        # Every marker starts with `<`: without one near the end nothing is held (the common case).
        lt = tail.find("<", max(0, len(tail) - _MARKER_MAX + 1))
        keep = 0 if lt < 0 else partial_marker_len(tail[lt:], markers)
        self._add(tail[: len(tail) - keep])
        self._carry = tail[len(tail) - keep :]

    def _add(self, text: str) -> None:
        if text:
            self._text.append(text)
            self._text_len += len(text)

    def _commit(self) -> None:
        name = "".join(self._name)
        raw = "".join(self._text)
        typed = self._typing(raw, self._ctx.property_schema(name, self._key))
        if self._streaming:
            piece = member_fragment(self._args, self._key, typed)
            self._streaming = piece is not None  # a repeated key: abandoned at the call's end
            if piece is not None:
                self._items.append(Fragment(piece))
        self._args[self._key] = typed
        self._text, self._text_len, self._cut = [], 0, None

    def _complete(self, end: int = 0) -> int:
        self._items.append(Call(name="".join(self._name), arguments=dump_arguments(self._args)))
        self._state = _State.DONE
        return end

    def _malformed(self, s: str, end: int) -> int:
        """Not a call: its raw text up to `s[end]` comes back as content."""
        raw = "".join(self._raw)
        self._items.append(OPEN + raw[: len(raw) - (len(s) - end)])
        self._state = _State.DONE
        return end


class GlmParser(BlockParser):
    openers = (OPEN,)
    strip_around_blocks = True  # `I'll check. <tool_call>` and `\n<tool_call>`: the space is layout

    def open_block(self, opener: str) -> GlmBlock:
        return GlmBlock(self.ctx)

    def close(self) -> list[Event]:
        out: list[Event] = []
        # A block that can be settled at the end (a forgotten `</arg_value>`, a malformed call)
        # hands back the text after it, which may hold further calls.
        while isinstance(self._block, GlmBlock):
            rest = self._block.end_of_output()
            if rest is None:
                break
            self._take(out)
            self._block = None
            self._pending = rest
            self._run(out, final=True)
        out.extend(super().close())
        return out


_SYNTAX = ReasoningSyntax(implicit_ends=((OPEN,),))


def _template_opens_think(model: str | None, thinking: bool | None) -> bool:
    # GLM-4.7 and 5.x templates end with `<|assistant|><think>` unless thinking is off. Without a
    # served model nor a thinking flag nothing says a template was used: the output is read as is.
    return thinking is True or (thinking is None and model is not None)


# -- request side: the chat template's text --------------------------------------------------------


def _glm_calls(newlines: bool) -> Callable[[Sequence[CallToRender]], str]:
    nl = "\n" if newlines else ""

    def render(calls: Sequence[CallToRender]) -> str:
        return nl.join(
            f"<tool_call>{c.name}{nl}"
            + "".join(
                f"<arg_key>{k}</arg_key>{nl}<arg_value>{value_text(v)}</arg_value>{nl}" for k, v in c.arguments.items()
            )
            + "</tool_call>"
            for c in calls
        )

    return render


def _glm_tools(newlines: bool) -> Callable[[Sequence[ToolSpec], bool], str]:
    nl = "\n" if newlines else ""

    def render(tools: Sequence[ToolSpec], parallel: bool) -> str:
        return (
            "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
            "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
            + "\n".join(dumps(t.chat_shape()) for t in tools)
            + "\n</tools>\n\nFor each function call, output the function name and arguments within the following "
            f"XML format:\n<tool_call>{{function-name}}{nl}<arg_key>{{arg-key-1}}</arg_key>{nl}"
            f"<arg_value>{{arg-value-1}}</arg_value>{nl}<arg_key>{{arg-key-2}}</arg_key>{nl}"
            f"<arg_value>{{arg-value-2}}</arg_value>{nl}...{nl}</tool_call>"
        )

    return render


GLM45 = Renderer(calls=_glm_calls(True), tools=_glm_tools(True), results=results_joined(tool_response))
GLM47 = Renderer(
    calls=_glm_calls(False),
    tools=_glm_tools(False),
    results=results_joined(tool_response),
    assistant=lambda c, k: join_turn(c, k, ""),
)


# What `_glm_calls` writes, as grammars: GLM-4.5/4.6 (and Laguna) with newlines, GLM-4.7 without.
GLM45_GRAMMAR = CallGrammar(
    call=(Lit(OPEN), Name(), Lit("\n"), Args(xml=(KEY, KEY_END + "\n" + VALUE, VALUE_END + "\n")), Lit(CLOSE)),
    separator="\n",
    trigger=OPEN,
)
GLM47_GRAMMAR = CallGrammar(
    call=(Lit(OPEN), Name(), Args(xml=(KEY, KEY_END + VALUE, VALUE_END)), Lit(CLOSE)),
    trigger=OPEN,
)


DIALECTS = [
    Dialect(
        name="glm45",
        shared_markers=(
            SharedMarker(OPEN, r"[ \t\r\n]*[A-Za-z_][\w.\-]*\n[ \t\r\n]*(?:<arg_key>|</tool_call>)", "[A-Za-z_]"),
        ),
        description="<tool_call>f\\n<arg_key>k</arg_key>\\n<arg_value>v</arg_value>\\n</tool_call>: GLM-4.5, 4.6",
        machine=GlmParser,
        renderer=GLM45,
        grammar=GLM45_GRAMMAR,
        incremental=True,
        models=(r"glm-?4[.p][56]",),
        reasoning=_SYNTAX,
    ),
    Dialect(
        name="glm47",
        # (read after glm45's: a name with a line break after it is GLM-4.5's)
        shared_markers=(
            SharedMarker(OPEN, r"[ \t\r\n]*[A-Za-z_][\w.\-]*[ \t\r\n]*(?:<arg_key>|</tool_call>)", "[A-Za-z_]"),
        ),
        description="<tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>: GLM-4.7, 5.x",
        machine=GlmParser,
        renderer=GLM47,
        grammar=GLM47_GRAMMAR,
        incremental=True,
        models=(r"glm-?4[.p]7", r"glm-?(?:[5-9]|[1-9][0-9])(?![0-9])"),
        reasoning=_SYNTAX,
        prefills_reasoning=_template_opens_think,
    ),
    # Poolside's Laguna models (vLLM and SGLang `poolside_v1`) write GLM-4.5's layout, and the
    # engines read it as GLM's: a string property's value verbatim, any other JSON-decoded.
    Dialect(
        name="poolside_v1",
        description="<tool_call>f\\n<arg_key>k</arg_key>\\n<arg_value>v</arg_value>\\n</tool_call>: Poolside Laguna",
        machine=GlmParser,
        renderer=GLM45,
        grammar=GLM45_GRAMMAR,
        incremental=True,
        models=(r"laguna", r"poolside"),
        reasoning=ReasoningSyntax(pairs=(("<think>", "</think>"),)),
    ),
]


__all__ = [
    "CLOSE",
    "DIALECTS",
    "GLM45",
    "GLM47",
    "KEY",
    "KEY_END",
    "OPEN",
    "VALUE",
    "VALUE_END",
    "GlmBlock",
    "GlmParser",
    "typed_value",
]
