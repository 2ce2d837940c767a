"""`kimi_k3`: the XTML markup of Kimi-K3 (`<|open|>NAME attrs<|sep|>…<|close|>NAME<|sep|>`).

```
<|open|>think<|sep|>reasoning<|close|>think<|sep|>
<|open|>response<|sep|>content<|close|>response<|sep|>
<|open|>tools<|sep|>
  <|open|>call tool="NAME" index="1"<|sep|>
    <|open|>argument key="K" type="string"<|sep|>raw text<|close|>argument<|sep|>
  <|close|>call<|sep|>
<|close|>tools<|sep|>
<|close|>message<|sep|>
```
(written without the line breaks). The template opens the think channel itself when thinking is
on, and the response channel when it is off; a response or tools channel that opens inside the
think channel ends it. The response wrapper and the message end are layout and vanish; the text
inside is content, verbatim.

Attribute values are XML-escaped (`&amp;`, `&quot;`). An argument's value is raw text typed by its
`type` attribute: `string` (the default) stays text, any other type is JSON-decoded, and a value
that does not decode stays text. A `<|open|>json<|sep|>{…}<|close|>json<|sep|>` element carries
the arguments as one JSON object. The template encodes values as ordinary text, so a value can
contain `<|close|>argument<|sep|>` written out: it ends the value only when the next element
(`<|open|>argument`, `<|open|>json` or `<|close|>call<|sep|>`) follows it. The `index` attribute
counts calls per message and is not an id.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from enum import Enum
from typing import Any

from .._reasoning import ReasoningSyntax
from .._schema import JSON_OBJECT
from .._textscan import WHITESPACE, MarkerScanner
from ._base import BlockParser, Call, Dialect, ParseContext, dump_arguments, load_object
from ._rendering import CallToRender, Renderer, ToolChoice, ToolSpec, dumps, dumps_safe, fallback_result, results_joined
from .call_grammar import JSON_TYPES, Args, CallGrammar, Chars, Lit, Name

OPEN = "<|open|>"
SEP = "<|sep|>"
THINK_OPEN = "<|open|>think<|sep|>"
THINK_CLOSE = "<|close|>think<|sep|>"
RESPONSE_OPEN = "<|open|>response<|sep|>"
RESPONSE_CLOSE = "<|close|>response<|sep|>"
TOOLS_OPEN = "<|open|>tools<|sep|>"
TOOLS_CLOSE = "<|close|>tools<|sep|>"
MESSAGE_CLOSE = "<|close|>message<|sep|>"
END_OF_MESSAGE = "<|end_of_msg|>"
CALL_OPEN = "<|open|>call"
CALL_CLOSE = "<|close|>call<|sep|>"
ARGUMENT_OPEN = "<|open|>argument"
JSON_OPEN = "<|open|>json"
VALUE_CLOSES = {ARGUMENT_OPEN: "<|close|>argument<|sep|>", JSON_OPEN: "<|close|>json<|sep|>"}
# What may follow a value's real closing marker; anything else means the marker was value text.
FOLLOWERS = (ARGUMENT_OPEN, JSON_OPEN, CALL_CLOSE)
# Layout markers outside the tools channel: they vanish, the text between them is content.
LAYOUT = (RESPONSE_OPEN, RESPONSE_CLOSE, MESSAGE_CLOSE, END_OF_MESSAGE)

_ENTITY = re.compile(r"&(amp|quot|apos|lt|gt|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});")
_NAMED = {"amp": "&", "quot": '"', "apos": "'", "lt": "<", "gt": ">"}


def _unescape_entity(m: re.Match[str]) -> str:
    ref = m.group(1)
    if ref in _NAMED:
        return _NAMED[ref]
    code = int(ref[2:], 16) if ref[1] == "x" else int(ref[1:])
    return chr(code) if code <= 0x10FFFF else m.group()


def attributes(header: str) -> dict[str, str]:
    """`tool="f" index="1"` -> {"tool": "f", "index": "1"}, values XML-unescaped.

    A plain left-to-right scan (no regex backtracking over a long malformed header).
    """
    found: dict[str, str] = {}
    i = 0
    while True:
        eq = header.find('="', i)
        if eq < 0:
            return found
        end = header.find('"', eq + 2)
        if end < 0:
            return found
        words = header[i:eq].split()
        if words and not header[eq - 1].isspace():
            found[words[-1]] = _ENTITY.sub(_unescape_entity, header[eq + 2 : end])
        i = end + 1


def typed_value(raw: str, kind: str) -> Any:
    """An argument's value by its `type` attribute; text that does not decode stays text."""
    if kind == "string":
        return raw
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return raw


