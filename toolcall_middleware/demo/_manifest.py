"""Reading the offered tools back out of the system text, as a model reads its tool manifest.

The demo model is told nothing of OpenAI tool calling: the request rewriting wrote the tools into
the system prompt (or `instructions`) in the dialect's own wording (`render_manifest`), and this
module reads that wording back. Most dialects declare each tool as a JSON object; the others have
their own syntax, each read here: Qwen3-Coder's `<function><name>…` XML, harmony's and GigaChat
3's TypeScript namespace, Gemma 4's and FunctionGemma's `declaration:` blocks, Seed-OSS's Python
signatures and DeepSeek V3.1's `### name` sections.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class OfferedTool:
    """A tool as the manifest declares it: its parameters' schemas and which of them are required."""

    name: str
    description: str = ""
    properties: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    required: tuple[str, ...] = ()


@dataclass(frozen=True)
class Manifest:
    """What the system text offers: the tools, a forced tool, whether a call is required, at most one call."""

    tools: tuple[OfferedTool, ...] = ()
    forced: str | None = None
    required: bool = False
    single: bool = False


_FORCED = re.compile(r"must call the function `([^`]+)`")


def read_manifest(system: str) -> Manifest:
    """The tools and calling rules the system text offers (no tools: an empty `Manifest`)."""
    found: dict[str, OfferedTool] = {}
    for reader in (_json_tools, _deepseek_v31_tools, _qwen_xml_tools, _typescript_tools, _gemma_tools, _python_tools):
        for tool in reader(system):
            found.setdefault(tool.name, tool)
    forced = _FORCED.search(system)
    return Manifest(
        tools=tuple(found.values()),
        forced=forced.group(1) if forced else None,
        required="must call at least one of the functions" in system,
        single="Call at most one function" in system,
    )


def _from_schema(name: str, description: Any, schema: Any) -> OfferedTool:
    schema = schema if isinstance(schema, Mapping) else {}
    props = schema.get("properties")
    required = schema.get("required")
    return OfferedTool(
        name=name,
        description=description if isinstance(description, str) else "",
        properties={k: v for k, v in props.items() if isinstance(v, Mapping)} if isinstance(props, Mapping) else {},
        required=tuple(r for r in required if isinstance(r, str)) if isinstance(required, list) else (),
    )


def _tool_object(value: Any) -> OfferedTool | None:
    """`{"type": "function", "function": {…}}` or a flat `{"name": …, "parameters": …}`."""
    if not isinstance(value, Mapping):
        return None
    inner = value.get("function")
    if isinstance(inner, Mapping):
        value = inner
    name = value.get("name")
    if not isinstance(name, str) or not ("parameters" in value or "description" in value):
        return None
    return _from_schema(name, value.get("description"), value.get("parameters"))


def _json_values(text: str) -> Iterator[Any]:
    """Every JSON object or array in the text, outermost first (one decode per opening bracket)."""
    decoder = json.JSONDecoder()
    i = 0
    while (m := re.compile(r"[\[{]").search(text, i)) is not None:
        try:
            value, end = decoder.raw_decode(text, m.start())
        except ValueError:
            i = m.start() + 1
            continue
        yield value
        i = end


def _json_tools(text: str) -> Iterator[OfferedTool]:
    for value in _json_values(text):
        for item in value if isinstance(value, list) else [value]:
            tool = _tool_object(item)
            if tool is not None:
                yield tool


_V31 = re.compile(r"^### (\S+)\n(?:Description: (.*)\n)?\nParameters: ", re.MULTILINE)


def _deepseek_v31_tools(text: str) -> Iterator[OfferedTool]:
    decoder = json.JSONDecoder()
    for m in _V31.finditer(text):
        try:
            schema, _ = decoder.raw_decode(text, m.end())
        except ValueError:
            continue
        yield _from_schema(m.group(1), m.group(2), schema)


