"""Reading a client's calls for rendering, and the renderer's names where request code finds them.

The renderer record and the helpers the dialects' renderers share live next to the dialects
(`core.dialects.rendering`); they are re-exported here, their first home, so that a dialect
module written against this path keeps working. `Call` is the old name of `CallToRender`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..dialects.rendering import (
    CallToRender,
    Renderer,
    ToolResult,
    alnum_id,
    dumps,
    dumps_safe,
    fallback_result,
    join_turn,
    python_literal,
    results_joined,
    tool_lines,
    tool_response,
    value_text,
)
from ..schema import JSON_OBJECT
from .errors import invalid

Call = CallToRender

CallText = tuple[str, str, str]
"""`(call_id, name, arguments_json)`: one call of an assistant turn, as the client sent it."""


def load_arguments(text: Any, param: str = "arguments") -> dict[str, Any]:
    """A call's arguments: the JSON text of an object (`""` for none); `BadRequest` otherwise."""
    if isinstance(text, JSON_OBJECT):
        return dict(text)  # some clients send the object itself
    if not isinstance(text, str):
        raise invalid(param, "expected a string holding a JSON object")
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        raise invalid(param, "expected valid JSON text of an object") from None
    if not isinstance(value, dict):
        raise invalid(param, "expected the JSON text of an object")
    return value


def decode_calls(calls: Sequence[CallText]) -> list[CallToRender]:
    """`(call_id, name, arguments_json)` tuples as `CallToRender`s (the arguments decoded)."""
    return [
        CallToRender(id=call_id, name=name, arguments=load_arguments(args, f"calls[{i}].arguments"))
        for i, (call_id, name, args) in enumerate(calls)
    ]


__all__ = [
    "Call",
    "CallText",
    "CallToRender",
    "Renderer",
    "ToolResult",
    "alnum_id",
    "decode_calls",
    "dumps",
    "dumps_safe",
    "fallback_result",
    "join_turn",
    "load_arguments",
    "python_literal",
    "results_joined",
    "tool_lines",
    "tool_response",
    "value_text",
]
