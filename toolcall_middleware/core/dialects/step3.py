"""`step3`: the steptml calls of StepFun Step3.

```
<｜tool_calls_begin｜>
<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="get_weather">
<steptml:parameter name="city">Paris</steptml:parameter>
</steptml:invoke><｜tool_call_end｜>
<｜tool_calls_end｜>
```

The delimiters use the fullwidth bar `｜` (U+FF5C) with an ASCII `_`, unlike DeepSeek's `▁`. Each
call is a steptml invoke read by `xml_calls.XmlCallBlock` (minimax_m2's reading with steptml
names): values are raw text typed by the request's tool schema (a string without one, but for
the literal `null`), as vLLM's and SGLang's `step3` parsers type them. The chat template opens
the reasoning block itself (`<think>\\n`), so the output starts inside reasoning unless thinking
is off; it ends at `</think>` only.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._reasoning import ReasoningSyntax
from ._base import Dialect
from ._rendering import CallToRender as RenderCall
from ._rendering import Renderer, ToolSpec, dumps, join_turn, results_joined, value_text
from ._xml_calls import XmlCallParser, XmlCallSyntax
from .call_grammar import Args, CallGrammar, Lit, Name

CALLS_BEGIN, CALLS_END = "<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"
CALL_BEGIN, CALL_END, SEP = "<｜tool_call_begin｜>", "<｜tool_call_end｜>", "<｜tool_sep｜>"
INVOKE = f"{CALL_BEGIN}function{SEP}<steptml:invoke name="

STEP3 = XmlCallSyntax(
    section=CALLS_BEGIN,
    section_end=CALLS_END,
    call=INVOKE,
    call_end=f"</steptml:invoke>{CALL_END}",
    param="<steptml:parameter name=",
    param_end="</steptml:parameter>",
    quoted_names=True,
)


class Step3Parser(XmlCallParser):
    stray_tokens = (CALLS_END, CALL_END, SEP)
    syntax = STEP3


def _call(call: RenderCall) -> str:
    params = "".join(
        f'<steptml:parameter name="{k}">{value_text(v)}</steptml:parameter>\n' for k, v in call.arguments.items()
    )
    return f'{INVOKE}"{call.name}">\n{params}</steptml:invoke>{CALL_END}'


def _tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    return (
        "# Tools\nYou may call one or more tools to assist with the user query. The tools, in JSON schema:\n"
        + "\n".join(dumps(t.chat_shape()) for t in tools)
        + f"\n\nTo call tools, write {CALLS_BEGIN}, then for each call {CALL_BEGIN}function{SEP}"
        '<steptml:invoke name="NAME"><steptml:parameter name="KEY">VALUE</steptml:parameter>…'
        f"</steptml:invoke>{CALL_END}, then {CALLS_END}."
    )


RENDERER = Renderer(
    calls=lambda calls: f"{CALLS_BEGIN}\n" + "\n".join(_call(c) for c in calls) + f"\n{CALLS_END}" if calls else "",
    tools=_tools,
    results=results_joined(lambda r: f'<steptml:response name="{r.name or r.call_id}">{r.output}</steptml:response>'),
    assistant=lambda content, calls: join_turn(content, calls),
)

# What `RENDERER` writes, as a grammar.
STEP3_GRAMMAR = CallGrammar(
    call=(
        Lit(INVOKE + '"'),
        Name(),
        Lit('">\n'),
        Args(xml=(STEP3.param + '"', '">', STEP3.param_end + "\n")),
        Lit(STEP3.call_end),
    ),
    separator="\n",
    section=(CALLS_BEGIN + "\n", "\n" + CALLS_END),
    trigger=CALLS_BEGIN,
    special_tokens=(CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END, SEP),
)

DIALECTS = [
    Dialect(
        name="step3",
        markers=("<｜tool_calls_begin｜>",),
        description='<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="f">…'
        "<｜tool_calls_end｜>: StepFun Step3",
        machine=Step3Parser,
        incremental=True,
        models=(r"step-?3(?![.p0-9])",),
        reasoning=ReasoningSyntax(pairs=(("<think>", "</think>"),)),
        prefills_reasoning=lambda model, thinking: thinking is not False and model is not None,
        renderer=RENDERER,
        grammar=STEP3_GRAMMAR,
    )
]

__all__ = [
    "CALLS_BEGIN",
    "CALLS_END",
    "CALL_BEGIN",
    "CALL_END",
    "DIALECTS",
    "INVOKE",
    "RENDERER",
    "SEP",
    "STEP3",
    "STEP3_GRAMMAR",
    "Step3Parser",
]