_QWEN_FUNCTION = re.compile(
    r"<function>\n<name>(.*?)</name>\n(?:<description>(.*?)</description>\n)?(.*?)</function>", re.S
)
_QWEN_PARAM = re.compile(r"<parameter>\n<name>(.*?)</name>\n<type>(.*?)</type>", re.S)
_QWEN_REQUIRED = re.compile(r"<required>(.*?)</required>", re.S)


def _qwen_xml_tools(text: str) -> Iterator[OfferedTool]:
    for m in _QWEN_FUNCTION.finditer(text):
        props = {p.group(1): {"type": p.group(2)} for p in _QWEN_PARAM.finditer(m.group(3))}
        req = _QWEN_REQUIRED.search(m.group(3))
        required = json.loads(req.group(1)) if req else []
        yield _from_schema(m.group(1), m.group(2), {"properties": props, "required": required})


# Harmony writes a parameter a line; GigaChat 3 writes them on one line, `a: string, b?: number}`.
_TS_TOOL = re.compile(r"^type (\w[\w.-]*) = \((?:_: \{\n(.*?)\n?\})?\) => any;", re.S | re.MULTILINE)
_TS_PARAM = re.compile(r"(?:^|, )(\w+)(\??): ([^,\n]+)", re.MULTILINE)
_TS_TYPES = {"string": "string", "number": "number", "boolean": "boolean"}


def _typescript_tools(text: str) -> Iterator[OfferedTool]:
    for m in _TS_TOOL.finditer(text):
        props: dict[str, Any] = {}
        required = []
        for p in _TS_PARAM.finditer(m.group(2) or ""):
            kind = p.group(3).strip()
            props[p.group(1)] = {"type": _TS_TYPES.get(kind, "array" if kind.endswith("[]") else "string")}
            if kind.startswith('"'):
                props[p.group(1)]["enum"] = [v.strip().strip('"') for v in kind.split("|")]
            if not p.group(2):
                required.append(p.group(1))
        yield _from_schema(m.group(1), None, {"properties": props, "required": required})


# Gemma 4's `<|tool>…<tool|>`, and FunctionGemma's `<start_function_declaration>…` with `<escape>`.
_GEMMA = re.compile(
    r"(?:<\|tool>|<start_function_declaration>)declaration:(\w[\w.-]*)(\{.*?\})(?:<tool\|>|<end_function_declaration>)",
    re.S,
)
_GEMMA_KEY = re.compile(r"([{,])(\w+):")


def _gemma_tools(text: str) -> Iterator[OfferedTool]:
    for m in _GEMMA.finditer(text):
        # Gemma's declaration is JSON with bare keys and `<|"|>` for quotes.
        body = _GEMMA_KEY.sub(r'\1"\2":', m.group(2).replace('<|"|>', '"').replace("<escape>", '"'))
        try:
            value = json.loads(body)
        except ValueError:
            continue
        params = value.get("parameters") if isinstance(value, dict) else None
        if isinstance(params, dict) and isinstance(params.get("properties"), dict):
            for prop in params["properties"].values():
                if isinstance(prop, dict) and isinstance(prop.get("type"), str):
                    prop["type"] = prop["type"].lower()
        yield _from_schema(m.group(1), value.get("description") if isinstance(value, dict) else None, params)


_PY_DEF = re.compile(r"^def (\w+)\((.*?)\):", re.MULTILINE)
_PY_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "list": "array", "dict": "object"}


def _python_tools(text: str) -> Iterator[OfferedTool]:
    for m in _PY_DEF.finditer(text):
        props: dict[str, Any] = {}
        required = []
        for param in filter(None, (p.strip() for p in m.group(2).split(","))):
            name, _, kind = param.partition(":")
            name, _, default = name.partition("=")
            props[name.strip()] = {"type": _PY_TYPES.get(kind.split("=")[0].strip(), "string")}
            if not default and "=" not in kind:
                required.append(name.strip())
        yield _from_schema(m.group(1), None, {"properties": props, "required": required})


__all__ = ["Manifest", "OfferedTool", "read_manifest"]
