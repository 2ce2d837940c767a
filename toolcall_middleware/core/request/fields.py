"""Each API's request fields checked to that API's types, the same way on every route.

A request of ours is checked before anything reads it, whether it goes to a host of its own API
or through a bridge: a bridge used to drop or coerce what it could not translate (a garbage
`parallel_tool_calls` passed on a bridged route and was a 400 on the native one), and a body
with no tool fields went to the host unchecked. Now both answer the same 400, in the client
API's error shape, naming the field (OpenAI's `messages[0].content[1]`, Anthropic's
`messages.0.content.1`).

- `check_fields(api, body)`: the scalar and container fields each API defines, by type (a
  `null` is taken as absent, as the APIs take it). The fields whose shape is richer (`tools`,
  `tool_choice`, `input`, `system`) are checked where they are read.
- `check_chat_messages(messages)`: Chat's messages: objects with a role, `content` a string, an
  array of part objects, or (assistant turns only) `null`.
- `check_anthropic_messages(messages)`: Anthropic's: role `user`, `assistant` or `system`,
  `content` a string or an array of block objects.
- `check_input_items(items)`: a Responses `input` array: item objects; a message's `content` a
  string or an array of part objects.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..schema import JSON_OBJECT
from .errors import invalid, missing

Check = tuple[Callable[[Any], bool], str]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_strings(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))


BOOLEAN: Check = (lambda v: isinstance(v, bool), "expected a boolean")
NUMBER: Check = (_is_number, "expected a number")
INTEGER: Check = (_is_int, "expected an integer")
STRING: Check = (lambda v: isinstance(v, str), "expected a string")
OBJECT: Check = (lambda v: isinstance(v, JSON_OBJECT), "expected an object")
ARRAY: Check = (lambda v: isinstance(v, list), "expected an array")
STOP: Check = (_is_strings, "expected a string or an array of strings")
STRINGS: Check = (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), "expected an array of strings")

_SAMPLING = {"temperature": NUMBER, "top_p": NUMBER, "model": STRING, "stream": BOOLEAN, "metadata": OBJECT}
FIELDS: dict[str, dict[str, Check]] = {
    "chat": {
        **_SAMPLING,
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
    },
    "responses": {
        **_SAMPLING,
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
    },
    "messages": {
        **_SAMPLING,
        "max_tokens": INTEGER,
        "top_k": INTEGER,
        "stop_sequences": STRINGS,
        "thinking": OBJECT,
        "tool_choice": OBJECT,
        "service_tier": STRING,
        "messages": ARRAY,
    },
    "completions": {**_SAMPLING, "max_tokens": INTEGER, "n": INTEGER, "stop": STOP, "user": STRING},
}


def check_fields(api: str, body: Mapping[str, Any]) -> None:
    """Raise `BadRequest` for the first field of `body` that is not of its type in `api`, then
    for the first message (input item) of the wrong shape."""
    for name, (ok, what) in FIELDS[api].items():
        value = body.get(name)
        if value is not None and not ok(value):
            raise invalid(name, what)
    messages = body.get("messages")
    if api == "chat" and isinstance(messages, list):
        check_chat_messages(messages)
    elif api == "messages" and isinstance(messages, list):
        check_anthropic_messages(messages)
        choice = body.get("tool_choice")
        if isinstance(choice, JSON_OBJECT) and not isinstance(choice.get("disable_parallel_tool_use", False), bool):
            raise invalid("tool_choice.disable_parallel_tool_use", "expected a boolean")
    elif api == "responses" and isinstance(body.get("input"), list):
        check_input_items(body["input"])


def _parts(content: Any, where: str, what: str, sep: str) -> None:
    """`content` a string or an array of objects (`what`: the wording for its members)."""
    if isinstance(content, list):
        for j, part in enumerate(content):
            if not isinstance(part, JSON_OBJECT):
                raise invalid(f"{where}{sep}{j}{']' if sep == '[' else ''}", f"expected a {what} object")
    elif not isinstance(content, str):
        raise invalid(where, f"expected a string or an array of {what}s")


def check_anthropic_messages(messages: list[Any]) -> None:
    """Raise `BadRequest` for the first Anthropic message of the wrong shape (see the module doc)."""
    for i, message in enumerate(messages):
        if not isinstance(message, JSON_OBJECT):
            raise invalid(f"messages.{i}", "expected a message object")
        if message.get("role") not in ("user", "assistant", "system"):
            raise invalid(f"messages.{i}.role", "expected 'user', 'assistant' or 'system'")
        _parts(message.get("content"), f"messages.{i}.content", "content block", ".")


def check_input_items(items: list[Any]) -> None:
    """Raise `BadRequest` for the first Responses input item of the wrong shape (see the module doc)."""
    for i, item in enumerate(items):
        if not isinstance(item, JSON_OBJECT):
            raise invalid(f"input[{i}]", "expected an input item object")
        if item.get("type", "message") == "message" and "content" in item:
            _parts(item["content"], f"input[{i}].content", "content part", "[")


def check_chat_messages(messages: list[Any]) -> None:
    """Raise `BadRequest` for the first Chat message of the wrong shape (see the module doc)."""
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, JSON_OBJECT):
            raise invalid(where, "expected a message object")
        role = message.get("role")
        if not isinstance(role, str):
            raise missing(f"{where}.role")
        content = message.get("content")
        if isinstance(content, list):
            for j, part in enumerate(content):
                if not isinstance(part, JSON_OBJECT) or not isinstance(part.get("type"), str):
                    raise invalid(f"{where}.content[{j}]", "expected a content part object with a type")
        elif not isinstance(content, str) and not (content is None and role in ("assistant", "function")):
            if content is None and role not in ("assistant", "function"):
                raise missing(f"{where}.content")
            raise invalid(f"{where}.content", "expected a string or an array of content parts")


__all__ = ["FIELDS", "check_anthropic_messages", "check_chat_messages", "check_fields", "check_input_items"]
