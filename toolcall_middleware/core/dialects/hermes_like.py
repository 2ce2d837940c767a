"""Hermes-style blocks under other markers: `longcat` and `internlm2`.

```
<longcat_tool_call>{"name": "f", "arguments": {"a": 1}}</longcat_tool_call>     LongCat-Flash-Chat
<|action_start|><|plugin|>\\n{"name": "f", "parameters": {"a": 1}}<|action_end|>   InternLM2.5, Intern-S1
```

One JSON call object per block, read by hermes' `HermesBlock` (the end marker found outside JSON
strings; `parameters` or `arguments`; a body that is not a call is text). vLLM's `longcat` parser
is a hermes subclass with these markers. InternLM's decoder may write a space between its two
special tokens (SGLang's `interns1` opener has it), so both spellings open a call. Intern-S1
thinks in `<think>…</think>`.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._reasoning import ReasoningSyntax
from ._base import BlockParser, Dialect
from ._rendering import Renderer, ToolSpec, dumps, join_turn
from .call_grammar import Args, CallGrammar, Lit, Name
from .granite import CALL_OBJECT, tool_list
from .hermes import HermesBlock

LONGCAT, LONGCAT_END = "<longcat_tool_call>", "</longcat_tool_call>"
LONGCAT_THINK, LONGCAT_THINK_END = "<longcat_think>", "</longcat_think>"
ACTION = "<|action_start|><|plugin|>"
ACTION_SPACED = "<|action_start|> <|plugin|>"
ACTION_END = "<|action_end|>"


class LongcatParser(BlockParser):
    openers = (LONGCAT,)
    strip_around_blocks = True

    def open_block(self, opener: str) -> HermesBlock:
        return HermesBlock(opener, LONGCAT_END, ctx=self.ctx)


class InternLMParser(BlockParser):
    openers = (ACTION, ACTION_SPACED)
    stray_tokens = (ACTION_END,)
    strip_around_blocks = True

    def open_block(self, opener: str) -> HermesBlock:
        return HermesBlock(opener, ACTION_END, ctx=self.ctx)


def _longcat_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    return (
        "## Tools\nYou have the following tools available:\n<tools>\n" + tool_list(tools, "\n") + "\n</tools>\n\n"
        f'For each function call, write {LONGCAT}{{"name": <function-name>, "arguments": <args-json-object>}}'
        f"{LONGCAT_END}"
    )


def _internlm_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    # InternLM2.5's plugin system turn (`<|im_start|>system name=<|plugin|>`): the tools as JSON.
    return (
        "You have access to the following plugins:\n"
        + dumps([t.function() for t in tools])
        + f'\n\nTo call a plugin, write {ACTION}\n{{"name": <plugin-name>, "parameters": <args-json-object>}}'
        f"{ACTION_END}"
    )


LONGCAT_RENDERER = Renderer(
    calls=lambda calls: "\n".join(
        f"{LONGCAT}{dumps({'name': c.name, 'arguments': dict(c.arguments)})}{LONGCAT_END}" for c in calls
    ),
    tools=_longcat_tools,
    results=lambda rs: "\n".join(f"<longcat_tool_response>{r.output}</longcat_tool_response>" for r in rs),
)

INTERNLM_RENDERER = Renderer(
    calls=lambda calls: "".join(
        f"{ACTION}\n{dumps({'name': c.name, 'parameters': dict(c.arguments)})}{ACTION_END}" for c in calls
    ),
    tools=_internlm_tools,
    assistant=lambda content, calls: join_turn(content, calls, ""),
)

# What the two renderers above write, as grammars.
LONGCAT_GRAMMAR = CallGrammar(call=(Lit(LONGCAT), *CALL_OBJECT, Lit(LONGCAT_END)), separator="\n")
INTERNLM2_GRAMMAR = CallGrammar(
    call=(Lit(ACTION + '\n{"name": '), Name(json=True), Lit(', "parameters": '), Args(), Lit("}" + ACTION_END)),
    special_tokens=("<|action_start|>", "<|plugin|>", ACTION_END),
)

DIALECTS = [
    Dialect(
        name="longcat",
        markers=("<longcat_tool_call>",),
        detected_reasoning=((LONGCAT_THINK, LONGCAT_THINK_END),),
        description="<longcat_tool_call>{json}</longcat_tool_call>: LongCat-Flash-Chat",
        machine=LongcatParser,
        incremental=True,
        models=(r"longcat",),
        reasoning=ReasoningSyntax(pairs=((LONGCAT_THINK, LONGCAT_THINK_END), ("<think>", "</think>"))),
        renderer=LONGCAT_RENDERER,
        grammar=LONGCAT_GRAMMAR,
    ),
    Dialect(
        name="internlm2",
        markers=(ACTION, ACTION_SPACED),
        description="<|action_start|><|plugin|>{json}<|action_end|>: InternLM2.5, Intern-S1",
        machine=InternLMParser,
        incremental=True,
        models=(r"internlm", r"intern-?s1"),
        reasoning=ReasoningSyntax(pairs=(("<think>", "</think>"),)),
        renderer=INTERNLM_RENDERER,
        grammar=INTERNLM2_GRAMMAR,
    ),
]

__all__ = [
    "ACTION",
    "ACTION_END",
    "ACTION_SPACED",
    "DIALECTS",
    "INTERNLM_RENDERER",
    "LONGCAT",
    "LONGCAT_END",
    "LONGCAT_RENDERER",
    "LONGCAT_THINK",
    "LONGCAT_THINK_END",
    "InternLMParser",
    "LongcatParser",
]
