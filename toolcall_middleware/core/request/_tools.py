"""The tools a request offers, and how it lets the model use them, in one canonical form.

Clients write tools three ways: Chat's nested `{"type": "function", "function": {name, …}}`, the
Responses API's flat `{"type": "function", "name": …}`, and the deprecated `functions: [{name, …}]`.
`normalize_tools(body)` reads all three into `ToolSpec`s (the tool as a dialect's renderer writes
it: `core.dialects._rendering`). Tools of any other type (Codex sends
`web_search`, `local_shell`, `custom`, `namespace`, `file_search`, `image_generation`, …) are
hosted or free-form tools a raw-text backend cannot run: they are dropped from what the backend
sees and reported by type, never an error (ik_llama.cpp#1964, unsloth#5141).

`tool_choice` (`none`, `auto`, `required`, a forced function in either shape, `allowed_tools`, or
the legacy `function_call`) becomes a `ToolChoice`; `parallel_tool_calls` a bool. A forced or
allowed name that no offered function carries is a `BadRequest` naming `tool_choice`.

`partition_tools(raw, read)` is the walk over a `tools` array that this reading and the API
bridges share: each entry checked to be an object, read by the caller's rule into a kept tool or
the type it is dropped as.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .._memo import remembered
from .._schema import JSON_OBJECT
from ..dialects._rendering import ChoiceMode, ToolChoice, ToolSpec
from ._errors import BadRequest, invalid, missing, required_string

_MODES: dict[str, ChoiceMode] = {"none": "none", "auto": "auto", "required": "required"}
Kept = TypeVar("Kept")


@dataclass(frozen=True, slots=True)
class ToolSet:
    """The tools of a request, normalized.

    `tools`: every function tool, in order. `dropped`: the types of the other tools, in order.
    `choice`, `parallel`: the normalized `tool_choice` and `parallel_tool_calls`.
    `ignored_choice`: a `tool_choice` that named a dropped tool type (it then acts as `auto`).
    `legacy`: the tools came from the deprecated `functions` field.
    """

    tools: tuple[ToolSpec, ...] = ()
    dropped: tuple[str, ...] = ()
    choice: ToolChoice = field(default_factory=ToolChoice)
    parallel: bool = True
    ignored_choice: str | None = None
    legacy: bool = False

    @property
    def offered(self) -> tuple[ToolSpec, ...]:
        """The tools the model may call under `choice`: none for `none`, the allowed ones otherwise."""
        if self.choice.mode == "none":
            return ()
        if self.choice.allowed is None:
            return self.tools
        allowed = set(self.choice.allowed)
        return tuple(t for t in self.tools if t.name in allowed)

    def schemas(self) -> dict[str, Mapping[str, Any]]:
        """Tool name -> parameters schema, as `parse(tools=…)` takes them."""
        return {t.name: t.schema() for t in self.tools}


# -- tools ---------------------------------------------------------------------------------


def normalize_tools(body: Mapping[str, Any]) -> ToolSet:
    """The `tools`/`functions`, `tool_choice`/`function_call` and `parallel_tool_calls` of a body
    (read once for requests that offer the same: `core._memo`)."""
    fields = tuple(body.get(name) for name in _TOOL_FIELDS)
    return remembered("tools", fields, lambda: _normalize_tools(body))


_TOOL_FIELDS = ("tools", "functions", "tool_choice", "function_call", "parallel_tool_calls")


def _normalize_tools(body: Mapping[str, Any]) -> ToolSet:
    raw_tools = body.get("tools")
    tools, dropped = partition_tools(raw_tools, _read_tool)
    raw_functions = body.get("functions")
    legacy = False
    if raw_functions is not None:
        if not isinstance(raw_functions, list):
            raise invalid("functions", "expected an array of functions")
        for i, fn in enumerate(raw_functions):
            tools.append(_read_function(fn, f"functions[{i}]"))
        legacy = raw_tools is None
    choice, ignored = _read_choice(body, tools, bool(dropped) or raw_tools is not None or legacy)
    parallel = body.get("parallel_tool_calls")
    if parallel is not None and not isinstance(parallel, bool):
        raise invalid("parallel_tool_calls", "expected a boolean")
    # The legacy `function_call` answer holds one call: the `functions` API never called in parallel.
    allow_parallel = parallel if parallel is not None else not legacy
    return ToolSet(
        tools=tuple(tools),
        dropped=tuple(dropped),
        choice=choice,
        parallel=allow_parallel,
        ignored_choice=ignored,
        legacy=legacy,
    )


def partition_tools(
    raw: Any, read: Callable[[Mapping[str, Any], str], Kept | str], path: str = "tools[{}]"
) -> tuple[list[Kept], list[str]]:
    """A `tools` array walked: the tools `read` keeps, and the types of those it drops.

    `read` gets each entry (already checked to be an object) and its path (`path` with the index
    filled in: Anthropic writes `tools.0`), and returns the tool to keep or the type to drop it as.
    """
    kept: list[Kept] = []
    dropped: list[str] = []
    if raw is None:
        return kept, dropped
    if not isinstance(raw, list):
        raise invalid("tools", "expected an array of tools")
    for i, tool in enumerate(raw):
        where = path.format(i)
        if not isinstance(tool, JSON_OBJECT):
            raise invalid(where, "expected an object")
        outcome = read(tool, where)
        if isinstance(outcome, str):
            dropped.append(outcome)
        else:
            kept.append(outcome)
    return kept, dropped


def _read_tool(tool: Mapping[str, Any], where: str) -> ToolSpec | str:
    """A function tool as a `ToolSpec`, any other tool as its type (to drop)."""
    kind = tool.get("type", "function" if "function" in tool or "name" in tool else None)
    if kind is None:
        raise missing(f"{where}.type")
    if not isinstance(kind, str):
        raise invalid(f"{where}.type", "expected a string")
    if kind != "function":
        return kind
    inner = tool.get("function")
    if inner is not None:  # Chat's nested shape
        if not isinstance(inner, JSON_OBJECT):
            raise invalid(f"{where}.function", "expected an object")
        return _read_function(inner, f"{where}.function")
    return _read_function(tool, where)  # the Responses API's flat shape


def _read_function(fn: Any, where: str) -> ToolSpec:
    if not isinstance(fn, JSON_OBJECT):
        raise invalid(where, "expected an object")
    name = fn.get("name")
    if name is None:
        raise missing(f"{where}.name")
    if not isinstance(name, str) or not name.strip():
        raise invalid(f"{where}.name", "expected a non-empty string")
    description = fn.get("description")
    if description is not None and not isinstance(description, str):
        raise invalid(f"{where}.description", "expected a string")
    parameters = fn.get("parameters")
    if parameters is not None and not isinstance(parameters, JSON_OBJECT):
        raise invalid(f"{where}.parameters", "expected a JSON schema object")
    strict = fn.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise invalid(f"{where}.strict", "expected a boolean")
    return ToolSpec(name=name, description=description, parameters=parameters, strict=strict)


# -- tool_choice ---------------------------------------------------------------------------


def _read_choice(body: Mapping[str, Any], tools: Sequence[ToolSpec], has_tools: bool) -> tuple[ToolChoice, str | None]:
    if body.get("tool_choice") is not None:
        raw, where = body["tool_choice"], "tool_choice"
    elif body.get("function_call") is not None:
        raw, where = body["function_call"], "function_call"
    else:
        return ToolChoice("auto" if has_tools else "none"), None
    names = [t.name for t in tools]
    if isinstance(raw, str):
        if raw not in ("none", "auto", "required") or (raw == "required" and where == "function_call"):
            allowed_words = "'none' or 'auto'" if where == "function_call" else "'none', 'auto' or 'required'"
            raise invalid(where, f"expected {allowed_words} or an object naming a function, got {raw!r}")
        if raw == "required" and not names:
            if not has_tools:
                raise BadRequest(
                    f"Invalid value for '{where}': 'required' is only allowed when 'tools' are specified.", where
                )
            return ToolChoice("auto"), "required"  # only hosted tools were offered, and they are dropped
        return ToolChoice(_MODES[raw]), None
    if not isinstance(raw, JSON_OBJECT):
        raise invalid(where, "expected a string or an object")
    if where == "function_call":
        return _forced(required_string(raw, "name", where), names, where), None
    kind = raw.get("type")
    if kind == "function":
        inner = raw.get("function")
        if inner is not None:
            if not isinstance(inner, JSON_OBJECT):
                raise invalid(f"{where}.function", "expected an object")
            return _forced(required_string(inner, "name", f"{where}.function"), names, where), None
        return _forced(required_string(raw, "name", where), names, where), None
    if kind == "allowed_tools":
        return _allowed(raw, names, where)
    if isinstance(kind, str):
        return ToolChoice("auto"), kind  # a hosted tool (`web_search`, `custom`, `mcp`…): dropped with it
    raise missing(f"{where}.type")


def _forced(name: str, names: Sequence[str], where: str) -> ToolChoice:
    if name not in names:
        raise _not_offered(name, names, where)
    return ToolChoice("required", allowed=(name,), forced=name)


def _not_offered(name: str, names: Sequence[str], where: str) -> BadRequest:
    offered = ", ".join(repr(n) for n in names) or "none"
    return BadRequest(
        f"Invalid value for '{where}': function {name!r} is not in the offered tools (offered: {offered}).",
        where,
        code="invalid_value",
    )


def _allowed(raw: Mapping[str, Any], names: Sequence[str], where: str) -> tuple[ToolChoice, str | None]:
    # Chat nests the object under `allowed_tools`; the Responses API writes it flat.
    spec: Any = raw.get("allowed_tools", raw)
    base = f"{where}.allowed_tools" if "allowed_tools" in raw else where
    if not isinstance(spec, JSON_OBJECT):
        raise invalid(base, "expected an object")
    mode = _MODES.get(spec.get("mode", "auto")) if isinstance(spec.get("mode", "auto"), str) else None
    if mode not in ("auto", "required"):
        raise invalid(f"{base}.mode", "expected 'auto' or 'required'")
    entries = spec.get("tools")
    if not isinstance(entries, list):
        raise invalid(f"{base}.tools", "expected an array of tools")
    allowed: list[str] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, JSON_OBJECT):
            raise invalid(f"{base}.tools[{i}]", "expected an object")
        if entry.get("type", "function") != "function":
            continue  # a hosted tool: dropped like the tool itself
        inner = entry.get("function")
        if isinstance(inner, JSON_OBJECT):
            name = required_string(inner, "name", f"{base}.tools[{i}].function")
        else:
            name = required_string(entry, "name", f"{base}.tools[{i}]")
        if name not in names:
            raise _not_offered(name, names, where)
        if name not in allowed:
            allowed.append(name)
    if mode == "required" and not allowed:
        return ToolChoice("auto", allowed=()), "allowed_tools"
    return ToolChoice(mode or "auto", allowed=tuple(allowed)), None


__all__ = ["ToolSet", "normalize_tools", "partition_tools"]
