"""`pythonic`: `[get_weather(city='SF'), get_time(tz="UTC")]` (Llama 3.2 pythonic, Llama 4, ToolACE).

The calls are a Python list of calls with keyword arguments whose values are Python literals
(`True`/`None` become JSON `true`/`null`); Llama 4 may wrap the list in
`<|python_start|>…<|python_end|>`. The list may follow prose (vLLM #22917 lost such calls), so any
`[` outside a code fence may open one: the text from it is held only until it is decided. A list
that turns out not to be calls (`[1, 2]`, `[see the docs]`, `[f(x)]`) is content as written.
Values are read with `ast.literal_eval`, never evaluated.

The text mode around the lists is `llama_text.TextMachine`. `PyScanner` (finds the end of a
Python call list incrementally and rejects prose early) and the literal reading here are shared
with `llama3_json`, whose built-in tool calls (`brave_search.call(query="…")`) are Python calls.
"""

from __future__ import annotations

import ast
import io
import json
import math
import re
import tokenize
import warnings
from collections.abc import Sequence
from enum import Enum
from typing import Any

from .._reasoning import ReasoningSyntax
from .._textscan import WHITESPACE
from ._base import Call, Dialect, dump_arguments
from ._llama_text import PYTHON_END, PYTHON_START, PYTHON_TAG, STOP_TOKENS, Segment, TextMachine
from ._rendering import CallToRender, Renderer, ToolSpec, python_literal
from .call_grammar import Args, CallGrammar, Lit, Name, Part

_MAX_NAME = 128  # a longer "function name" after `[` is prose, not a call


# -- Python call lists ------------------------------------------------------------------------


class Scan(Enum):
    MORE = "more"
    DONE = "done"
    REJECT = "reject"


_VALUE_STOP = re.compile(r"""['"()\[\]{},]""")  # at a call's level, `,` ends a value
_NESTED_STOP = re.compile(r"""['"()\[\]{}]""")
_STRING_STOP = {"'": re.compile(r"['\\]"), '"': re.compile(r'["\\]')}
_CLOSER = {"(": ")", "[": "]", "{": "}"}
_LIST, _ARGS = "list", "args"
# What a character does to the scanner: consumed, looked at again in the new state, plain value
# text (skipped up to the next character that matters), or not possible in a call list.
_TAKE, _AGAIN, _SKIP, _REJECT = "take", "again", "skip", "reject"


def _ident_start(c: str) -> bool:
    return c.isalpha() or c == "_"


def _ident(c: str) -> bool:
    return c.isalnum() or c == "_"


# A function's name is whatever the tool list says: `grocery.order`, `get-weather`, `ns:get`.
_NAME_MARKS = ".-:"


def _name_char(c: str) -> bool:
    return c.isalnum() or c == "_" or c in _NAME_MARKS


