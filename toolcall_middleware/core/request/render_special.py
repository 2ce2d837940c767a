"""Renderers of the dialects with a notation of their own: `gpt_oss`, `gemma4`, `pythonic`, `kimi_k3`.

- `gpt_oss` (harmony): a call is a message on the commentary channel addressed to
  `functions.NAME`; the manifest is the TypeScript `namespace functions` of the gpt-oss template.
- `gemma4`: `<|tool_call>call:NAME{key:value}<tool_call|>` in Gemma's object notation, strings
  between `<|"|>` delimiters; the manifest is the template's `<|tool>declaration:…<tool|>` list.
- `pythonic`: a Python list of calls with literal keyword arguments (Llama 3.2 pythonic, Llama 4).
- `kimi_k3`: XTML elements; a value holding XTML markup goes in the call's JSON element instead,
  with `<` escaped, so no value can end its element early.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from ..schema import JSON_OBJECT
from .render_base import (
    Call,
    Renderer,
    ToolResult,
    dumps,
    dumps_safe,
    fallback_result,
    join_turn,
    python_literal,
    results_joined,
)
from .tools import ToolChoice, ToolSpec

# -- gpt_oss (harmony) ---------------------------------------------------------------------------


def _harmony_calls(calls: Sequence[Call]) -> str:
    # The prompt ends with `<|start|>assistant`: the first message continues that header.
    return "<|start|>assistant".join(
        f"<|channel|>commentary to=functions.{c.name} <|constrain|>json<|message|>{dumps(dict(c.arguments))}<|call|>"
        for c in calls
    )


def _harmony_turn(content: str, calls: str) -> str:
    if not content:
        return calls
    preamble = f"<|channel|>commentary<|message|>{content}<|end|>"
    return preamble + ("<|start|>assistant" + calls if calls else "")


def ts_type(spec: Any) -> str:
    """The gpt-oss template's `render_typescript_type`."""
    if not isinstance(spec, JSON_OBJECT):
        return "any"
    kind = spec.get("type")
    nullable = " | null" if spec.get("nullable") else ""
    if kind == "array":
        items = spec.get("items")
        if not isinstance(items, JSON_OBJECT):
            return "any[]" + nullable
        simple = {"string": "string[]", "number": "number[]", "integer": "number[]", "boolean": "boolean[]"}
        item_kind = items.get("type")
        if isinstance(item_kind, str) and item_kind in simple:
            return simple[item_kind] + nullable
        inner = ts_type(items)
        return ("any[]" if inner == "object | object" or len(inner) > 50 else inner + "[]") + nullable
    if isinstance(kind, list) and kind:
        return " | ".join(str(k) for k in kind)
    variants = spec.get("oneOf")
    if isinstance(variants, list) and variants:
        if len(variants) > 1 and any(isinstance(v, JSON_OBJECT) and v.get("type") == "object" for v in variants):
            return "any"
        return " | ".join(ts_type(v) for v in variants)
    if kind == "string":
        enum = spec.get("enum")
        if isinstance(enum, list) and enum:
            return " | ".join(f'"{v}"' for v in enum)
        return "string" + nullable
    if kind in ("number", "integer"):
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "object":
        props = spec.get("properties")
        if isinstance(props, JSON_OBJECT) and props:
            required = spec.get("required") or []
            fields = ", ".join(f"{k}{'' if k in required else '?'}: {ts_type(v)}" for k, v in props.items())
            return "{\n" + fields + "}"
        return "object"
    return "any"


def _harmony_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    out = ["Calls to these tools must go to the commentary channel: 'functions'.\n\n# Tools\n\n"]
    out.append("## functions\n\nnamespace functions {\n\n")
    for tool in tools:
        if tool.description:
            out.append(f"// {tool.description}\n")
        schema = tool.schema()
        props = schema.get("properties")
        if not isinstance(props, JSON_OBJECT) or not props:
            out.append(f"type {tool.name} = () => any;\n\n")
            continue
        required = schema.get("required") or []
        out.append(f"type {tool.name} = (_: {{\n")
        for name, spec in props.items():
            spec = spec if isinstance(spec, JSON_OBJECT) else {}
            if spec.get("description"):
                out.append(f"// {spec['description']}\n")
            line = f"{name}{'' if name in required else '?'}: {ts_type(spec)}"
            if "default" in spec:
                default = spec["default"] if spec.get("enum") else dumps(spec["default"])
                line += f", // default: {default}"
            out.append(line + ",\n")
        out.append("}) => any;\n\n")
    out.append("} // namespace functions")
    return "".join(out)


GPT_OSS = Renderer(calls=_harmony_calls, tools=_harmony_tools, assistant=_harmony_turn)


# -- gemma4 ----------------------------------------------------------------------------------------

STR = '<|"|>'
_BARE_KEY = re.compile(r"[^\s:{}\[\],\"<>|][^:{}\[\],<>|]*(?<!\s)")


def _gemma_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else STR + key + STR


def gemma_value(value: Any, *, upper_types: bool = False) -> str:
    """A JSON value in Gemma's notation: bare keys, `<|"|>` strings, Python-formatted numbers."""
    if isinstance(value, str):
        return STR + value + STR
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, JSON_OBJECT):
        items = []
        for k, v in value.items():
            if upper_types and k == "type":
                v = v.upper() if isinstance(v, str) else [t.upper() if isinstance(t, str) else t for t in v]
            items.append(f"{_gemma_key(str(k))}:{gemma_value(v, upper_types=upper_types)}")
        return "{" + ",".join(items) + "}"
    return "[" + ",".join(gemma_value(v, upper_types=upper_types) for v in value) + "]"


