"""A grammar tree as one regular expression: the only grammar TGI takes (`{"type": "regex"}`).

A regular expression cannot nest without bound: a JSON value of no given shape (a loose tool's
arguments) nests at most `DEPTH` levels. It has no lookahead either (TGI's regex engine has
none), so a reasoning block, any text up to its closing marker, is not written: with TGI the
constrained output starts with the calls.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..dialects.call_grammar import Chars, Lit
from ..framing._utf8 import json_text
from .build import Alt, Free, Json, Node, Opt, Rep, Seq, Until
from .python import KEYWORD_REGEX, SEPARATOR_REGEX, literal_texts, string_regex

DEPTH = 3
WS = r"[ \t\n]{0,20}"
STRING = r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"'
INTEGER = r"-?(?:0|[1-9][0-9]*)"
NUMBER = INTEGER + r"(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
_SCALARS = {"string": STRING, "integer": INTEGER, "number": NUMBER, "boolean": "(?:true|false)", "null": "null"}


class Unexpressible(ValueError):
    """The grammar needs what a regular expression cannot say."""


def _any(depth: int) -> str:
    scalar = "|".join(_SCALARS.values())
    if depth <= 0:
        return f"(?:{scalar})"
    inner = _any(depth - 1)
    members = f"{STRING}{WS}:{WS}{inner}"
    obj = rf"\{{{WS}(?:{members}{WS}(?:,{WS}{members}{WS})*)?\}}"
    arr = rf"\[{WS}(?:{inner}{WS}(?:,{WS}{inner}{WS})*)?\]"
    return f"(?:{obj}|{arr}|{scalar})"


def value(schema: Any, depth: int = DEPTH) -> str:
    """A JSON value that `schema` admits (its `$ref`s are not followed: they are any value)."""
    if not isinstance(schema, Mapping) or "$ref" in schema:
        return _any(depth)
    if "const" in schema:
        return re.escape(json_text(schema["const"]))
    if isinstance(schema.get("enum"), list):
        return "(?:" + "|".join(re.escape(json_text(v)) for v in schema["enum"]) + ")"
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            rest = {k: v for k, v in schema.items() if k != key}
            return "(?:" + "|".join(value({**rest, **s}, depth) for s in schema[key]) + ")"
    kind = schema.get("type")
    if isinstance(kind, list):
        return "(?:" + "|".join(value({**schema, "type": k}, depth) for k in kind) + ")"
    if kind == "object" or (kind is None and "properties" in schema):
        return _object(schema, depth)
    if kind == "array":
        item = value(schema.get("items", {}), depth - 1)
        body = f"{item}{WS}(?:,{WS}{item}{WS})*"
        least = schema.get("minItems", 0)
        return rf"\[{WS}" + (body if isinstance(least, int) and least > 0 else f"(?:{body})?") + r"\]"
    if kind in _SCALARS:
        return _SCALARS[kind]
    return _any(depth)


def _object(schema: Mapping[str, Any], depth: int) -> str:
    props = schema.get("properties")
    if not isinstance(props, Mapping) or not props:
        return _loose_object(depth)
    req = schema.get("required")
    required = set(req) if isinstance(req, list) else set()
    items = [(k in required, f"{re.escape(json_text(k))}{WS}:{WS}{value(s, depth - 1)}{WS}") for k, s in props.items()]
    return rf"\{{{WS}{members(items, f',{WS}')}\}}"


def members(items: list[tuple[bool, str]], separator: str) -> str:
    """The members in order, the required ones (`True`) always, `separator` between two."""

    def rest(i: int, first: bool) -> str:
        if i == len(items):
            return ""
        needed, member = items[i]
        taken = ("" if first else separator) + member + rest(i + 1, False)
        if needed:
            return taken
        return f"(?:{taken}|{rest(i + 1, first)})"

    return rest(0, True)


def _loose_object(depth: int) -> str:
    inner = _any(depth - 1)
    members = f"{STRING}{WS}:{WS}{inner}"
    return rf"\{{{WS}(?:{members}{WS}(?:,{WS}{members}{WS})*)?\}}"


# -- Python keyword arguments (`python.py`) ----------------------------------------------------

_PY_SCALARS = {"integer": INTEGER, "number": NUMBER, "boolean": "(?:True|False)", "null": "None"}


def python_arguments(schema: Mapping[str, Any], escaped: str = "") -> str:
    """Python keyword arguments whose values `schema` admits (any keywords, when it names none)."""
    string = string_regex(escaped)
    props = schema.get("properties")
    if not isinstance(props, Mapping) or not props:
        kwarg = f"{KEYWORD_REGEX}={_python_any(DEPTH, string)}"
        return f"(?:{kwarg}(?:{SEPARATOR_REGEX}{kwarg})*)?"
    items = [(k in _required(schema), re.escape(k + "=") + python_value(v, string, escaped)) for k, v in props.items()]
    return members(items, SEPARATOR_REGEX)


def python_value(schema: Any, string: str, escaped: str, depth: int = DEPTH) -> str:
    """A Python literal that `schema` admits (`string`: a string literal's expression), as
    `value` is a JSON value."""
    if not isinstance(schema, Mapping) or "$ref" in schema:
        return _python_any(depth, string)
    choices = [schema["const"]] if "const" in schema else schema.get("enum")
    if isinstance(choices, list):
        return _either(t for v in choices for t in literal_texts(v, escaped))
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            rest = {k: v for k, v in schema.items() if k != key}
            return "(?:" + "|".join(python_value({**rest, **s}, string, escaped, depth) for s in schema[key]) + ")"
    kind = schema.get("type")
    if isinstance(kind, list):
        return "(?:" + "|".join(python_value({**schema, "type": k}, string, escaped, depth) for k in kind) + ")"
    if kind == "object" or (kind is None and "properties" in schema):
        props = schema.get("properties")
        if not isinstance(props, Mapping) or not props:
            return _python_dict(_python_any(depth - 1, string), string)
        items = [
            (
                k in _required(schema),
                _either(literal_texts(k, escaped)) + ": ?" + python_value(v, string, escaped, depth - 1),
            )
            for k, v in props.items()
        ]
        return r"\{" + members(items, SEPARATOR_REGEX) + r"\}"
    if kind == "array":
        item = python_value(schema.get("items", {}), string, escaped, depth - 1)
        body = f"{item}(?:{SEPARATOR_REGEX}{item})*"
        least = schema.get("minItems", 0)
        return r"\[" + (body if isinstance(least, int) and least > 0 else f"(?:{body})?") + r"\]"
    if kind == "string":
        return string
    if isinstance(kind, str) and kind in _PY_SCALARS:
        return _PY_SCALARS[kind]
    return _python_any(depth, string)


def _python_any(depth: int, string: str) -> str:
    scalar = f"{string}|{NUMBER}|True|False|None"
    if depth <= 0:
        return f"(?:{scalar})"
    inner = _python_any(depth - 1, string)
    return f"(?:{_python_dict(inner, string)}|\\[(?:{inner}(?:{SEPARATOR_REGEX}{inner})*)?\\]|{scalar})"


def _python_dict(inner: str, string: str) -> str:
    item = f"{string}: ?{inner}"
    return rf"\{{(?:{item}(?:{SEPARATOR_REGEX}{item})*)?\}}"


def _either(texts: Iterable[str]) -> str:
    return "(?:" + "|".join(re.escape(t) for t in texts) + ")"


def _required(schema: Mapping[str, Any]) -> set[str]:
    req = schema.get("required")
    return {r for r in req if isinstance(r, str)} if isinstance(req, list) else set()


def to_regex(node: Node) -> str:
    """The tree as a regular expression; `Unexpressible` for the XML argument styles' free text."""
    if isinstance(node, Lit):
        return re.escape(node.text)
    if isinstance(node, Chars):
        most = "" if node.most is None else str(node.most)
        return f"[{node.cls}]{{{node.least},{most}}}"
    if isinstance(node, Json):
        if node.form.xml is not None or node.form.notation is not None:
            raise Unexpressible("arguments as XML elements or in a notation of their own")
        if node.form.python:
            return python_arguments(node.schema, node.form.escaped)
        return value(node.schema)
    if isinstance(node, Seq):
        return "".join(to_regex(item) for item in node.items)
    if isinstance(node, Alt):
        return "(?:" + "|".join(to_regex(item) for item in node.items) + ")"
    if isinstance(node, Opt):
        return f"(?:{to_regex(node.item)})?"
    if isinstance(node, Rep):
        item = to_regex(node.item)
        return item if node.single else f"{item}(?:{re.escape(node.separator)}{item})*"
    if isinstance(node, Until | Free):
        raise Unexpressible("any text up to a closing marker, or without a trigger")
    raise TypeError(node)


__all__ = ["DEPTH", "Unexpressible", "members", "python_arguments", "python_value", "to_regex", "value"]
