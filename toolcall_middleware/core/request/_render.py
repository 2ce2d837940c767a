"""Rendering tool calls, tool results and the tool manifest in a dialect's own raw text.

```python
render_calls("hermes", [("call_1", "get_weather", '{"city": "Paris"}')])
# '<tool_call>\\n{"name": "get_weather", "arguments": {"city": "Paris"}}\\n</tool_call>'
```

- `render_calls(dialect, calls)`: an assistant turn's calls as the model would have written them;
  `parse(render_calls(d, calls), d, tools=…)` gives back the same names and arguments.
- `render_assistant(dialect, content, calls)`: the whole turn, text and calls.
- `render_reasoning(dialect, text)`: a reasoning block as the model writes it before its answer
  (`<think>\n…\n</think>\n\n`, harmony's analysis channel); `""` where the dialect has none.
- `render_tool_results(dialect, results)`: one turn's tool results, in the dialect's
  tool-response markup where it has one (`<tool_response>…</tool_response>`, DeepSeek's output
  tokens, Kimi's `## Return of …`) and `[function_call_output call_id=… output=…]` otherwise.
- `render_manifest(dialect, tools)`: the tool list and calling rules for the system prompt, worded
  as the model's chat template words them, followed by what `tool_choice` and
  `parallel_tool_calls` require (`none`: no tools offered, and the prompt says so).

Every registered dialect but `auto` has a renderer; `auto` is not a format to write. What a
renderer is and what it is given (`Renderer`, `CallToRender`, `ToolResult`, `ToolSpec`) are the
dialects' (`core.dialects._rendering`); this module reads a client's calls into them
(`decode_calls`, `load_arguments`) and asks the dialect's renderer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from json.encoder import encode_basestring
from typing import Any

from .._memo import MAX_ENTRIES
from .._schema import JSON_OBJECT
from ..dialects import UnknownDialectError, get_dialect, list_dialects
from ..dialects._rendering import CallToRender, Renderer, ToolChoice, ToolResult
from ._errors import invalid
from ._tools import ToolSet

NO_TOOLS = "No tools are available for this response: do not call any function, answer directly."


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


def renderer(dialect: str) -> Renderer:
    """The renderer of a registered dialect; `UnknownDialectError` for others and for `auto`."""
    found = get_dialect(dialect).renderer  # the registry's error names the dialects
    if found is None:
        raise UnknownDialectError(
            f"dialect {dialect!r} has no request renderer; pass a concrete dialect: {', '.join(rendered_dialects())}"
        )
    return found


def rendered_dialects() -> list[str]:
    """The dialects requests can be rendered in."""
    return [name for name in list_dialects() if get_dialect(name).renderer is not None]


def render_calls(dialect: str, calls: Sequence[CallText]) -> str:
    """`[(call_id, name, arguments_json)]` as the dialect's raw call text (`""` for no calls).

    The arguments must be the JSON text of an object (`""` counts as `{}`): anything else raises
    `BadRequest` naming `calls[i].arguments`.
    """
    return renderer(dialect).calls(decode_calls(calls))


def render_assistant(dialect: str, content: str | None, calls: Sequence[CallText]) -> str:
    """An assistant turn: its text, then its calls, laid out as the dialect's template does."""
    r = renderer(dialect)
    return r.assistant(content or "", r.calls(decode_calls(calls)))


def render_reasoning(dialect: str, text: str) -> str:
    """`text` as the dialect's reasoning block, written where the model writes it: before its
    answer or calls (see the module doc)."""
    found = get_dialect(dialect)
    if found.renderer is not None and found.renderer.reasoning is not None:
        return found.renderer.reasoning(text)  # a notation of its own (harmony's analysis channel)
    syntax = found.reasoning
    if syntax is None:
        return ""
    start, end = syntax.pairs[0]
    return f"{start}\n{text}\n{end}\n\n"


def render_tool_result(dialect: str, call_id: str, output: str, *, name: str | None = None) -> str:
    """One tool result as text."""
    return render_tool_results(dialect, [ToolResult(call_id=call_id, output=output, name=name)])


