"""A request's constraint in the field its host's engine reads (`constrain=`).

```python
fields, dropped = constrain_fields("sglang", constraint)
body.update(fields); [body.pop(k, None) for k in dropped]
```

| engine | field | grammar |
| --- | --- | --- |
| `vllm` | `structured_outputs: {"structural_tag": "<json>"}` | an xgrammar structural tag |
| `sglang` | `response_format: {"type": "structural_tag", "format": …}` (no `tool_choice` beside it) | the same tag |
| `llama.cpp` | `grammar`, `grammar_lazy`, `grammar_triggers`, `preserved_tokens` | GBNF |
| `tgi` | `response_format: {"type": "regex", "value": …}` | one regular expression |
| `ollama` | `format` | the JSON schema of a whole-output JSON dialect |

The structural tag is what vLLM and SGLang build themselves when they run their own tool parser
(xgrammar's `builtin_structural_tag.py`): markers as `const_string` (special tokens included:
xgrammar matches their text), arguments as `json_schema`, the XML argument styles, Python
keyword arguments and the other notations (MiniMax-M3's keyed elements, Gemma's objects) as our
own GBNF (`grammar`), the lazy form as `triggered_tags`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..dialects.call_grammar import Args, Chars, Lit
from ..framing._utf8 import json_text
from . import ENGINES, Engine
from .build import Alt, Constraint, Free, Json, Node, Opt, Rep, Seq, Until, after_prefix
from .gbnf import arguments_gbnf, to_gbnf
from .regex import Unexpressible, to_regex

WORD_TRIGGER = 1  # llama.cpp's COMMON_GRAMMAR_TRIGGER_TYPE_WORD


def structural_format(node: Node) -> dict[str, Any]:
    """The tree as an xgrammar structural-tag format object."""
    if isinstance(node, Lit):
        return {"type": "const_string", "value": node.text}
    if isinstance(node, Chars):
        most = "" if node.most is None else str(node.most)
        return {"type": "regex", "pattern": f"[{node.cls}]{{{node.least},{most}}}"}
    if isinstance(node, Json):
        if node.form.xml is None and node.form.notation is None and not node.form.python:
            return {"type": "json_schema", "json_schema": dict(node.schema)}
        return {"type": "grammar", "grammar": arguments_gbnf(node)}
    if isinstance(node, Seq):
        return {"type": "sequence", "elements": [structural_format(item) for item in node.items]}
    if isinstance(node, Alt):
        if len(node.items) == 1:
            return structural_format(node.items[0])
        return {"type": "or", "elements": [structural_format(item) for item in node.items]}
    if isinstance(node, Opt):
        return {"type": "optional", "content": structural_format(node.item)}
    if isinstance(node, Rep):
        item = structural_format(node.item)
        if node.single:
            return item
        more = item if not node.separator else structural_format(Seq((Lit(node.separator), node.item)))
        return {"type": "sequence", "elements": [item, {"type": "star", "content": more}]}
    if isinstance(node, Until):
        return {"type": "tag", "begin": "", "content": {"type": "any_text"}, "end": node.end}
    if isinstance(node, Free):
        return {"type": "any_text", "excludes": [node.avoid]}
    raise TypeError(node)


def structural_tag(constraint: Constraint, parallel: bool = True) -> dict[str, Any]:
    """The whole structural tag: the tree, or (lazy) free text that the trigger turns into it."""
    if not constraint.lazy:
        return {"type": "structural_tag", "format": structural_format(constraint.tree)}
    tags = [_tag(constraint.trigger, block) for block in _lazy_blocks(constraint.tree)]
    lazy = {"type": "triggered_tags", "triggers": [constraint.trigger], "tags": tags, "stop_after_first": not parallel}
    return {"type": "structural_tag", "format": lazy}


def _lazy_blocks(tree: Node) -> list[Node]:
    """What the trigger may open: the whole section, when the calls have one that closes; else
    each call on its own (the trigger opens each; free text may come between two)."""
    if isinstance(tree, Seq) and isinstance(tree.items[-1], Lit):
        return [tree]
    items = tree.items if isinstance(tree, Seq) else (tree,)
    lead = [item for item in items if isinstance(item, Lit)]
    rep = next(item for item in items if isinstance(item, Rep))
    calls = rep.item.items if isinstance(rep.item, Alt) else (rep.item,)
    return [Seq((*lead, call)) if lead else call for call in calls]


def _tag(trigger: str, block: Node) -> dict[str, Any]:
    """A tag that the trigger opens and the block's last fixed text closes."""
    rest = after_prefix(block, trigger)
    items = rest.items if isinstance(rest, Seq) else (rest,)
    last = items[-1]
    if not isinstance(last, Lit):
        raise Unexpressible("a call that ends with no fixed text")
    body = items[:-1]
    content: dict[str, Any] = (
        (structural_format(body[0]) if len(body) == 1 else structural_format(Seq(body)))
        if body
        else {"type": "const_string", "value": ""}
    )
    return {"type": "tag", "begin": trigger, "content": content, "end": last.text}


