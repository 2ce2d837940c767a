"""Arguments in a notation of their own, as GBNF rules (`Args.notation`).

```python
rules = notation_rules(writer, KeyedElements(NS + "<{key}>", NS + "</{key}>", "item"))
rules.arguments(schema)   # MiniMax-M3's `NS<city>ParisNS</city>NS<days>3NS</days>`
```

`KeyedElements`: every value an element named by its key, an object's members and an array's
items as child elements, a scalar as its text up to its closing tag. `ObjectNotation`: Gemma's
`{key:value,…}`, strings between delimiters with no escapes. Both follow the schema as the JSON
rules do (`type`, `properties` in order, `items`, `enum`, `const`, `anyOf`/`oneOf`, `$ref`); a
value of no known shape is any value of the notation.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ..dialects.call_grammar import KeyedElements, Notation, ObjectNotation
from ..framing._utf8 import json_text


class GbnfWriter(Protocol):
    """What the notations use of the GBNF writer (`gbnf.GbnfWriter`, which calls them)."""

    rules: dict[str, str]

    def literal(self, text: str) -> str: ...
    def until(self, end: str) -> str: ...
    def _rule(self, body: str, hint: str) -> str: ...
    def _base(self, name: str) -> str: ...
    def _members(self, elements: Sequence[tuple[bool, str]], separator: str, hint: str) -> str: ...
    def _target(self, ref: str) -> Any: ...


_SCALARS = {"integer": "json-integer", "number": "json-number", "boolean": "json-boolean", "null": "json-null"}
_KEY_CHARS = "[^ \\t\\r\\n<>/\"'=]+"  # an element's name, as MiniMax-M3's parser takes one
_BARE_KEY = '[^ \\t\\r\\n:{}\\[\\],"<>|] [^:{}\\[\\],<>|]*'  # a key Gemma writes bare


class _Rules(ABC):
    """What both notations share: the schema's alternatives, references and the writer."""

    def __init__(self, writer: GbnfWriter) -> None:
        self.w = writer
        self._refs: dict[tuple[str, str], str] = {}

    def then(self, closing: str) -> str:
        """The closing text after a value (nothing when there is none)."""
        return self.w.literal(closing) if closing else ""

    def _choices(self, schema: Mapping[str, Any], closing: str) -> list[str] | None:
        """The alternatives `const`, `enum`, `anyOf`/`oneOf` or a list of types name, if any."""
        choices = [schema["const"]] if "const" in schema else schema.get("enum")
        if isinstance(choices, list):
            return [self.w.literal(self.text(v) + closing) for v in choices]
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                rest = {k: v for k, v in schema.items() if k != key}
                return [self.value({**rest, **s}, closing) for s in schema[key] if isinstance(s, Mapping)]
        kind = schema.get("type")
        if isinstance(kind, list):
            return [self.value({**schema, "type": k}, closing) for k in kind]
        return None

    def value(self, schema: Any, closing: str = "") -> str:
        """A value `schema` admits, then `closing`."""
        if not isinstance(schema, Mapping):
            return self.any_value(closing)
        ref = schema.get("$ref")
        if isinstance(ref, str):
            key = (ref, closing)
            if key not in self._refs:
                self._refs[key] = name = self.w._rule('""', "ref")  # (a placeholder a loop refers to)
                self.w.rules[name] = self.value(self.w._target(ref), closing)
            return self._refs[key]
        choices = self._choices(schema, closing)
        if choices is not None:
            return "( " + " | ".join(choices) + " )"
        return self.typed(schema, schema.get("type", "object" if "properties" in schema else None), closing)

    @abstractmethod
    def typed(self, schema: Mapping[str, Any], kind: Any, closing: str) -> str:
        """A value of the JSON type `kind` (`None`: any) that `schema` admits, then `closing`."""

    @abstractmethod
    def any_value(self, closing: str) -> str:
        """Any value of the notation, then `closing`."""

    @abstractmethod
    def text(self, value: Any) -> str:
        """A constant as the renderer writes it."""

    @abstractmethod
    def arguments(self, schema: Mapping[str, Any]) -> str:
        """The arguments object that `schema` admits."""