class PyScanner:
    """Follows `[f(a=1), g()]` (or, with `top="args"`, the `a=1)` of one call) char by char.

    `feed(text, start)` returns `(MORE, len)`, `(DONE, end)` after the closing bracket, or
    `(REJECT, pos)` at the first character that cannot belong to a call list (which then is
    prose). Strings are skipped with a regex, so long values cost little. `committed` turns true
    once a call's `(` is seen: from then on an unfinished list is a truncated call.
    """

    def __init__(self, top: str = _LIST) -> None:
        self._frames = [top]  # _LIST, _ARGS, or the closer of a bracket inside a value
        self._states = ["start" if top == _LIST else "key0"]
        self._quote = ""  # inside a string: its quote character
        self._triple = False
        self._escape = False
        self._run = 0  # closing quotes in a row, for a triple-quoted string
        self._opening = 0  # quote characters seen where a string starts (1 or 2)
        self._open_q = ""
        self._name_len = 0
        self.committed = top == _ARGS

    def feed(self, text: str, start: int = 0) -> tuple[Scan, int]:
        i, n = start, len(text)
        while i < n:
            if self._quote:
                i = self._string(text, i)
                continue
            c = text[i]
            if self._opening:
                if c == self._open_q:
                    if self._opening == 1:
                        self._opening = 2
                    else:  # a third quote: a triple-quoted string
                        self._opening, self._quote, self._triple, self._run = 0, c, True, 0
                    i += 1
                    continue
                quote, was = self._open_q, self._opening
                self._opening = 0
                if was == 1:  # `c` is the string's first character
                    self._quote, self._triple = quote, False
                    continue
                # `''` was an empty string; `c` follows it
            frame, state = self._frames[-1], self._states[-1]
            if frame == _LIST:
                step = self._list(c, state)
            elif frame == _ARGS and state != "value":
                step = self._key(c, state)
            else:
                step = self._value(c, frame)
            if step == _REJECT:
                return Scan.REJECT, i
            if step == _SKIP:  # plain value text: jump to the next character that matters
                m = (_VALUE_STOP if frame == _ARGS else _NESTED_STOP).search(text, i + 1)
                i = m.start() if m else n
                continue
            if step == _TAKE:
                i += 1
            if not self._frames:
                return Scan.DONE, i
        return Scan.MORE, n

    def _string(self, text: str, i: int) -> int:
        if self._escape:
            self._escape, self._run = False, 0
            return i + 1
        m = _STRING_STOP[self._quote].search(text, i)
        if m is None:
            self._run = 0
            return len(text)
        j = m.start()
        if j > i:
            self._run = 0
        if text[j] == "\\":
            self._escape, self._run = True, 0
        elif not self._triple:
            self._quote = ""
        else:
            self._run += 1
            if self._run == 3:
                self._quote, self._triple, self._run = "", False, 0
        return j + 1

    def _list(self, c: str, state: str) -> str:
        """The call list itself: names, `(`, and `,` or `]` between calls."""
        ws = c in WHITESPACE
        if state in ("start", "comma"):
            if ws:
                return _TAKE
            if _ident_start(c):
                self._states[-1], self._name_len = "name", 1
                return _TAKE
            if c == "]" and state == "comma":
                return self._pop()
        elif state in ("name", "after_name"):
            if state == "name" and _name_char(c):
                self._name_len += 1
                return _TAKE if self._name_len <= _MAX_NAME else _REJECT
            if ws:
                self._states[-1] = "after_name"
                return _TAKE
            if c == "(":
                self._frames.append(_ARGS)
                self._states.append("key0")
                self.committed = True
                return _TAKE
        elif state == "after_call":
            if ws:
                return _TAKE
            if c == ",":
                self._states[-1] = "comma"
                return _TAKE
            if c == "]":
                return self._pop()
        return _REJECT

    def _key(self, c: str, state: str) -> str:
        """A call's parentheses, between values: `name=` or the closing `)`."""
        ws = c in WHITESPACE
        if state == "key0":
            if ws:
                return _TAKE
            if _ident_start(c):
                self._states[-1] = "key"
                return _TAKE
            if c == ")":
                return self._pop()
        elif state in ("key", "after_key"):
            if state == "key" and _ident(c):
                return _TAKE
            if ws:
                self._states[-1] = "after_key"
                return _TAKE
            if c == "=":
                self._states[-1] = "eq"
                return _TAKE
        elif state == "eq" and c != "=":  # `==` is a comparison, not a keyword argument
            self._states[-1] = "value"
            return _AGAIN  # the value starts at this character
        return _REJECT

    def _value(self, c: str, frame: str) -> str:
        """Inside a value: strings and brackets nest; `,` or `)` at the call's level ends it."""
        if c in "'\"":
            self._opening, self._open_q = 1, c
            return _TAKE
        if c in _CLOSER:
            self._frames.append(_CLOSER[c])
            self._states.append("")
            return _TAKE
        if c in ")]}":
            if frame == _ARGS:
                return self._pop() if c == ")" else _REJECT
            return self._pop() if c == frame else _REJECT
        if c == "," and frame == _ARGS:
            self._states[-1] = "key0"
            return _TAKE
        return _SKIP

    def _pop(self) -> str:
        frame = self._frames.pop()
        self._states.pop()
        if frame == _ARGS and self._frames:
            self._states[-1] = "after_call"
        return _TAKE


_JSON_NAMES: dict[str, Any] = {"true": True, "false": False, "null": None}


class _JsonNames(ast.NodeTransformer):
    """Models sometimes write JSON's `true`/`false`/`null` in a Python call: read them as such."""

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in _JSON_NAMES:
            return ast.Constant(_JSON_NAMES[node.id])
        return node


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("not a JSON number")
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _jsonable(v) for k, v in value.items()}
    raise ValueError(f"{type(value).__name__} is not a JSON value")


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        return ast.literal_eval(_JsonNames().visit(node))


def keyword_arguments(node: ast.Call) -> str | None:
    """The JSON text of a call's keyword arguments; `None` unless all are literal keywords."""
    if node.args:
        return None
    values: dict[str, Any] = {}
    try:
        for kw in node.keywords:
            if kw.arg is None or kw.arg in values:  # `**kwargs`, or a keyword given twice
                return None
            values[kw.arg] = _jsonable(_literal(kw.value))
        return dump_arguments(values)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return None


def parse_source(source: str) -> ast.expr | None:
    """`source` as one Python expression (parsed, never run); `None` when it is not one."""
    try:
        with warnings.catch_warnings():
            # `'\d'` in model text must not print an "invalid escape sequence" warning.
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            return ast.parse(source.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def calls_from_list(source: str) -> list[Call] | None:
    """The calls of `[f(a=1), g()]`; `None` unless every element is a literal keyword call.

    A name may hold `.` (an attribute chain to Python), `-` or `:` (not Python at all): such
    names are swapped for placeholders before the list is parsed, and back after."""
    tree = parse_source(source)
    names: dict[str, str] = {}
    if tree is None or not _all_named_calls(tree):
        swapped = _swap_names(source)
        if swapped is None:
            return None
        source, names = swapped
        tree = parse_source(source)
    if not isinstance(tree, ast.List) or not tree.elts:
        return None
    calls: list[Call] = []
    for node in tree.elts:
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            return None
        args = keyword_arguments(node)
        if args is None:
            return None
        calls.append(Call(name=names.get(node.func.id, node.func.id), arguments=args))
    return calls


def _all_named_calls(tree: ast.expr) -> bool:
    return isinstance(tree, ast.List) and all(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) for node in tree.elts
    )


