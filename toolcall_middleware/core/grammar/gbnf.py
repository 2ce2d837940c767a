"""A grammar tree as GBNF: llama.cpp's grammar format (xgrammar reads it as its EBNF too).

```python
text = to_gbnf(constraint.tree)      # 'root ::= "<tool_call>\\n{\\"name\\": " ...'
```

JSON values follow their schema: `type` (one or several), `properties` in their order (the
`required` ones always, the others optionally), `items`, `enum`, `const`, `anyOf`/`oneOf` and
`$ref` into `$defs`/`definitions`; a keyword it does not know leaves the value as loose as the
rest of the schema says. `Until(end)` is any text without `end`, then `end`, written as the
automaton that watches for `end` (exact: no lookahead is needed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .._schema import json_type_of
from ..dialects.call_grammar import Chars, Lit
from ..framing._utf8 import json_text
from ._notations import notation_rules
from .build import Alt, Free, Json, Node, Opt, Rep, Seq, Until
from .python import SHARED_RULES, gbnf_rules, literal_texts

WS = "ws"
_BASE = {
    "ws": "[ \\t\\n]{0,20}",
    "json-string": '"\\"" ( [^"\\\\\\x00-\\x1f] | "\\\\" ( ["\\\\/bfnrt] | "u" [0-9a-fA-F]{4} ) )* "\\""',
    "json-integer": '"-"? ( "0" | [1-9] [0-9]* )',
    "json-number": 'json-integer ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?',
    "json-boolean": '"true" | "false"',
    "json-null": '"null"',
    "json-value": "json-object | json-array | json-string | json-number | json-boolean | json-null",
    "json-member": 'json-string ws ":" ws json-value ws',
    "json-object": '"{" ws ( json-member ( "," ws json-member )* )? "}"',
    "json-array": '"[" ws ( json-value ws ( "," ws json-value ws )* )? "]"',
}
_TYPES = {
    "string": "json-string",
    "integer": "json-integer",
    "number": "json-number",
    "boolean": "json-boolean",
    "null": "json-null",
}


def literal(text: str) -> str:
    """A GBNF string literal."""
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _class_char(ch: str) -> str:
    if ch in "]\\^-[":
        return "\\" + ch
    if ch == "\n":
        return "\\n"
    if ch == "\t":
        return "\\t"
    if ch == "\r":
        return "\\r"
    return f"\\x{ord(ch):02x}" if ord(ch) < 0x20 else ch


def repeat(atom: str, least: int, most: int | None) -> str:
    if (least, most) == (0, None):
        return atom + "*"
    if (least, most) == (1, None):
        return atom + "+"
    if (least, most) == (0, 1):
        return atom + "?"
    return atom + "{" + str(least) + "," + ("" if most is None else str(most)) + "}"


class GbnfWriter:
    """Rules written as a tree is walked; `root` names the start."""

    literal = staticmethod(literal)  # (for the notations' rules, which this module calls)

    def __init__(self, root_schema: Mapping[str, Any] | None = None) -> None:
        self.rules: dict[str, str] = {}
        self._used_base: set[str] = set()
        self._refs: dict[str, str] = {}
        self._schema_root: Mapping[str, Any] = root_schema or {}

    def text(self, root: str) -> str:
        lines = [f"root ::= {root}"]
        lines += [f"{name} ::= {body}" for name, body in self.rules.items()]
        if self._used_base:
            lines += [f"{name} ::= {body}" for name, body in _BASE.items()]
        return "\n".join(lines) + "\n"

    def _rule(self, body: str, hint: str) -> str:
        name = f"{hint}-{len(self.rules)}"
        self.rules[name] = body
        return name

    def _base(self, name: str) -> str:
        self._used_base.add(name)  # (the JSON rules refer to one another: all are written)
        return name

    # -- the tree --------------------------------------------------------------------------

    def node(self, node: Node) -> str:
        if isinstance(node, Lit):
            return literal(node.text)
        if isinstance(node, Chars):
            return repeat(f"[{node.cls}]", node.least, node.most)
        if isinstance(node, Json):
            self._schema_root = node.schema
            self._refs = {}
            return self.arguments(node)
        if isinstance(node, Seq):
            return "( " + " ".join(self.node(item) for item in node.items) + " )"
        if isinstance(node, Alt):
            return _either(self.node(item) for item in node.items)
        if isinstance(node, Opt):
            return "( " + self.node(node.item) + " )?"
        if isinstance(node, Rep):
            item = self._rule(self.node(node.item), "call")
            if node.single:
                return item
            return f"( {item} ( {literal(node.separator) if node.separator else ''} {item} )* )"
        if isinstance(node, Until):
            return self.until(node.end)
        if isinstance(node, Free):
            return self.until(node.avoid, free=True)
        raise TypeError(node)

    def until(self, end: str, *, free: bool = False) -> str:
        """Any text without `end`, then `end`: one rule per state of the automaton that watches
        for it (state j: the last j characters read are the first j of `end`). `free`: any text
        without `end`, to the end of the output (the automaton may stop in any state)."""
        alphabet = sorted(set(end))
        names = [f"until-{len(self.rules)}-{j}" for j in range(len(end))]
        for j in range(len(end)):
            alts, moving = [], []
            for ch in alphabet:
                k = _next_state(end, j, ch)
                if k:  # (a character that matches nothing of `end` goes back to state 0, below)
                    moving.append(ch)
                    if k < len(end):
                        alts.append(f"{literal(ch)} {names[k]}")
                    elif not free:
                        alts.append(literal(ch))
            alts.append(f"[^{''.join(_class_char(c) for c in moving)}] {names[0]}")
            if free:
                alts.append('""')
            self.rules[names[j]] = " | ".join(alts)
        return names[0]

    # -- arguments -------------------------------------------------------------------------

    def arguments(self, node: Json) -> str:
        schema, xml = node.schema, node.form.xml
        if node.form.python:
            return PythonGbnf(self, node.form.escaped).arguments(schema)
        if node.form.notation is not None:
            return notation_rules(self, node.form.notation).arguments(schema)
        if xml is None:
            return self.value(schema)
        opening, middle, closing = xml
        between = literal(node.form.between) if node.form.between else ""
        types = dict(node.form.types)
        props = schema.get("properties")
        if not isinstance(props, Mapping) or not props:
            if types:
                value = self._typed_value({}, middle, types, closing)
                element = f'( {literal(opening)} [^<>"\\n]+ {value} )'
            else:
                element = f"( {literal(opening)} [^<>\\n]+ {literal(middle)} {self.until(closing)} )"
            return f"( {element} ( {between} {element} )* )?" if between else element + "*"
        required = _required(schema)
        elements = []
        for key, sub in props.items():
            sub = sub if isinstance(sub, Mapping) else {}
            if types:
                elements.append(
                    (key in required, f"{literal(opening + key)} {self._typed_value(sub, middle, types, closing)}")
                )
            else:
                value = (
                    self._xml_value(sub, closing)
                    if node.form.cdata is None
                    else self._bare_or_cdata(sub, closing, node.form.cdata)
                )
                elements.append((key in required, f"{literal(opening + key + middle)} {value}"))
        return self._members(elements, separator=between, hint="params")

    def _typed_value(
        self, schema: Mapping[str, Any], middle: str, types: Mapping[str, str], closing: str, depth: int = 0
    ) -> str:
        """A typed element's middle, its `{type}` the value's JSON type, then the value (a string's
        bare text, any other value's JSON) and the closing marker. A schema that names no type
        admits a value of any type, the middle naming the type it has."""

        def head(kind: str) -> str:
            return literal(middle.replace("{type}", types[kind]))

        ref = schema.get("$ref")
        if isinstance(ref, str) and depth < 8:  # (a chain of references that loops is any value)
            return self._typed_value(self._target(ref), middle, types, closing, depth + 1)
        choices = [schema["const"]] if "const" in schema else schema.get("enum")
        if isinstance(choices, list):
            texts = [(json_type_of(v), v if isinstance(v, str) else json_text(v)) for v in choices]
            return _either(f"{head(k)} {literal(t + closing)}" for k, t in texts)
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                merged = [{**_without(schema, key), **s} for s in schema[key] if isinstance(s, Mapping)]
                alts = [self._typed_value(s, middle, types, closing, depth) for s in merged]
                return _either(alts)
        kind = schema.get("type")
        if kind is None and "properties" in schema:
            kind = "object"
        kinds = kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else list(types)
        alts = [
            f"{head(k)} {self.until(closing)}"
            if k == "string"
            else f"{head(k)} {self.value({**schema, 'type': k})} {literal(closing)}"
            for k in kinds
            if k in types
        ]
        return _either(alts)

    def _xml_value(self, schema: Mapping[str, Any], closing: str) -> str:
        """A parameter's value as the XML styles write it: a string as its bare text, any other
        value as JSON (`value_text`), then the closing marker."""
        choices = [schema["const"]] if "const" in schema else schema.get("enum")
        if isinstance(choices, list):
            texts = [v if isinstance(v, str) else json_text(v) for v in choices]
            return _either(literal(t + closing) for t in texts)
        if schema.get("type") == "string":
            return self.until(closing)
        return f"{self.value(schema)} {literal(closing)}"

    def _bare_or_cdata(self, schema: Mapping[str, Any], closing: str, cdata: tuple[str, str]) -> str:
        """A parameter's value as MiniCPM 5 writes it: bare (a string's text holds no `<`, `&` or
        line break), or in a CDATA section, as written up to the section's end."""
        opening, end = cdata
        bare = self._xml_value(schema, closing)
        if schema.get("type") == "string" and "const" not in schema and "enum" not in schema:
            bare = f"[^<&\\n]* {literal(closing)}"
        return f"( {bare} | {literal(opening)} {self._xml_value(schema, end)} {literal(closing)} )"

    def _members(self, elements: Sequence[tuple[bool, str]], separator: str, hint: str) -> str:
        """The elements in order, the required ones always, `separator` between two."""
        sep = f"{separator} " if separator else ""
        memo: dict[tuple[int, bool], str] = {}

        def rest(i: int, first: bool) -> str:
            if i == len(elements):
                return ""
            key = (i, first)
            if key in memo:
                return memo[key]
            needed, element = elements[i]
            lead = "" if first else sep
            taken = f"{lead}{element} {rest(i + 1, False)}".strip()
            skipped = "" if needed else rest(i + 1, first)
            if needed:
                body = taken
            elif skipped:
                body = f"( {taken} ) | {skipped}"
            else:
                body = f"( {taken} )?"
            memo[key] = self._rule(body, hint)
            return memo[key]

        return rest(0, True) or '""'

    def value(self, schema: Any) -> str:
        if not isinstance(schema, Mapping):
            return self._base("json-value")
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self._ref(ref)
        if "const" in schema:
            return literal(json_text(schema["const"]))
        if isinstance(schema.get("enum"), list):
            return _either(literal(json_text(v)) for v in schema["enum"])
        either = _alternatives(schema, self.value)
        if either is not None:
            return either
        kind = schema.get("type")
        if kind == "object" or (kind is None and "properties" in schema):
            return self._object(schema)
        if kind == "array":
            return self._array(schema)
        if kind in _TYPES:
            return self._base(_TYPES[kind])
        return self._base("json-value")

    def _ref(self, ref: str) -> str:
        if ref in self._refs:
            return self._refs[ref]
        if not ref.startswith("#/"):
            return self._base("json-value")
        target = self._target(ref)
        name = f"ref-{len(self.rules)}"
        self._refs[ref] = name
        self.rules[name] = '""'  # placeholder, so that a recursive schema refers to it
        self.rules[name] = self.value(target)
        return name

    def _target(self, ref: str) -> Any:
        """What a `#/…` reference points to in the arguments' schema (`{}`: any value)."""
        target: Any = self._schema_root
        for step in ref[2:].split("/") if ref.startswith("#/") else ():
            target = target.get(step) if isinstance(target, Mapping) else None
        return target if isinstance(target, Mapping) else {}

    def _object(self, schema: Mapping[str, Any]) -> str:
        props = schema.get("properties")
        if not isinstance(props, Mapping) or not props:
            return self._base("json-object")
        self._base("ws")
        required = _required(schema)
        elements = [
            (key in required, f"{literal(json_text(key))} ws {literal(':')} ws {self.value(sub)} ws")
            for key, sub in props.items()
        ]
        members = self._members(elements, separator=f"{literal(',')} ws", hint="members")
        return self._rule(f"{literal('{')} ws {members} {literal('}')}", "object")

    def _array(self, schema: Mapping[str, Any]) -> str:
        self._base("ws")
        item = self.value(schema.get("items", {}))
        least = schema.get("minItems", 0)
        more = f"( {literal(',')} ws {item} ws )*"
        body = f"{item} ws {more}"
        if not (isinstance(least, int) and least > 0):
            body = f"( {body} )?"
        return self._rule(f"{literal('[')} ws {body} {literal(']')}", "array")