def render_tool_results(dialect: str, results: Sequence[ToolResult]) -> str:
    """The consecutive tool results of one turn, merged as the dialect's template merges them."""
    return renderer(dialect).results(results)


def native_call_id(dialect: str, call_id: str, name: str, n: int) -> str:
    """The id the dialect writes for the `n`-th call of a conversation (Kimi's `functions.f:n`,
    Mistral's 9 alphanumerics); the client's id for dialects that write none."""
    return renderer(dialect).native_id(call_id, name, n)


def choice_rules(choice: ToolChoice, parallel: bool) -> list[str]:
    """What `tool_choice` and `parallel_tool_calls` require, one sentence each."""
    rules = []
    if choice.forced is not None:
        rules.append(f"You must call the function `{choice.forced}` in this response, and no other function.")
    elif choice.mode == "required":
        rules.append("You must call at least one of the functions above in this response.")
    if not parallel:
        rules.append("Call at most one function in this response.")
    return rules


def render_manifest(dialect: str, tools: ToolSet) -> str | None:
    """The system-prompt text that offers the tools; `None` when the request offers no function.
    Written once for a `ToolSet` that requests share (`normalize_tools` remembers them)."""
    key = (dialect, id(tools))
    written = _MANIFESTS.get(key)
    if written is not None and written[0] is tools:
        return written[1]
    text = _render_manifest(dialect, tools)
    if len(_MANIFESTS) >= MAX_ENTRIES:
        _MANIFESTS.clear()
    _MANIFESTS[key] = (tools, text)  # (the set held: its id cannot name another while here)
    return text


# The manifests written, by dialect and tool set (the set is kept with its text).
_MANIFESTS: dict[tuple[str, int], tuple[ToolSet, str | None]] = {}


def manifest_token(text: str, manifest: str) -> str:
    """The JSON string token of `text`, a system text that holds `manifest` whole at its start or
    at its end (`with_manifest`), with the manifest's part escaped once for every request that
    sends it (escaping is per character: the token of two texts joined is their tokens joined).
    For writing a rewritten body out (`json_bytes_with`): an agent's manifest runs to many KB."""
    written = _TOKENS.get(id(manifest))
    if written is None or written[0] is not manifest:
        if len(_TOKENS) >= MAX_ENTRIES:
            _TOKENS.clear()
        written = _TOKENS[id(manifest)] = (manifest, encode_basestring(manifest))
    token = written[1]
    if text is manifest or text == manifest:
        return token
    if text.endswith(manifest):
        return encode_basestring(text[: len(text) - len(manifest)])[:-1] + token[1:]
    if text.startswith(manifest):
        return token[:-1] + encode_basestring(text[len(manifest) :])[1:]
    return encode_basestring(text)


# The manifests' tokens, by the manifest (kept with its token: the id names no other while here).
_TOKENS: dict[int, tuple[str, str]] = {}


def _render_manifest(dialect: str, tools: ToolSet) -> str | None:
    if not tools.tools:
        return None
    r = renderer(dialect)
    native = r.choice(tools.choice)
    offered = tools.offered
    if not offered:
        return native or NO_TOOLS
    parts = [r.tools(offered, tools.parallel)]
    rules = choice_rules(tools.choice, tools.parallel)
    if native is not None:  # the template's own words for the choice, then the parallel rule
        rules = [native, *choice_rules(ToolChoice("auto"), tools.parallel)]
    if rules:
        parts.append("\n".join(rules))
    return "\n\n".join(parts)


__all__ = [
    "NO_TOOLS",
    "CallText",
    "ToolResult",
    "choice_rules",
    "decode_calls",
    "load_arguments",
    "manifest_token",
    "native_call_id",
    "render_assistant",
    "render_calls",
    "render_manifest",
    "render_reasoning",
    "render_tool_result",
    "render_tool_results",
    "rendered_dialects",
    "renderer",
]
