"""A quick yes for the common tool schema, before jsonschema is asked.

Validating a call's arguments with jsonschema costs tens of microseconds, most of it the
validator's machinery, and nearly every call fits: agents' tools are objects of typed properties,
some required, some enums, arrays of those. `quick_check(schema)` compiles such a schema into a
plain function that answers `True` only when the value certainly fits (jsonschema would find no
error); `False` means "not sure", and the caller asks jsonschema, which also words the error. A
schema with any keyword outside the subset below (or a `$schema` that could change their meaning)
gets no quick check at all (`None`).

The subset: `type` (one or a list), `properties`, `required`, `additionalProperties`, `items` (one
schema), `enum` of scalars, boolean schemas, and annotations (`description`, `title`, `default`,
`examples`, `$comment`, `format`, which the validator does not check either). Each keyword
applies only to the instances it is about, as in JSON Schema (`required` to objects, `items` to
arrays). `tests/core/test_quickcheck.py` holds it to jsonschema.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]

_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "$comment", "format"})
_KNOWN = _ANNOTATIONS | {"type", "properties", "required", "additionalProperties", "items", "enum"}


def _always(value: Any) -> bool:
    return True


def _never(value: Any) -> bool:
    return False


def _is_integer(value: Any) -> bool:
    return type(value) is int  # (a float such as 1.0 may be one too: jsonschema decides)


def _is_number(value: Any) -> bool:
    kind = type(value)
    return kind is int or kind is float


_TYPES: dict[str, Check] = {
    "string": lambda value: type(value) is str,
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda value: type(value) is bool,
    "null": lambda value: value is None,
    "object": lambda value: type(value) is dict,
    "array": lambda value: type(value) is list,
}

_SCALARS = (str, int, float, bool, type(None))


def quick_check(schema: Any) -> Check | None:
    """The quick check for a tool's parameters schema, or `None` when it is outside the subset."""
    if isinstance(schema, Mapping) and "$schema" in schema:
        return None  # another draft may read the keywords otherwise
    try:
        return _compile(schema, 0)
    except _Unsure:
        return None


class _Unsure(Exception):
    """A schema outside the subset."""


def _compile(schema: Any, depth: int) -> Check:
    if schema is True:
        return _always
    if schema is False:
        return _never
    if not isinstance(schema, Mapping) or depth > 32 or not _KNOWN.issuperset(schema):
        raise _Unsure
    checks: list[Check] = []
    if "type" in schema:
        checks.append(_type_check(schema["type"]))
    if "enum" in schema:
        checks.append(_enum_check(schema["enum"]))
    if any(key in schema for key in ("properties", "required", "additionalProperties")):
        checks.append(_object_check(schema, depth))
    if "items" in schema:
        item = _compile(schema["items"], depth + 1)

        def items(value: Any) -> bool:
            if isinstance(value, list):
                for v in value:
                    if not item(v):
                        return False
            return True

        checks.append(items)
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]

    def every(value: Any) -> bool:  # (loops, not `all(...)`: no generator per value checked)
        for check in checks:
            if not check(value):
                return False
        return True

    return every


def _type_check(types: Any) -> Check:
    names = [types] if isinstance(types, str) else types
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n in _TYPES for n in names):
        raise _Unsure
    checks = [_TYPES[name] for name in names]
    if len(checks) == 1:
        return checks[0]

    def some(value: Any) -> bool:
        for check in checks:
            if check(value):
                return True
        return False

    return some


def _enum_check(options: Any) -> Check:
    if not isinstance(options, list) or not all(type(o) in _SCALARS for o in options):
        raise _Unsure
    # Same type and equal: `True` is not `1` to JSON Schema, nor is it here (and 1 against 1.0 is
    # left to jsonschema).
    allowed = frozenset((type(o), o) for o in options)
    return lambda value: type(value) in _SCALARS and (type(value), value) in allowed


def _object_check(schema: Mapping[str, Any], depth: int) -> Check:
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(properties, Mapping) or not isinstance(required, list):
        raise _Unsure
    if not all(isinstance(name, str) for name in required):
        raise _Unsure
    known = {name: _compile(sub, depth + 1) for name, sub in properties.items()}
    other = _compile(extra, depth + 1)
    needed = tuple(required)

    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return True  # these keywords are about objects only (as jsonschema's "object")
        for name in needed:
            if name not in value:
                return False
        for name, item in value.items():
            sub = known.get(name)
            if sub is None:
                if not other(item):
                    return False
            elif not sub(item):
                return False
        return True

    return check


__all__ = ["Check", "quick_check"]
