"""`llama3_json`: `<|python_tag|>{"name": "f", "parameters": {…}}` (Llama 3.1/3.2/3.3 JSON template).

The tag is optional: an output that starts with `{` may be a call too, as vLLM, SGLang and
llama.cpp read it (only there, and right after another call: a JSON object later in prose is
text). `arguments` is accepted for `parameters`, a `"type": "function"` key may appear, and
several calls are joined by `; `. After the tag, a built-in tool call
`brave_search.call(query="…")` is a call of `brave_search`, its arguments read as Python literals.

An object is decided by its first key: one of `name`, `parameters`, `arguments`, `type` holds it
until it closes, any other key makes it content at once and the rest of it streams as it comes
(a JSON answer is never held or dropped: vLLM #58824). A held object that is not a call is
content as written, and so is a `{` not followed by a key. `<|eom_id|>`/`<|eot_id|>` end the
output and vanish.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import Any

from .._reasoning import ReasoningSyntax
from .._textscan import WHITESPACE
from ._base import Call, Dialect, arguments_object, dump_arguments, load_object
from ._llama_text import PYTHON_END, PYTHON_START, PYTHON_TAG, STOP_TOKENS, Segment, TextMachine
from ._rendering import CallToRender, Renderer, ToolSpec, dumps, join_turn, tool_lines
from .call_grammar import Args, CallGrammar, Lit, Name
from .pythonic import PyScanner, Scan, keyword_arguments, parse_source

_FIRST_KEYS = ("name", "parameters", "arguments", "type")
_CALL_KEYS = frozenset(_FIRST_KEYS)
_BUILTIN = ".call"  # `brave_search.call(`, whitespace aside
_JSON_OUTSIDE = re.compile(r'["{}]')
_JSON_INSIDE = re.compile(r'["\\]')


def call_from_json(obj: dict[str, Any], *, tagged: bool) -> Call | None:
    """A call from `{"name", "parameters" | "arguments", "type"?}`; `None` when it is not one.

    Without the tag the object must have exactly that shape, so `{"name": "Bob", "age": 3}` stays
    an answer; after the tag the arguments may be left out.
    """
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip() or set(obj) - _CALL_KEYS:
        return None
    if obj.get("type", "function") != "function":
        return None
    if "parameters" in obj:
        args = obj["parameters"]
    elif "arguments" in obj:
        args = obj["arguments"]
    elif tagged:
        args = {}
    else:
        return None
    args = arguments_object(args)
    if args is None:
        return None
    return Call(name=name, arguments=dump_arguments(args))


def builtin_call(source: str) -> Call | None:
    """`brave_search.call(query="x")` as a call of `brave_search`; `None` when it is not one."""
    node = parse_source(source)
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "call"
        and isinstance(node.func.value, ast.Name)
    ):
        return None
    args = keyword_arguments(node)
    return None if args is None else Call(name=node.func.value.id, arguments=args)


class Llama3Segment:
    """From `{` or the tag to the end of one call, or to the point where it is not one.

    Phases: `head` (after the tag: `{` or a built-in name), `key0`/`key` (the first key, which
    decides), `body` (a call candidate, held until its object closes), `pass` (an object that is
    not a call, streamed as content to its end), and `name`/`attr`/`args` for a built-in call.
    """

    def __init__(self, opener: str) -> None:
        self._tagged = opener == PYTHON_TAG
        self._raw = [opener]
        self._items: list[Call | str] = []
        self._phase = "head" if self._tagged else "key0"
        self._depth = 0 if self._tagged else 1
        self._in_str = False
        self._esc = False
        self._key = ""
        self._attr = ""
        self._args: PyScanner | None = None

    def feed(self, text: str, start: int) -> int | None:
        i, n = start, len(text)
        while i < n:
            phase = self._phase
            if phase in ("body", "pass"):
                end = self._scan_json(text, i)
                piece = text[i:n] if end is None else text[i:end]
                if phase == "pass":
                    self._items.append(piece)
                else:
                    self._raw.append(piece)
                    if end is not None:
                        self._finish(builtin=False)
                return end
            if phase == "args":
                assert self._args is not None
                verdict, end = self._args.feed(text, i)
                self._raw.append(text[i:end])
                if verdict is Scan.MORE:
                    return None
                if verdict is Scan.DONE:
                    self._finish(builtin=True)
                else:
                    self._reject()
                return end
            c = text[i]
            verdict_char = self._step(c)
            if verdict_char == "reject":
                self._reject()
                return i
            if verdict_char == "take":
                self._raw.append(c)
                i += 1
            # "again": the phase changed and looks at `c` itself
        return None

    def _step(self, c: str) -> str:
        """One character of the short phases: `take`, `again` (phase changed) or `reject`."""
        phase = self._phase
        if phase == "head":
            if c in WHITESPACE:
                return "take"
            if c == "{":
                self._phase, self._depth = "key0", 1
                return "take"
            if c.isalpha() or c == "_":
                self._phase = "name"
                return "take"
            return "reject"
        if phase == "key0":
            if c in WHITESPACE:
                return "take"
            if c == '"':
                self._phase, self._in_str = "key", True
                return "take"
            return "reject"  # not a JSON object with keys: back to text, where a tag may follow
        if phase == "key":
            if c == '"':
                if self._key not in _FIRST_KEYS:
                    return self._to_pass()
                self._phase, self._in_str = "body", False
                return "take"
            key = self._key + c
            if c == "\\" or not any(k.startswith(key) for k in _FIRST_KEYS):
                return self._to_pass()
            self._key = key
            return "take"
        if phase == "name":
            if c.isalnum() or c == "_":
                return "take"
            self._phase = "attr"
            return "again"
        # attr: `.call(` with optional whitespace
        if c in WHITESPACE:
            return "take"
        if c == "(" and self._attr == _BUILTIN:
            self._phase, self._args = "args", PyScanner(top="args")
            return "take"
        if _BUILTIN.startswith(self._attr + c):
            self._attr += c
            return "take"
        return "reject"

    def _to_pass(self) -> str:
        """Not a call: what was held is content, and the rest of the object streams."""
        self._items.append("".join(self._raw))
        self._raw = []
        self._phase = "pass"
        return "again"

    def _reject(self) -> None:
        self._items.append("".join(self._raw))
        self._raw = []

    def _finish(self, *, builtin: bool) -> None:
        """The object (or built-in call) closed: a call, or its raw text as content."""
        raw = "".join(self._raw)
        self._raw = []
        body = raw[len(PYTHON_TAG) :] if self._tagged else raw
        call: Call | None
        if builtin:
            call = builtin_call(body)
        else:
            obj = load_object(body)
            call = call_from_json(obj, tagged=self._tagged) if obj is not None else None
        self._items.append(call if call is not None else raw)

    def _scan_json(self, text: str, i: int) -> int | None:
        """Where the object closes in `text` (after its `}`), tracking strings; else `None`."""
        n = len(text)
        while i < n:
            if self._in_str:
                if self._esc:
                    self._esc = False
                    i += 1
                    continue
                m = _JSON_INSIDE.search(text, i)
                if m is None:
                    return None
                i = m.end()
                if m.group() == "\\":
                    self._esc = True
                else:
                    self._in_str = False
                continue
            m = _JSON_OUTSIDE.search(text, i)
            if m is None:
                return None
            i = m.end()
            ch = m.group()
            if ch == '"':
                self._in_str = True
            elif ch == "{":
                self._depth += 1
            else:
                self._depth -= 1
                if self._depth == 0:
                    return i
        return None

    def take(self) -> list[Call | str]:
        items, self._items = self._items, []
        return items

    def finish(self) -> tuple[str, bool]:
        raw = "".join(self._raw)
        # After the tag the model meant a call; a bare `{` is one only once its first key says so.
        return raw, bool(raw) and (self._tagged or self._phase == "body")


class Llama3Parser(TextMachine):
    drop = (*STOP_TOKENS, PYTHON_START, PYTHON_END)
    tags = (PYTHON_TAG,)
    bare_at_edge = "{"
    separator = ";"

    def open_segment(self, opener: str) -> Segment:
        return Llama3Segment(opener)


# -- request side: the chat template's text --------------------------------------------------------


def _llama3_calls(calls: Sequence[CallToRender]) -> str:
    # The tag makes a call after prose a call; several calls are joined by `; `.
    body = "; ".join(f'{{"name": {dumps(c.name)}, "parameters": {dumps(dict(c.arguments))}}}' for c in calls)
    return "<|python_tag|>" + body if calls else ""


def _llama3_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    return (
        "You have access to the following functions. To call a function, please respond with JSON for a "
        'function call. Respond in the format {"name": function name, "parameters": dictionary of argument '
        "name and its value}. Do not use variables.\n\n" + tool_lines(tools, indent=4, sep="\n\n")
    )


LLAMA3_JSON = Renderer(calls=_llama3_calls, tools=_llama3_tools, assistant=lambda c, k: join_turn(c, k, ""))


# What `_llama3_calls` writes, as a grammar.
LLAMA3_JSON_GRAMMAR = CallGrammar(
    call=(Lit('{"name": '), Name(json=True), Lit(', "parameters": '), Args(), Lit("}")),
    separator="; ",
    section=(PYTHON_TAG, ""),
    special_tokens=(PYTHON_TAG,),
)


DIALECTS = [
    Dialect(
        name="llama3_json",
        markers=("<|python_tag|>",),
        description='<|python_tag|>{"name": …, "parameters": …}: Llama 3.1/3.2/3.3 (JSON template)',
        machine=Llama3Parser,
        renderer=LLAMA3_JSON,
        grammar=LLAMA3_JSON_GRAMMAR,
        # Llama 3.x, not its fine-tunes with their own formats (Nemotron's <TOOLCALL>, xLAM arrays).
        models=(r"^(?!.*(?:nemotron|xlam)).*llama-?(?:3(?:\.[0-3])?|v3(?:p[0-3])?)(?![\d.])",),
        reasoning=ReasoningSyntax(),
    )
]


__all__ = [
    "DIALECTS",
    "LLAMA3_JSON",
    "Llama3Parser",
    "Llama3Segment",
    "builtin_call",
    "call_from_json",
]
