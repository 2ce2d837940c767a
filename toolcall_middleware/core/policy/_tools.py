"""What the request allows: the offered function tools and the `tool_choice` rules over them.

Both tool shapes are read: Chat's nested `{"type": "function", "function": {"name", "parameters",
"strict"}}` and the Responses API's flat `{"type": "function", "name", "parameters", "strict"}`.
Tools of other types (`custom`, `web_search`, `mcp`, Codex's `namespace`, …) are not function
tools, so a function call can never be one of them. A tool is strict only when its `strict` is
`true` (null or absent is loose, as in both APIs).

`tool_choice` is read in every OpenAI form: `"none"`, `"auto"`, `"required"`, a forced function
(`{"type": "function", "function": {"name"}}`, `{"type": "function", "name"}`, or the legacy
`function_call: {"name"}`) and `allowed_tools` (either API's shape). The legacy `functions`
list reads as tools too (its entries are the flat shape without a `type`). A forced function
also requires a call, as it does at OpenAI. A choice of a tool of another type (`custom`, `mcp`,
a hosted tool) is read as `"auto"`: its calls are not function calls, so there is nothing here
to enforce.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._schema import JSON_OBJECT
from ._errors import PolicyConfigError


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One offered function: `param` is where its parameters sit in the request, for errors."""

    name: str
    parameters: Mapping[str, Any] | None
    strict: bool
    param: str


@dataclass(frozen=True, slots=True)
class ToolRules:
    """`offered` is `None` when the request's tools are unknown (names are then not checked);
    `allowed` is `None` when every offered name may be called; `suppress` is `tool_choice: "none"`;
    `require` says a call must go out (`required`, a forced function, `allowed_tools` required)."""

    offered: Mapping[str, ToolSpec] | None = None
    allowed: frozenset[str] | None = None
    suppress: bool = False
    require: bool = False
    # The offered schemas compiled (`SchemaCheck`), by tool name, as they are first needed: one
    # compile for every request these rules are read for (`core._memo` shares them), where each
    # would otherwise write the schema out again to find it compiled. Not part of the rules.
    compiled: dict[str, Any] = field(default_factory=dict, init=False, compare=False, repr=False)

    @classmethod
    def read(cls, tools: Any, tool_choice: Any) -> ToolRules:
        offered = read_tools(tools)
        return read_tool_choice(tool_choice, offered)


def read_tools(tools: Any) -> dict[str, ToolSpec] | None:
    """Name -> spec of the function tools in `tools` (either shape, or a ready name -> parameters
    mapping); `None` when `tools` is `None`. The first of two tools with one name wins."""
    if tools is None:
        return None
    if not isinstance(tools, list) and isinstance(tools, JSON_OBJECT):  # (a list: no ABC check)
        specs: dict[str, ToolSpec] = {}
        for name, params in tools.items():
            if not isinstance(name, str) or not (params is None or isinstance(params, JSON_OBJECT)):
                raise PolicyConfigError("'tools' must map tool names to parameter schemas", "tools")
            specs[name] = ToolSpec(name, params or None, False, f"tools.{name}")
        return specs
    if isinstance(tools, (str, bytes)) or not isinstance(tools, (list, tuple)):
        raise PolicyConfigError(f"Invalid type for 'tools': expected an array, got {type(tools).__name__}", "tools")
    specs = {}
    for i, tool in enumerate(tools):
        spec = _read_tool(tool, f"tools[{i}]")
        if spec is not None and spec.name not in specs:
            specs[spec.name] = spec
    return specs