def constrain_fields(
    engine: Engine, constraint: Constraint, parallel: bool = True, *, with_tools: bool = False
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The fields to set on the host's request, and those to remove; `Unexpressible` when the
    engine's grammar cannot say the constraint (the caller then leaves the request as it is).

    The grammar says what `tool_choice` asked, so `tool_choice` never goes beside it: an engine
    that reads it builds a constraint of its own from it (vLLM's JSON schema for `required`), or
    refuses both together. `with_tools`: the host's body still has `tools` (`forward_tools`)."""
    if engine == "vllm":
        tag = structural_tag(constraint, parallel)
        return {"structured_outputs": {"structural_tag": json_text(tag)}}, ("response_format", "tool_choice")
    if engine == "sglang":
        # SGLang refuses a constraint beside `tool_choice` (400): the grammar says it all.
        return {"response_format": structural_tag(constraint, parallel)}, ("tool_choice",)
    if engine == "llama.cpp":
        fields: dict[str, Any] = {"grammar": to_gbnf(constraint.tree), "grammar_lazy": constraint.lazy}
        if constraint.lazy:
            fields["grammar_triggers"] = [{"type": WORD_TRIGGER, "value": constraint.trigger}]
        # A trigger that is one token must be preserved too (llama.cpp refuses the request
        # otherwise); one that is several is ignored there.
        preserved = dict.fromkeys(
            (*constraint.special_tokens, constraint.trigger) if constraint.lazy else constraint.special_tokens
        )
        if preserved:
            fields["preserved_tokens"] = list(preserved)
        if with_tools:  # llama-server refuses a grammar beside tools unless `tool_choice` is "none"
            fields["tool_choice"] = "none"
        return fields, ("response_format", "json_schema")
    if engine == "tgi":
        if constraint.lazy:
            raise Unexpressible("free text until a trigger (a regular expression has no lazy form)")
        if constraint.special_tokens:
            raise Unexpressible("special-token markers")
        # TGI takes `response_format` or `tools`, never both.
        return {"response_format": {"type": "regex", "value": to_regex(constraint.tree)}}, ("tools", "tool_choice")
    if engine == "ollama":
        if constraint.document is None:
            raise Unexpressible("a call syntax that is not one JSON document")
        if constraint.lazy:
            raise Unexpressible("free text until a trigger")
        return {"format": dict(constraint.document)}, ("response_format", "tool_choice")
    raise ValueError(f"unknown engine {engine!r}; the engines are: {', '.join(ENGINES)}")


def without_reasoning(constraint: Constraint) -> Constraint:
    """The constraint without its reasoning block (a regular expression cannot say one)."""
    tree = constraint.tree
    if isinstance(tree, Seq) and _is_reasoning(tree.items[0]):
        rest = tree.items[1:]
        tree = rest[0] if len(rest) == 1 else Seq(rest)
    return Constraint(
        tree, constraint.lazy, constraint.trigger, constraint.special_tokens, constraint.document, constraint.tools
    )


def _is_reasoning(node: Node) -> bool:
    return isinstance(node, Seq) and any(
        isinstance(i, Until) or (isinstance(i, Opt) and _has_until(i.item)) for i in node.items
    )


def _has_until(node: Node) -> bool:
    return isinstance(node, Until) or (isinstance(node, Seq) and any(_has_until(i) for i in node.items))


def dialect_unexpressible(engine: Engine, dialect: str) -> str | None:
    """Why `engine` cannot hold `dialect` to its calls (`None`: it can), for the configuration."""
    from ..dialects import get_dialect

    grammar = get_dialect(dialect).grammar
    if grammar is None:
        return "the dialect declares no call grammar"
    xml = any(isinstance(p, Args) and (p.xml is not None or p.notation is not None) for p in grammar.call)
    return unexpressible(engine, bool(grammar.special_tokens), grammar.document is not None, xml)


def unexpressible(engine: Engine, special_tokens: bool, document: bool, xml_arguments: bool) -> str | None:
    """Why `engine` cannot constrain a dialect of this kind (`None`: it can)."""
    if engine == "ollama" and not document:
        return "Ollama's `format` is a JSON schema of the whole output: it holds only bare-JSON dialects"
    if engine == "tgi" and special_tokens:
        return "TGI's regular expression cannot match special-token markers"
    if engine == "tgi" and xml_arguments:
        return "TGI's regular expression cannot bound the XML parameter values"
    return None


def body_with(body: Mapping[str, Any], fields: Mapping[str, Any], dropped: tuple[str, ...]) -> dict[str, Any]:
    out = {k: v for k, v in body.items() if k not in dropped}
    out.update(fields)
    return out


__all__ = [
    "ENGINES",
    "Engine",
    "Unexpressible",
    "body_with",
    "constrain_fields",
    "dialect_unexpressible",
    "structural_format",
    "structural_tag",
    "unexpressible",
    "without_reasoning",
]
