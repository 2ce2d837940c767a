"""What a dialect renderer is, and the helpers the per-family renderers share.

A `Renderer` writes, in one dialect's own raw text, what a chat template would have written:
an assistant turn's calls (exactly what that dialect's parser reads back), the tool results of
one turn, and the tool manifest with its calling rules for the system prompt. The renderers live
in `render_json`, `render_xml` and `render_special`; `render` holds the registry and the API.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..framing.utf8 import json_text
from ..schema import JSON_OBJECT
from .errors import invalid
from .tools import ToolChoice, ToolSpec

CallText = tuple[str, str, str]
"""`(call_id, name, arguments_json)`: one call of an assistant turn, as the client sent it."""


@dataclass(frozen=True, slots=True)
class Call:
    """A call ready to render: `arguments` is the decoded JSON object, `id` the dialect's own id."""

    id: str
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The output of one call: `call_id` as the dialect writes it, `name` when it is known."""

    call_id: str
    output: str
    name: str | None = None


def fallback_result(result: ToolResult) -> str:
    """The result text of a dialect without a tool-response syntax of its own. The function's
    name goes with it where it is known: a dialect whose calls carry no id (harmony, Llama 3's
    JSON) matches a result to its call by the name."""
    if result.name:
        return f"[function_call_output call_id={result.call_id} name={result.name} output={result.output}]"
    return f"[function_call_output call_id={result.call_id} output={result.output}]"


def join_turn(content: str, calls: str, sep: str = "\n") -> str:
    """Content, then the calls: the layout most templates write an assistant turn in."""
    if not content:
        return calls
    if not calls:
        return content
    return content + sep + calls


@dataclass(frozen=True)
class Renderer:
    """One dialect's rendering.

    `calls`: the raw call text of one turn. `tools`: the tool list and call format for the system
    prompt. `results`: one turn's tool results as text (consecutive results merged the way the
    template merges them). `assistant`: content and rendered calls joined into the turn's text.
    `native_id(call_id, name, n)`: the id the dialect writes for the n-th call of the conversation
    (`None`: the dialect writes no ids). `choice`: native wording for `tool_choice`, when the
    template has it. `prepend`: the manifest goes before the system text instead of after it.
    """

    calls: Callable[[Sequence[Call]], str]
    tools: Callable[[Sequence[ToolSpec], bool], str]
    results: Callable[[Sequence[ToolResult]], str] | None = None
    assistant: Callable[[str, str], str] = join_turn
    native_id: Callable[[str, str, int], str] | None = None
    choice: Callable[[ToolChoice], str | None] | None = None
    prepend: bool = False


def results_joined(one: Callable[[ToolResult], str], sep: str = "\n") -> Callable[[Sequence[ToolResult]], str]:
    """A `results` that renders each result with `one` and joins them with `sep`."""

    def render(results: Sequence[ToolResult]) -> str:
        return sep.join(one(r) for r in results)

    return render


# -- JSON ----------------------------------------------------------------------------------


# `json_text`: one encoder for every value (`json.dumps` with any non-default option builds one
# per call, which a request with many tools pays for each tool it writes).
def dumps(value: Any) -> str:
    """JSON the way chat templates write it (`tojson`): `, ` and `: ` separators, non-ASCII kept."""
    return json_text(value)


def dumps_safe(value: Any) -> str:
    """`dumps` with every `<` escaped as `\\u003c`, so no marker of any format appears in the text.

    JSON has no `<` outside strings, and `\\u003c` decodes back to `<`: the value is unchanged.
    """
    return dumps(value).replace("<", "\\u003c")


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


def decode_calls(calls: Sequence[CallText]) -> list[Call]:
    """`(call_id, name, arguments_json)` tuples as `Call`s (the arguments decoded)."""
    return [
        Call(id=call_id, name=name, arguments=load_arguments(args, f"calls[{i}].arguments"))
        for i, (call_id, name, args) in enumerate(calls)
    ]


def value_text(value: Any) -> str:
    """A parameter value as XML-style formats write it: strings raw, anything else as JSON."""
    return value if isinstance(value, str) else dumps(value)


def python_literal(value: Any) -> str:
    """A JSON value as a Python literal that `ast.literal_eval` reads back to the same value."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (int, float, str)):
        return repr(value)
    if isinstance(value, JSON_OBJECT):
        return "{" + ", ".join(f"{k!r}: {python_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(python_literal(v) for v in value) + "]"
    raise TypeError(f"{type(value).__name__} is not a JSON value")


# -- ids -----------------------------------------------------------------------------------


def alnum_id(call_id: str, length: int = 9) -> str:
    """A `length`-character alphanumeric id derived from `call_id` (Mistral's id rule).

    The last alphanumerics of `call_id` when it has enough (`call_…` ids do), else a stable hash.
    """
    chars = "".join(ch for ch in call_id if ch.isascii() and ch.isalnum())
    if len(chars) >= length:
        return chars[-length:]
    digest = hashlib.sha256(call_id.encode()).hexdigest()
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    number = int(digest, 16)
    out = []
    for _ in range(length):
        number, rem = divmod(number, len(alphabet))
        out.append(alphabet[rem])
    return "".join(out)


__all__ = [
    "Call",
    "CallText",
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
    "value_text",
]
