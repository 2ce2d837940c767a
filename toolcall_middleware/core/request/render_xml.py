"""Renderers of the dialects that write each argument as its own XML-style element.

`qwen3_coder`, `seed_oss`, `minimax_m2`, `glm45` and `glm47` (DeepSeek's DSML is in `render_dsml`).
A string value is written raw, anything else as JSON, as the templates write them; the parsers
type the text back by the tool's schema. Where a format has no way to write a value losslessly,
the renderer takes the format's other spelling: qwen3_coder falls back to its hermes JSON body,
which carries any value. Values the remaining
formats cannot carry (glm's `</arg_value><arg_key>`, seed/minimax's `</parameter>` before the next
parameter, minimax's edge newlines) are written as the template would, and read back differently:
the models' own formats have no escape for them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..schema import JSON_OBJECT
from .render_base import Call, Renderer, dumps, join_turn, results_joined, value_text
from .render_json import tool_response
from .tools import ToolSpec

# -- qwen3_coder (Qwen3-Coder, Qwen3.5+) -------------------------------------------------------------

_QWEN_UNSAFE = ("</parameter>", "<parameter=", "</function>", "</tool_call>")


def _qwen_xml_ok(call: Call) -> bool:
    """Whether the XML body carries the call exactly (names on one line, no markers in a value)."""
    names = [call.name, *call.arguments]
    if any(ch in n for n in names for ch in "<>\n") or any(n != n.strip() or not n for n in names):
        return False
    values = call.arguments.values()
    if any(isinstance(v, str) and v.strip().lower() == "null" for v in values):
        return False  # the text `null` reads back as a null
    return not any(m in value_text(v) for v in values for m in _QWEN_UNSAFE)


def _qwen_call(call: Call) -> str:
    if not _qwen_xml_ok(call):
        # The same block also reads hermes JSON, which carries any value.
        return f'<tool_call>\n{{"name": {dumps(call.name)}, "arguments": {dumps(dict(call.arguments))}}}\n</tool_call>'
    params = "".join(f"<parameter={k}>\n{value_text(v)}\n</parameter>\n" for k, v in call.arguments.items())
    return f"<tool_call>\n<function={call.name}>\n{params}</function>\n</tool_call>"


def _extra_keys(obj: Any, handled: Sequence[str]) -> str:
    """The template's `render_extra_keys`: keys it has no slot for, as `<key>value</key>` lines."""
    if not isinstance(obj, JSON_OBJECT):
        return ""
    out = []
    for key, value in obj.items():
        if key in handled:
            continue
        text = dumps(value) if isinstance(value, (Mapping, list)) else str(value)
        out.append(f"\n<{key}>{text}</{key}>")
    return "".join(out)


def _qwen_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    parts = ["# Tools\n\nYou have access to the following functions:\n\n<tools>"]
    for tool in tools:
        parts.append(f"\n<function>\n<name>{tool.name}</name>")
        if tool.description is not None:
            parts.append(f"\n<description>{tool.description.strip()}</description>")
        parts.append("\n<parameters>")
        schema = tool.schema()
        props = schema.get("properties")
        if isinstance(props, JSON_OBJECT):
            for pname, fields in props.items():
                parts.append(f"\n<parameter>\n<name>{pname}</name>")
                if isinstance(fields, JSON_OBJECT):
                    if "type" in fields:
                        parts.append(f"\n<type>{fields['type']}</type>")
                    if isinstance(fields.get("description"), str):
                        parts.append(f"\n<description>{fields['description'].strip()}</description>")
                parts.append(_extra_keys(fields, ("name", "type", "description")) + "\n</parameter>")
        parts.append(_extra_keys(schema, ("type", "properties")) + "\n</parameters>\n</function>")
    parts.append(
        "\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n"
        "<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n"
        "<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n"
        "</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n"
        "- Function calls MUST follow the specified format: an inner <function=...></function> block must be "
        "nested within <tool_call></tool_call> XML tags\n- Required parameters MUST be specified\n"
        "- You may provide optional reasoning for your function call in natural language BEFORE the function "
        "call, but NOT after\n- If there is no function call available, answer the question like normal with your "
        "current knowledge and do not tell the user about function calls\n</IMPORTANT>"
    )
    return "".join(parts)


QWEN3_CODER = Renderer(
    calls=lambda calls: "\n".join(_qwen_call(c) for c in calls),
    tools=_qwen_tools,
    results=results_joined(tool_response),
    assistant=lambda c, k: join_turn(c, k, "\n\n"),
)


# -- seed_oss ------------------------------------------------------------------------------------


def _edge_newlines(text: str) -> str:
    """A value between its tags, with a layout newline on a side where the value has its own.

    The parser drops one newline on each side of a value, which the template writes only there.
    """
    return ("\n" if text.startswith("\n") else "") + text + ("\n" if text.endswith("\n") else "")


def _seed_calls(calls: Sequence[Call]) -> str:
    out = []
    for c in calls:
        params = "".join(
            f"<parameter={k}>{_edge_newlines(value_text(v))}</parameter>\n" for k, v in c.arguments.items()
        )
        out.append(f"<seed:tool_call>\n<function={c.name}>\n{params}</function>\n</seed:tool_call>")
    return "\n".join(out)


