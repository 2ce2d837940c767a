"""`cohere_command`: Cohere Command R7B and Command A (and its reasoning model).

```
<|START_THINKING|>I will look up the weather.<|END_THINKING|><|START_ACTION|>[
    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}}
]<|END_ACTION|>
<|START_RESPONSE|>It is sunny in Paris.<|END_RESPONSE|>
```

Reasoning (and R7B's plan before its calls) is `<|START_THINKING|>…<|END_THINKING|>`. The calls
are one JSON array in the action section, each with `tool_name`, `parameters` and the model's
`tool_call_id` (an index within the turn: it is not kept, the emitter mints the call's id, as
SGLang does). The answer is wrapped in `<|START_RESPONSE|>…<|END_RESPONSE|>` (Command A,
R7B) or `<|START_TEXT|>…<|END_TEXT|>` (older Command R7B templates); the wrappers are dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._reasoning import ReasoningSyntax
from ._base import Block, BlockParser, Call, Dialect, arguments_object, dump_arguments
from ._json_calls import DroppedMarker, JsonCallsBlock, JsonCallsSyntax
from ._rendering import CallToRender as RenderCall
from ._rendering import Renderer, ToolResult, ToolSpec, dumps, join_turn
from .call_grammar import Args, CallGrammar, Chars, Lit, Name

ACTION, ACTION_END = "<|START_ACTION|>", "<|END_ACTION|>"
THINKING, THINKING_END = "<|START_THINKING|>", "<|END_THINKING|>"
WRAPPERS = ("<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|START_TEXT|>", "<|END_TEXT|>")


def read_action(item: Any) -> Call | None:
    """One `{"tool_call_id", "tool_name", "parameters"}` item as a call."""
    if not isinstance(item, dict):
        return None
    name = item.get("tool_name")
    args = arguments_object(item.get("parameters", {}))
    if not isinstance(name, str) or not name or args is None:
        return None
    return Call(name=name, arguments=dump_arguments(args))


_ACTION = JsonCallsSyntax(close=ACTION_END, read=read_action)


class CohereParser(BlockParser):
    openers = (ACTION, *WRAPPERS)
    stray_tokens = (ACTION_END,)
    strip_around_blocks = True

    def open_block(self, opener: str) -> Block:
        return JsonCallsBlock(opener, _ACTION) if opener == ACTION else DroppedMarker()


def _calls(calls: Sequence[RenderCall]) -> str:
    items = [
        {"tool_call_id": str(i), "tool_name": c.name, "parameters": dict(c.arguments)} for i, c in enumerate(calls)
    ]
    return f"{ACTION}{dumps(items)}{ACTION_END}" if calls else ""


def _tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    # The Command A / R7B template's tool-use preamble, with the tools as JSON.
    listing = "\n".join(dumps(t.chat_shape()) for t in tools)
    return (
        "## Available Tools\nHere is a list of tools that you have available to you.\nYou can ONLY use the tools "
        "listed here. When a tool is not listed below, it is NOT available and you should NEVER attempt to use "
        'it.\nEach tool is represented as a JSON object with fields like "name", "description", '
        '"parameters" (per JSON Schema), and optionally, "responses" (per JSON Schema).\n\n```json\n'
        + listing
        + "\n```\n\n## Tool Use\nThink about how you can make best use of the provided tools to help with the task "
        f"and come up with a high level plan that you will execute first, in {THINKING}…{THINKING_END}. Then "
        f'write the tool calls as a JSON list in {ACTION}[{{"tool_call_id": "0", "tool_name": <name>, '
        f'"parameters": {{…}}}}]{ACTION_END}, and answer in <|START_RESPONSE|>…<|END_RESPONSE|>.'
    )


def _results(results: Sequence[ToolResult]) -> str:
    items = [{"tool_call_id": r.call_id, "results": {"0": r.output}, "is_error": None} for r in results]
    return f"<|START_TOOL_RESULT|>{dumps(items)}<|END_TOOL_RESULT|>"


def _turn(content: str, calls: str) -> str:
    # The template wraps the answer; a turn with calls writes its text before them.
    if calls:
        return join_turn(content, calls, "")
    return f"<|START_RESPONSE|>{content}<|END_RESPONSE|>"


# What `_calls` writes, as a grammar (the id is the call's index in the turn).
COHERE_GRAMMAR = CallGrammar(
    call=(
        Lit('{"tool_call_id": "'),
        Chars("0-9", 1, 3),
        Lit('", "tool_name": '),
        Name(json=True),
        Lit(', "parameters": '),
        Args(),
        Lit("}"),
    ),
    separator=", ",
    section=(ACTION + "[", "]" + ACTION_END),
    trigger=ACTION,
    special_tokens=(ACTION, ACTION_END),
)


DIALECTS = [
    Dialect(
        name="cohere_command",
        markers=("<|START_ACTION|>", "<|START_RESPONSE|>", "<|START_TEXT|>"),
        detected_reasoning=((THINKING, THINKING_END),),
        description="<|START_ACTION|>[{tool_name, parameters}, …]<|END_ACTION|>: Cohere Command R7B, Command A, "
        "<|START_THINKING|> reasoning",
        machine=CohereParser,
        models=(r"command-?r7b", r"command-?a", r"c4ai-command", r"cohere"),
        reasoning=ReasoningSyntax(pairs=((THINKING, THINKING_END),)),
        renderer=Renderer(calls=_calls, tools=_tools, results=_results, assistant=_turn),
        grammar=COHERE_GRAMMAR,
    )
]

__all__ = [
    "ACTION",
    "ACTION_END",
    "COHERE_GRAMMAR",
    "DIALECTS",
    "THINKING",
    "THINKING_END",
    "WRAPPERS",
    "CohereParser",
    "read_action",
]
