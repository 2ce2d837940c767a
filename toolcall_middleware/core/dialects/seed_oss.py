"""`seed_oss`: the XML calls of ByteDance Seed-OSS (Seed-OSS-36B-Base/Instruct).

```
<seed:think>The user wants the weather.</seed:think>
<seed:tool_call>
<function=get_weather>
<parameter=city>Paris</parameter>
</function>
</seed:tool_call>
```

The body is qwen3_coder's (`<function=f>`, `<parameter=k>`), wrapped in `<seed:tool_call>`; the
chat template writes one call per block, and each call is handed out at its `</function>`.
Values are raw text, typed by the request's tool schema (`schema.coerce_value`: a string without
one, but for the literal `null`); one newline on each side of a value is layout, as vLLM and
SGLang read it. The template writes non-string values in Python's spelling (`True`,
`{'a': 1}`), which the schema typing reads too. As in vLLM, a `<function=` without the section
marker is a call as well, and a value missing its `</parameter>` ends where the next
`<parameter=` or `</function>` starts a line (qwen3_coder's rules).

Reasoning is `<seed:think>…</seed:think>`, written by the model itself (the template does not
open it, except with a thinking budget of 0, where the generation prompt ends inside it). It ends
at `</seed:think>` only: the model drafts whole calls while thinking, and those stay reasoning.
The `<seed:cot_budget_reflect>…</seed:cot_budget_reflect>` notes it writes when thinking on a
budget are reasoning text and stay in it, tags and all, as vLLM keeps them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._reasoning import ReasoningSyntax
from .._schema import JSON_OBJECT
from ._base import Dialect
from ._rendering import CallToRender, Renderer, ToolSpec, join_turn, value_text
from ._xml_calls import XmlCallParser, XmlCallSyntax
from .call_grammar import Args, CallGrammar, Lit, Name

THINK = ("<seed:think>", "</seed:think>")

SEED = XmlCallSyntax(
    section="<seed:tool_call>",
    section_end="</seed:tool_call>",
    call="<function=",
    call_end="</function>",
    param="<parameter=",
    bare_calls=True,
    line_ends=True,
    one_newline=True,
)


class SeedOssParser(XmlCallParser):
    syntax = SEED


# -- request side: the chat template's text --------------------------------------------------------


def _edge_newlines(text: str) -> str:
    """A value between its tags, with a layout newline on a side where the value has its own.

    The parser drops one newline on each side of a value, which the template writes only there.
    """
    return ("\n" if text.startswith("\n") else "") + text + ("\n" if text.endswith("\n") else "")


def _seed_calls(calls: Sequence[CallToRender]) -> str:
    out = []
    for c in calls:
        params = "".join(
            f"<parameter={k}>{_edge_newlines(value_text(v))}</parameter>\n" for k, v in c.arguments.items()
        )
        out.append(f"<seed:tool_call>\n<function={c.name}>\n{params}</function>\n</seed:tool_call>")
    return "\n".join(out)


_PY_TYPES = {"string": "str", "number": "int", "integer": "int", "boolean": "bool", "array": "list"}


def _seed_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    # The template's default tool listing: Python signatures with docstrings (必填 = required,
    # 选填 = optional), and its call-format line (工具调用请遵循如下格式 = "tool calls follow this format").
    blocks = []
    for tool in tools:
        schema = tool.schema()
        props = schema.get("properties")
        props = props if isinstance(props, JSON_OBJECT) else {}
        listed = schema.get("required")
        required: list[Any] = listed if isinstance(listed, list) else []

        def py(spec: Any) -> str:
            kind = spec.get("type") if isinstance(spec, JSON_OBJECT) else None
            return _PY_TYPES.get(kind, "Any") if isinstance(kind, str) else "Any"

        signature = ", ".join(f"{name}: {py(spec)}" for name, spec in props.items())
        doc = f'    """\n    {(tool.description or "").strip()}\n'
        if props:
            doc += "\n    Args:\n" + "".join(
                f"    - {name} ({py(spec)}) {'[必填]' if name in required else '[选填]'}: "
                f"{(spec.get('description') or '') if isinstance(spec, JSON_OBJECT) else ''}\n"
                for name, spec in props.items()
            )
        blocks.append(f'Function:\ndef {tool.name}({signature}):\n{doc}    """')
    return (
        "You may call one or more functions to assist with the user query.\n\n"
        + "\n\n".join(blocks)
        + "\n\n工具调用请遵循如下格式:\n<seed:tool_call>\n<function=example_function_name>\n"
        "<parameter=example_parameter_1>value_1</parameter>\n<parameter=example_parameter_2>This is the value for "
        "the second parameter\nthat can span\nmultiple lines</parameter>\n</function>\n</seed:tool_call>"
    )


SEED_OSS = Renderer(calls=_seed_calls, tools=_seed_tools, assistant=lambda c, k: join_turn(c, k, "\n\n"))


# What `_seed_calls` writes, as a grammar (a value's own edge newlines are text of the value).
SEED_OSS_GRAMMAR = CallGrammar(
    call=(
        Lit(f"{SEED.section}\n{SEED.call}"),
        Name(),
        Lit(">\n"),
        Args(xml=(SEED.param, ">", "</parameter>\n")),
        Lit(f"{SEED.call_end}\n{SEED.section_end}"),
    ),
    separator="\n",
    trigger=SEED.section,
)

DIALECTS = [
    Dialect(
        name="seed_oss",
        markers=("<seed:tool_call>",),
        detected_reasoning=(THINK,),
        description="<seed:tool_call><function=f><parameter=k>v</parameter></function></seed:tool_call>: "
        "ByteDance Seed-OSS",
        machine=SeedOssParser,
        renderer=SEED_OSS,
        grammar=SEED_OSS_GRAMMAR,
        incremental=True,
        models=(r"seed[-_]?oss",),
        # No implicit end: Seed-OSS drafts whole calls while thinking ("The format is
        # <seed:tool_call>…"); they stay reasoning, and only the call after `</seed:think>` runs.
        reasoning=ReasoningSyntax(pairs=(THINK,)),
    )
]


__all__ = [
    "DIALECTS",
    "SEED",
    "SEED_OSS",
    "THINK",
    "SeedOssParser",
]
