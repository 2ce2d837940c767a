"""`granite` and `granite_20b_fc`: IBM Granite 3.x and granite-20b-functioncalling.

```
<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]     Granite 3.0 (a token)
<tool_call>[{"name": "get_weather", "arguments": {"city": "Paris"}}]       Granite 3.1-3.3 (text)
<function_call> {"name": "get_weather", "arguments": {"city": "Paris"}}    granite-20b-functioncalling
```

Granite 3 writes one JSON array of calls after the marker, with no closing marker; vLLM's
`granite` parser requires the output to start with it, here text before it is content. A bare
`[{` where the answer starts is a call array too (3.0's marker is a special token, which a
decoder that skips special tokens drops), as vLLM reads it; elsewhere a bracket is text. The
20B function-calling model writes one object per `<function_call>`, repeated for parallel calls.
Granite 4 writes hermes `<tool_call>{…}</tool_call>` blocks and is selected as `hermes`.

Granite 3.2 and 3.3 think in plain text when asked (`thinking=True` in the chat template):
`Here is my thought process:` … `Here is my response:` (or `Here's …`), as vLLM's `granite`
reasoning parser reads it; the markers count only at the start of the output.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .._reasoning import ReasoningSyntax
from ._base import Block, BlockParser, Dialect
from ._dialect import SharedMarker
from ._json_calls import BARE_ARRAY, JsonCallsBlock, JsonCallsSyntax, bare_array_block
from ._rendering import CallToRender as RenderCall
from ._rendering import Renderer, ToolSpec, dumps, join_turn
from .call_grammar import Args, CallGrammar, Lit, Name, call_object_schema

TOKEN = "<|tool_call|>"
TAG = "<tool_call>"
FUNCTION_CALL = "<function_call>"

_ARRAY = JsonCallsSyntax(shape="array")
_OBJECT = JsonCallsSyntax(shape="object")


class GraniteParser(BlockParser):
    openers = (TOKEN, TAG, BARE_ARRAY)
    strip_around_blocks = True

    def open_block(self, opener: str) -> Block:
        if opener == BARE_ARRAY:  # the marker token dropped by the decoder (vLLM reads this too)
            return bare_array_block(at_answer_start=not self._last and not self._after_call)
        return JsonCallsBlock(opener, _ARRAY)


class Granite20bParser(BlockParser):
    openers = (FUNCTION_CALL,)
    strip_around_blocks = True

    def open_block(self, opener: str) -> JsonCallsBlock:
        return JsonCallsBlock(opener, _OBJECT)


def call_array(calls: Sequence[RenderCall], name: str = "name", arguments: str = "arguments") -> str:
    """The calls as one JSON array of `{name: …, arguments: {…}}` objects."""
    return dumps([{name: c.name, arguments: dict(c.arguments)} for c in calls])


CALL_OBJECT = (
    Lit('{"name": '),
    Name(json=True),
    Lit(', "arguments": '),
    Args(),
    Lit("}"),
)  # as `call_array` writes one


def array_grammar(opening: str, closing: str = "", special: tuple[str, ...] = (), **extra: Any) -> CallGrammar:
    """What `opening + call_array(calls) + closing` is, as a grammar (the JSON-array dialects)."""
    section = (opening + "[", "]" + closing)
    return CallGrammar(call=CALL_OBJECT, separator=", ", section=section, special_tokens=special, **extra)


def array_document(calls: Sequence[Mapping[str, Any]], parallel: bool) -> dict[str, Any]:
    """A bare call array, as a JSON schema (the whole answer of a bare-array dialect)."""
    schema: dict[str, Any] = {
        "type": "array",
        "items": {"anyOf": [call_object_schema(c["name"], c["schema"]) for c in calls]},
    }
    schema["minItems"] = 1
    if not parallel:
        schema["maxItems"] = 1
    return schema


GRANITE_GRAMMAR = array_grammar(TOKEN, special=(TOKEN,))
GRANITE_20B_GRAMMAR = CallGrammar(call=(Lit(FUNCTION_CALL + " "), *CALL_OBJECT), separator=" ")


def tool_list(tools: Sequence[ToolSpec], sep: str = "\n\n") -> str:
    """Each tool's `{"type": "function", "function": {…}}` object, as the templates list them."""
    return sep.join(dumps(t.chat_shape()) for t in tools)