class KeyedElementRules(_Rules):
    """MiniMax-M3's elements named by their keys (`KeyedElements`)."""

    def __init__(self, writer: GbnfWriter, notation: KeyedElements) -> None:
        super().__init__(writer)
        self.n = notation
        self._any_element: str | None = None
        # What every tag starts with (MiniMax-M3's `NS<`): a scalar's text is any text without it.
        shared = next(
            (i for i, (a, b) in enumerate(zip(notation.opening, notation.closing, strict=False)) if a != b), 0
        )
        self._mark = notation.opening[:shared]
        self._text: str | None = None

    def scalar_text(self, closing: str) -> str:
        """Text without a tag's start, then `closing` (one automaton for every key)."""
        if self._text is None:
            self._text = self.w.until(self._mark)
        return f"{self._text} {self.then(closing[len(self._mark) :])}"

    def tag(self, template: str, key: str) -> str:
        return template.replace("{key}", key)

    def text(self, value: Any) -> str:
        """A constant as the renderer writes it (`minimax_m3.xml_value`)."""
        if isinstance(value, Mapping):
            return "".join(
                self.tag(self.n.opening, k) + self.text(v) + self.tag(self.n.closing, k) for k, v in value.items()
            )
        if isinstance(value, list):
            return "".join(
                self.tag(self.n.opening, self.n.item) + self.text(v) + self.tag(self.n.closing, self.n.item)
                for v in value
            )
        return value if isinstance(value, str) else json_text(value)

    def element(self, key: str, schema: Any) -> str:
        return f"{self.w.literal(self.tag(self.n.opening, key))} {self.value(schema, self.tag(self.n.closing, key))}"

    def arguments(self, schema: Mapping[str, Any]) -> str:
        props = schema.get("properties")
        if not isinstance(props, Mapping) or not props:
            return self.any_element() + "*"
        req = schema.get("required")
        required = set(req) if isinstance(req, list) else set()
        elements = [(key in required, self.element(key, sub)) for key, sub in props.items()]
        return self.w._members(elements, separator="", hint="elements")

    def typed(self, schema: Mapping[str, Any], kind: Any, closing: str) -> str:
        if kind == "object":
            return f"{self.arguments(schema)} {self.then(closing)}"
        if kind == "array":
            least = schema.get("minItems", 0)
            item = self.element(self.n.item, schema.get("items", {}))
            return f"( {item} ){'+' if isinstance(least, int) and least > 0 else '*'} {self.then(closing)}"
        if kind == "string":
            return self.scalar_text(closing)
        if kind in _SCALARS:
            return f"{self.w._base(_SCALARS[kind])} {self.then(closing)}"
        return self.any_value(closing)

    def any_element(self) -> str:
        """An element of any key and content (its closing tag's key is not checked against it)."""
        if self._any_element is None:
            self._any_element = name = self.w._rule('""', "element")
            (open_head, open_tail), (close_head, close_tail) = (
                t.split("{key}") for t in (self.n.opening, self.n.closing)
            )
            content = f"( {name}* {self.w.literal(close_head)} | {self.scalar_text(close_head)} )"
            opening = f"{self.w.literal(open_head)} {_KEY_CHARS} {self.w.literal(open_tail)}"
            self.w.rules[name] = f"{opening} {content} {_KEY_CHARS} {self.w.literal(close_tail)}"
        return self._any_element

    def any_value(self, closing: str) -> str:
        return f"( {self.any_element()}* {self.then(closing)} | {self.scalar_text(closing)} )"


class ObjectNotationRules(_Rules):
    """Gemma's object notation (`ObjectNotation`)."""

    def __init__(self, writer: GbnfWriter, notation: ObjectNotation) -> None:
        super().__init__(writer)
        self.n = notation
        self._any: str | None = None
        self._any_object: str | None = None
        self._string: str | None = None

    def text(self, value: Any) -> str:
        return self.n.value(value)

    def arguments(self, schema: Mapping[str, Any]) -> str:
        return self.value(schema)

    def string(self) -> str:
        """A string: its text between two delimiters, which it cannot hold (there is no escape)."""
        if self._string is None:
            self._string = self.w._rule(f"{self.w.literal(self.n.string)} {self.w.until(self.n.string)}", "string")
        return self._string

    def typed(self, schema: Mapping[str, Any], kind: Any, closing: str) -> str:
        if kind == "object":
            props = schema.get("properties")
            if not isinstance(props, Mapping) or not props:
                return f"{self.any_object()} {self.then(closing)}"
            req = schema.get("required")
            required = set(req) if isinstance(req, list) else set()
            members = [
                (k in required, f"{self.w.literal(self.n.key(k) + ':')} {self.value(sub)}") for k, sub in props.items()
            ]
            body = self.w._members(members, separator=self.w.literal(","), hint="members")
            return f'"{{" {body} {self.w.literal("}" + closing)}'
        if kind == "array":
            item = self.value(schema.get("items", {}))
            least = schema.get("minItems", 0)
            items = f'{item} ( "," {item} )*'
            items = items if isinstance(least, int) and least > 0 else f"( {items} )?"
            return f'"[" {items} {self.w.literal("]" + closing)}'
        if kind == "string":
            return f"{self.string()} {self.then(closing)}"
        if kind in _SCALARS:
            return f"{self.w._base(_SCALARS[kind])} {self.then(closing)}"
        return self.any_value(closing)

    def any_value(self, closing: str) -> str:
        if self._any is None:
            self._any = name = self.w._rule('""', "value")
            self.w.rules[name] = " | ".join(
                (
                    self.string(),
                    self.w._base("json-number"),
                    self.w._base("json-boolean"),
                    self.w._base("json-null"),
                    self.any_object(),
                    f'"[" ( {name} ( "," {name} )* )? "]"',
                )
            )
        return f"{self._any} {self.then(closing)}"

    def any_object(self) -> str:
        """An object of any keys (bare, or between delimiters) and values."""
        if self._any_object is None:
            self._any_object = name = self.w._rule('""', "object")
            member = f'( {_BARE_KEY} | {self.string()} ) ":" {self.any_value("")}'
            self.w.rules[name] = f'"{{" ( {member} ( "," {member} )* )? "}}"'
        return self._any_object


def notation_rules(writer: GbnfWriter, notation: Notation) -> _Rules:
    """The rules that write arguments in `notation`."""
    if isinstance(notation, KeyedElements):
        return KeyedElementRules(writer, notation)
    return ObjectNotationRules(writer, notation)


__all__ = ["KeyedElementRules", "ObjectNotationRules", "notation_rules"]
