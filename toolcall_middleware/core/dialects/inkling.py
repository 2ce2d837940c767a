"""`inkling`: the typed message blocks of Inkling models.

```
<|content_thinking|>The user wants the weather.<|end_message|>
<|message_model|><|content_text|>Sure, let me check.<|end_message|>
<|message_model|>weather<|content_invoke_tool_json|>{"name":"weather","args":{"city":"SF"}}<|end_message|>
<|content_model_end_sampling|>
```

An Inkling output is a run of model messages, each `<|message_model|>`, a header, a content-kind
token and the body up to `<|end_message|>`. A call is a message whose header is the tool's name
and whose kind is `<|content_invoke_tool_json|>`: its body is one JSON object `{"name", "args"}`,
the name the header's (a mismatch, or a body of another shape, is text as written), as SGLang's
`inkling` detector reads it. The framing tokens around text (`<|content_text|>`, `<|end_message|>`,
`<|content_model_end_sampling|>`, `<|endoftext|>`) are markup, dropped wherever they stand; so is
an empty header. A thinking block (`<|content_thinking|>…<|end_message|>`) where the output starts
is reasoning. (The raw-text invocation `<|content_invoke_tool_text|>` names no function, so it
cannot be an OpenAI call: it stays text.)
"""

from __future__ import annotations

from collections.abc import Sequence

from .._reasoning import ReasoningSyntax
from ._base import Block, BlockItem, BlockParser, Call, Dialect
from ._json_calls import DroppedMarker, JsonCallsBlock, JsonCallsSyntax
from ._rendering import CallToRender, Renderer, ToolSpec, dumps, tools_in_tags
from .call_grammar import Args, CallGrammar, Lit, Name
from .gigachat import strict_call

MESSAGE_MODEL = "<|message_model|>"
INVOKE_JSON = "<|content_invoke_tool_json|>"
CONTENT_TEXT = "<|content_text|>"
CONTENT_THINKING = "<|content_thinking|>"
END_MESSAGE = "<|end_message|>"
END_SAMPLING = "<|content_model_end_sampling|>"
END_OF_TEXT = "<|endoftext|>"
# Framing that carries no text of its own: dropped where it stands. (`<|end_message|>`, which
# also closes the reasoning block, is dropped as a reasoning close with none open: the same.)
FRAMING = (CONTENT_TEXT, END_SAMPLING, END_OF_TEXT, "<|model_trigger_generation|>")
_HEADER_MAX = 256  # a longer "header" is text, not a tool's name


def _syntax(header: str | None) -> JsonCallsSyntax:
    def read(item: object) -> Call | None:
        call = strict_call(item, "args")
        if call is None or (header is not None and header != call.name):
            return None  # (a header naming another tool than the body: no call)
        return call

    return JsonCallsSyntax(shape="object", close=END_MESSAGE, read=read)


class MessageHeader:
    """After `<|message_model|>`: the header, then a call's JSON body, or the message's text."""

    def __init__(self) -> None:
        self._head = ""
        self._call: JsonCallsBlock | None = None
        self._items: list[BlockItem] = []

    def feed(self, text: str) -> str | None:
        if self._call is not None:
            return self._body(text)
        s = self._head + text
        lt = s.find("<|")
        head = s if lt < 0 else s[:lt]
        if len(head) > _HEADER_MAX or "\n" in head:
            self._items.append(s)  # prose after a message token: text
            return ""
        if lt < 0:
            self._head = s  # the header goes on (a trailing `<` waits too)
            return None
        tail = s[lt:]
        if tail.startswith(INVOKE_JSON):
            self._head = ""
            self._call = JsonCallsBlock(MESSAGE_MODEL + head + INVOKE_JSON, _syntax(head.strip() or None))
            return self._body(tail[len(INVOKE_JSON) :])
        if INVOKE_JSON.startswith(tail):
            self._head = s
            return None
        if head:
            self._items.append(head)  # a header that opens no call is text
        return tail  # another token: the text mode reads it

    def _body(self, text: str) -> str | None:
        assert self._call is not None
        rest = self._call.feed(text)
        self._items.extend(self._call.take())
        return rest

    @property
    def end_marker(self) -> str:
        """The call's end, once its body has begun (`closed_at_stop`); a header alone has none."""
        return END_MESSAGE if self._call is not None else ""

    def take(self) -> list[BlockItem]:
        items, self._items = self._items, []
        return items

    def finish(self) -> str | None:
        if self._call is not None:
            return self._call.finish()
        if self._head:
            self._items.append(self._head)
        return None


class InklingParser(BlockParser):
    openers = (MESSAGE_MODEL, INVOKE_JSON, *FRAMING)

    def open_block(self, opener: str) -> Block:
        if opener == MESSAGE_MODEL:
            return MessageHeader()
        if opener == INVOKE_JSON:
            return JsonCallsBlock(opener, _syntax(None))
        return DroppedMarker()


# -- request side ----------------------------------------------------------------------------------


def _calls(calls: Sequence[CallToRender]) -> str:
    return "".join(
        f"{MESSAGE_MODEL}{c.name}{INVOKE_JSON}{dumps({'name': c.name, 'args': dict(c.arguments)})}{END_MESSAGE}"
        for c in calls
    )


def _assistant(content: str, calls: str) -> str:
    text = f"{CONTENT_TEXT}{content}{END_MESSAGE}" if content else ""
    return text + calls


def _tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    # Inkling's own template was not available to copy: the tools, and the message the engines read.
    return tools_in_tags(
        tools,
        f"To call a function, write a message headed by its name:\n{MESSAGE_MODEL}function-name{INVOKE_JSON}"
        f'{{"name": "function-name", "args": <args-json-object>}}{END_MESSAGE}',
    )


INKLING = Renderer(calls=_calls, tools=_tools, assistant=_assistant)


# What `_calls` writes, as a grammar: the header and the body name the same tool.
INKLING_GRAMMAR = CallGrammar(
    call=(
        Lit(MESSAGE_MODEL),
        Name(),
        Lit(INVOKE_JSON + '{"name": '),
        Name(json=True),
        Lit(', "args": '),
        Args(),
        Lit("}" + END_MESSAGE),
    ),
    trigger=MESSAGE_MODEL,
    special_tokens=(MESSAGE_MODEL, INVOKE_JSON, END_MESSAGE),
)


DIALECTS = [
    Dialect(
        name="inkling",
        markers=(MESSAGE_MODEL, INVOKE_JSON, CONTENT_TEXT),
        description='<|message_model|>f<|content_invoke_tool_json|>{"name": "f", "args": {…}}<|end_message|>: Inkling',
        machine=InklingParser,
        renderer=INKLING,
        grammar=INKLING_GRAMMAR,
        models=(r"inkling",),
        reasoning=ReasoningSyntax(
            pairs=((CONTENT_THINKING, END_MESSAGE), (MESSAGE_MODEL + CONTENT_THINKING, END_MESSAGE))
        ),
    )
]


__all__ = [
    "DIALECTS",
    "END_MESSAGE",
    "INKLING",
    "INKLING_GRAMMAR",
    "INVOKE_JSON",
    "MESSAGE_MODEL",
    "InklingParser",
    "MessageHeader",
]
