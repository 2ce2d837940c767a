"""Each API's request fields checked to that API's types, the same way on every route.

A request of ours is checked before anything reads it, whether it goes to a host of its own API
or through a bridge: a bridge used to drop or coerce what it could not translate (a garbage
`parallel_tool_calls` passed on a bridged route and was a 400 on the native one), and a body
with no tool fields went to the host unchecked. Now both answer the same 400, in the client
API's error shape, naming the field (OpenAI's `messages[0].content[1]`, Anthropic's
`messages.0.content.1`).

Each API's own checks are in its package (`core.apis.<name>.checks`: `check_chat`,
`check_responses`, `check_messages`, `check_completions`, each the spec's `check_request`): the
scalar and container fields it defines, by type, then its messages or items. The fields whose shape
is richer (`tools`, `tool_choice`, `input`, `system`) are checked where they are read. Here is what
they share:

- `Check` and the checks of one type (`BOOLEAN`, `NUMBER`, ..., `STOP`), `SAMPLING` (the fields
  every API has), and `check_fields(fields, body)`: the first field of `body` not of its type is
  a 400 (a `null` is taken as absent, as the APIs take it).
- `check_parts(content, ...)` / `all_objects(content)`: `content` a string or an array of objects.
- `check_anthropic_messages(messages)`: Anthropic's: role `user`, `assistant` or `system`,
  `content` a string or an array of block objects; `tool_use` blocks with an id, a name and an
  object `input`, `tool_result` blocks with a `tool_use_id` (the Messages checks and the Messages
  bridge run it).

The checks are the translations' own rules, said once with one wording, so a body the
native route refuses the bridge refuses with the same error, and the other way round.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._schema import JSON_OBJECT
from ._errors import invalid, required_string

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

SAMPLING = {"temperature": NUMBER, "top_p": NUMBER, "model": STRING, "stream": BOOLEAN, "metadata": OBJECT}


def check_fields(fields: Mapping[str, Check], body: Mapping[str, Any]) -> None:
    """Raise `BadRequest` for the first field of `body` that is not of its type in `fields`."""
    for name, (ok, what) in fields.items():
        value = body.get(name)
        if value is not None and not ok(value):
            raise invalid(name, what)


def check_parts(content: Any, where: str, what: str, sep: str) -> None:
    """`content` a string or an array of objects (`what`: the wording for its members)."""
    if isinstance(content, list):
        for j, part in enumerate(content):
            if not isinstance(part, JSON_OBJECT):
                raise invalid(f"{where}{sep}{j}{']' if sep == '[' else ''}", f"expected a {what} object")
    elif not isinstance(content, str):
        raise invalid(where, f"expected a string or an array of {what}s")


def all_objects(content: Any) -> bool:
    """`content` a list of objects: what `check_parts` lets through without a word."""
    return type(content) is list and all(isinstance(part, JSON_OBJECT) for part in content)


def check_anthropic_messages(messages: list[Any]) -> None:
    """Raise `BadRequest` for the first Anthropic message of the wrong shape (see the module doc)."""
    for i, message in enumerate(messages):
        if not isinstance(message, JSON_OBJECT):
            raise invalid(f"messages.{i}", "expected a message object")
        if message.get("role") not in ("user", "assistant", "system"):
            raise invalid(f"messages.{i}.role", "expected 'user', 'assistant' or 'system'")
        content = message.get("content")
        check_parts(content, f"messages.{i}.content", "content block", ".")
        for j, block in enumerate(content if isinstance(content, list) else ()):
            where = f"messages.{i}.content.{j}"
            if block.get("type") == "tool_use":
                required_string(block, "id", where)
                required_string(block, "name", where)
                if not isinstance(block.get("input", {}), JSON_OBJECT):
                    raise invalid(f"{where}.input", "expected an object")
            elif block.get("type") == "tool_result":
                required_string(block, "tool_use_id", where)


__all__ = [
    "ARRAY",
    "BOOLEAN",
    "INTEGER",
    "NUMBER",
    "OBJECT",
    "SAMPLING",
    "STOP",
    "STRING",
    "STRINGS",
    "Check",
    "all_objects",
    "check_anthropic_messages",
    "check_fields",
    "check_parts",
]
