"""JSON call arrays between a model's own markers: `jamba`, `nemotron`, `hunyuan_a13b`, `phi4_mini`,
`firefunction_v2` and `minimax_m1`.

```
<tool_calls>[{"name": "f", "arguments": {…}}, …]</tool_calls>                AI21 Jamba 1.5-1.7
<TOOLCALL>[{"name": "f", "arguments": {…}}, …]</TOOLCALL>                    Nemotron-Nano-9B-v2, Llama-Nemotron
<answer>\\n<tool_calls>[{"name": "f", "arguments": {…}}]</tool_calls>\\n</answer>   Hunyuan-A13B
functools[{"name": "f", "arguments": {…}}, …]                                Phi-4-mini (no closing marker)
 functools[{"name": "f", "arguments": {…}}, …]                               FireFunction v2
<tool_calls>\\n{"name": "f", "arguments": {…}}\\n{"name": "g", …}\\n</tool_calls>   MiniMax-M1 (an object a line)
```

Each is a `json_calls.JsonCallsBlock` with the format's markers: the calls are handed out once
the block is complete; a block that is not calls is text as written. Items may write
`"parameters"` for `"arguments"`, or the arguments as a JSON string, as the engines accept.

Hunyuan-A13B thinks in `<think>…</think>` and wraps its answer in `<answer>…</answer>`: the
wrapper markers are dropped (with the newline the template writes after `<answer>`), as vLLM's
`hunyuan_a13b` reasoning parser does; `<tool_calls>` inside an unclosed think block ends it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from .._reasoning import ReasoningSyntax
from ._base import Block, BlockParser, Dialect
from ._dialect import SharedMarker
from ._json_calls import DroppedMarker, JsonCallsBlock, JsonCallsSyntax
from ._rendering import Renderer, ToolSpec, dumps, join_turn, results_joined
from .call_grammar import CallGrammar
from .granite import CALL_OBJECT, array_grammar, call_array, tool_list

_ARRAY_FORMAT = '[{"name": <function-name>, "arguments": <args-json-object>}, …]'


class _ArrayParser(BlockParser):
    """A format whose opener is followed by the calls (`syntax`)."""

    syntax = JsonCallsSyntax()
    strip_around_blocks = True

    def open_block(self, opener: str) -> Block:
        return JsonCallsBlock(opener, self.syntax)


# -- jamba -------------------------------------------------------------------------------------

TOOL_CALLS, TOOL_CALLS_END = "<tool_calls>", "</tool_calls>"


class JambaParser(_ArrayParser):
    openers = (TOOL_CALLS,)
    syntax = JsonCallsSyntax(close=TOOL_CALLS_END)


def _jamba_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    return (
        "# Tools\n\nYou can use the following tools:\n<tools>\n" + tool_list(tools, "\n") + "\n</tools>\n\n"
        f"To call tools, write {TOOL_CALLS}{_ARRAY_FORMAT}{TOOL_CALLS_END}"
    )


JAMBA_RENDERER = Renderer(
    calls=lambda calls: f"{TOOL_CALLS}{call_array(calls)}{TOOL_CALLS_END}" if calls else "",
    tools=_jamba_tools,
    results=results_joined(lambda r: f"<tool_response>{r.output}</tool_response>"),
)

# -- nemotron ------------------------------------------------------------------------------------

TOOLCALL, TOOLCALL_END = "<TOOLCALL>", "</TOOLCALL>"


class NemotronParser(_ArrayParser):
    openers = (TOOLCALL,)
    syntax = JsonCallsSyntax(close=TOOLCALL_END)


def _nemotron_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    # vLLM's `tool_chat_template_nemotron_json.jinja`.
    return (
        "You can use the following tools to assist the user if required:\n<AVAILABLE_TOOLS>["
        + ", ".join(dumps(t.function()) for t in tools)
        + "]</AVAILABLE_TOOLS>\n\nIf you decide to call any tool(s), use the following format:\n"
        f'{TOOLCALL}[{{"name": "tool_name1", "arguments": "tool_args1"}}, '
        f'{{"name": "tool_name2", "arguments": "tool_args2"}}]{TOOLCALL_END}\n\n'
        "The user will execute tool-calls and return responses from tool(s) in this format:\n"
        '<TOOL_RESPONSE>[{"tool_response1"}, {"tool_response2"}]</TOOL_RESPONSE>\n\n'
        "Based on the tool responses, you can call additional tools if needed, correct tool calls if any errors "
        "are found, or just respond to the user."
    )


_NANO_V2 = re.compile(r"nemotron-nano-\d+b-v2")


def _nemotron_prefills(model: str | None, thinking: bool | None) -> bool:
    """The Nano v2 template ends the prompt with `<think>\\n` unless thinking is off (`/no_think`);
    Llama-Nemotron v1 writes `<think>` itself."""
    return thinking is not False and model is not None and _NANO_V2.search(model.lower()) is not None


NEMOTRON_RENDERER = Renderer(
    calls=lambda calls: f"{TOOLCALL}{call_array(calls)}{TOOLCALL_END}" if calls else "",
    tools=_nemotron_tools,
    assistant=lambda content, calls: join_turn(content, calls, "\n\n"),
    results=lambda rs: "<TOOL_RESPONSE>[" + ", ".join(r.output for r in rs) + "]</TOOL_RESPONSE>",
)

# -- hunyuan_a13b --------------------------------------------------------------------------------

ANSWER, ANSWER_END = "<answer>", "</answer>"


class HunyuanParser(_ArrayParser):
    openers = (TOOL_CALLS, ANSWER, ANSWER_END)
    syntax = JsonCallsSyntax(close=TOOL_CALLS_END)

    def open_block(self, opener: str) -> Block:
        if opener == TOOL_CALLS:
            return JsonCallsBlock(opener, self.syntax)
        return DroppedMarker(newline=opener == ANSWER)


def _hunyuan_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    # vLLM's `tool_chat_template_hunyuan_a13b.jinja` (the model was trained on this Chinese prompt).
    return (
        "你是一位函数组合专家。你会得到一个问题和一组可能的函数。根据问题，你需要进行一个或多个函数/工具调用以实现目的。\n"
        "如果没有一个函数可以使用，请直接使用自然语言回复用户，以助手：开头。\n"
        "你应该只在工具调用部分返回函数调用。如果你决定调用任何函数，你必须将其格式化为"
        f'{TOOL_CALLS}[{{"name": "func_name1", "arguments": {{"argument1": "value1", "argument2": "value2"}}}},...]'
        f"{TOOL_CALLS_END}。你不应该在回复中包含任何其他文本。以下是你可以调用的函数列表，格式为JSON。\n\n"
        + dumps([t.chat_shape() for t in tools])
    )


HUNYUAN_RENDERER = Renderer(
    calls=lambda calls: f"{TOOL_CALLS}{call_array(calls)}{TOOL_CALLS_END}" if calls else "",
    tools=_hunyuan_tools,
    assistant=lambda content, calls: join_turn(content, calls, ""),
    results=results_joined(lambda r: f"<tool_response>{r.output}</tool_response>"),
)

# -- phi4_mini and firefunction_v2 ----------------------------------------------------------------

FUNCTOOLS = "functools"


class FunctoolsParser(_ArrayParser):
    openers: tuple[str, ...] = (FUNCTOOLS + "[",)
    strip_around_blocks = False  # the calls follow the text on its line

    def open_block(self, opener: str) -> Block:
        block = JsonCallsBlock(opener[:-1], self.syntax)
        block.feed("[")  # (the opener ends with the array's bracket)
        return block


class FirefunctionParser(FunctoolsParser):
    openers = (" " + FUNCTOOLS + "[", FUNCTOOLS + "[")  # the space is the template's, and markup


def _functools_rules(tools: Sequence[ToolSpec], marker: str) -> str:
    # vLLM's `tool_chat_template_phi4_mini.jinja` (after FireFunction v2's own system prompt).
    return (
        "In addition to plain text responses, you can choose to call one or more of the provided functions.\n\n"
        "Use the following rule to decide when to call a function:\n  * if the response can be generated from "
        'your internal knowledge (e.g., as in the case of queries like "What is the capital of Poland?"), do so\n'
        "  * if you need external information that can be obtained by calling one or more of the provided "
        f"functions, generate a function calls\n\nIf you decide to call functions:\n  * prefix function calls "
        f"with {marker} marker (no closing marker required)\n  * all function calls should be generated in a "
        f'single JSON list formatted as {FUNCTOOLS}[{{"name": [function name], "arguments": [function arguments '
        "as JSON]}, ...]\n  * follow the provided JSON schema. Do not hallucinate arguments or values.\n"
        "  * make sure you pick the right functions that match the user intent\n\n"
        + "\n\n".join(json.dumps(t.chat_shape(), ensure_ascii=False, indent=4) for t in tools)
    )


def _phi4_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    return _functools_rules(tools, FUNCTOOLS)


def _firefunction_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    return "You are a helpful assistant with access to functions.\n" + _functools_rules(tools, FUNCTOOLS)


PHI4_RENDERER = Renderer(
    calls=lambda calls: FUNCTOOLS + call_array(calls) if calls else "",
    tools=_phi4_tools,
    results=results_joined(lambda r: '{"result": ' + r.output + "}"),
    assistant=lambda content, calls: join_turn(content, calls, ""),
)

FIREFUNCTION_RENDERER = Renderer(
    calls=lambda calls: f" {FUNCTOOLS}" + call_array(calls) if calls else "",
    tools=_firefunction_tools,
    assistant=lambda content, calls: join_turn(content, calls, ""),
)

# -- minimax_m1 -------------------------------------------------------------------------------------


class MinimaxM1Parser(_ArrayParser):
    openers = (TOOL_CALLS,)
    syntax = JsonCallsSyntax(shape="objects", close=TOOL_CALLS_END)


def _m1_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    # MiniMax-M1's template: the tools inside <tools>, calls inside <tool_calls>, one JSON a line.
    return (
        "You are provided with these tools:\n<tools>\n" + tool_list(tools, "\n") + "\n</tools>\n\n"
        "If you need to call tools, please respond with <tool_calls></tool_calls> XML tags, and provide tool-name "
        "and json-object of arguments, following the format below:\n<tool_calls>\n"
        '{"name": <tool-name-1>, "arguments": <args-json-object-1>}\n...\n</tool_calls>'
    )


M1_RENDERER = Renderer(
    calls=lambda calls: (
        TOOL_CALLS
        + "\n"
        + "\n".join(dumps({"name": c.name, "arguments": dict(c.arguments)}) for c in calls)
        + "\n"
        + TOOL_CALLS_END
        if calls
        else ""
    ),
    tools=_m1_tools,
    results=lambda rs: "".join(f"tool result: {r.output}\n\n" for r in rs),
)

# What the renderers above write, as grammars.
JAMBA_GRAMMAR = array_grammar(TOOL_CALLS, TOOL_CALLS_END)
NEMOTRON_GRAMMAR = array_grammar(TOOLCALL, TOOLCALL_END, special=(TOOLCALL, TOOLCALL_END))
PHI4_GRAMMAR = array_grammar(FUNCTOOLS)
FIREFUNCTION_GRAMMAR = array_grammar(" " + FUNCTOOLS)
M1_GRAMMAR = CallGrammar(call=CALL_OBJECT, separator="\n", section=(TOOL_CALLS + "\n", "\n" + TOOL_CALLS_END))

DIALECTS = [
    Dialect(
        name="minimax_m1",
        shared_markers=(SharedMarker("<tool_calls>", r"[ \t\r\n]*\{", r"\{"),),
        description='<tool_calls>\\n{"name": …, "arguments": …}\\n…</tool_calls>: MiniMax-M1',
        machine=MinimaxM1Parser,
        models=(r"minimax[-_]?m1",),
        reasoning=ReasoningSyntax(pairs=(("<think>", "</think>"),)),
        renderer=M1_RENDERER,
        grammar=M1_GRAMMAR,
    ),
    Dialect(
        name="hunyuan_a13b",
        shared_markers=(SharedMarker("<answer>", r"[ \t\r\n]*<tool_calls>[ \t\r\n]*\[", "<"),),
        description="<answer><tool_calls>[{json}, …]</tool_calls></answer>: Hunyuan-A13B",
        machine=HunyuanParser,
        models=(r"hunyuan-a13b",),
        reasoning=ReasoningSyntax(pairs=(("<think>", "</think>"),), implicit_ends=((TOOL_CALLS,),)),
        renderer=HUNYUAN_RENDERER,
        grammar=JAMBA_GRAMMAR,
    ),
    Dialect(
        name="jamba",
        shared_markers=(SharedMarker("<tool_calls>", r"[ \t\r\n]*\[", r"\["),),
        description="<tool_calls>[{json}, …]</tool_calls>: AI21 Jamba 1.5-1.7",
        machine=JambaParser,
        models=(r"jamba",),
        renderer=JAMBA_RENDERER,
        grammar=JAMBA_GRAMMAR,
    ),
    Dialect(
        name="nemotron",
        markers=("<TOOLCALL>",),
        description="<TOOLCALL>[{json}, …]</TOOLCALL>: Nemotron-Nano-9B/12B-v2, Llama-Nemotron",
        machine=NemotronParser,
        models=(r"nemotron-nano-\d+b-v2", r"llama-3\.\d-nemotron", r"nemotron-(?:super|ultra|nano)-.*v1"),
        reasoning=ReasoningSyntax(pairs=(("<think>", "</think>"),)),
        prefills_reasoning=_nemotron_prefills,
        renderer=NEMOTRON_RENDERER,
        grammar=NEMOTRON_GRAMMAR,
    ),
    Dialect(
        name="phi4_mini",
        description="functools[{json}, …]: Phi-4-mini",
        machine=FunctoolsParser,
        models=(r"phi-?4-mini",),
        renderer=PHI4_RENDERER,
        grammar=PHI4_GRAMMAR,
    ),
    Dialect(
        name="firefunction_v2",
        description=" functools[{json}, …]: FireFunction v2",
        machine=FirefunctionParser,
        models=(r"firefunction",),
        renderer=FIREFUNCTION_RENDERER,
        grammar=FIREFUNCTION_GRAMMAR,
    ),
]

__all__ = [
    "ANSWER",
    "ANSWER_END",
    "DIALECTS",
    "FUNCTOOLS",
    "TOOLCALL",
    "TOOLCALL_END",
    "TOOL_CALLS",
    "TOOL_CALLS_END",
    "FirefunctionParser",
    "FunctoolsParser",
    "HunyuanParser",
    "JambaParser",
    "MinimaxM1Parser",
    "NemotronParser",
]
