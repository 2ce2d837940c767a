"""`gigachat3`: the function calls of Sber's GigaChat 3 and 3.1.

```
I'll remember that.<|message_sep|>\\n\\nfunction call<|role_sep|>\\n{"name": "f", "arguments": {"a": 1}}</s>
I'll remember that.<|function_call|>{"name": "f", "arguments": {"a": 1}}                        GigaChat 3.1
```

GigaChat's template writes a conversation as role messages, each `ROLE<|role_sep|>\\n…` ended by
`<|message_sep|>\\n\\n`; the assistant's call is a message of its own, of the role
`function call`, holding one JSON object `{"name", "arguments"}`. So the model ends its text
with `<|message_sep|>` and opens the call with `function call<|role_sep|>`; GigaChat 3.1 writes
the single token `<|function_call|>` instead. The call has no closing marker: the object's own
end ends it (vLLM and SGLang take the rest of the output as the object). `arguments` must be an
object, or the block is text, as both engines read it.

`<|message_sep|>` (with the layout after it) is markup wherever it stands, and `</s>`, the
end-of-output token, is markup where the output ends; anywhere else it is text (`<s>…</s>` is
HTML's strike-through). The template writes one call per assistant turn; calls written one
after another are each read.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._schema import JSON_OBJECT
from .._textscan import WHITESPACE
from ._base import Block, BlockItem, BlockParser, Call, Dialect, dump_arguments
from ._json_calls import DroppedMarker, JsonCallsBlock, JsonCallsSyntax
from ._rendering import CallToRender, Renderer, ToolSpec, dumps, join_turn
from .call_grammar import Args, CallGrammar, Lit, Name
from .harmony import ts_type

ROLE_SEP = "<|role_sep|>"
MESSAGE_SEP = "<|message_sep|>"
FUNCTION_CALL = "function call" + ROLE_SEP  # GigaChat 3: the call is a `function call` message
FUNCTION_CALL_TOKEN = "<|function_call|>"  # GigaChat 3.1
END = "</s>"


def strict_call(item: object, arguments_key: str = "arguments") -> Call | None:
    """`{"name": …, "arguments": {…}}` (the arguments under `arguments_key`): both keys, the name a
    string and the arguments an object, as the engines require of these formats; else `None`."""
    if not isinstance(item, dict):
        return None
    name, arguments = item.get("name"), item.get(arguments_key)
    if not isinstance(name, str) or not name or not isinstance(arguments, dict):
        return None
    return Call(name=name, arguments=dump_arguments(arguments))


_CALL = JsonCallsSyntax(shape="object", read=strict_call)


class EndToken:
    """`</s>`: dropped when only whitespace follows it to the end of the output, text otherwise."""

    def __init__(self) -> None:
        self._held = ""
        self._items: list[BlockItem] = []

    def feed(self, text: str) -> str | None:
        if not text.lstrip(WHITESPACE):
            self._held += text
            return None
        self._items.append(END)
        held, self._held = self._held, ""
        return held + text

    def take(self) -> list[BlockItem]:
        items, self._items = self._items, []
        return items

    def finish(self) -> None:
        return None


class GigaChatParser(BlockParser):
    openers = (FUNCTION_CALL, FUNCTION_CALL_TOKEN, MESSAGE_SEP, END)
    strip_around_blocks = True  # `<|message_sep|>\n\n` and `<|role_sep|>\n` lay the call out

    def open_block(self, opener: str) -> Block:
        if opener == MESSAGE_SEP:
            return DroppedMarker()
        if opener == END:
            return EndToken()
        return JsonCallsBlock(opener, _CALL)


# -- request side: the chat template's text --------------------------------------------------------


def _calls(calls: Sequence[CallToRender]) -> str:
    return f"{MESSAGE_SEP}\n\n".join(
        f"{FUNCTION_CALL}\n{dumps({'name': c.name, 'arguments': dict(c.arguments)})}" for c in calls
    )


def _tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    # The template's `function descriptions` message: the tools as a TypeScript namespace.
    out = ["namespace functions {"]
    for tool in tools:
        lines = [f"// {line}" for line in (tool.description or "").split("\n") if line.strip()]
        schema = tool.schema()
        props = schema.get("properties")
        if isinstance(props, JSON_OBJECT) and props:
            lines.append(f"type {tool.name} = (_: {ts_type(schema)}) => any;\n")
        else:
            lines.append(f"type {tool.name} = () => any;\n")
        out.append("\n".join(lines))
    out.append("} // namespace functions")
    return (
        "\n".join(out) + "\n\nTo call a function, end your message with <|message_sep|> and write a `function call` "
        'message: function call<|role_sep|>\n{"name": <function-name>, "arguments": <args-json-object>}'
    )


GIGACHAT3 = Renderer(
    calls=_calls,
    tools=_tools,
    assistant=lambda content, calls: join_turn(content, calls, f"{MESSAGE_SEP}\n\n"),
)


# What `_calls` writes (GigaChat 3's `function call` messages), as a grammar.
GIGACHAT3_GRAMMAR = CallGrammar(
    call=(Lit(FUNCTION_CALL + '\n{"name": '), Name(json=True), Lit(', "arguments": '), Args(), Lit("}")),
    separator=MESSAGE_SEP + "\n\n",
    trigger=FUNCTION_CALL,
    special_tokens=(ROLE_SEP, MESSAGE_SEP),
)


DIALECTS = [
    Dialect(
        name="gigachat3",
        markers=(MESSAGE_SEP, FUNCTION_CALL_TOKEN),
        description='function call<|role_sep|>\\n{"name": "f", "arguments": {…}}: GigaChat 3, 3.1',
        machine=GigaChatParser,
        renderer=GIGACHAT3,
        grammar=GIGACHAT3_GRAMMAR,
        # GigaChat 3 and 3.1 (3.5 writes another format).
        models=(r"gigachat-?3(?:\.[0-4])?(?![0-9.])",),
    )
]


__all__ = [
    "DIALECTS",
    "END",
    "FUNCTION_CALL",
    "FUNCTION_CALL_TOKEN",
    "GIGACHAT3",
    "GIGACHAT3_GRAMMAR",
    "MESSAGE_SEP",
    "EndToken",
    "GigaChatParser",
    "strict_call",
]
