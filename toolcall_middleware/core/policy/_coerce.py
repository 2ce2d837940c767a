"""`coerce_arguments`: a loose call's arguments typed by its tool's schema, kept only when that
makes them fit it.

Models often write a typed argument as a string: `{"line": "42"}` for an integer, `"true"` for a
boolean, `"[\\"a.py\\"]"` for an array, or a number where the schema asks for a string (a zip
code). A client that validates the call then rejects it and the agent loops on the same mistake
(cline#12641, gemini-cli#3827, kimi-cli#2572, claudish#30). The parameter-tagged formats type
every value from the schema already (`schema.coerce_value`); a call in a JSON format whose
arguments do not fit its schema gets this one pass:

- a string where the property's schema allows no string becomes the value it spells, typed as
  `coerce_value` types a raw parameter (a number, a boolean, `null`, an array or an object
  written as JSON); a string that spells none stays as it is;
- an integer where the schema allows only strings becomes its digits (`12345` -> `"12345"`; a
  float is left alone: how the model spelled it, `1.10` or `1e3`, is gone once it is read);
- objects and arrays are walked by `properties`, `additionalProperties` and `items`, so a nested
  value is typed by its own schema.

Nothing else changes: the same keys, items and order, every other value the same (as JSON: the
typed arguments are written anew, so `1E5` may come out as `100000.0`).
The caller keeps the result only when it fits the schema as a whole; otherwise the call goes out
as the model wrote it, as before. Pure: no I/O, no state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._schema import coerce_value, schema_types

_MAX_DEPTH = 64  # deeper arguments are left as they are (a schema this deep is not a tool's)


def coerce_arguments(value: dict[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """`value` with its mistyped leaves typed by `schema` (see the module doc); `value` itself
    (the same object) when nothing would change."""
    out = _coerce(value, schema, 0)
    return out if isinstance(out, dict) else value


def _coerce(value: Any, schema: Any, depth: int) -> Any:
    if depth > _MAX_DEPTH or not isinstance(schema, Mapping):
        return value
    if isinstance(value, str):
        types = schema_types(schema)
        return coerce_value(value, schema) if types and "string" not in types else value
    if type(value) is int:  # (not a float: its spelling as the model wrote it is gone)
        return str(value) if schema_types(schema) == {"string"} else value
    if isinstance(value, dict):
        properties = schema.get("properties")
        extra = schema.get("additionalProperties")
        changed = False
        out: dict[str, Any] = {}
        for key, item in value.items():
            sub = properties.get(key, extra) if isinstance(properties, Mapping) else extra
            typed = _coerce(item, sub, depth + 1)
            changed = changed or typed is not item
            out[key] = typed
        return out if changed else value
    if isinstance(value, list):
        items = schema.get("items")
        typed_items = [_coerce(item, items, depth + 1) for item in value]
        if any(typed is not item for typed, item in zip(typed_items, value, strict=True)):
            return typed_items
        return value
    return value


__all__ = ["coerce_arguments"]