_PY_TYPES = {"string": "str", "number": "int", "integer": "int", "boolean": "bool", "array": "list"}


def _seed_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    # The template's default tool listing: Python signatures with docstrings (必填 = required,
    # 选填 = optional), and its call-format line (工具调用请遵循如下格式 = "tool calls follow this format").
    blocks = []
    for tool in tools:
        schema = tool.schema()
        props = schema.get("properties")
        props = props if isinstance(props, JSON_OBJECT) else {}
        listed = schema.get("required")
        required: list[Any] = listed if isinstance(listed, list) else []

        def py(spec: Any) -> str:
            kind = spec.get("type") if isinstance(spec, JSON_OBJECT) else None
            return _PY_TYPES.get(kind, "Any") if isinstance(kind, str) else "Any"

        signature = ", ".join(f"{name}: {py(spec)}" for name, spec in props.items())
        doc = f'    """\n    {(tool.description or "").strip()}\n'
        if props:
            doc += "\n    Args:\n" + "".join(
                f"    - {name} ({py(spec)}) {'[必填]' if name in required else '[选填]'}: "
                f"{(spec.get('description') or '') if isinstance(spec, JSON_OBJECT) else ''}\n"
                for name, spec in props.items()
            )
        blocks.append(f'Function:\ndef {tool.name}({signature}):\n{doc}    """')
    return (
        "You may call one or more functions to assist with the user query.\n\n"
        + "\n\n".join(blocks)
        + "\n\n工具调用请遵循如下格式:\n<seed:tool_call>\n<function=example_function_name>\n"
        "<parameter=example_parameter_1>value_1</parameter>\n<parameter=example_parameter_2>This is the value for "
        "the second parameter\nthat can span\nmultiple lines</parameter>\n</function>\n</seed:tool_call>"
    )


SEED_OSS = Renderer(calls=_seed_calls, tools=_seed_tools, assistant=lambda c, k: join_turn(c, k, "\n\n"))


# -- minimax_m2 -----------------------------------------------------------------------------------


def _minimax_calls(calls: Sequence[Call]) -> str:
    if not calls:
        return ""
    body = "".join(
        f'<invoke name="{c.name}">\n'
        + "".join(f'<parameter name="{k}">{value_text(v)}</parameter>\n' for k, v in c.arguments.items())
        + "</invoke>\n"
        for c in calls
    )
    return f"<minimax:tool_call>\n{body}</minimax:tool_call>"


def _minimax_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    listing = "".join(f"<tool>{dumps(t.function())}</tool>\n" for t in tools)
    return (
        "# Tools\nYou may call one or more tools to assist with the user query.\n"
        "Here are the tools available in JSONSchema format:\n\n<tools>\n" + listing + "</tools>\n\n"
        "When making tool calls, use XML format to invoke tools and pass parameters:\n\n<minimax:tool_call>\n"
        '<invoke name="tool-name-1">\n<parameter name="param-key-1">param-value-1</parameter>\n'
        '<parameter name="param-key-2">param-value-2</parameter>\n...\n</invoke>\n</minimax:tool_call>'
    )


MINIMAX_M2 = Renderer(
    calls=_minimax_calls,
    tools=_minimax_tools,
    results=results_joined(lambda r: f"<response>{r.output}</response>"),
)


# -- glm45 / glm47 --------------------------------------------------------------------------------


def _glm_calls(newlines: bool) -> Callable[[Sequence[Call]], str]:
    nl = "\n" if newlines else ""

    def render(calls: Sequence[Call]) -> str:
        return nl.join(
            f"<tool_call>{c.name}{nl}"
            + "".join(
                f"<arg_key>{k}</arg_key>{nl}<arg_value>{value_text(v)}</arg_value>{nl}" for k, v in c.arguments.items()
            )
            + "</tool_call>"
            for c in calls
        )

    return render


def _glm_tools(newlines: bool) -> Callable[[Sequence[ToolSpec], bool], str]:
    nl = "\n" if newlines else ""

    def render(tools: Sequence[ToolSpec], parallel: bool) -> str:
        return (
            "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
            "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
            + "\n".join(dumps(t.chat_shape()) for t in tools)
            + "\n</tools>\n\nFor each function call, output the function name and arguments within the following "
            f"XML format:\n<tool_call>{{function-name}}{nl}<arg_key>{{arg-key-1}}</arg_key>{nl}"
            f"<arg_value>{{arg-value-1}}</arg_value>{nl}<arg_key>{{arg-key-2}}</arg_key>{nl}"
            f"<arg_value>{{arg-value-2}}</arg_value>{nl}...{nl}</tool_call>"
        )

    return render


GLM45 = Renderer(calls=_glm_calls(True), tools=_glm_tools(True), results=results_joined(tool_response))
GLM47 = Renderer(
    calls=_glm_calls(False),
    tools=_glm_tools(False),
    results=results_joined(tool_response),
    assistant=lambda c, k: join_turn(c, k, ""),
)


RENDERERS = {
    "qwen3_coder": QWEN3_CODER,
    "seed_oss": SEED_OSS,
    "minimax_m2": MINIMAX_M2,
    "glm45": GLM45,
    "glm47": GLM47,
}

__all__ = ["RENDERERS"]
