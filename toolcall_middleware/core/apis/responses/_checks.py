"""A Responses request's fields checked to the API's types (`check_responses`, the spec's
`check_request`), and its `input` array (`check_input_items`, which the rewrite runs too): item
objects; a message's role, and its `content` a string or an array of part objects; calls with ids,
names and arguments; outputs with the id of their call. The vocabulary of the checks is
`core.request._fields`'.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._schema import JSON_OBJECT
from ...request._errors import invalid, missing, required_string
from ...request._fields import (
    BOOLEAN,
    INTEGER,
    OBJECT,
    SAMPLING,
    STRING,
    STRINGS,
    Check,
    all_objects,
    check_fields,
    check_parts,
)
from ...request._render import load_arguments

RESPONSES_FIELDS: dict[str, Check] = {
    **SAMPLING,
    "parallel_tool_calls": BOOLEAN,
    "store": BOOLEAN,
    "background": BOOLEAN,
    "max_output_tokens": INTEGER,
    "top_logprobs": INTEGER,
    "instructions": STRING,
    "previous_response_id": STRING,
    "user": STRING,
    "text": OBJECT,
    "reasoning": OBJECT,
    "include": STRINGS,
}


def check_responses(body: Mapping[str, Any]) -> None:
    """A Responses request's fields, then its input items."""
    check_fields(RESPONSES_FIELDS, body)
    if isinstance(body.get("input"), list):
        check_input_items(body["input"])


def check_input_items(items: list[Any], start: int = 0) -> None:
    """Raise `BadRequest` for the first Responses input item of the wrong shape (see the module doc),
    from `items[start]` on (those before it were checked already: a stored chain's context).

    A long chain's input is thousands of items, nearly all messages: a message's check makes no
    string unless it fails (its place is named then)."""
    for i, item in enumerate(items[start:] if start else items, start):
        if not isinstance(item, JSON_OBJECT):
            raise invalid(f"input[{i}]", "expected an input item object")
        kind = item.get("type")
        if not isinstance(kind, str) or kind == "message":
            if not isinstance(item.get("role"), str):
                raise missing(f"input[{i}].role")
            content = item.get("content")
            if content is not None and not (type(content) is str or all_objects(content)):
                check_parts(content, f"input[{i}].content", "content part", "[")
            continue
        where = f"input[{i}]"
        if kind == "function_call":
            required_string(item, "call_id", where)
            required_string(item, "name", where)
            load_arguments(item.get("arguments", ""), f"{where}.arguments")
        elif kind == "custom_tool_call":
            required_string(item, "name", where)
            required_string(item, "call_id", where)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            required_string(item, "call_id", where)


__all__ = ["RESPONSES_FIELDS", "check_input_items", "check_responses"]