def _granite_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    # The Granite 3 templates' `available_tools` turn, and how the model is told to call them.
    return (
        "<|start_of_role|>available_tools<|end_of_role|>\n"
        + "\n\n".join(json.dumps(t.chat_shape(), ensure_ascii=False, indent=4) for t in tools)
        + "<|end_of_text|>\n\nWhen a tool is required to answer the user's query, respond with "
        f"{TOKEN} followed by a JSON list of tools used: "
        f'{TOKEN}[{{"name": <function-name>, "arguments": <args-json-object>}}, …]'
    )


def _granite_20b_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    # vLLM's `tool_chat_template_granite_20b_fc.jinja`: the function library, one JSON a line.
    library = "\n".join(
        dumps({"name": t.name, "description": t.description or "", "parameters": dict(t.schema())}) for t in tools
    )
    return (
        "You are a helpful assistant with access to the following function calls. Your task is to understand the "
        "given conversation with function calls and responses and generate natural language response as the "
        "ASSISTANT to continue the conversation. You may use the following function calls to understand how to "
        "respond to the user query.\n<|function_call_library|>\n" + library + "\n\n"
        f'To call a function, write {FUNCTION_CALL} {{"name": <function-name>, "arguments": <args-json-object>}}; '
        "write one such line per call."
    )


GRANITE_RENDERER = Renderer(
    calls=lambda calls: TOKEN + call_array(calls) if calls else "",
    tools=_granite_tools,
)

GRANITE_20B_RENDERER = Renderer(
    calls=lambda calls: " ".join(
        f"{FUNCTION_CALL} " + dumps({"name": c.name, "arguments": dict(c.arguments)}) for c in calls
    ),
    tools=_granite_20b_tools,
    assistant=lambda content, calls: join_turn(content, calls, " "),
)

# Granite 3.2/3.3 plain-text thinking markers (vLLM `granite` reasoning parser).
# A response phrase in the answer with no thought process before it is the model's text.
_RESPONSE = ("Here is my response:", "Here's my response:")
GRANITE_THINKING = ReasoningSyntax(
    pairs=(
        ("Here is my thought process:", _RESPONSE[0]),
        ("Here's my thought process:", _RESPONSE[1]),
        ("<think>", "</think>"),
    ),
    prose_closes=_RESPONSE,
)

DIALECTS = [
    Dialect(
        name="granite_20b_fc",
        shared_markers=(SharedMarker(FUNCTION_CALL, r"[ \t\r\n]*\{", r"\{"),),
        description='<function_call> {"name": …, "arguments": …} per call: granite-20b-functioncalling',
        machine=Granite20bParser,
        models=(r"granite-20b-function",),
        renderer=GRANITE_20B_RENDERER,
        grammar=GRANITE_20B_GRAMMAR,
    ),
    Dialect(
        name="granite",
        markers=(TOKEN,),
        description="<|tool_call|>[{json}, …] (3.0) and <tool_call>[…] (3.1-3.3): IBM Granite 3.x, "
        "plain-text thinking of 3.2/3.3",
        machine=GraniteParser,
        models=(r"granite-?3",),
        reasoning=GRANITE_THINKING,
        renderer=GRANITE_RENDERER,
        grammar=GRANITE_GRAMMAR,
    ),
]

__all__ = [
    "DIALECTS",
    "FUNCTION_CALL",
    "GRANITE_20B_RENDERER",
    "GRANITE_RENDERER",
    "GRANITE_THINKING",
    "TAG",
    "TOKEN",
    "Granite20bParser",
    "GraniteParser",
    "call_array",
    "tool_list",
]
