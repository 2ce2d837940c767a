"""`mistral`: the `[TOOL_CALLS]` formats of the Mistral tokenizers, told apart by what follows.

```
v3  (Mistral-7B-v0.3, Mixtral, Nemo):      [TOOL_CALLS] [{"name": "f", "arguments": {…}, "id": "a1B2c3D4e"}, …]
v11 (Small 3.2, Magistral, Devstral,       [TOOL_CALLS]f[ARGS]{"a": 1}[TOOL_CALLS]g[CALL_ID]a1B2c3D4e[ARGS]{}
     Ministral 3, Mistral Small 4):
```

A `[` after the marker starts a v3 JSON array (a lone `{` is read as one v3 item); anything else
is a v11 call: a name, an optional `[CALL_ID]id` (kept as the call's id, as a v3 item's `"id"`
is), `[ARGS]` (which some decoders drop, giving `[TOOL_CALLS]f{"a": 1}`) and a raw JSON object.
v11 has no closing marker: the arguments end where their object closes, found by tracking depth
and strings as the text arrives, so a value holding `[TOOL_CALLS]`, `]` or `}` stays inside.
Each v3 item is handed out as soon as its object closes. Text around the calls is kept verbatim.

Reasoning is `[THINK]…[/THINK]` (Magistral 2509, Ministral 3 reasoning, Mistral Small 4) or plain
`<think>…</think>` (Magistral 2506). A `[TOOL_CALLS]` inside an unclosed reasoning block does not
end it: the model drafts calls while thinking.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from enum import Enum

from .._reasoning import ReasoningSyntax
from .._textscan import WHITESPACE, JsonDepth
from ._base import BlockParser, Call, Dialect, dump_arguments, load_object
from ._rendering import (
    CallToRender,
    Renderer,
    ToolResult,
    ToolSpec,
    alnum_id,
    dumps,
    join_turn,
    results_joined,
    tool_lines,
)
from .call_grammar import Args, CallGrammar, Chars, Lit, Name
from .hermes import call_from_object

OPEN = "[TOOL_CALLS]"
ARGS = "[ARGS]"
CALL_ID = "[CALL_ID]"
THINK = ("[THINK]", "[/THINK]")  # reasoning: special tokens of the v11+ tokenizers


def _is_name_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_-.:/"


class _State(Enum):
    START = "start"  # right after [TOOL_CALLS]: a `[` means v3, anything else v11
    NAME = "name"  # v11 function name
    AFTER_NAME = "after_name"  # whitespace after the name, before [CALL_ID], [ARGS] or `{`
    CALL_ID = "call_id"
    ARGS_START = "args_start"  # after [ARGS], before `{`
    OBJECT = "object"  # inside a JSON object: v11 arguments, a v3 item, or a bare v3 object
    ARRAY_FIRST = "array_first"  # after the v3 `[`
    ARRAY_AFTER = "array_after"  # after a v3 item: `,` or `]`
    ARRAY_NEXT = "array_next"  # after a v3 `,`


# States in which whitespace is layout between the parts of a call.
_SKIP_WS = frozenset(
    {_State.START, _State.AFTER_NAME, _State.ARGS_START, _State.ARRAY_FIRST, _State.ARRAY_AFTER, _State.ARRAY_NEXT}
)


class MistralBlock:
    """Everything after one `[TOOL_CALLS]`: one v11 call, or one v3 array of calls."""

    def __init__(self, opener: str) -> None:
        self._state = _State.START
        self._raw: list[str] = [opener]  # markup of the current call, given back if it is malformed
        self._body: list[str] = []  # the JSON object being read
        self._json = JsonDepth()
        self._name: list[str] = []
        self._id: list[str] = []
        self._has_id = False
        self._in_array = False
        self._last_malformed = False
        self._carry = ""  # a possible [ARGS] / [CALL_ID] prefix, completed by the next piece
        self._items: list[Call | str] = []

    def feed(self, text: str) -> str | None:
        s = self._carry + text
        self._carry = ""
        i, n = 0, len(s)
        while i < n:
            state = self._state
            if state is _State.OBJECT:
                end = self._json.advance(s, i)
                if end < 0:
                    self._body.append(s[i:])
                    return None
                self._body.append(s[i:end])
                i = end
                if self._object_closed():
                    return s[i:]
                continue
            c = s[i]
            if c in WHITESPACE and (
                state in _SKIP_WS
                or (state is _State.NAME and not self._name)
                or (state is _State.CALL_ID and not self._id)
            ):
                j = i + 1
                while j < n and s[j] in WHITESPACE:
                    j += 1
                self._raw.append(s[i:j])
                i = j
                continue
            if state is _State.START:
                if c == "[":
                    self._in_array = True
                    self._state = _State.ARRAY_FIRST
                    self._raw.append(c)
                    i += 1
                elif c == "{":
                    self._open_object()
                    i += 1
                else:
                    self._state = _State.NAME
            elif state is _State.NAME or state is _State.CALL_ID or state is _State.AFTER_NAME:
                if state is not _State.AFTER_NAME:
                    j = i
                    while j < n and _is_name_char(s[j]):
                        j += 1
                    if j > i:
                        (self._name if state is _State.NAME else self._id).append(s[i:j])
                        self._raw.append(s[i:j])
                        i = j
                        continue
                    if c in WHITESPACE:
                        self._state = _State.AFTER_NAME
                        continue
                if not self._name:
                    return self._malformed(s, i)
                if c == "{":  # [ARGS] dropped by the decoder
                    self._open_object()
                    i += 1
                    continue
                marked = self._marker(s, i) if c == "[" else -1
                if marked is None:
                    return None
                if marked < 0:
                    return self._malformed(s, i)
                i = marked
            elif state is _State.ARGS_START:
                if c != "{":
                    return self._malformed(s, i)
                self._open_object()
                i += 1
            else:  # the v3 array between items
                if c == "{" and state is not _State.ARRAY_AFTER:
                    self._open_object()
                    i += 1
                elif c == "," and state is _State.ARRAY_AFTER:
                    self._state = _State.ARRAY_NEXT
                    self._raw.append(c)
                    i += 1
                elif c == "]" and state is not _State.ARRAY_NEXT:
                    # The array is complete; its brackets and separators are markup, unless the
                    # item before was not a call: then they are text, like the item.
                    if self._last_malformed:
                        self._items.append("".join(self._raw) + c)
                    self._raw = []
                    return s[i + 1 :]
                else:
                    return self._malformed(s, i)
        return None

    def _marker(self, s: str, i: int) -> int | None:
        """At a `[` after the name or id: the index after [ARGS] / [CALL_ID], -1 if neither,
        `None` when the piece ends inside one (it is carried to the next piece)."""
        markers = (ARGS,) if self._has_id else (ARGS, CALL_ID)
        for marker in markers:
            if s.startswith(marker, i):
                self._raw.append(marker)
                if marker == ARGS:
                    self._state = _State.ARGS_START
                else:
                    self._has_id = True
                    self._state = _State.CALL_ID
                return i + len(marker)
        tail = s[i:]
        if any(len(tail) < len(m) and m.startswith(tail) for m in markers):
            self._carry = tail
            return None
        return -1

    def _open_object(self) -> None:
        self._state = _State.OBJECT
        self._json = JsonDepth()
        self._body = ["{"]

    def _object_closed(self) -> bool:
        """A JSON object closed: record the call (or its raw text). True when the block ends."""
        body = "".join(self._body)
        self._body = []
        obj = load_object(body)
        call: Call | None = None
        if obj is not None:
            if self._name:
                call_id = "".join(self._id)
                call = Call(name="".join(self._name), arguments=dump_arguments(obj), id=call_id or None)
            else:
                call = call_from_object(obj)
        raw = "".join(self._raw) + body
        self._raw = []
        self._items.append(call if call is not None else raw)
        self._last_malformed = call is None
        if self._in_array:
            self._state = _State.ARRAY_AFTER
            return False
        return True

    def _malformed(self, s: str, i: int) -> str:
        """Not a call after all: what was read is text, and so is the rest from `s[i]` on."""
        raw = "".join(self._raw)
        self._raw = []
        if raw:
            self._items.append(raw)
        return s[i:]

    def take(self) -> list[Call | str]:
        items, self._items = self._items, []
        return items

    def finish(self) -> str | None:
        raw = "".join(self._raw) + "".join(self._body) + self._carry
        return raw or None


class MistralParser(BlockParser):
    openers = (OPEN,)
    stray_tokens = (ARGS, CALL_ID)

    def open_block(self, opener: str) -> MistralBlock:
        return MistralBlock(opener)


# -- request side: the chat template's text --------------------------------------------------------

# Written in the v3 tokenizer's layout (`[TOOL_CALLS] [...]`); the parser reads the v11 layout too.
_MISTRAL_ID = re.compile(r"[A-Za-z0-9]{9}")


def _mistral_id(call_id: str, name: str, n: int) -> str:
    return call_id if _MISTRAL_ID.fullmatch(call_id) else alnum_id(call_id or f"{name}:{n}")


def _mistral_calls(calls: Sequence[CallToRender]) -> str:
    items = ", ".join(
        f'{{"name": {dumps(c.name)}, "arguments": {dumps(dict(c.arguments))}, '
        f'"id": {dumps(_mistral_id(c.id, c.name, i))}}}'
        for i, c in enumerate(calls)
    )
    return f"[TOOL_CALLS] [{items}]" if calls else ""


def _mistral_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    return (
        "You are a helpful assistant that can call tools. If you call one or more tools, format them in a single "
        "JSON array or objects, where each object is a tool call, not as separate objects outside of an array or "
        'multiple arrays. Use the format [{"name": tool call name, "arguments": tool call arguments}, additional '
        "tool calls] if you call more than one tool. If you call tools, do not attempt to interpret them or "
        "otherwise provide a response until you receive a tool call result that you can interpret for the user."
        "\n\n[AVAILABLE_TOOLS] [" + tool_lines(tools, sep=", ") + "][/AVAILABLE_TOOLS]"
    )


def _mistral_result(result: ToolResult) -> str:
    try:
        content = json.loads(result.output)
    except (ValueError, RecursionError):
        content = result.output
    return "[TOOL_RESULTS] " + dumps({"content": content, "call_id": result.call_id}) + "[/TOOL_RESULTS]"


MISTRAL = Renderer(
    calls=_mistral_calls,
    tools=_mistral_tools,
    results=results_joined(_mistral_result, ""),
    assistant=lambda c, k: join_turn(c, k, ""),
    native_id=_mistral_id,
    prepend=True,  # the template puts its tool prompt before the system message
)


# What `_mistral_calls` writes (the v3 layout), as a grammar.
MISTRAL_GRAMMAR = CallGrammar(
    call=(
        Lit('{"name": '),
        Name(json=True),
        Lit(', "arguments": '),
        Args(),
        Lit(', "id": "'),
        Chars("A-Za-z0-9", 9, 9),
        Lit('"}'),
    ),
    separator=", ",
    section=(OPEN + " [", "]"),
    trigger=OPEN,
    special_tokens=(OPEN,),
    reasoning=THINK,
)


DIALECTS = [
    Dialect(
        name="mistral",
        markers=(OPEN,),
        detected_reasoning=(THINK,),
        description=(
            "[TOOL_CALLS] [{json}, …] (v3: Mistral-7B-v0.3, Mixtral, Nemo) and [TOOL_CALLS]f[ARGS]{json} "
            "(v11+: Mistral Small 3.2, Magistral, Devstral, Ministral 3), [THINK] reasoning"
        ),
        machine=MistralParser,
        renderer=MISTRAL,
        grammar=MISTRAL_GRAMMAR,
        models=(r"mistral", r"mixtral", r"magistral", r"devstral", r"ministral", r"codestral", r"pixtral"),
        reasoning=ReasoningSyntax(pairs=(THINK, ("<think>", "</think>"))),
    )
]


__all__ = [
    "ARGS",
    "CALL_ID",
    "DIALECTS",
    "MISTRAL",
    "OPEN",
    "THINK",
    "MistralBlock",
    "MistralParser",
]
