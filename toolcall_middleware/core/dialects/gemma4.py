"""`gemma4`: `<|tool_call>call:NAME{key:<|"|>text<|"|>,n:3,ok:true,x:null,o:{a:[1,2]}}<tool_call|>`.

Gemma 4 writes arguments in its own object notation, not JSON: keys are bare (they may contain
spaces), strings are raw text between `<|"|>` tokens (no escapes: newlines, quotes, braces, commas
and even the call markers are literal inside), numbers are Python-formatted (`1e-05`, `1e+21`),
and `true`/`false`/`null`, `{}` and `[]` nest. Several calls may follow each other (parallel).

The engine may cut `<tool_call|>` as a stop token, so a call is complete when its object closes;
the `<tool_call|>` after it (and whitespace before that) is consumed when present. Reasoning is the
thought channel, `<|channel>thought\\n…<channel|>`, whose `thought` label is not reasoning text.

The end of a call is found incrementally: a scanner tracks the bracket depth and whether it is
inside a `<|"|>` string across pieces, carrying only a partial delimiter; the object is converted
once, when it has closed. A call whose header or object is not well formed is content.

Text around calls is content verbatim, except whitespace between a finished sentence (or a call)
and the next call. As in every dialect, a call inside a markdown code fence is an example, not a call.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._reasoning import ReasoningSyntax
from .._schema import JSON_OBJECT
from .._textscan import WHITESPACE
from ._base import BlockParser, Call, Dialect, dump_arguments
from ._rendering import CallToRender, Renderer, ToolResult, ToolSpec, join_turn, results_joined
from .call_grammar import Args, CallGrammar, Lit, Name, ObjectNotation

OPEN = "<|tool_call>"
CLOSE = "<tool_call|>"
STR = '<|"|>'
PREFIX = "call:"
THOUGHT = ("<|channel>thought", "<channel|>")  # reasoning: the thought channel and its label

# Whitespace before a call is layout only after a finished sentence or another call: vLLM's
# fixture drops it in `for you. <|tool_call>`, SGLang's keeps it in `Some text before <|tool_call>`.
SENTENCE_END = frozenset(".!?:。！？：")

_HEAD_LIMIT = 256  # `call:NAME{` longer than this is not a call header
_AFTER_LIMIT = 64  # whitespace held between `}` and a possible `<tool_call|>`

_SPACE = re.compile(r"[ \t\r\n]*")
_NAME = re.compile(r"[^ \t\r\n{}\[\]<>(),;\"'`|=]*")  # `:` may be in a name (`ns:get`): the name ends at `{`
_OUTSIDE = re.compile(r'[{}\[\]]|<\|"\|>|<tool_call\|>')
_BARE_KEY = re.compile(r"[^:{}\[\],]+")
_BARE_VALUE = re.compile(r"[^,{}\[\]]+")
_NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}


def _skip(pattern: re.Pattern[str], s: str, i: int) -> int:
    """The end of the (possibly empty) run of `pattern` at `i`."""
    m = pattern.match(s, i)
    return m.end() if m else i


def read_header(head: str) -> tuple[str, int] | bool | None:
    """`(name, end after "{")` for a complete `call:NAME{`, `False` if malformed, `None` for more."""
    i = _skip(_SPACE, head, 0)
    start = head[i : i + len(PREFIX)]
    if not PREFIX.startswith(start):
        return False
    if len(start) < len(PREFIX):
        return None
    j = _skip(_NAME, head, i + len(PREFIX))
    name = head[i + len(PREFIX) : j]
    k = _skip(_SPACE, head, j)
    if k == len(head):
        return None
    return (name, k + 1) if head[k] == "{" and name else False


class _Malformed(Exception):
    pass


class _Reader:
    """A one-pass reader of one complete object in Gemma's notation."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def ws(self) -> None:
        self.i = _skip(_SPACE, self.s, self.i)

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def value(self) -> Any:
        self.ws()
        if self.s.startswith(STR, self.i):
            return self.string()
        c = self.peek()
        if c == "{":
            return self.object()
        if c == "[":
            return self.array()
        m = _BARE_VALUE.match(self.s, self.i)
        if m is None:
            raise _Malformed
        self.i = m.end()
        return _scalar(m.group().strip(WHITESPACE))

    def string(self) -> str:
        end = self.s.find(STR, self.i + len(STR))
        if end < 0:
            raise _Malformed
        text = self.s[self.i + len(STR) : end]
        self.i = end + len(STR)
        return text

    def key(self) -> str:
        self.ws()
        if self.s.startswith(STR, self.i):
            return self.string()
        m = _BARE_KEY.match(self.s, self.i)
        if m is None:
            raise _Malformed
        self.i = m.end()
        key = m.group().strip(WHITESPACE)
        if len(key) >= 2 and key[0] == key[-1] == '"':
            key = key[1:-1]  # a JSON-style quoted key
        if not key or STR in key:
            raise _Malformed
        return key

    def object(self) -> dict[str, Any]:
        self.i += 1
        out: dict[str, Any] = {}
        self.ws()
        if self.peek() == "}":
            self.i += 1
            return out
        while True:
            key = self.key()
            self.ws()
            if self.peek() != ":":
                raise _Malformed
            self.i += 1
            out[key] = self.value()
            if self.separator("}"):
                return out

    def array(self) -> list[Any]:
        self.i += 1
        out: list[Any] = []
        self.ws()
        if self.peek() == "]":
            self.i += 1
            return out
        while True:
            out.append(self.value())
            if self.separator("]"):
                return out

    def separator(self, closing: str) -> bool:
        """Consume `,` (a trailing one too) or the closing bracket; `True` when it closed."""
        self.ws()
        c = self.peek()
        if c == ",":
            self.i += 1
            self.ws()
            if self.peek() != closing:
                return False
            c = closing
        if c != closing:
            raise _Malformed
        self.i += 1
        return True


