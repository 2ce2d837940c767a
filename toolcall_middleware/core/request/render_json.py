"""Renderers of the dialects whose calls carry their arguments as one JSON object.

`hermes`, `llama3_json`, `llama_function`, `mistral`, `deepseek_v3`, `deepseek_v31`, `kimi_k2` and
`generic_json`. The manifest wording is each model's chat template's (the Qwen/Hermes template,
vLLM's `examples/tool_chat_template_*.jinja`, the models' own templates), so the model reads the
tools the way it was trained to; the rules for `tool_choice` and parallel calls are added by
`render`. JSON inside these formats needs no escaping: every parser ends the arguments at a marker
found outside JSON strings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from .render_base import Call, Renderer, ToolResult, alnum_id, dumps, join_turn, results_joined
from .tools import ToolSpec


def _tool_lines(tools: Sequence[ToolSpec], indent: int | None = None, sep: str = "\n") -> str:
    if indent is None:
        return sep.join(dumps(t.chat_shape()) for t in tools)
    return sep.join(json.dumps(t.chat_shape(), ensure_ascii=False, indent=indent) for t in tools)


def tool_response(result: ToolResult) -> str:
    """`<tool_response>…</tool_response>`: Qwen2.5/3, Hermes, Qwen3-Coder and GLM tool results."""
    return f"<tool_response>\n{result.output}\n</tool_response>"


# -- hermes (Qwen2.5/Qwen3 template) -----------------------------------------------------------


def _hermes_calls(calls: Sequence[Call]) -> str:
    return "\n".join(
        f'<tool_call>\n{{"name": {dumps(c.name)}, "arguments": {dumps(dict(c.arguments))}}}\n</tool_call>'
        for c in calls
    )


def hermes_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    return (
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
        + _tool_lines(tools)
        + "\n</tools>\n\nFor each function call, return a json object with function name and arguments "
        "within <tool_call></tool_call> XML tags:\n<tool_call>\n"
        '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
    )


HERMES = Renderer(calls=_hermes_calls, tools=hermes_tools, results=results_joined(tool_response))


# -- llama3_json (Llama 3.1/3.2/3.3 JSON template) ------------------------------------------------


def _llama3_calls(calls: Sequence[Call]) -> str:
    # The tag makes a call after prose a call; several calls are joined by `; `.
    body = "; ".join(f'{{"name": {dumps(c.name)}, "parameters": {dumps(dict(c.arguments))}}}' for c in calls)
    return "<|python_tag|>" + body if calls else ""


def _llama3_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    return (
        "You have access to the following functions. To call a function, please respond with JSON for a "
        'function call. Respond in the format {"name": function name, "parameters": dictionary of argument '
        "name and its value}. Do not use variables.\n\n" + _tool_lines(tools, indent=4, sep="\n\n")
    )


LLAMA3_JSON = Renderer(calls=_llama3_calls, tools=_llama3_tools, assistant=lambda c, k: join_turn(c, k, ""))


# -- llama_function (Llama 3.1 user-defined custom tools, Functionary v3.1) ---------------------------


def _function_calls(calls: Sequence[Call]) -> str:
    return "".join(f"<function={c.name}>{dumps(dict(c.arguments))}</function>" for c in calls)


def _function_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    listing = "".join(
        f"Use the function '{t.name}' to: {t.description or ''}\n"
        + json.dumps(t.function(), ensure_ascii=False, indent=4)
        + "\n\n"
        for t in tools
    )
    one_at_a_time = "- Only call one function at a time\n" if not parallel else ""
    return (
        "You have access to the following functions:\n\n"
        + listing
        + "If a you choose to call a function ONLY reply in the following format:\n"
        "<{start_tag}={function_name}>{parameters}{end_tag}\nwhere\n\nstart_tag => `<function`\n"
        "parameters => a JSON dict with the function argument name as key and function argument value as value.\n"
        "end_tag => `</function>`\n\nHere is an example,\n"
        '<function=example_function_name>{"example_name": "example_value"}</function>\n\n'
        "Reminder:\n- Function calls MUST follow the specified format\n- Required parameters MUST be specified\n"
        + one_at_a_time
        + "- Put the entire function call reply on one line\n"
        "- Always use the information returned by the function to answer to the user\n"
        "- If there is no relevant function available, do NOT call any function: respond directly to the user"
    )


LLAMA_FUNCTION = Renderer(calls=_function_calls, tools=_function_tools, assistant=lambda c, k: join_turn(c, k, ""))


# -- mistral ([TOOL_CALLS] JSON array, the v3 tokenizer layout; the parser reads v11 too) -----------

_MISTRAL_ID = re.compile(r"[A-Za-z0-9]{9}")


def _mistral_id(call_id: str, name: str, n: int) -> str:
    return call_id if _MISTRAL_ID.fullmatch(call_id) else alnum_id(call_id or f"{name}:{n}")


def _mistral_calls(calls: Sequence[Call]) -> str:
    items = ", ".join(
        f'{{"name": {dumps(c.name)}, "arguments": {dumps(dict(c.arguments))}, '
        f'"id": {dumps(_mistral_id(c.id, c.name, i))}}}'
        for i, c in enumerate(calls)
    )
    return f"[TOOL_CALLS] [{items}]" if calls else ""


def _mistral_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    return (
        "You are a helpful assistant that can call tools. If you call one or more tools, format them in a single "
        "JSON array or objects, where each object is a tool call, not as separate objects outside of an array or "
        'multiple arrays. Use the format [{"name": tool call name, "arguments": tool call arguments}, additional '
        "tool calls] if you call more than one tool. If you call tools, do not attempt to interpret them or "
        "otherwise provide a response until you receive a tool call result that you can interpret for the user."
        "\n\n[AVAILABLE_TOOLS] [" + _tool_lines(tools, sep=", ") + "][/AVAILABLE_TOOLS]"
    )


def _mistral_result(result: ToolResult) -> str:
    try:
        content = json.loads(result.output)
    except (ValueError, RecursionError):
        content = result.output
    return "[TOOL_RESULTS] " + dumps({"content": content, "call_id": result.call_id}) + "[/TOOL_RESULTS]"


MISTRAL = Renderer(
    calls=_mistral_calls,
    tools=_mistral_tools,
    results=results_joined(_mistral_result, ""),
    assistant=lambda c, k: join_turn(c, k, ""),
    native_id=_mistral_id,
    prepend=True,  # the template puts its tool prompt before the system message
)


# -- deepseek_v3 (V3-0324, R1) and deepseek_v31 ----------------------------------------------------------

CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
CALLS_END = "<｜tool▁calls▁end｜>"
CALL_BEGIN = "<｜tool▁call▁begin｜>"
CALL_END = "<｜tool▁call▁end｜>"
SEP = "<｜tool▁sep｜>"
OUTPUTS_BEGIN = "<｜tool▁outputs▁begin｜>"
OUTPUTS_END = "<｜tool▁outputs▁end｜>"
OUTPUT_BEGIN = "<｜tool▁output▁begin｜>"
OUTPUT_END = "<｜tool▁output▁end｜>"


def _v3_calls(calls: Sequence[Call]) -> str:
    body = "\n".join(
        f"{CALL_BEGIN}function{SEP}{c.name}\n```json\n{dumps(dict(c.arguments))}\n```{CALL_END}" for c in calls
    )
    return CALLS_BEGIN + body + CALLS_END if calls else ""


def _v3_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    return (
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
        + _tool_lines(tools)
        + f"\n</tools>\n\nFor function call returns, you should first print {CALLS_BEGIN}\n"
        f"For each function call, you should return object like:\n{CALL_BEGIN}function{SEP}<function_name>\n"
        f"```json\n<function_arguments_in_json_format>\n```{CALL_END}\n"
        f"At the end of function call returns, you should print {CALLS_END}"
    )


def _v3_results(results: Sequence[ToolResult]) -> str:
    body = "\n".join(f"{OUTPUT_BEGIN}{r.output}{OUTPUT_END}" for r in results)
    return OUTPUTS_BEGIN + body + OUTPUTS_END


DEEPSEEK_V3 = Renderer(
    calls=_v3_calls, tools=_v3_tools, results=_v3_results, assistant=lambda c, k: join_turn(c, k, "")
)


def _v31_calls(calls: Sequence[Call]) -> str:
    body = "".join(f"{CALL_BEGIN}{c.name}{SEP}{dumps(dict(c.arguments))}{CALL_END}" for c in calls)
    return CALLS_BEGIN + body + CALLS_END if calls else ""


def _v31_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    listing = "".join(
        f"### {t.name}\nDescription: {t.description or ''}\n\nParameters: {dumps(dict(t.schema()))}\n\n" for t in tools
    )
    return (
        "## Tools\nYou have access to the following tools:\n\n"
        + listing
        + "IMPORTANT: ALWAYS adhere to this exact format for tool use:\n"
        f"{CALLS_BEGIN}{CALL_BEGIN}tool_call_name{SEP}tool_call_arguments{CALL_END}{{{{additional_tool_calls}}}}"
        f"{CALLS_END}\n\nWhere:\n\n- `tool_call_name` must be an exact match to one of the available tools\n"
        "- `tool_call_arguments` must be valid JSON that strictly follows the tool's Parameters Schema\n"
        "- For multiple tool calls, chain them directly without separators or spaces"
    )


DEEPSEEK_V31 = Renderer(
    calls=_v31_calls,
    tools=_v31_tools,
    results=lambda rs: "".join(f"{OUTPUT_BEGIN}{r.output}{OUTPUT_END}" for r in rs),
    assistant=lambda c, k: join_turn(c, k, ""),
)


# -- kimi_k2 -------------------------------------------------------------------------------------

_KIMI_ID = re.compile(r"(?:functions\.)?(.+):[0-9]+")


def _kimi_id(call_id: str, name: str, n: int) -> str:
    """`functions.NAME:N`, N counting calls across the conversation: the id K2 was trained on."""
    m = _KIMI_ID.fullmatch(call_id)
    return call_id if m is not None and m.group(1) == name else f"functions.{name}:{n}"


def _kimi_calls(calls: Sequence[Call]) -> str:
    body = "".join(
        f"<|tool_call_begin|>{_kimi_id(c.id, c.name, i)}<|tool_call_argument_begin|>{dumps(dict(c.arguments))}"
        "<|tool_call_end|>"
        for i, c in enumerate(calls)
    )
    return f"<|tool_calls_section_begin|>{body}<|tool_calls_section_end|>" if calls else ""


def _kimi_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    # The template declares the tools as one JSON list in a `tool_declare` message and says no more;
    # the call syntax is spelled out here because no template slot carries it.
    return (
        "# Tools\n\nThe available tools, declared in JSON:\n" + dumps([t.chat_shape() for t in tools]) + "\n\n"
        "To call tools, write <|tool_calls_section_begin|>, then for each call <|tool_call_begin|>"
        "functions.NAME:INDEX<|tool_call_argument_begin|>{JSON arguments}<|tool_call_end|>, then "
        "<|tool_calls_section_end|>. INDEX counts the tool calls of the conversation from 0."
    )


KIMI_K2 = Renderer(
    calls=_kimi_calls,
    tools=_kimi_tools,
    results=results_joined(lambda r: f"## Return of {r.call_id}\n{r.output}", "\n\n"),
    assistant=lambda c, k: join_turn(c, k, ""),
    native_id=_kimi_id,
)


# -- generic_json (llama.cpp's generic, grammar-forced JSON) ------------------------------------------


def _generic_calls(calls: Sequence[Call]) -> str:
    items = ", ".join(
        f'{{"name": {dumps(c.name)}, "arguments": {dumps(dict(c.arguments))}'
        + (f', "id": {dumps(c.id)}' if c.id else "")
        + "}"
        for c in calls
    )
    return f'{{"tool_calls": [{items}]}}' if calls else ""


def _generic_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    return (
        "Respond in JSON format, either with `tool_call` (a request to call tools) or with `response` reply to "
        "the user's request.\n\nThe tools you can call:\n" + _tool_lines(tools) + "\n\n"
        'To call tools, the whole reply is {"tool_calls": [{"name": <function-name>, "arguments": '
        '<args-json-object>}]}; otherwise it is {"response": <your reply>}.'
    )


def _generic_turn(content: str, calls: str) -> str:
    # The whole output is one JSON object; text after it is content, text before it is not a call.
    return join_turn(calls, content)


GENERIC_JSON = Renderer(calls=_generic_calls, tools=_generic_tools, assistant=_generic_turn)


RENDERERS = {
    "hermes": HERMES,
    "llama3_json": LLAMA3_JSON,
    "llama_function": LLAMA_FUNCTION,
    "mistral": MISTRAL,
    "deepseek_v3": DEEPSEEK_V3,
    "deepseek_v31": DEEPSEEK_V31,
    "kimi_k2": KIMI_K2,
    "generic_json": GENERIC_JSON,
}

__all__ = ["RENDERERS", "hermes_tools", "tool_response"]
