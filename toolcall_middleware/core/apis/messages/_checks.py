"""An Anthropic Messages request's fields checked to the API's types (`check_messages`, the spec's
`check_request`), then its messages (`core.request._fields.check_anthropic_messages`, which the
Messages bridge shares) and `tool_choice`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._schema import JSON_OBJECT
from ...request._errors import invalid
from ...request._fields import (
    ARRAY,
    INTEGER,
    OBJECT,
    SAMPLING,
    STRING,
    STRINGS,
    Check,
    check_anthropic_messages,
    check_fields,
)

MESSAGES_FIELDS: dict[str, Check] = {
    **SAMPLING,
    "max_tokens": INTEGER,
    "top_k": INTEGER,
    "stop_sequences": STRINGS,
    "thinking": OBJECT,
    "tool_choice": OBJECT,
    "service_tier": STRING,
    "messages": ARRAY,
}


def check_messages(body: Mapping[str, Any]) -> None:
    """An Anthropic Messages request's fields, then its messages and `tool_choice`."""
    check_fields(MESSAGES_FIELDS, body)
    if isinstance(body.get("messages"), list):
        check_anthropic_messages(body["messages"])
        choice = body.get("tool_choice")
        if isinstance(choice, JSON_OBJECT) and not isinstance(choice.get("disable_parallel_tool_use", False), bool):
            raise invalid("tool_choice.disable_parallel_tool_use", "expected a boolean")


__all__ = ["MESSAGES_FIELDS", "check_messages"]