def _scalar(token: str) -> Any:
    if token in _LITERALS:
        return _LITERALS[token]
    if _NUMBER.fullmatch(token):
        try:
            if any(c in token for c in ".eE"):
                number = float(token)
                if math.isfinite(number):
                    return number
            else:
                return int(token)
        except ValueError:
            pass  # beyond int()'s digit limit: keep the text
        return token
    if not token or STR in token:
        raise _Malformed
    return token  # an unquoted word: the model's text, as a string


def parse_arguments(text: str) -> dict[str, Any] | None:
    """The arguments object `{…}` as a dict; `None` when it is not well formed."""
    reader = _Reader(text)
    try:
        value = reader.object()
        reader.ws()
    except (_Malformed, RecursionError):
        return None
    return value if reader.i == len(text) else None


class _BodyScanner:
    """Finds where the arguments object closes, across pieces, without rescanning.

    Starts after the opening `{`. `find(text)` returns the end offset in `text` of the closing
    bracket (`"}"`) or of a `<tool_call|>` met outside a string before the object closed.
    """

    def __init__(self) -> None:
        self.depth = 1
        self.in_string = False
        self._carry = ""

    def find(self, text: str) -> tuple[int, str] | None:
        s = self._carry + text
        base = len(self._carry)
        self._carry = ""
        i = 0
        while True:
            if self.in_string:
                pos = s.find(STR, i)
                if pos < 0:
                    self._hold(s, i, (STR,))
                    return None
                self.in_string = False
                i = pos + len(STR)
                continue
            m = _OUTSIDE.search(s, i)
            if m is None:
                self._hold(s, i, (STR, CLOSE))
                return None
            token = m.group()
            i = m.end()
            if token == STR:
                self.in_string = True
            elif token in "{[":
                self.depth += 1
            elif token in "}]":
                self.depth -= 1
                if self.depth == 0:
                    return i - base, "}"
            else:
                return i - base, CLOSE

    def _hold(self, s: str, i: int, markers: tuple[str, ...]) -> None:
        # Both markers hold a single `<`, their first character: a partial one starts at the last `<`.
        lt = s.rfind("<", max(i, len(s) - len(CLOSE) + 1))
        tail = s[lt:] if lt >= 0 else ""
        self._carry = tail if tail and any(len(m) > len(tail) and m.startswith(tail) for m in markers) else ""


