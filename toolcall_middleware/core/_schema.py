"""Typing a raw parameter value from the tool's JSON schema.

XML-style formats (qwen3_coder, seed_oss, minimax_m2, step3, glm) write every argument value as raw
text: `<parameter=hour>\\n9\\n</parameter>`. Only the request's tool schema says whether `9` is the
number 9 or the string "9", so the value is typed from the property's schema:

- the literal `null` (in any case, layout whitespace around it) is JSON null whatever the schema
  says, as vLLM and SGLang decode it: the format has no other way to write a null;
- a type the schema allows is tried in a fixed order: null (Python's `None` when no string is
  allowed), JSON objects and arrays (also as Python literals, which some chat templates write),
  then string, boolean (`true`/`True`), integer, number;
- a string type keeps the text as it is: `02139`, `true` and `{"a": 1}` stay strings;
- a value that fits no allowed type is returned as JSON (or a Python literal) when it is one, else
  as its text, so a call is never dropped because the model ignored its schema;
- without type information the `untyped` policy decides: `"string"` (the qwen3_coder family: text,
  except the literal `null`) or `"json"` (the glm family: decoded when it is JSON or a Python literal).

The result is always a JSON-safe value: no NaN or infinity, no tuples, string keys only.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Mapping
from typing import Any, Literal

from .framing._utf8 import loads_with

JSON_OBJECT = (dict, Mapping)
"""`isinstance(value, JSON_OBJECT)`: an object. A decoded JSON object is a `dict`, which this
tells at once; only another `Mapping` takes the ABC's much slower check (which costs a request
with many tools more than reading them does)."""

# The JSON schema types, plus the aliases tool schemas in the wild use for them.
_ALIASES = {
    "string": "string",
    "str": "string",
    "text": "string",
    "integer": "integer",
    "int": "integer",
    "long": "integer",
    "short": "integer",
    "uint": "integer",
    "unsigned": "integer",
    "number": "number",
    "float": "number",
    "double": "number",
    "num": "number",
    "boolean": "boolean",
    "bool": "boolean",
    "object": "object",
    "dict": "object",
    "map": "object",
    "array": "array",
    "list": "array",
    "tuple": "array",
    "null": "null",
    "none": "null",
}

_INTEGER = re.compile(r"[-+]?[0-9]+", re.ASCII)
# Unambiguous (no two ways to match a digit), so a failed match cannot backtrack.
_NUMBER = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?", re.ASCII)
_MAX_DEPTH = 8  # of nested anyOf/oneOf/allOf: deeper schemas are not worth the walk
_MAX_NESTING = 200  # of a decoded value: deeper ones stay text, so encoding them cannot overflow the stack

Untyped = Literal["string", "json"]


def schema_types(schema: Mapping[str, Any] | None) -> frozenset[str]:
    """The JSON types a property schema allows (empty when it says nothing about types)."""
    found: set[str] = set()
    if isinstance(schema, Mapping):
        _collect(schema, found, 0)
    return frozenset(found)


def _collect(schema: Mapping[str, Any], found: set[str], depth: int) -> None:
    declared = schema.get("type")
    names = declared if isinstance(declared, list) else [declared]
    for name in names:
        if isinstance(name, str) and name.lower() in _ALIASES:
            found.add(_ALIASES[name.lower()])
    if schema.get("nullable") is True:  # OpenAPI 3.0 spelling of `["T", "null"]`
        found.add("null")
    if declared is None:
        if "properties" in schema:
            found.add("object")
        if "items" in schema:
            found.add("array")
        values = schema.get("enum")
        if isinstance(values, list):
            found.update(json_type_of(v) for v in values)
        if "const" in schema:
            found.add(json_type_of(schema["const"]))
    if depth < _MAX_DEPTH:
        for key in ("anyOf", "oneOf", "allOf"):
            branches = schema.get(key)
            if isinstance(branches, list):
                for branch in branches:
                    if isinstance(branch, Mapping):
                        _collect(branch, found, depth + 1)


def json_type_of(value: Any) -> str:
    """The JSON type name of a decoded value (`integer` for a whole number)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        return "array"
    return "string"


def coerce_value(raw: str, schema: Mapping[str, Any] | None, *, untyped: Untyped = "string") -> Any:
    """The JSON value of a raw parameter text, typed by its property schema (see the module doc)."""
    text = raw.strip()
    if text.lower() == "null":
        # The only way a parameter format can write a null, whatever the schema says: vLLM and
        # SGLang decode it so too, and a string that reads `null` is far rarer than a null.
        return None
    types = schema_types(schema)
    if not types:
        return _any_literal(raw, raw) if untyped == "json" else raw
    if "null" in types and text == "None" and "string" not in types:
        return None
    if types & {"object", "array"} and text[:1] in ("{", "["):
        value = _any_literal(text, None)
        if (isinstance(value, dict) and "object" in types) or (isinstance(value, list) and "array" in types):
            return value
    if "string" in types:
        return raw
    if "boolean" in types and text.lower() in ("true", "false"):
        return text.lower() == "true"
    if types & {"integer", "number"}:
        number = parse_number(text, integral="integer" in types and "number" not in types)
        if number is not None:
            return number
    return _any_literal(text, raw)


def parse_number(text: str, *, integral: bool = False) -> int | float | None:
    """`9` -> 9, `0.5` -> 0.5, `1e20` -> 1e20 (never clamped to int64); `None` if not a finite number.

    With `integral`, a float with no fractional part comes back as an int (`140.0` -> 140), since
    an integer parameter written as a float is still that integer.
    """
    try:
        if _INTEGER.fullmatch(text):
            return int(text)
        if not _NUMBER.fullmatch(text):
            return None
        value = float(text)
    except ValueError:  # more digits than Python converts (`sys.set_int_max_str_digits`)
        return None
    if not math.isfinite(value):
        return None
    if integral and value.is_integer():
        return int(value)
    return value


def decode_json(text: str) -> Any:
    """A JSON value, or `ValueError` (also for NaN, Infinity and numbers that overflow to them)."""
    return _decode(text)  # (`json.loads` with options would build a decoder per call)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of range")
    return value


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)
_decode = loads_with(_DECODER)


def _any_literal(text: str, default: Any) -> Any:
    """`text` as JSON, else as a Python literal (`{'a': True}`), else `default`."""
    try:
        value = decode_json(text)
    except (ValueError, RecursionError):
        stripped = text.strip()
        if not stripped or stripped[0] not in "{[('\"-+.0123456789TFN":
            return default  # cannot be a literal: skip the parser for ordinary prose
        try:
            value = ast.literal_eval(stripped)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return default
    try:
        return _jsonable(value, 0)
    except ValueError:
        return default


def _jsonable(value: Any, depth: int) -> Any:
    """A Python literal as a JSON value (tuples become lists); `ValueError` if it has no JSON form."""
    if depth > _MAX_NESTING:
        raise ValueError("nested too deeply")
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("not a finite number")
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, depth + 1) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise ValueError("object keys must be strings")
        return {k: _jsonable(v, depth + 1) for k, v in value.items()}
    raise ValueError(f"{type(value).__name__} is not a JSON value")


__all__ = ["Untyped", "coerce_value", "decode_json", "json_type_of", "parse_number", "schema_types"]