class _State(Enum):
    TOOLS = "tools"  # between calls
    CALL_HEAD = "call_head"  # `<|open|>call` … `<|sep|>`
    CALL_BODY = "call_body"  # between a call's elements
    ELEMENT_HEAD = "element_head"  # `<|open|>argument` … `<|sep|>`
    VALUE = "value"
    LOOKAHEAD = "lookahead"  # after a possible value end, until the next element decides


class XtmlToolsBlock:
    """The tools channel (or, with `bare`, one call written without it)."""

    def __init__(self, opener: str, ctx: ParseContext, *, bare: bool = False) -> None:
        self._ctx = ctx
        self._bare = bare
        self._items: list[Call | str] = []
        self._started = bare  # a call has begun in this block
        self._section_raw = [opener]  # the block's text until the first call begins
        self._raw: list[str] = [opener] if bare else []  # the current call's text
        self._state = _State.CALL_HEAD if bare else _State.TOOLS
        self._scanner = MarkerScanner((SEP,) if bare else (CALL_OPEN, TOOLS_CLOSE, MESSAGE_CLOSE))
        self._head: list[str] = []
        self._element = ARGUMENT_OPEN
        self._value: list[str] = []
        # After a possible value end: the whitespace pieces that follow it, then the start of the
        # next element (shorter than the longest follower), kept apart so nothing is rescanned.
        self._ws: list[str] = []
        self._tail = ""
        self._name: str | None = None
        self._args: dict[str, Any] = {}
        self._key = ""
        self._kind = "string"
        self._bad = False

    def take(self) -> list[Call | str]:
        items, self._items = self._items, []
        return items

    def finish(self) -> str | None:
        if self._state is _State.TOOLS:
            # A tools channel opened with no call in it: the model was cut off.
            return None if self._started else "".join(self._section_raw) + self._scanner.pending
        if self._state is _State.LOOKAHEAD:
            return "".join(self._raw) + VALUE_CLOSES[self._element] + "".join(self._ws) + self._tail
        return "".join(self._raw) + self._scanner.pending

    def feed(self, text: str) -> str | None:
        while True:
            if self._state is _State.LOOKAHEAD:
                decided = self._decide(text)
                if decided is None:
                    return None
                text = decided
                continue
            before, marker, text = self._scanner.feed(text)
            rest = self._step(before, marker)
            if marker is None:
                return None
            if rest:
                return text

    def _step(self, before: str, marker: str | None) -> bool:
        """Consume `before` and `marker` in the current state; True when the block has ended."""
        state = self._state
        if state is _State.TOOLS:
            if not self._started:
                self._section_raw.append(before)
            # Text between the calls of the channel is not content; it is dropped.
            if marker is None:
                return False
            if marker != CALL_OPEN:
                return True
            self._started = True
            self._raw = [marker]
            self._head = []
            self._go(_State.CALL_HEAD, (SEP,))
            return False
        self._raw.append(before)
        if marker is not None:
            self._raw.append(marker)
        if state is _State.CALL_HEAD:
            self._head.append(before)
            if marker is not None:
                self._name = attributes("".join(self._head)).get("tool") or None
                self._args = {}
                self._bad = self._name is None
                self._go(_State.CALL_BODY, (*FOLLOWERS, TOOLS_CLOSE))
        elif state is _State.CALL_BODY:
            # Whitespace (or stray text) between the elements of a call is layout.
            if marker in VALUE_CLOSES:
                self._element = marker
                self._head = []
                self._go(_State.ELEMENT_HEAD, (SEP,))
            elif marker == CALL_CLOSE:
                return self._end_call() or self._bare
            elif marker == TOOLS_CLOSE:
                # The channel closed inside a call: the call is not finished, so it is text.
                self._raw.pop()
                self._bad = True
                self._end_call()
                return True
        elif state is _State.ELEMENT_HEAD:
            self._head.append(before)
            if marker is not None:
                attrs = attributes("".join(self._head))
                self._key = attrs.get("key", "")
                self._kind = attrs.get("type", "string")
                if self._element == ARGUMENT_OPEN and not self._key:
                    self._bad = True
                self._value = []
                self._go(_State.VALUE, (VALUE_CLOSES[self._element],))
        elif state is _State.VALUE:
            self._value.append(before)
            if marker is not None:
                self._raw.pop()  # the marker goes back in if the lookahead rejects it
                self._state = _State.LOOKAHEAD
                self._ws = []
                self._tail = ""
        return False

    def _go(self, state: _State, markers: tuple[str, ...]) -> None:
        self._state = state
        self._scanner = MarkerScanner(markers)

    def _decide(self, text: str) -> str | None:
        """Is the marker before `text` the value's end? The text to feed on, or None to wait."""
        if not self._tail:
            body = text.lstrip(WHITESPACE)
            self._ws.append(text[: len(text) - len(body)])
            text = body
            if not text:
                return None
        tail = self._tail + text
        close = VALUE_CLOSES[self._element]
        if any(tail.startswith(f) for f in FOLLOWERS):
            verdict = True
        elif any(f.startswith(tail) for f in FOLLOWERS):
            self._tail = tail
            return None
        else:
            verdict = False
        rest = "".join(self._ws) + tail
        self._ws = []
        self._tail = ""
        self._raw.append(close)
        if verdict:
            self._end_value()
            self._go(_State.CALL_BODY, (*FOLLOWERS, TOOLS_CLOSE))
        else:
            # Value text that looks like the closing marker: it stays in the value.
            self._value.append(close)
            self._go(_State.VALUE, (close,))
        return rest

    def _end_value(self) -> None:
        raw = "".join(self._value)
        self._value = []
        if self._element == JSON_OPEN:
            obj = load_object(raw) if raw.strip() else {}
            if obj is None:
                self._bad = True
            else:
                self._args.update(obj)
            return
        self._args[self._key] = typed_value(raw, self._kind)

    def _end_call(self) -> bool:
        """Hand out the finished call (or its raw text when malformed); False to stay in the block."""
        if self._bad or self._name is None:
            self._items.append("".join(self._raw))
        else:
            self._items.append(Call(name=self._name, arguments=dump_arguments(self._args)))
        self._raw = []
        self._go(_State.TOOLS, (CALL_OPEN, TOOLS_CLOSE, MESSAGE_CLOSE))
        return False


