"""`xlam`: Salesforce xLAM-2 (Llama- and Qwen-based), in each form its outputs take.

```
[{"name": "get_weather", "arguments": {"city": "Paris"}}, …]           the whole answer (the template's form)
[\n  {"name": …, "arguments": …}\n]                                    the same, pretty-printed
```json\\n[{"name": …, "arguments": …}]\\n```                            a fenced JSON block
[TOOL_CALLS][{"name": …, "arguments": …}]                              Mistral's marker
<tool_call>[{"name": …, "arguments": …}]</tool_call>                   hermes' tag (an array or one object)
```

as vLLM's `xlam` parser reads them; reasoning before `</think>` is split off first, so the array
after it is the answer. A bare `[{` is a call array only where the answer starts (after
reasoning and layout whitespace), as the template writes it: elsewhere it is text, so prose
with brackets stays prose. A
```` ```json ```` fence holding calls is a call here, unlike in other dialects, because xLAM writes
its calls that way; a fence that does not hold calls is text as written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from .._reasoning import ReasoningSyntax
from ._base import Block, BlockParser, Dialect
from ._json_calls import BARE_ARRAY, BARE_ARRAY_SPACED, JsonCallsBlock, JsonCallsSyntax, bare_array_block
from ._rendering import Renderer, ToolSpec, join_turn
from .granite import array_document, array_grammar, call_array

FENCED = "```json"
MISTRAL = "[TOOL_CALLS]"
TAG, TAG_END = "<tool_call>", "</tool_call>"

_SYNTAX = {
    MISTRAL: JsonCallsSyntax(shape="any"),
    TAG: JsonCallsSyntax(shape="any", close=TAG_END),
    FENCED: JsonCallsSyntax(shape="any", close="```"),
}


class XlamParser(BlockParser):
    openers = (BARE_ARRAY, *BARE_ARRAY_SPACED, FENCED, MISTRAL, TAG)
    strip_around_blocks = True

    def open_block(self, opener: str) -> Block:
        if opener in _SYNTAX:
            return JsonCallsBlock(opener, _SYNTAX[opener])
        return bare_array_block(not self._last and not self._after_call, opener)


def _tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    # vLLM's `tool_chat_template_xlam_qwen.jinja` / `_xlam_llama.jinja`.
    return (
        "You have access to a set of tools. When using tools, make calls in a single JSON array: \n\n"
        '[{"name": "tool_call_name", "arguments": {"arg1": "value1", "arg2": "value2"}}, ... (additional parallel '
        "tool calls as needed)]\n\nIf no tool is suitable, state that explicitly. If the user's input lacks "
        "required parameters, ask for clarification. Do not interpret or respond until tool results are returned. "
        "Once they are available, process them or make additional calls if needed. For tasks that don't require "
        "tools, such as casual conversation or general advice, respond directly in plain text. The available "
        "tools are:\n\n" + "\n\n".join(json.dumps(t.chat_shape(), ensure_ascii=False, indent=4) for t in tools)
    )


RENDERER = Renderer(
    calls=lambda calls: call_array(calls) if calls else "",
    tools=_tools,
    # The template writes a turn with calls as the array alone; text the turn had goes after it,
    # where it stays text (a bare array counts only where the answer starts).
    assistant=lambda content, calls: join_turn(calls, content),
)

# What `call_array` writes, bare, as a grammar: the whole answer is one JSON document.
XLAM_GRAMMAR = array_grammar("", document=array_document)

DIALECTS = [
    Dialect(
        name="xlam",
        description='[{"name": …, "arguments": …}] (bare, ```json fenced, [TOOL_CALLS] or <tool_call>): '
        "Salesforce xLAM-2",
        machine=XlamParser,
        models=(r"xlam",),
        reasoning=ReasoningSyntax(),
        renderer=RENDERER,
        grammar=XLAM_GRAMMAR,
    )
]

__all__ = ["DIALECTS", "FENCED", "MISTRAL", "RENDERER", "TAG", "TAG_END", "XlamParser"]
