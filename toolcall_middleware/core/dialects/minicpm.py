"""`minicpm5`: the XML calls of OpenBMB MiniCPM 5.

```
<function name="get_weather"><param name="city">Beijing</param><param name="days">3</param></function>
<function name="write"><param name="text"><![CDATA[two
lines]]></param></function>
```

One `<function>` element per call, each parameter a `<param name="k">` element; several
elements are parallel calls, and text may stand between them. A value is raw text, or a CDATA
section (for text with newlines or markup); the whitespace around bare text is dropped, as vLLM's
`minicpm5` and SGLang's `MiniCPM5Detector` read it, while a CDATA section's text is kept as
written. A string property keeps the text; any other
value is JSON, else a Python literal, else the text (`glm.typed_value`: `[1, 2]` and `true` are
typed without a schema too, as both engines decode them). The element ends at its first
`</function>`, as the engines find it; a CDATA value may hold `</param>`. An element that is not
a call (no name, a parameter without one, a key written twice, text between parameters) is text;
output that ends inside one is a `TruncatedCall`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .._reasoning import ReasoningSyntax
from ._base import BlockParser, Call, Dialect, ParseContext, dump_arguments
from ._rendering import CallToRender, Renderer, ToolSpec, join_turn, results_joined, tools_in_tags, value_text
from .call_grammar import Args, CallGrammar, Lit, Name
from .glm import typed_value
from .marked_calls import MarkedBlock

OPEN, CLOSE = "<function name=", "</function>"
PARAM_END = "</param>"
CDATA, CDATA_END = "<![CDATA[", "]]>"

_NAME = re.compile(r"[ \t]*([\"'])([^\"'<>\n]{1,256})\1[ \t]*>")
_PARAM = re.compile(r"[ \t\r\n]*<param name=([\"'])([^\"'<>\n]{1,256})\1[ \t]*>")
_WS = re.compile(r"[ \t\r\n]*")


def read_function(body: str, ctx: ParseContext) -> list[Call] | None:
    """The call in a `<function name=` element's body (up to its `</function>`), or `None`."""
    head = _NAME.match(body)
    if head is None:
        return None
    name = head.group(2).strip()
    arguments: dict[str, Any] = {}
    i = head.end()
    while True:
        param = _PARAM.match(body, i)
        if param is None:
            break
        key = param.group(2).strip()
        i = param.end()
        lead = _WS.match(body, i)
        j = lead.end() if lead is not None else i
        if body.startswith(CDATA, j):
            start = j + len(CDATA)
            stop = body.find(CDATA_END, start)
            if stop < 0:
                return None
            value = body[start:stop]
            end = body.find(PARAM_END, stop + len(CDATA_END))
            if end < 0 or body[stop + len(CDATA_END) : end].strip():
                return None
        else:
            end = body.find(PARAM_END, i)
            if end < 0:
                return None
            value = body[i:end].strip()
        if not key or key in arguments:
            return None
        arguments[key] = typed_value(value, ctx.property_schema(name, key))
        i = end + len(PARAM_END)
    tail = _WS.match(body, i)
    if not name or (tail is not None and tail.end() != len(body)):
        return None
    return [Call(name=name, arguments=dump_arguments(arguments))]


class MiniCPMParser(BlockParser):
    openers = (OPEN,)
    strip_around_blocks = True

    def open_block(self, opener: str) -> MarkedBlock:
        return MarkedBlock(opener, CLOSE, lambda body: read_function(body, self.ctx))


# -- request side ----------------------------------------------------------------------------------


def _value(value: Any) -> str:
    text = value_text(value)
    # Text with markup, lines or edge whitespace of its own goes in a CDATA section, which keeps
    # it as written (bare text is stripped).
    return f"{CDATA}{text}{CDATA_END}" if any(c in text for c in "<&\n") or text != text.strip() else text


def _calls(calls: Sequence[CallToRender]) -> str:
    return "\n".join(
        f'<function name="{c.name}">'
        + "".join(f'<param name="{k}">{_value(v)}</param>' for k, v in c.arguments.items())
        + CLOSE
        for c in calls
    )


def _tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    # MiniCPM 5's own template was not available to copy: the tools, and the format the engines read.
    return tools_in_tags(
        tools,
        'For each function call, write one element:\n<function name="function-name">'
        '<param name="param-name">value</param>...</function>\nWrap a value with newlines or markup in '
        "<![CDATA[...]]>.",
    )


MINICPM5 = Renderer(
    calls=_calls,
    tools=_tools,
    assistant=lambda content, calls: join_turn(content, calls, "\n"),
    results=results_joined(lambda r: f"<tool_response>{r.output}</tool_response>"),
)

MINICPM5_GRAMMAR = CallGrammar(
    call=(
        Lit(OPEN + '"'),
        Name(),
        Lit('">'),
        Args(xml=('<param name="', '">', PARAM_END), cdata=(CDATA, CDATA_END)),
        Lit(CLOSE),
    ),
    separator="\n",
)


DIALECTS = [
    Dialect(
        name="minicpm5",
        markers=("<function name=",),
        description='<function name="f"><param name="k">v</param></function>: MiniCPM 5',
        machine=MiniCPMParser,
        renderer=MINICPM5,
        models=(r"minicpm-?5",),
        reasoning=ReasoningSyntax(pairs=(("<think>", "</think>"),)),
        grammar=MINICPM5_GRAMMAR,
    )
]


__all__ = ["CLOSE", "DIALECTS", "MINICPM5", "MINICPM5_GRAMMAR", "OPEN", "MiniCPMParser", "read_function"]