class Gemma4Block:
    """One call: `call:NAME{…}`, then an optional `<tool_call|>`."""

    def __init__(self, opener: str) -> None:
        self._opener = opener
        self._state = "head"
        self._head = ""
        self._name = ""
        self._body: list[str] = []
        self._scanner = _BodyScanner()
        self._after = ""
        self._items: list[Call | str] = []

    def feed(self, text: str) -> str | None:
        if self._state == "head":
            self._head += text
            header = read_header(self._head)
            if header is None and len(self._head) <= _HEAD_LIMIT:
                return None
            # The limit applies to where the header ends, however the text was split.
            if not isinstance(header, tuple) or header[1] > _HEAD_LIMIT:
                # Not a call header: the opener alone is content, what follows is text again.
                self._state = "done"
                self._items.append(self._opener)
                return self._head
            self._name, end = header
            self._head, text = self._head[:end], self._head[end:]
            self._state = "body"
        if self._state == "body":
            hit = self._scanner.find(text)
            self._body.append(text)
            if hit is None:
                return None
            end, marker = hit
            full = "".join(self._body)
            self._body = []
            body = full[: len(full) - len(text) + end]
            text = text[end:]
            args = parse_arguments("{" + body) if marker == "}" else None
            if args is None:
                self._state = "done"
                self._items.append(self._opener + self._head + body)
                return text
            self._items.append(Call(name=self._name, arguments=dump_arguments(args)))
            self._state = "after"
        if self._state == "after":
            s = self._after + text
            rest = s.lstrip(WHITESPACE)
            # The limit is on the whitespace run itself, so that it holds however text is split.
            if len(s) - len(rest) <= _AFTER_LIMIT:
                if rest.startswith(CLOSE):
                    self._state = "done"
                    return rest[len(CLOSE) :]
                if CLOSE.startswith(rest):
                    self._after = s
                    return None
            self._state = "done"
            return s
        return text

    def take(self) -> list[Call | str]:
        items, self._items = self._items, []
        return items

    def finish(self) -> str | None:
        if self._state == "head":
            return self._opener + self._head
        if self._state == "body":
            return self._opener + self._head + "".join(self._body)
        if self._state == "after" and self._after:
            # What followed a complete call when the output ended (no `<tool_call|>`): content.
            self._items.append(self._after)
            self._after = ""
        return None


class Gemma4Parser(BlockParser):
    """Text mode around `<|tool_call>` blocks.

    Text keeps its whitespace, except the whitespace between a finished sentence (or a call) and
    the next call, which is layout: it is held back until the next non-space character decides.
    """

    openers = (OPEN,)

    def open_block(self, opener: str) -> Gemma4Block:
        return Gemma4Block(opener)

    def layout_before_block(self, last: str, after_call: bool) -> bool:
        return after_call or last in SENTENCE_END


# -- request side: the chat template's text --------------------------------------------------------

# Keys written bare: stricter than what the parser reads bare (`_BARE_KEY`), so any key
# that could be mistaken for markup or for the layout is written between delimiters.
_WRITTEN_BARE = re.compile(r"[^\s:{}\[\],\"<>|][^:{}\[\],<>|]*(?<!\s)")


def _gemma_key(key: str) -> str:
    return key if _WRITTEN_BARE.fullmatch(key) else STR + key + STR


def gemma_value(value: Any, *, upper_types: bool = False) -> str:
    """A JSON value in Gemma's notation: bare keys, `<|"|>` strings, Python-formatted numbers."""
    if isinstance(value, str):
        return STR + value + STR
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, JSON_OBJECT):
        items = []
        for k, v in value.items():
            if upper_types and k == "type":
                v = v.upper() if isinstance(v, str) else [t.upper() if isinstance(t, str) else t for t in v]
            items.append(f"{_gemma_key(str(k))}:{gemma_value(v, upper_types=upper_types)}")
        return "{" + ",".join(items) + "}"
    return "[" + ",".join(gemma_value(v, upper_types=upper_types) for v in value) + "]"


