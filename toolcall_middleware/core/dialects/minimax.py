"""`minimax_m2`: the XML calls of MiniMax-M2, M2.1 and M2.5 (M3 writes its own: `minimax_m3`).

```
<minimax:tool_call>
<invoke name="get_weather">
<parameter name="city">Paris</parameter>
</invoke>
<invoke name="get_time">
</invoke>
</minimax:tool_call>
```

Several `<invoke>` in one block are parallel calls; each is handed out at its own `</invoke>`.
Values are raw text, not XML-escaped, typed by the request's tool schema (`schema.coerce_value`:
a string without one, but for the literal `null`). The template writes a value right between its
tags; newlines on either side are layout and dropped, as SGLang does (vLLM strips all whitespace,
which would also eat the indentation of a code value). Names may be written `name="f"`,
`name='f'` or `name=f`, as MiniMax's own parser reads them. The chat template ends the prompt with
`<think>\\n`, so the output starts inside reasoning unless thinking is off; reasoning ends at
`</think>` only, so a call drafted before it stays reasoning.

The body is read by `xml_calls.XmlCallBlock`, shared with `seed_oss` and `qwen3_coder`: a value
may mention `</parameter>`; a call whose block closes before its `</invoke>`, a name with `<` or
unbalanced quotes, or prose between parameters comes back as text; output that ends inside a call
is a `TruncatedCall`, never a call.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._reasoning import ReasoningSyntax
from ._base import Block, BlockParser, Dialect, ParseContext
from ._rendering import CallToRender, Renderer, ToolSpec, dumps, results_joined, value_text
from ._xml_calls import XmlCallParser, XmlCallSyntax
from .call_grammar import Args, CallGrammar, Lit, Name
from .minimax_m3 import SECTION as M3_SECTION
from .minimax_m3 import MinimaxM3Block

MINIMAX = XmlCallSyntax(
    section="<minimax:tool_call>",
    section_end="</minimax:tool_call>",
    call="<invoke name=",
    call_end="</invoke>",
    param="<parameter name=",
    quoted_names=True,
)


class MinimaxM2Parser(XmlCallParser):
    """Also reads a MiniMax-M3 section (`minimax_m3`), which this dialect was once documented to
    cover: its marker is M3's own, so a deployment configured so keeps its calls."""

    syntax = MINIMAX

    def __init__(self, ctx: ParseContext) -> None:
        self.openers = (MINIMAX.section, M3_SECTION)  # (what `XmlCallParser` sets, and M3's)
        BlockParser.__init__(self, ctx)

    def open_block(self, opener: str) -> Block:
        return MinimaxM3Block(self.ctx) if opener == M3_SECTION else super().open_block(opener)


def _prefills(model: str | None, thinking: bool | None) -> bool:
    """The template ends the prompt with `<think>\\n`; with thinking off it closes it too.

    Without a model name nothing says which template ran, so the output is read as it comes.
    """
    return thinking is not False and model is not None


# -- request side: the chat template's text --------------------------------------------------------


def _minimax_calls(calls: Sequence[CallToRender]) -> str:
    if not calls:
        return ""
    body = "".join(
        f'<invoke name="{c.name}">\n'
        + "".join(f'<parameter name="{k}">{value_text(v)}</parameter>\n' for k, v in c.arguments.items())
        + "</invoke>\n"
        for c in calls
    )
    return f"<minimax:tool_call>\n{body}</minimax:tool_call>"


def _minimax_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    listing = "".join(f"<tool>{dumps(t.function())}</tool>\n" for t in tools)
    return (
        "# Tools\nYou may call one or more tools to assist with the user query.\n"
        "Here are the tools available in JSONSchema format:\n\n<tools>\n" + listing + "</tools>\n\n"
        "When making tool calls, use XML format to invoke tools and pass parameters:\n\n<minimax:tool_call>\n"
        '<invoke name="tool-name-1">\n<parameter name="param-key-1">param-value-1</parameter>\n'
        '<parameter name="param-key-2">param-value-2</parameter>\n...\n</invoke>\n</minimax:tool_call>'
    )


MINIMAX_M2 = Renderer(
    calls=_minimax_calls,
    tools=_minimax_tools,
    results=results_joined(lambda r: f"<response>{r.output}</response>"),
)


# What `_minimax_calls` writes, as a grammar.
MINIMAX_M2_GRAMMAR = CallGrammar(
    call=(
        Lit(MINIMAX.call + '"'),
        Name(),
        Lit('">\n'),
        Args(xml=(MINIMAX.param + '"', '">', "</parameter>\n")),
        Lit(MINIMAX.call_end + "\n"),
    ),
    section=(MINIMAX.section + "\n", MINIMAX.section_end),
)

DIALECTS = [
    Dialect(
        name="minimax_m2",
        markers=("<minimax:tool_call>",),
        description='<minimax:tool_call><invoke name="f"><parameter name="k">v</parameter></invoke>'
        "</minimax:tool_call>: MiniMax-M2, M2.1, M2.5",
        machine=MinimaxM2Parser,
        renderer=MINIMAX_M2,
        grammar=MINIMAX_M2_GRAMMAR,
        incremental=True,
        models=(r"minimax[-_]?m2",),
        # No implicit end: a call written before `</think>` is a draft and stays reasoning, as
        # SGLang and vLLM read it; ending reasoning there would run calls the model only pondered.
        reasoning=ReasoningSyntax(pairs=(("<think>", "</think>"),)),
        prefills_reasoning=_prefills,
    )
]


__all__ = [
    "DIALECTS",
    "MINIMAX",
    "MINIMAX_M2",
    "MinimaxM2Parser",
]