class _Layout:
    """A layout marker outside the tools channel: it vanishes and text mode goes on at once."""

    def feed(self, text: str) -> str | None:
        return text

    def take(self) -> list[Call | str]:
        return []

    def finish(self) -> str | None:
        return None


class KimiK3Parser(BlockParser):
    openers = (TOOLS_OPEN, CALL_OPEN, *LAYOUT)

    def open_block(self, opener: str) -> XtmlToolsBlock | _Layout:
        if opener in LAYOUT:
            return _Layout()
        return XtmlToolsBlock(opener, self.ctx, bare=opener == CALL_OPEN)


def _prefills(model: str | None, thinking: bool | None) -> bool:
    # The template opens the think channel unless thinking is off; without a model name (the
    # dialect chosen by name) only an explicit `thinking=True` says so.
    return thinking is True or (thinking is None and model is not None)


# -- request side: the chat template's text --------------------------------------------------------


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;")


def _xtml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object" if isinstance(value, JSON_OBJECT) else "array"


def _k3_call(index: int, call: CallToRender) -> str:
    head = f'<|open|>call tool="{_attr(call.name)}" index="{index}"<|sep|>'
    texts = {k: v if isinstance(v, str) else dumps(v) for k, v in call.arguments.items()}
    if any("<|" in k or "<|" in t for k, t in texts.items()):
        # Markup in a value could end its element: the JSON element, `<` escaped, carries anything.
        body = f'<|open|>json type="object"<|sep|>{dumps_safe(dict(call.arguments))}<|close|>json<|sep|>'
    else:
        body = "".join(
            f'<|open|>argument key="{_attr(k)}" type="{_xtml_type(call.arguments[k])}"<|sep|>{t}'
            "<|close|>argument<|sep|>"
            for k, t in texts.items()
        )
    return head + body + "<|close|>call<|sep|>"