# -- Python keyword arguments ----------------------------------------------------------------

_SCALAR_RULES = {"integer": "integer", "number": "number", "boolean": "boolean", "null": "none", "string": "string"}


class PythonGbnf:
    """Python keyword arguments (`python.py`) as GBNF rules, added to `writer`: values follow
    their schema as `GbnfWriter.value`'s JSON values do."""

    def __init__(self, writer: GbnfWriter, escaped: str = "") -> None:
        self._writer = writer
        self._escaped = escaped
        self._suffix = "".join(f"-{ord(c):x}" for c in escaped)  # (rules that differ by `escaped`)
        self._refs: dict[str, str] = {}

    def arguments(self, schema: Mapping[str, Any]) -> str:
        """The keyword arguments: the schema's properties in their order, the required ones always."""
        props = schema.get("properties")
        if not isinstance(props, Mapping) or not props:
            return self._base("kwargs")
        required = _required(schema)
        elements = [(key in required, f"{literal(key + '=')} {self.value(sub)}") for key, sub in props.items()]
        return self._writer._members(elements, separator='"," " "?', hint="kwargs")

    def value(self, schema: Any) -> str:
        if not isinstance(schema, Mapping):
            return self._base("value")
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self._ref(ref)
        choices = [schema["const"]] if "const" in schema else schema.get("enum")
        if isinstance(choices, list):
            return _either(literal(t) for v in choices for t in literal_texts(v, self._escaped))
        either = _alternatives(schema, self.value)
        if either is not None:
            return either
        kind = schema.get("type")
        if kind == "object" or (kind is None and "properties" in schema):
            return self._dict(schema)
        if kind == "array":
            item = self.value(schema.get("items", {}))
            body = f'{item} ( "," " "? {item} )*'
            least = schema.get("minItems", 0)
            body = body if isinstance(least, int) and least > 0 else f"( {body} )?"
            return self._writer._rule(f'"[" {body} "]"', "list")
        if isinstance(kind, str) and kind in _SCALAR_RULES:
            return self._base(_SCALAR_RULES[kind])
        return self._base("value")

    def _dict(self, schema: Mapping[str, Any]) -> str:
        props = schema.get("properties")
        if not isinstance(props, Mapping) or not props:
            return self._base("dict")
        required = _required(schema)
        elements = [(key in required, f'{self._key(key)} ":" " "? {self.value(sub)}') for key, sub in props.items()]
        items = self._writer._members(elements, separator='"," " "?', hint="items")
        return self._writer._rule(f'"{{" {items} "}}"', "dict")

    def _key(self, key: str) -> str:
        return _either(literal(t) for t in literal_texts(key, self._escaped))

    def _ref(self, ref: str) -> str:
        if ref not in self._refs:
            name = self._refs[ref] = self._writer._rule('""', "pyref")  # (named first: a schema may recur)
            self._writer.rules[name] = self.value(self._writer._target(ref))
        return self._refs[ref]

    def _base(self, kind: str) -> str:
        """One of the base rules (all are written: they refer to one another)."""
        s = self._suffix
        for name, body in gbnf_rules(s, self._escaped).items():
            self._writer.rules.setdefault(name, body)
        return f"py-{kind}" if kind in SHARED_RULES else f"py-{kind}{s}"


