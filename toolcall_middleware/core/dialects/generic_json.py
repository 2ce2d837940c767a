"""`generic_json`: a whole output that is one JSON object naming a call (grammar-forced output).

Shapes: `{"name": …, "arguments": …}`, `{"tool_call": {…}}`, `{"tool_calls": [{…}, …]}`
(llama.cpp's generic format), and `{"response": "…"}` for a plain answer. Output that does not
start with `{` is content at once; output that does is held until its object closes, then it is
calls, the response text, or (any other object) content as written. Text after the object is
content.

A closing reasoning marker in that text with no opening one before it (the template opened the
reasoning and the parser was not told) is dropped, as every dialect drops it (`ReasoningInText`);
the text before it stays content. Before any object, it also ends what came first: the output
starts again after it, so the object a grammar forces after the reasoning is still read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .._events import Event, OversizedCall, TextDelta, TruncatedCall
from .._inline_code import FENCE, TICK
from .._reasoning import ReasoningInText, ReasoningSyntax
from .._textscan import WHITESPACE, JsonDepth, hold_whitespace
from ._base import Call, Dialect, ParseContext, call_events
from ._code_aware import CodeAwareScanner
from ._rendering import CallToRender, Renderer, ToolSpec, dumps, join_turn, tool_lines
from .call_grammar import CallGrammar
from .granite import CALL_OBJECT, array_document
from .hermes import call_from_object


def calls_from_value(value: Any) -> list[Call] | str | None:
    """Calls from a decoded object, the `response` text, or `None` when it is neither."""
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("tool_calls"), list):
        calls = [c for c in (_one_call(v) for v in value["tool_calls"]) if c is not None]
        return calls if calls and len(calls) == len(value["tool_calls"]) else None
    if "tool_call" in value:
        call = _one_call(value["tool_call"])
        return [call] if call else None
    if isinstance(value.get("response"), str) and len(value) == 1:
        return str(value["response"])
    call = _one_call(value)
    return [call] if call else None


def _one_call(value: Any) -> Call | None:
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("function"), dict):  # OpenAI-shaped {"type": "function", "function": {…}}
        inner = dict(value["function"])
        inner.setdefault("id", value.get("id"))
        value = inner
    return call_from_object(value)


class GenericJsonParser:
    def __init__(self, ctx: ParseContext) -> None:
        self.ctx = ctx
        self._mode = "start"  # start -> object -> after (calls) | text | spent (a call over the limit)
        self._lead = ""  # whitespace before the object: layout if a call follows (`hold_whitespace`)
        self._body: list[str] = []
        self._json = JsonDepth(depth=0)  # the scan starts at the object's `{`
        self._body_chars = 0
        self._object_read = False  # an object was read (the one the output is): no new start
        # The text mode: reasoning markers outside code, the text held while one may be starting,
        # and the character before it.
        self._reasoning = ReasoningInText(ctx.stray_pairs)
        self._scanner = CodeAwareScanner((FENCE, TICK, *self._reasoning.markers))
        self._pending = ""
        self._prev = "\n"

    def feed(self, text: str) -> list[Event]:
        out: list[Event] = []
        if self._mode == "spent":  # (after a call over `ctx.max_call_chars`)
            return out
        if self._mode == "after":  # whitespace after a call object is layout
            text = text.lstrip(WHITESPACE)
            if not text:
                return out
            self._mode = "text"
        if self._mode == "text":
            return self._text(text, final=False)
        if self._mode == "start":
            stripped = text.lstrip(WHITESPACE)
            if not stripped:
                given, self._lead = hold_whitespace(self._lead + text)  # (bounded: the rest is text)
                if given:
                    out.append(TextDelta(given))
                return out
            if not stripped.startswith("{"):
                self._mode = "text"
                text, self._lead = self._lead + text, ""
                return out + self._text(text, final=False)
            given, self._lead = hold_whitespace(self._lead + text[: len(text) - len(stripped)])
            if given:
                out.append(TextDelta(given))
            self._mode = "object"
            text = stripped
        end = self._json.advance(text, 0)
        if end < 0:
            self._body.append(text)
            self._body_chars += len(text)
            limit = self.ctx.max_call_chars
            if limit is not None and self._body_chars > limit:  # let it go; read nothing more
                self._mode, self._body, self._lead = "spent", [], ""
                out.append(OversizedCall(self._body_chars))
            return out
        self._body.append(text[:end])
        self._mode = "text"
        out.extend(self._decide("".join(self._body)))
        self._body = []
        return out + self.feed(text[end:])

    def take_plain(self, text: str) -> str | None:
        """No plain-text shortcut (`ToolMachine.take_plain`): every piece takes `feed`."""
        return None

    def close(self) -> list[Event]:
        out: list[Event] = []
        while self._mode == "text" and self._pending:  # (a stray close may start the output again)
            out.extend(self._text("", final=True))
        if self._mode == "object":
            self._mode = "text"
            out.append(TruncatedCall(self._lead + "".join(self._body)))
        elif self._mode == "start" and self._lead:
            self._mode = "text"
            out.append(TextDelta(self._lead))
        return out

    def _text(self, text: str, final: bool) -> list[Event]:
        """Text outside the object: content, less a stray closing reasoning marker."""
        out: list[Event] = []
        if not self._pending and self._scanner.first_head(text) is None:
            self._say(out, text)  # (the usual piece: no marker or code can start in it)
            return out
        s, self._pending = self._pending + text, ""
        while True:
            pos, marker = self._scanner.next_stop(s, final, self._prev)
            if marker is None:  # all text, or text up to what must wait for more
                self._say(out, s[:pos])
                self._pending = s[pos:]
                return out
            kept = self._reasoning.is_text(marker)
            self._say(out, s[: pos + len(marker)] if kept else s[:pos])
            s = s[pos + len(marker) :]
            if not kept and not self._object_read:  # the reasoning ended: the output starts after it
                self._mode = "start"
                return out + self.feed(s)

    def _say(self, out: list[Event], text: str) -> None:
        if text:
            self._prev = text[-1]
            out.append(TextDelta(text))

    def _decide(self, raw: str) -> list[Event]:
        self._object_read = True
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            value = None
        found = calls_from_value(value)
        if isinstance(found, str):
            return [TextDelta(found)] if found else []
        if not found:
            return [TextDelta(self._lead + raw)]
        out: list[Event] = []
        for call in found:
            out.extend(call_events(self.ctx, call))
        self._mode = "after"
        return out


# -- request side: the chat template's text --------------------------------------------------------


def _generic_calls(calls: Sequence[CallToRender]) -> str:
    items = ", ".join(
        f'{{"name": {dumps(c.name)}, "arguments": {dumps(dict(c.arguments))}'
        + (f', "id": {dumps(c.id)}' if c.id else "")
        + "}"
        for c in calls
    )
    return f'{{"tool_calls": [{items}]}}' if calls else ""


def _generic_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    return (
        "Respond in JSON format, either with `tool_call` (a request to call tools) or with `response` reply to "
        "the user's request.\n\nThe tools you can call:\n" + tool_lines(tools) + "\n\n"
        'To call tools, the whole reply is {"tool_calls": [{"name": <function-name>, "arguments": '
        '<args-json-object>}]}; otherwise it is {"response": <your reply>}.'
    )


def _generic_turn(content: str, calls: str) -> str:
    # The whole output is one JSON object; text after it is content, text before it is not a call.
    return join_turn(calls, content)


GENERIC_JSON = Renderer(calls=_generic_calls, tools=_generic_tools, assistant=_generic_turn)


def _generic_document(calls: Sequence[Mapping[str, Any]], parallel: bool) -> dict[str, Any]:
    """The whole reply as `_generic_calls` writes it, as a JSON schema."""
    array = array_document(calls, parallel)
    return {
        "type": "object",
        "properties": {"tool_calls": array},
        "required": ["tool_calls"],
        "additionalProperties": False,
    }


# What `_generic_calls` writes (without ids), as a grammar.
GENERIC_JSON_GRAMMAR = CallGrammar(
    call=CALL_OBJECT,
    separator=", ",
    section=('{"tool_calls": [', "]}"),
    document=_generic_document,
)


DIALECTS = [
    Dialect(
        name="generic_json",
        description='whole-output JSON: {"name", "arguments"}, {"tool_call"}, {"tool_calls": [...]}, {"response"}',
        machine=GenericJsonParser,
        renderer=GENERIC_JSON,
        grammar=GENERIC_JSON_GRAMMAR,
        models=(),
        reasoning=ReasoningSyntax(),
    )
]


__all__ = [
    "DIALECTS",
    "GENERIC_JSON",
    "GenericJsonParser",
    "calls_from_value",
]