_PLACEHOLDER = "_tcm_name_"


def _swap_names(source: str) -> tuple[str, dict[str, str]] | None:
    """`source` with each call name that holds `.`, `-` or `:` swapped for a placeholder, and the
    names by placeholder; `None` when there is none (or the source is no Python tokens).

    A call name is the run of adjacent name, number and `.-:` tokens right after the list's `[`
    or a `,` at its level, ending at `(`; the tokenizer keeps strings out of the search."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    spans: list[tuple[int, int]] = []
    depth, prev = 0, ""
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        elif depth == 1 and tok.type == tokenize.NAME and prev in ("[", ","):
            j = i + 1
            while (
                j < len(tokens)
                and tokens[j].start == tokens[j - 1].end
                and (tokens[j].type in (tokenize.NAME, tokenize.NUMBER) or tokens[j].string in _NAME_MARKS)
            ):
                j += 1
            if j > i + 1 and j < len(tokens) and tokens[j].string == "(":
                first, last = tok.start, tokens[j - 1].end
                spans.append((starts[first[0] - 1] + first[1], starts[last[0] - 1] + last[1]))
                prev = tokens[j - 1].string
                i = j
                continue
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
            prev = tok.string
        i += 1
    if not spans:
        return None
    names: dict[str, str] = {}
    out: list[str] = []
    end = 0
    for n, (a, b) in enumerate(spans):
        placeholder = f"{_PLACEHOLDER}{n}"
        names[placeholder] = source[a:b]
        out.append(source[end:a] + placeholder)
        end = b
    out.append(source[end:])
    return "".join(out), names


# -- the pythonic dialect ---------------------------------------------------------------------


class CallListSegment:
    """A `[` in text: a call list until the scanner rejects it, then content as written."""

    def __init__(self) -> None:
        self._scanner = PyScanner()
        self._raw = ["["]
        self._items: list[Call | str] = []

    def feed(self, text: str, start: int) -> int | None:
        verdict, end = self._scanner.feed(text, start)
        self._raw.append(text[start:end])
        if verdict is Scan.MORE:
            return None
        raw = "".join(self._raw)
        self._raw = []
        calls = calls_from_list(raw) if verdict is Scan.DONE else None
        if calls:
            self._items.extend(calls)
        else:
            self._items.append(raw)
        return end

    def take(self) -> list[Call | str]:
        items, self._items = self._items, []
        return items

    def finish(self) -> tuple[str, bool]:
        return "".join(self._raw), self._scanner.committed


class PythonicParser(TextMachine):
    drop = (*STOP_TOKENS, PYTHON_START, PYTHON_END, PYTHON_TAG)
    bare = "["

    def open_segment(self, opener: str) -> Segment:
        return CallListSegment()


# -- request side: the chat template's text --------------------------------------------------------


def _pythonic_calls(calls: Sequence[CallToRender]) -> str:
    if not calls:
        return ""
    items = ", ".join(
        f"{c.name}(" + ", ".join(f"{k}={python_literal(v)}" for k, v in c.arguments.items()) + ")" for c in calls
    )
    return f"[{items}]"


def _pythonic_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    return (
        "You have access to the following functions. To call functions, please respond with a python list of the "
        "calls. Respond in the format [func_name1(params_name1=params_value1, params_name2=params_value2...), "
        "func_name2(params)] Do not use variables.\n\n"
        + "\n\n".join(json.dumps(t.chat_shape(), ensure_ascii=False, indent=4) for t in tools)
    )


PYTHONIC = Renderer(calls=_pythonic_calls, tools=_pythonic_tools)


def python_call(escaped: str = "") -> tuple[Part, ...]:
    """One Python call, `name(key=value, …)`, as a grammar's parts (`escaped`: see `Args`)."""
    return (Name(), Lit("("), Args(python=True, escaped=escaped), Lit(")"))


# The calls as `_pythonic_calls` writes them. The lazy form opens at the list's `[`: the grammar
# holds any `[` of the free text to a call list.
PYTHONIC_GRAMMAR = CallGrammar(call=python_call(), separator=", ", section=("[", "]"))


DIALECTS = [
    Dialect(
        name="pythonic",
        markers=("<|python_start|>",),
        description="[f(a=1), g()] Python call list: Llama 3.2 (pythonic), Llama 4, ToolACE",
        machine=PythonicParser,
        renderer=PYTHONIC,
        grammar=PYTHONIC_GRAMMAR,
        models=(r"llama-?4", r"toolace"),
        reasoning=ReasoningSyntax(),
    )
]


__all__ = [
    "DIALECTS",
    "PYTHONIC",
    "PYTHONIC_GRAMMAR",
    "CallListSegment",
    "PyScanner",
    "PythonicParser",
    "Scan",
    "calls_from_list",
    "keyword_arguments",
    "parse_source",
    "python_call",
]
