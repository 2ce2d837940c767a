"""`apertus`: Swiss AI Apertus (Apertus-8B/70B-Instruct-2509).

```
<|inner_prefix|>The user wants the weather.<|inner_suffix|>
<|tools_prefix|>[{"get_weather": {"city": "Paris"}}, {"get_time": {}}]<|tools_suffix|>
```

The calls are one JSON array of single-key objects, the function's name as the key and its
arguments as the value, as vLLM's `apertus` and SGLang's `apertus2509` read them; an item with
more than one key is not a call (the block is text). Reasoning is
`<|inner_prefix|>…<|inner_suffix|>`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._reasoning import ReasoningSyntax
from ._base import BlockParser, Call, Dialect, arguments_object, dump_arguments
from ._json_calls import JsonCallsBlock, JsonCallsSyntax
from ._rendering import Renderer, ToolSpec, dumps, join_turn
from .call_grammar import Args, CallGrammar, Lit, Name
from .harmony import ts_type

TOOLS, TOOLS_END = "<|tools_prefix|>", "<|tools_suffix|>"
INNER, INNER_END = "<|inner_prefix|>", "<|inner_suffix|>"


def read_named(item: Any) -> Call | None:
    """`{"name": {arguments}}` as a call."""
    if not isinstance(item, dict) or len(item) != 1:
        return None
    ((name, value),) = item.items()
    args = arguments_object(value)
    if not name or args is None:
        return None
    return Call(name=name, arguments=dump_arguments(args))


_SYNTAX = JsonCallsSyntax(close=TOOLS_END, read=read_named)


class ApertusParser(BlockParser):
    openers = (TOOLS,)
    stray_tokens = (TOOLS_END,)
    strip_around_blocks = True

    def open_block(self, opener: str) -> JsonCallsBlock:
        return JsonCallsBlock(opener, _SYNTAX)


def _tool_type(tool: ToolSpec) -> str:
    """One tool as the template's `render_tools` writes it: a TypeScript function type."""
    head = f"// {tool.description}\n" if tool.description else ""
    schema = tool.schema()
    props = schema.get("properties")
    if not isinstance(props, Mapping) or not props:
        return f"{head}type {tool.name} = () => any;"
    required = schema.get("required") or []
    fields = []
    for name, spec in props.items():
        spec = spec if isinstance(spec, Mapping) else {}
        note = f"// {spec['description']}\n" if spec.get("description") else ""
        fields.append(f"{note}{name}{'' if name in required else '?'}: {ts_type(spec)}")
    return f"{head}type {tool.name} = (_: {{\n" + ",\n".join(fields) + "\n}) => any;"


def _tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    # The template's developer turn lists the tools as TypeScript types; the call syntax is
    # spelled out here because no template slot carries it.
    return (
        "Tool Capabilities:\n" + "\n".join(_tool_type(t) for t in tools) + "\n\n"
        f'To call functions, write {TOOLS}[{{"<function-name>": <args-json-object>}}, …]{TOOLS_END}'
    )


RENDERER = Renderer(
    calls=lambda calls: f"{TOOLS}{dumps([{c.name: dict(c.arguments)} for c in calls])}{TOOLS_END}" if calls else "",
    tools=_tools,
    # The template writes a turn's results as one JSON list after the calls.
    results=lambda rs: "[" + ", ".join(r.output for r in rs) + "]",
    assistant=lambda content, calls: join_turn(content, calls, ""),
)

# What `RENDERER` writes, as a grammar: each call `{"NAME": {arguments}}`.
APERTUS_GRAMMAR = CallGrammar(
    call=(Lit("{"), Name(json=True), Lit(": "), Args(), Lit("}")),
    separator=", ",
    section=(TOOLS + "[", "]" + TOOLS_END),
    trigger=TOOLS,
    special_tokens=(TOOLS, TOOLS_END),
)

DIALECTS = [
    Dialect(
        name="apertus",
        markers=("<|tools_prefix|>",),
        detected_reasoning=((INNER, INNER_END),),
        description='<|tools_prefix|>[{"f": {json}}, …]<|tools_suffix|>: Swiss AI Apertus, <|inner_prefix|> reasoning',
        machine=ApertusParser,
        models=(r"apertus",),
        reasoning=ReasoningSyntax(pairs=((INNER, INNER_END),)),
        renderer=RENDERER,
        grammar=APERTUS_GRAMMAR,
    )
]

__all__ = ["APERTUS_GRAMMAR", "DIALECTS", "INNER", "INNER_END", "TOOLS", "TOOLS_END", "read_named"]