def _k3_calls(calls: Sequence[CallToRender]) -> str:
    if not calls:
        return ""
    return "<|open|>tools<|sep|>" + "".join(_k3_call(i, c) for i, c in enumerate(calls, 1)) + "<|close|>tools<|sep|>"


def _k3_turn(content: str, calls: str) -> str:
    response = f"<|open|>response<|sep|>{content}<|close|>response<|sep|>" if content else ""
    return response + calls


def _k3_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    listing = json.dumps([t.chat_shape() for t in tools], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return (
        "# Tools\nHere are the available tools, described in JSONSchema.\n\n```json\n" + listing + "\n```\n\n"
        'To call tools, write <|open|>tools<|sep|><|open|>call tool="NAME" index="1"<|sep|>'
        '<|open|>argument key="KEY" type="string"<|sep|>VALUE<|close|>argument<|sep|>…<|close|>call<|sep|>'
        "<|close|>tools<|sep|>."
    )


def _k3_choice(choice: ToolChoice) -> str | None:
    """The template's own `tool_choice` messages (it has none for a forced function)."""
    if choice.mode == "none":
        return "The system is invoked with `tool_choice=none`.\nYou MUST NOT call any tools in the next message."
    if choice.mode == "required" and choice.forced is None:
        return "The system is invoked with `tool_choice=required`.\nYou MUST call tools in the next message."
    return None


KIMI_K3 = Renderer(
    calls=_k3_calls,
    tools=_k3_tools,
    results=results_joined(fallback_result),
    assistant=_k3_turn,
    choice=_k3_choice,
)


# What `_k3_calls` writes in its argument form, as a grammar: each argument names its type
# (`_xtml_type`: a whole number is a `number` too).
KIMI_K3_GRAMMAR = CallGrammar(
    call=(
        Lit(CALL_OPEN + ' tool="'),
        Name(),
        Lit('" index="'),
        Chars("0-9"),
        Lit('"' + SEP),
        Args(
            xml=(ARGUMENT_OPEN + ' key="', '" type="{type}"' + SEP, VALUE_CLOSES[ARGUMENT_OPEN]),
            types=tuple((kind, "number" if kind == "integer" else kind) for kind in JSON_TYPES),
        ),
        Lit(CALL_CLOSE),
    ),
    section=(TOOLS_OPEN, TOOLS_CLOSE),
    special_tokens=(OPEN, SEP, "<|close|>"),
)


DIALECTS = [
    Dialect(
        name="kimi_k3",
        markers=(TOOLS_OPEN,),
        description=(
            '<|open|>tools<|sep|><|open|>call tool="f" index="1"<|sep|><|open|>argument key="k" type="string"'
            "<|sep|>v<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>: Kimi-K3 (XTML)"
        ),
        machine=KimiK3Parser,
        renderer=KIMI_K3,
        grammar=KIMI_K3_GRAMMAR,
        models=(r"kimi-?k3",),
        reasoning=ReasoningSyntax(
            pairs=((THINK_OPEN, THINK_CLOSE),),
            implicit_ends=((TOOLS_OPEN,),),
            answer_starts=((RESPONSE_OPEN,),),
        ),
        prefills_reasoning=_prefills,
    )
]


__all__ = [
    "ARGUMENT_OPEN",
    "CALL_CLOSE",
    "CALL_OPEN",
    "DIALECTS",
    "END_OF_MESSAGE",
    "FOLLOWERS",
    "JSON_OPEN",
    "KIMI_K3",
    "KIMI_K3_GRAMMAR",
    "LAYOUT",
    "MESSAGE_CLOSE",
    "OPEN",
    "RESPONSE_CLOSE",
    "RESPONSE_OPEN",
    "SEP",
    "THINK_CLOSE",
    "THINK_OPEN",
    "TOOLS_CLOSE",
    "TOOLS_OPEN",
    "VALUE_CLOSES",
    "KimiK3Parser",
    "XtmlToolsBlock",
    "attributes",
    "typed_value",
]