def _read_tool(tool: Any, where: str) -> ToolSpec | None:
    if not isinstance(tool, JSON_OBJECT):
        raise PolicyConfigError(f"Invalid type for '{where}': expected an object", where)
    if tool.get("type", "function") != "function":
        return None
    fn: Any = tool
    if "function" in tool:
        fn = tool["function"]
        where = f"{where}.function"
        if not isinstance(fn, JSON_OBJECT):
            raise PolicyConfigError(f"Invalid type for '{where}': expected an object", where)
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        raise PolicyConfigError(f"Missing required parameter: '{where}.name'", f"{where}.name")
    key = "parameters" if "parameters" in fn else "input_schema"
    params = fn.get(key)
    if params is not None and not isinstance(params, JSON_OBJECT):
        raise PolicyConfigError(f"Invalid type for '{where}.{key}': expected an object", f"{where}.{key}")
    strict = fn.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise PolicyConfigError(f"Invalid type for '{where}.strict': expected a boolean", f"{where}.strict")
    return ToolSpec(name, params or None, strict is True, f"{where}.{key}")


def read_tool_choice(choice: Any, offered: Mapping[str, ToolSpec] | None) -> ToolRules:
    """The rules `tool_choice` sets over `offered` (`None`: `"auto"`)."""
    if choice is None or choice == "auto":
        return ToolRules(offered)
    if choice == "none":
        return ToolRules(offered, suppress=True)
    if choice == "required":
        return ToolRules(offered, require=True)
    if not isinstance(choice, Mapping):
        raise PolicyConfigError(
            f"Invalid value for 'tool_choice': {choice!r}. Supported values are: 'none', 'auto', 'required', "
            "or an object naming a function.",
            "tool_choice",
        )
    kind = choice.get("type")
    if kind is None and isinstance(choice.get("name"), str):  # the legacy `function_call: {"name"}`
        kind = "function"
    if kind == "function":
        name = _function_name(choice, "tool_choice")
        _check_offered(name, offered, "tool_choice")
        return ToolRules(offered, allowed=frozenset((name,)), require=True)
    if kind == "allowed_tools":
        inner = choice.get("allowed_tools", choice)  # Chat nests the mode and tools; Responses does not
        where = "tool_choice.allowed_tools" if "allowed_tools" in choice else "tool_choice"
        if not isinstance(inner, Mapping):
            raise PolicyConfigError(f"Invalid type for '{where}': expected an object", where)
        mode = inner.get("mode")
        if mode not in ("auto", "required"):
            raise PolicyConfigError(
                f"Invalid value for '{where}.mode': {mode!r}. Supported values are: 'auto' and 'required'.",
                f"{where}.mode",
            )
        entries = inner.get("tools")
        if not isinstance(entries, (list, tuple)):
            raise PolicyConfigError(f"Missing required parameter: '{where}.tools'", f"{where}.tools")
        names: set[str] = set()
        for j, entry in enumerate(entries):
            at = f"{where}.tools[{j}]"
            if not isinstance(entry, Mapping):
                raise PolicyConfigError(f"Invalid type for '{at}': expected an object", at)
            if entry.get("type") == "function":
                name = _function_name(entry, at)
                _check_offered(name, offered, at)
                names.add(name)
        return ToolRules(offered, allowed=frozenset(names), require=mode == "required")
    if isinstance(kind, str) and kind:
        return ToolRules(offered)  # a custom, MCP or hosted tool: not a function call to police
    raise PolicyConfigError("Missing required parameter: 'tool_choice.type'", "tool_choice.type")


def _function_name(choice: Mapping[str, Any], where: str) -> str:
    fn = choice.get("function", choice)
    name = fn.get("name") if isinstance(fn, Mapping) else None
    if not isinstance(name, str) or not name:
        at = f"{where}.function.name" if "function" in choice else f"{where}.name"
        raise PolicyConfigError(f"Missing required parameter: '{at}'", at)
    return name


def _check_offered(name: str, offered: Mapping[str, ToolSpec] | None, where: str) -> None:
    if offered is not None and name not in offered:
        raise PolicyConfigError(f"Tool choice function {name!r} is not one of the functions in 'tools'", where)


__all__ = ["ToolRules", "ToolSpec", "read_tool_choice", "read_tools"]