@dataclass(frozen=True)
class GemmaMarkup:
    """What a format in Gemma's notation writes around its calls, its tool declarations and its
    tool responses, and its string delimiter: Gemma 4's tokens, or FunctionGemma's."""

    call: tuple[str, str]  # (opening marker, closing marker)
    declaration: tuple[str, str]
    response: tuple[str, str]
    string: str = STR
    preamble: str = ""  # the text before the declarations

    def value(self, value: Any, *, upper_types: bool = False) -> str:
        """`gemma_value` with this format's string delimiter."""
        return gemma_value(value, upper_types=upper_types).replace(STR, self.string)

    def key(self, key: str) -> str:
        """A key as this format writes it: bare, or between string delimiters."""
        return _gemma_key(key).replace(STR, self.string)

    def grammar(self) -> CallGrammar:
        """The call grammar: `call:NAME{…}` between the call markers, which are special tokens."""
        call, call_end = self.call
        notation = ObjectNotation(self.string, self.key, self.value)
        return CallGrammar(
            call=(Lit(call + PREFIX), Name(), Args(notation=notation), Lit(call_end)),
            trigger=call,
            special_tokens=(call, call_end, self.string),
        )


def gemma_renderer(markup: GemmaMarkup) -> Renderer:
    """The request side of a format in Gemma's notation."""
    m = markup
    (call, call_end), (declared, declared_end) = m.call, m.declaration

    def calls(calls: Sequence[CallToRender]) -> str:
        return "".join(f"{call}call:{c.name}{m.value(dict(c.arguments))}{call_end}" for c in calls)

    def tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
        declarations = "".join(
            f"{declared}declaration:{t.name}{{description:{m.string}{t.description or ''}{m.string}"
            f",parameters:{m.value(dict(t.schema()), upper_types=True)}}}{declared_end}"
            for t in tools
        )
        # The template only declares the tools; the call syntax is spelled out here for a prompt
        # that carries them as text.
        return (
            f"{m.preamble}{declarations}\n\nTo call a function, write {call}call:NAME{{key:value,…}}{call_end}, "
            f"with each string value between {m.string} delimiters."
        )

    def result(result: ToolResult) -> str:
        try:
            value = json.loads(result.output)
        except (ValueError, RecursionError):
            value = None
        name = result.name or "unknown"
        body = gemma_value(value) if isinstance(value, dict) else "{value:" + gemma_value(result.output) + "}"
        return m.response[0] + f"response:{name}{body}".replace(STR, m.string) + m.response[1]

    return Renderer(
        calls=calls,
        tools=tools,
        results=results_joined(result, ""),
        assistant=lambda content, calls: join_turn(content, calls, ""),
    )


GEMMA4_MARKUP = GemmaMarkup(
    call=(OPEN, CLOSE), declaration=("<|tool>", "<tool|>"), response=("<|tool_response>", "<tool_response|>")
)
GEMMA4 = gemma_renderer(GEMMA4_MARKUP)


DIALECTS = [
    Dialect(
        name="gemma4",
        markers=(OPEN,),
        detected_reasoning=(THOUGHT,),
        description='<|tool_call>call:f{a:<|"|>text<|"|>,n:3}<tool_call|>: Gemma 4',
        machine=Gemma4Parser,
        renderer=GEMMA4,
        # `gemma-4-31b-it`, `gemma4:31b`; not `medgemma-4b` or `functiongemma`.
        models=(r"(?<![a-z])gemma-?4(?![0-9a-z])",),
        reasoning=ReasoningSyntax(pairs=(THOUGHT,)),
        grammar=GEMMA4_MARKUP.grammar(),
    )
]


__all__ = [
    "CLOSE",
    "DIALECTS",
    "GEMMA4",
    "GEMMA4_MARKUP",
    "OPEN",
    "PREFIX",
    "SENTENCE_END",
    "STR",
    "THOUGHT",
    "Gemma4Block",
    "Gemma4Parser",
    "GemmaMarkup",
    "gemma_renderer",
    "gemma_value",
    "parse_arguments",
    "read_header",
]
