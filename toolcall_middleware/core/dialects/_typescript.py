"""`ts_type`: a JSON schema as the TypeScript type the harmony-style tool manifests write
(gpt-oss's `namespace functions`, GigaChat's and Apertus's declarations)."""

from __future__ import annotations

from typing import Any

from .._schema import JSON_OBJECT


def ts_type(spec: Any) -> str:
    """The gpt-oss template's `render_typescript_type`."""
    if not isinstance(spec, JSON_OBJECT):
        return "any"
    kind = spec.get("type")
    nullable = " | null" if spec.get("nullable") else ""
    if kind == "array":
        items = spec.get("items")
        if not isinstance(items, JSON_OBJECT):
            return "any[]" + nullable
        simple = {"string": "string[]", "number": "number[]", "integer": "number[]", "boolean": "boolean[]"}
        item_kind = items.get("type")
        if isinstance(item_kind, str) and item_kind in simple:
            return simple[item_kind] + nullable
        inner = ts_type(items)
        return ("any[]" if inner == "object | object" or len(inner) > 50 else inner + "[]") + nullable
    if isinstance(kind, list) and kind:
        return " | ".join(str(k) for k in kind)
    variants = spec.get("oneOf")
    if isinstance(variants, list) and variants:
        if len(variants) > 1 and any(isinstance(v, JSON_OBJECT) and v.get("type") == "object" for v in variants):
            return "any"
        return " | ".join(ts_type(v) for v in variants)
    if kind == "string":
        enum = spec.get("enum")
        if isinstance(enum, list) and enum:
            return " | ".join(f'"{v}"' for v in enum)
        return "string" + nullable
    if kind in ("number", "integer"):
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "object":
        props = spec.get("properties")
        if isinstance(props, JSON_OBJECT) and props:
            required = spec.get("required") or []
            fields = ", ".join(f"{k}{'' if k in required else '?'}: {ts_type(v)}" for k, v in props.items())
            return "{\n" + fields + "}"
        return "object"
    return "any"


__all__ = ["ts_type"]