def _next_state(end: str, matched: int, ch: str) -> int:
    """How much of `end` the text ends with after `ch` follows `matched` characters of it."""
    text = end[:matched] + ch
    for k in range(min(len(text), len(end)), 0, -1):
        if text.endswith(end[:k]):
            return k
    return 0


def _required(schema: Mapping[str, Any]) -> set[str]:
    req = schema.get("required")
    return {r for r in req if isinstance(r, str)} if isinstance(req, list) else set()


def _either(rules: Iterable[str]) -> str:
    """One of `rules`, as a GBNF group."""
    return "( " + " | ".join(rules) + " )"


def _alternatives(schema: Mapping[str, Any], value: Callable[[Any], str]) -> str | None:
    """A schema that is one of several (`anyOf`/`oneOf`, or a list of types) as one group of
    `value`'s rules, one per alternative (each with the rest of the schema); `None` for any other."""
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return _either(value({**_without(schema, key), **s}) for s in schema[key])
    kind = schema.get("type")
    if isinstance(kind, list):
        return _either(value({**schema, "type": k}) for k in kind)
    return None


def _without(schema: Mapping[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k != key}


def to_gbnf(tree: Node) -> str:
    """The tree as a GBNF grammar whose `root` is the whole of it."""
    writer = GbnfWriter()
    root = writer.node(tree)
    return writer.text(root)


def arguments_gbnf(node: Json) -> str:
    """One call's arguments alone as a GBNF grammar (the XML elements, inside a structural tag)."""
    writer = GbnfWriter(node.schema)
    return writer.text(writer.arguments(node))


__all__ = ["GbnfWriter", "PythonGbnf", "arguments_gbnf", "literal", "repeat", "to_gbnf"]