def _gemma_calls(calls: Sequence[Call]) -> str:
    return "".join(f"<|tool_call>call:{c.name}{gemma_value(dict(c.arguments))}<tool_call|>" for c in calls)


def _gemma_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    declarations = "".join(
        f"<|tool>declaration:{t.name}{{description:{STR}{t.description or ''}{STR}"
        f",parameters:{gemma_value(dict(t.schema()), upper_types=True)}}}<tool|>"
        for t in tools
    )
    # The template only declares the tools; the call syntax is spelled out here for a prompt that
    # carries them as text.
    return (
        declarations + "\n\nTo call a function, write <|tool_call>call:NAME{key:value,…}<tool_call|>, "
        f"with each string value between {STR} delimiters."
    )


def gemma_result(result: ToolResult) -> str:
    try:
        value = json.loads(result.output)
    except (ValueError, RecursionError):
        value = None
    name = result.name or "unknown"
    body = gemma_value(value) if isinstance(value, dict) else "{value:" + gemma_value(result.output) + "}"
    return f"<|tool_response>response:{name}{body}<tool_response|>"


GEMMA4 = Renderer(
    calls=_gemma_calls,
    tools=_gemma_tools,
    results=results_joined(gemma_result, ""),
    assistant=lambda c, k: join_turn(c, k, ""),
)


# -- pythonic (Llama 3.2 pythonic, Llama 4, ToolACE) -------------------------------------------------


def _pythonic_calls(calls: Sequence[Call]) -> str:
    if not calls:
        return ""
    items = ", ".join(
        f"{c.name}(" + ", ".join(f"{k}={python_literal(v)}" for k, v in c.arguments.items()) + ")" for c in calls
    )
    return f"[{items}]"


def _pythonic_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    return (
        "You have access to the following functions. To call functions, please respond with a python list of the "
        "calls. Respond in the format [func_name1(params_name1=params_value1, params_name2=params_value2...), "
        "func_name2(params)] Do not use variables.\n\n"
        + "\n\n".join(json.dumps(t.chat_shape(), ensure_ascii=False, indent=4) for t in tools)
    )


PYTHONIC = Renderer(calls=_pythonic_calls, tools=_pythonic_tools)


# -- kimi_k3 (XTML) --------------------------------------------------------------------------------


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;")


def _xtml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object" if isinstance(value, JSON_OBJECT) else "array"


def _k3_call(index: int, call: Call) -> str:
    head = f'<|open|>call tool="{_attr(call.name)}" index="{index}"<|sep|>'
    texts = {k: v if isinstance(v, str) else dumps(v) for k, v in call.arguments.items()}
    if any("<|" in k or "<|" in t for k, t in texts.items()):
        # Markup in a value could end its element: the JSON element, `<` escaped, carries anything.
        body = f'<|open|>json type="object"<|sep|>{dumps_safe(dict(call.arguments))}<|close|>json<|sep|>'
    else:
        body = "".join(
            f'<|open|>argument key="{_attr(k)}" type="{_xtml_type(call.arguments[k])}"<|sep|>{t}'
            "<|close|>argument<|sep|>"
            for k, t in texts.items()
        )
    return head + body + "<|close|>call<|sep|>"


def _k3_calls(calls: Sequence[Call]) -> str:
    if not calls:
        return ""
    return "<|open|>tools<|sep|>" + "".join(_k3_call(i, c) for i, c in enumerate(calls, 1)) + "<|close|>tools<|sep|>"


def _k3_turn(content: str, calls: str) -> str:
    response = f"<|open|>response<|sep|>{content}<|close|>response<|sep|>" if content else ""
    return response + calls


def _k3_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    listing = json.dumps([t.chat_shape() for t in tools], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return (
        "# Tools\nHere are the available tools, described in JSONSchema.\n\n```json\n" + listing + "\n```\n\n"
        'To call tools, write <|open|>tools<|sep|><|open|>call tool="NAME" index="1"<|sep|>'
        '<|open|>argument key="KEY" type="string"<|sep|>VALUE<|close|>argument<|sep|>…<|close|>call<|sep|>'
        "<|close|>tools<|sep|>."
    )


def _k3_choice(choice: ToolChoice) -> str | None:
    """The template's own `tool_choice` messages (it has none for a forced function)."""
    if choice.mode == "none":
        return "The system is invoked with `tool_choice=none`.\nYou MUST NOT call any tools in the next message."
    if choice.mode == "required" and choice.forced is None:
        return "The system is invoked with `tool_choice=required`.\nYou MUST call tools in the next message."
    return None


KIMI_K3 = Renderer(
    calls=_k3_calls,
    tools=_k3_tools,
    results=results_joined(fallback_result),
    assistant=_k3_turn,
    choice=_k3_choice,
)


RENDERERS = {"gpt_oss": GPT_OSS, "gemma4": GEMMA4, "pythonic": PYTHONIC, "kimi_k3": KIMI_K3}

__all__ = ["RENDERERS", "gemma_value"]
