"""Each API's request fields checked to that API's types, the same way on every route.

A request of ours is checked before anything reads it, whether it goes to a host of its own API
or through a bridge: a bridge used to drop or coerce what it could not translate (a garbage
`parallel_tool_calls` passed on a bridged route and was a 400 on the native one), and a body
with no tool fields went to the host unchecked. Now both answer the same 400, in the client
API's error shape, naming the field (OpenAI's `messages[0].content[1]`, Anthropic's
`messages.0.content.1`).

- `check_chat(body)`, `check_responses(body)`, `check_messages(body)`, `check_completions(body)`:
  one API's request (each API's spec names its own as `check_request`): the scalar and container
  fields it defines, by type (`check_fields`; a `null` is taken as absent, as the APIs take it),
  then its messages or items. The fields whose shape is richer (`tools`,
  `tool_choice`, `input`, `system`) are checked where they are read.
- `check_chat_messages(messages)`: Chat's messages: objects with a known role, `content` a
  string, an array of part objects, or (assistant turns only) `null`; a tool message's
  `tool_call_id`; an assistant's `tool_calls` with ids, names and arguments that are a JSON object.
- `check_anthropic_messages(messages)`: Anthropic's: role `user`, `assistant` or `system`,
  `content` a string or an array of block objects; `tool_use` blocks with an id, a name and an
  object `input`, `tool_result` blocks with a `tool_use_id`.
- `check_input_items(items)`: a Responses `input` array: item objects; a message's role, and its
  `content` a string or an array of part objects; calls with ids, names and arguments; outputs
  with the id of their call.

The checks are the translations' own rules, said once here with one wording, so a body the
native route refuses the bridge refuses with the same error, and the other way round.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..schema import JSON_OBJECT
from .errors import invalid, missing, required_string
from .render import load_arguments

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
CHAT_FIELDS: dict[str, Check] = {
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
}
RESPONSES_FIELDS: dict[str, Check] = {
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
}
MESSAGES_FIELDS: dict[str, Check] = {
    **_SAMPLING,
    "max_tokens": INTEGER,
    "top_k": INTEGER,
    "stop_sequences": STRINGS,
    "thinking": OBJECT,
    "tool_choice": OBJECT,
    "service_tier": STRING,
    "messages": ARRAY,
}
COMPLETIONS_FIELDS: dict[str, Check] = {**_SAMPLING, "max_tokens": INTEGER, "n": INTEGER, "stop": STOP, "user": STRING}


def check_fields(fields: Mapping[str, Check], body: Mapping[str, Any]) -> None:
    """Raise `BadRequest` for the first field of `body` that is not of its type in `fields`."""
    for name, (ok, what) in fields.items():
        value = body.get(name)
        if value is not None and not ok(value):
            raise invalid(name, what)


def check_chat(body: Mapping[str, Any]) -> None:
    """A Chat request's fields, then its messages."""
    check_fields(CHAT_FIELDS, body)
    if isinstance(body.get("messages"), list):
        check_chat_messages(body["messages"])


def check_responses(body: Mapping[str, Any]) -> None:
    """A Responses request's fields, then its input items."""
    check_fields(RESPONSES_FIELDS, body)
    if isinstance(body.get("input"), list):
        check_input_items(body["input"])


def check_messages(body: Mapping[str, Any]) -> None:
    """An Anthropic Messages request's fields, then its messages and `tool_choice`."""
    check_fields(MESSAGES_FIELDS, body)
    if isinstance(body.get("messages"), list):
        check_anthropic_messages(body["messages"])
        choice = body.get("tool_choice")
        if isinstance(choice, JSON_OBJECT) and not isinstance(choice.get("disable_parallel_tool_use", False), bool):
            raise invalid("tool_choice.disable_parallel_tool_use", "expected a boolean")


def check_completions(body: Mapping[str, Any]) -> None:
    """A legacy completions request's fields."""
    check_fields(COMPLETIONS_FIELDS, body)


def _parts(content: Any, where: str, what: str, sep: str) -> None:
    """`content` a string or an array of objects (`what`: the wording for its members)."""
    if isinstance(content, list):
        for j, part in enumerate(content):
            if not isinstance(part, JSON_OBJECT):
                raise invalid(f"{where}{sep}{j}{']' if sep == '[' else ''}", f"expected a {what} object")
    elif not isinstance(content, str):
        raise invalid(where, f"expected a string or an array of {what}s")


def _all_objects(content: Any) -> bool:
    """`content` a list of objects: what `_parts` lets through without a word."""
    return type(content) is list and all(isinstance(part, JSON_OBJECT) for part in content)


def check_anthropic_messages(messages: list[Any]) -> None:
    """Raise `BadRequest` for the first Anthropic message of the wrong shape (see the module doc)."""
    for i, message in enumerate(messages):
        if not isinstance(message, JSON_OBJECT):
            raise invalid(f"messages.{i}", "expected a message object")
        if message.get("role") not in ("user", "assistant", "system"):
            raise invalid(f"messages.{i}.role", "expected 'user', 'assistant' or 'system'")
        content = message.get("content")
        _parts(content, f"messages.{i}.content", "content block", ".")
        for j, block in enumerate(content if isinstance(content, list) else ()):
            where = f"messages.{i}.content.{j}"
            if block.get("type") == "tool_use":
                required_string(block, "id", where)
                required_string(block, "name", where)
                if not isinstance(block.get("input", {}), JSON_OBJECT):
                    raise invalid(f"{where}.input", "expected an object")
            elif block.get("type") == "tool_result":
                required_string(block, "tool_use_id", where)


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
            if content is not None and not (type(content) is str or _all_objects(content)):
                _parts(content, f"input[{i}].content", "content part", "[")
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


__all__ = [
    "CHAT_FIELDS",
    "COMPLETIONS_FIELDS",
    "MESSAGES_FIELDS",
    "RESPONSES_FIELDS",
    "check_anthropic_messages",
    "check_chat",
    "check_chat_messages",
    "check_completions",
    "check_fields",
    "check_input_items",
    "check_messages",
    "check_responses",
]
