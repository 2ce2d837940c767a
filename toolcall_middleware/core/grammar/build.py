"""A dialect's call grammar, the offered tools and `tool_choice`, as one grammar tree.

```python
constraint = build_constraint(HERMES_GRAMMAR, tools, reasoning=("<think>", "</think>"), prefilled=False)
constraint.tree      # the whole output (`required`, a named function), or the call block (lazy)
constraint.lazy      # `auto` with strict tools: free text until `constraint.trigger`, then the block
```

A request is constrained when its `tool_choice` is `required` or names a function (the whole
output: the reasoning block, then one call, or several as `parallel_tool_calls` allows), or when
`auto` offers `strict` tools (the lazy form). A strict tool's arguments follow its schema; the
others' are any JSON object (`all_strict`: every tool's follow its schema, as `strict=True` says).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..dialects._rendering import ToolSpec
from ..dialects.call_grammar import Args, CallGrammar, Chars, Lit, Name
from ..framing._utf8 import json_text
from ..request._tools import ToolSet

ANY_OBJECT: Mapping[str, Any] = {"type": "object"}
SPACE = Chars(" \\n", 0, None)  # between the reasoning block and the calls


@dataclass(frozen=True, slots=True)
class Json:
    """Arguments that `schema` admits, written as the dialect's `form` says: a JSON value, one
    element per parameter (`xml`), Python keyword arguments (`python`), or a notation."""

    schema: Mapping[str, Any]
    form: Args


@dataclass(frozen=True, slots=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Alt:
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Opt:
    item: Node


@dataclass(frozen=True, slots=True)
class Rep:
    """`item` once, then (`single` False) any more times, each after `separator`."""

    item: Node
    separator: str
    single: bool


@dataclass(frozen=True, slots=True)
class Until:
    """Any text that does not hold `end`, then `end`."""

    end: str


@dataclass(frozen=True, slots=True)
class Free:
    """Any text that does not hold `avoid`, to the end of the output."""

    avoid: str


Node = Lit | Chars | Json | Seq | Alt | Opt | Rep | Until | Free


@dataclass(frozen=True)
class Constraint:
    """What the host's decoder is held to (see the module doc)."""

    tree: Node
    lazy: bool
    trigger: str
    special_tokens: tuple[str, ...]
    document: Mapping[str, Any] | None  # the whole output's JSON schema, for a bare-JSON dialect
    tools: tuple[str, ...]


def wanted(tools: ToolSet) -> bool | None:
    """`False`: the whole output is held to a call; `True`: the lazy form; `None`: no constraint."""
    if not tools.offered:
        return None
    if tools.choice.mode == "required":
        return False
    if tools.choice.mode == "auto" and any(t.strict for t in tools.offered):
        return True
    return None


def build_constraint(
    grammar: CallGrammar,
    tools: ToolSet,
    *,
    reasoning: tuple[str, str] | None,
    prefilled: bool,
    all_strict: bool = False,
) -> Constraint | None:
    """The constraint for a request (`None` when it asks for none: see the module doc)."""
    lazy = wanted(tools)
    if lazy is None:
        return None
    offered = tools.offered
    schemas = [t.schema() if (t.strict or all_strict) else ANY_OBJECT for t in offered]
    calls = Alt(tuple(_call(grammar, tool, schema) for tool, schema in zip(offered, schemas, strict=True)))
    opening, closing = grammar.section
    block = _seq(Lit(opening), Rep(calls, grammar.separator, single=not tools.parallel), Lit(closing))
    if grammar.opened and lazy and grammar.prose:
        # The output is the calls, or text in which the trigger opens one: the whole of it is held.
        one = Seq((Until(grammar.start), after_prefix(calls, grammar.start)))
        prose = _seq(Lit(grammar.prose), Opt(Rep(one, "", single=not tools.parallel)), Free(grammar.start))
        block, lazy = Alt((after_prefix(block, grammar.opened), prose)), False
    elif grammar.opened and not lazy:  # (the lazy form's calls start at the trigger)
        block = after_prefix(block, grammar.opened)
    pair = grammar.reasoning or reasoning
    tree = block if lazy or pair is None else _seq(_reasoning(pair, prefilled), block)
    document = None
    if grammar.document is not None:
        document = grammar.document([_named(t.name, s) for t, s in zip(offered, schemas, strict=True)], tools.parallel)
    return Constraint(
        tree=tree,
        lazy=lazy,
        trigger=grammar.start,
        special_tokens=grammar.special_tokens,
        document=document,
        tools=tuple(t.name for t in offered),
    )


def _named(name: str, schema: Mapping[str, Any]) -> Mapping[str, Any]:
    return {"name": name, "schema": schema}


def _call(grammar: CallGrammar, tool: ToolSpec, schema: Mapping[str, Any]) -> Node:
    items: list[Node] = []
    for part in grammar.call:
        if isinstance(part, Name):
            items.append(Lit(json_text(tool.name) if part.json else tool.name))
        elif isinstance(part, Args):
            items.append(Json(schema, part))
        else:
            items.append(part)
    return _seq(*items)


def _reasoning(pair: tuple[str, str], prefilled: bool) -> Node:
    """The reasoning block: already open (the template wrote its opening marker), or optional."""
    opening, closing = pair
    if prefilled:
        return Seq((Until(closing), SPACE))
    return Seq((Opt(Seq((Lit(opening), Until(closing)))), SPACE))


def _seq(*items: Node) -> Node:
    """A sequence without its empty texts, adjacent texts merged."""
    out: list[Node] = []
    for item in items:
        if isinstance(item, Lit) and not item.text:
            continue
        if isinstance(item, Lit) and out and isinstance(out[-1], Lit):
            out[-1] = Lit(out[-1].text + item.text)
        else:
            out.append(item)
    return out[0] if len(out) == 1 else Seq(tuple(out))


def after_prefix(node: Node, prefix: str) -> Node:
    """`node` without the `prefix` every text it admits starts with (the lazy form's trigger)."""
    if not prefix:
        return node
    if isinstance(node, Lit):
        if not node.text.startswith(prefix):
            raise ValueError(f"{node.text!r} does not start with the trigger {prefix!r}")
        return Lit(node.text[len(prefix) :])
    if isinstance(node, Seq):
        first = node.items[0]
        if isinstance(first, Lit) and len(first.text) < len(prefix) and prefix.startswith(first.text):
            return after_prefix(_seq(*node.items[1:]), prefix[len(first.text) :])
        return _seq(after_prefix(first, prefix), *node.items[1:])
    if isinstance(node, Alt):
        return Alt(tuple(after_prefix(item, prefix) for item in node.items))
    if isinstance(node, Rep):
        # Only the first call follows the trigger: the block is the first call, then the others.
        first = after_prefix(node.item, prefix)
        if node.single:
            return first
        return _seq(first, Opt(Rep(Seq((Lit(node.separator), node.item)) if node.separator else node.item, "", False)))
    raise ValueError(f"no fixed text to take the trigger {prefix!r} from")


__all__ = [
    "ANY_OBJECT",
    "Alt",
    "Constraint",
    "Free",
    "Json",
    "Node",
    "Opt",
    "Rep",
    "Seq",
    "Until",
    "after_prefix",
    "build_constraint",
    "wanted",
]
