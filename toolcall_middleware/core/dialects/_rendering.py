"""What a dialect renderer is, and the helpers the dialects' renderers share.

A `Renderer` writes, in one dialect's own raw text, what a chat template would have written:
an assistant turn's calls (exactly what that dialect's parser reads back), the tool results of
one turn, and the tool manifest with its calling rules for the system prompt. Each dialect
declares its renderer next to its parser, in its own module (`Dialect(renderer=...)`);
`core.request._render` is the API over them.

Everything a renderer is given is declared here too: `ToolSpec` (one function tool), `ToolChoice`
(what the model may call), `CallToRender` and `ToolResult`. The request package reads a client's
request into these and imports this module; nothing here imports the request package.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .._schema import JSON_OBJECT
from ..framing._utf8 import json_text

ChoiceMode = Literal["none", "auto", "required"]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One function tool: `parameters` is its JSON schema as the client wrote it (`None` if absent)."""

    name: str
    description: str | None = None
    parameters: Mapping[str, Any] | None = None
    strict: bool | None = None

    def schema(self) -> Mapping[str, Any]:
        """The parameters schema, `{"type": "object", "properties": {}}` when the tool has none."""
        return self.parameters if self.parameters is not None else {"type": "object", "properties": {}}

    def function(self) -> dict[str, Any]:
        """The inner `function` object of Chat's shape, with only the fields the client gave."""
        out: dict[str, Any] = {"name": self.name}
        if self.description is not None:
            out["description"] = self.description
        if self.parameters is not None:
            out["parameters"] = self.parameters
        return out

    def chat_shape(self) -> dict[str, Any]:
        """`{"type": "function", "function": {…}}`: what most chat templates dump into the prompt."""
        return {"type": "function", "function": self.function()}


@dataclass(frozen=True, slots=True)
class ToolChoice:
    """What the model may call: `mode`, narrowed to `allowed` names (`None`: every offered tool).

    A forced function is `mode="required"` with `forced` set (and `allowed == (forced,)`).
    """

    mode: ChoiceMode = "auto"
    allowed: tuple[str, ...] | None = None
    forced: str | None = None


@dataclass(frozen=True, slots=True)
class CallToRender:
    """A call of the conversation ready to render: `arguments` is the decoded JSON object, `id`
    the dialect's own id (`Renderer.native_id`). (The parser's `Call` is what a block found.)"""

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


def results_joined(one: Callable[[ToolResult], str], sep: str = "\n") -> Callable[[Sequence[ToolResult]], str]:
    """A `results` that renders each result with `one` and joins them with `sep`."""

    def render(results: Sequence[ToolResult]) -> str:
        return sep.join(one(r) for r in results)

    return render


def fallback_results(results: Sequence[ToolResult]) -> str:
    """`Renderer.results` of a dialect without a tool-response syntax: `fallback_result` lines."""
    return "\n".join(fallback_result(r) for r in results)


def join_turn(content: str, calls: str, sep: str = "\n") -> str:
    """Content, then the calls: the layout most templates write an assistant turn in."""
    if not content:
        return calls
    if not calls:
        return content
    return content + sep + calls


def keep_call_id(call_id: str, name: str, n: int) -> str:
    """`Renderer.native_id` of a dialect that writes no ids of its own: the client's id."""
    return call_id


def no_native_choice(choice: ToolChoice) -> str | None:
    """`Renderer.choice` of a template with no words of its own for `tool_choice`."""
    return None


@dataclass(frozen=True)
class Renderer:
    """One dialect's rendering.

    `calls`: the raw call text of one turn. `tools`: the tool list and call format for the system
    prompt. The optional hooks default to what a template without them does: `results`, one
    turn's tool results as text (consecutive results merged the way the template merges them;
    `fallback_result` lines by default); `assistant`, content and rendered calls joined into the
    turn's text; `native_id(call_id, name, n)`, the id the dialect writes for the n-th call of
    the conversation (the client's id by default); `choice`, the template's own wording for
    `tool_choice` (`None`: the generic rules); `reasoning`, a reasoning block as the model writes
    it before its answer (`None`: the first marker pair of the dialect's `ReasoningSyntax`);
    `prepend`, the manifest goes before the system text instead of after it.
    """

    calls: Callable[[Sequence[CallToRender]], str]
    tools: Callable[[Sequence[ToolSpec], bool], str]
    results: Callable[[Sequence[ToolResult]], str] = fallback_results
    assistant: Callable[[str, str], str] = join_turn
    native_id: Callable[[str, str, int], str] = keep_call_id
    choice: Callable[[ToolChoice], str | None] = no_native_choice
    reasoning: Callable[[str], str] | None = None
    prepend: bool = False


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


def tool_lines(tools: Sequence[ToolSpec], indent: int | None = None, sep: str = "\n") -> str:
    """The tools' Chat Completions shapes as JSON, one a line (or indented, `sep` between)."""
    if indent is None:
        return sep.join(dumps(t.chat_shape()) for t in tools)
    return sep.join(json.dumps(t.chat_shape(), ensure_ascii=False, indent=indent) for t in tools)


def tools_in_tags(tools: Sequence[ToolSpec], rules: str) -> str:
    """Qwen's tool manifest (the tools as JSON in `<tools>` tags), then a format's calling rules:
    the words of the formats whose own template was not available to copy."""
    return (
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
        + tool_lines(tools)
        + "\n</tools>\n\n"
        + rules
    )


def tool_response(result: ToolResult) -> str:
    """`<tool_response>…</tool_response>`: Qwen2.5/3, Hermes, Qwen3-Coder and GLM tool results."""
    return f"<tool_response>\n{result.output}\n</tool_response>"


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
    "CallToRender",
    "ChoiceMode",
    "Renderer",
    "ToolChoice",
    "ToolResult",
    "ToolSpec",
    "alnum_id",
    "dumps",
    "dumps_safe",
    "fallback_result",
    "fallback_results",
    "join_turn",
    "keep_call_id",
    "no_native_choice",
    "python_literal",
    "results_joined",
    "tool_lines",
    "tool_response",
    "tools_in_tags",
    "value_text",
]
