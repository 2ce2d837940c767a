"""A Chat Completions request's fields checked to Chat's types (`check_chat`, the spec's
`check_request`), and its messages (`check_chat_messages`, which the rewrite runs too): objects with
a known role, `content` a string, an array of part objects, or (assistant turns only) `null`; a
tool message's `tool_call_id`; an assistant's `tool_calls` with ids, names and arguments that are a
JSON object. The vocabulary of the checks is `core.request._fields`'.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._schema import JSON_OBJECT
from ...request._errors import invalid, missing, required_string
from ...request._fields import ARRAY, BOOLEAN, INTEGER, NUMBER, OBJECT, SAMPLING, STOP, STRING, Check, check_fields
from ...request._render import load_arguments

CHAT_FIELDS: dict[str, Check] = {
    **SAMPLING,
    "parallel_tool_calls": BOOLEAN,
    "logprobs": BOOLEAN,
    "store": BOOLEAN,
    "presence_penalty": NUMBER,
    "frequency_penalty": NUMBER,
    "max_tokens": INTEGER,
    "max_completion_tokens": INTEGER,
    "n": INTEGER,
    "seed": INTEGER,
    "top_logprobs": INTEGER,
    "stop": STOP,
    "stream_options": OBJECT,
    "response_format": OBJECT,
    "user": STRING,
    "messages": ARRAY,
}


def check_chat(body: Mapping[str, Any]) -> None:
    """A Chat request's fields, then its messages."""
    check_fields(CHAT_FIELDS, body)
    if isinstance(body.get("messages"), list):
        check_chat_messages(body["messages"])


CHAT_ROLES = ("system", "developer", "user", "assistant", "tool", "function")


def check_chat_messages(messages: list[Any]) -> None:
    """Raise `BadRequest` for the first Chat message of the wrong shape (see the module doc)."""
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, JSON_OBJECT):
            raise invalid(where, "expected a message object")
        role = message.get("role")
        if not isinstance(role, str):
            raise missing(f"{where}.role")
        if role not in CHAT_ROLES:
            raise invalid(f"{where}.role", "expected 'system', 'developer', 'user', 'assistant' or 'tool'")
        content = message.get("content")
        if isinstance(content, list):
            for j, part in enumerate(content):
                if not isinstance(part, JSON_OBJECT) or not isinstance(part.get("type"), str):
                    raise invalid(f"{where}.content[{j}]", "expected a content part object with a type")
        elif not isinstance(content, str) and not (content is None and role in ("assistant", "function")):
            if content is None:
                raise missing(f"{where}.content")
            raise invalid(f"{where}.content", "expected a string or an array of content parts")
        if role == "tool" and not isinstance(message.get("tool_call_id"), str):
            raise missing(f"{where}.tool_call_id")
        calls = message.get("tool_calls") if role == "assistant" else None
        if calls:
            _chat_calls(calls, f"{where}.tool_calls")


def _chat_calls(calls: Any, where: str) -> None:
    if not isinstance(calls, list):
        raise invalid(where, "expected an array of tool calls")
    for j, call in enumerate(calls):
        at = f"{where}[{j}]"
        if not isinstance(call, JSON_OBJECT):
            raise invalid(at, "expected a tool call object")
        required_string(call, "id", at)
        if call.get("type", "function") == "custom":
            continue  # a free-form tool's call: its input is any text
        function = call.get("function")
        if not isinstance(function, JSON_OBJECT):
            raise missing(f"{at}.function")
        required_string(function, "name", f"{at}.function")
        load_arguments(function.get("arguments", ""), f"{at}.function.arguments")


__all__ = ["CHAT_FIELDS", "CHAT_ROLES", "check_chat", "check_chat_messages"]
