"""The tool manifest and calling rules, in each model's own template wording, with `tool_choice`
and `parallel_tool_calls` spelled out."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolcall_middleware import list_dialects
from toolcall_middleware.core.request import NO_TOOLS, normalize_tools, render_manifest

DIALECTS = [d for d in list_dialects() if d != "auto"]
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
}
TIME = {"type": "function", "function": {"name": "get_time", "description": "Get the time"}}


def manifest(dialect: str, **body: Any) -> str:
    text = render_manifest(dialect, normalize_tools({"tools": [WEATHER, TIME], **body}))
    assert text is not None
    return text


# Phrases each model's chat template writes (Qwen/Hermes, vLLM `examples/tool_chat_template_*.jinja`,
# the models' own templates and encoders): the manifest speaks the model's own words.
TEMPLATE_WORDS = {
    "hermes": [
        "# Tools\n\nYou may call one or more functions to assist with the user query.",
        "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
        + json.dumps(WEATHER, ensure_ascii=False),
        "For each function call, return a json object with function name and arguments within "
        "<tool_call></tool_call> XML tags:\n<tool_call>\n"
        '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>',
    ],
    "qwen3_coder": [
        "# Tools\n\nYou have access to the following functions:\n\n<tools>\n<function>\n<name>get_weather</name>\n"
        "<description>Get the weather</description>\n<parameters>\n<parameter>\n<name>city</name>\n<type>string</type>"
        "\n<description>The city</description>\n</parameter>",
        '\n<required>["city"]</required>\n</parameters>\n</function>',
        "If you choose to call a function ONLY reply in the following format with NO suffix:",
        "- Required parameters MUST be specified",
    ],
    "glm45": [
        "For each function call, output the function name and arguments within the following XML format:\n"
        "<tool_call>{function-name}\n<arg_key>{arg-key-1}</arg_key>\n<arg_value>{arg-value-1}</arg_value>"
    ],
    "inkling": ['<|message_model|>function-name<|content_invoke_tool_json|>{"name": "function-name", "args": '],
    "minicpm5": ['<function name="function-name"><param name="param-name">value</param>...</function>'],
    "poolside_v1": ["<tool_call>{function-name}\n<arg_key>{arg-key-1}</arg_key>\n<arg_value>{arg-value-1}</arg_value>"],
    "glm47": ["<tool_call>{function-name}<arg_key>{arg-key-1}</arg_key><arg_value>{arg-value-1}</arg_value>"],
    "minimax_m2": [
        "# Tools\nYou may call one or more tools to assist with the user query.\n"
        "Here are the tools available in JSONSchema format:\n\n<tools>\n<tool>" + json.dumps(WEATHER["function"]),
        "When making tool calls, use XML format to invoke tools and pass parameters:",
    ],
    "minimax_m3": [
        "# Tools\nYou may call one or more tools to assist with the user query.\n"
        "Here are the tools available in JSONSchema format:\n\n<tools>\n<tool>" + json.dumps(WEATHER["function"]),
        ']<]minimax[>[<invoke name="tool-name">]<]minimax[>[<param-key>param-value]<]minimax[>[</param-key>',
    ],
    "seed_oss": [
        "Function:\ndef get_weather(city: str, days: int):",
        "- city (str) [必填]: The city",
        "工具调用请遵循如下格式",
    ],
    "deepseek_v3": ["For function call returns, you should first print <｜tool▁calls▁begin｜>"],
    "deepseek_v31": [
        "## Tools\nYou have access to the following tools:\n\n### get_weather\nDescription: Get the weather",
        "IMPORTANT: ALWAYS adhere to this exact format for tool use:",
    ],
    "deepseek_v32": ['You can invoke functions by writing a "<｜DSML｜function_calls>" block', "<functions>\n"],
    "deepseek_v4": ['You can invoke tools by writing a "<｜DSML｜tool_calls>" block', "### Available Tool Schemas"],
    "mistral": ["[AVAILABLE_TOOLS] [" + json.dumps(WEATHER), "format them in a single JSON array"],
    "llama3_json": ['Respond in the format {"name": function name, "parameters": dictionary of argument name'],
    "llama_function": ["Use the function 'get_weather' to: Get the weather", "start_tag => `<function`"],
    "pythonic": ["please respond with a python list of the calls"],
    "gpt_oss": [
        "Calls to these tools must go to the commentary channel: 'functions'.",
        "namespace functions {\n\n// Get the weather\ntype get_weather = (_: {\n// The city\ncity: string,\n"
        "days?: number,\n}) => any;\n\n// Get the time\ntype get_time = () => any;\n\n} // namespace functions",
    ],
    "gemma4": [
        '<|tool>declaration:get_weather{description:<|"|>Get the weather<|"|>,parameters:{type:<|"|>OBJECT<|"|>'
    ],
    "kimi_k2": ["<|tool_calls_section_begin|>"],
    "kimi_k3": ["# Tools\nHere are the available tools, described in JSONSchema.\n\n```json\n[{"],
    "generic_json": ["Respond in JSON format, either with `tool_call`"],
    "granite": [
        "<|start_of_role|>available_tools<|end_of_role|>\n" + json.dumps(WEATHER, ensure_ascii=False, indent=4)
    ],
    "granite_20b_fc": [
        "You are a helpful assistant with access to the following function calls. Your task is to understand the "
        "given conversation with function calls and responses",
        "<|function_call_library|>\n{",
    ],
    "jamba": ["<tool_calls>[{"],
    "nemotron": [
        "You can use the following tools to assist the user if required:\n<AVAILABLE_TOOLS>["
        + json.dumps(WEATHER["function"]),
        "The user will execute tool-calls and return responses from tool(s) in this format:\n<TOOL_RESPONSE>",
    ],
    "hunyuan_a13b": ["你是一位函数组合专家。", "如果你决定调用任何函数，你必须将其格式化为<tool_calls>"],
    "phi4_mini": [
        "  * prefix function calls with functools marker (no closing marker required)\n"
        "  * all function calls should be generated in a single JSON list formatted as functools[",
        json.dumps(WEATHER, ensure_ascii=False, indent=4),
    ],
    "firefunction_v2": [
        "You are a helpful assistant with access to functions.",
        "prefix function calls with functools",
    ],
    "minimax_m1": [
        "You are provided with these tools:\n<tools>\n" + json.dumps(WEATHER, ensure_ascii=False),
        "If you need to call tools, please respond with <tool_calls></tool_calls> XML tags",
    ],
    "cohere_command": ["## Available Tools\nHere is a list of tools that you have available to you."],
    "apertus": [
        "Tool Capabilities:\n// Get the weather\ntype get_weather = (_: {\n// The city\ncity: string,\n"
        "days?: number\n}) => any;"
    ],
    "longcat": ["<longcat_tool_call>"],
    "olmo3": [
        "You have access to the following functions. To call functions, respond with a pythonic function call "
        "wrapped in <function_calls></function_calls> XML tags.",
        "Here are the available functions:\n<functions>\n" + json.dumps(WEATHER["function"]),
    ],
    "lfm2": ["List of tools: <|tool_list_start|>[" + json.dumps(WEATHER["function"])],
    "functiongemma": [
        "You are a model that can do function calling with the following functions"
        "<start_function_declaration>declaration:get_weather{description:<escape>Get the weather<escape>"
    ],
    "step3": ['<steptml:invoke name="NAME">'],
    "xlam": [
        "You have access to a set of tools. When using tools, make calls in a single JSON array: \n\n"
        '[{"name": "tool_call_name", "arguments": {"arg1": "value1", "arg2": "value2"}}',
        json.dumps(WEATHER, ensure_ascii=False, indent=4),
    ],
    "functionary_v3_2": ["Respond in this format:\n>>>${recipient}\n${content}"],
    "internlm2": ["<|action_start|><|plugin|>\n", json.dumps([WEATHER["function"]])[:40]],
    "hunyuan_v3": ["<tool_call>{function-name}<tool_sep>\n<arg_key>{arg-key-1}</arg_key>"],
    "gigachat3": [
        "namespace functions {\n// Get the weather\ntype get_weather = (_: {\ncity: string, days?: number}) => any;",
        "function call<|role_sep|>",
    ],
}


def test_every_dialect_has_its_template_wording() -> None:
    assert set(TEMPLATE_WORDS) == set(DIALECTS)
    for dialect, phrases in TEMPLATE_WORDS.items():
        text = manifest(dialect)
        for phrase in phrases:
            assert phrase in text, (dialect, phrase)
        assert "get_weather" in text and "get_time" in text


@pytest.mark.parametrize("dialect", DIALECTS)
def test_tool_choice_and_parallel_are_spelled_out(dialect: str) -> None:
    auto = manifest(dialect)
    assert "must call" not in auto.lower() and "at most one" not in auto

    required = manifest(dialect, tool_choice="required")
    assert required.startswith(auto)
    assert "must call" in required.lower()

    forced = manifest(dialect, tool_choice={"type": "function", "function": {"name": "get_time"}})
    assert "You must call the function `get_time` in this response, and no other function." in forced
    assert "get_weather" not in forced  # only the forced tool is offered

    single = manifest(dialect, parallel_tool_calls=False)
    assert single.endswith("Call at most one function in this response.")

    none = manifest(dialect, tool_choice="none")
    assert "get_weather" not in none and "get_time" not in none
    assert none == NO_TOOLS or "MUST NOT call any tools" in none


def test_kimi_k3_uses_its_templates_own_choice_messages() -> None:
    assert manifest("kimi_k3", tool_choice="required").endswith(
        "The system is invoked with `tool_choice=required`.\nYou MUST call tools in the next message."
    )
    assert manifest("kimi_k3", tool_choice="none") == (
        "The system is invoked with `tool_choice=none`.\nYou MUST NOT call any tools in the next message."
    )


def test_allowed_tools_offers_the_subset() -> None:
    allowed = {"type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "get_weather"}]}
    text = manifest("hermes", tool_choice=allowed)
    assert "get_weather" in text and "get_time" not in text
    assert "You must call at least one of the functions above in this response." in text


def test_no_function_tools_no_manifest() -> None:
    for dialect in DIALECTS:
        assert render_manifest(dialect, normalize_tools({})) is None
        assert render_manifest(dialect, normalize_tools({"tools": [{"type": "web_search"}]})) is None


def test_llama_function_says_one_at_a_time_only_when_it_must() -> None:
    assert "- Only call one function at a time" not in manifest("llama_function")
    assert "- Only call one function at a time" in manifest("llama_function", parallel_tool_calls=False)


NAMES = st.lists(st.from_regex(r"tool_[a-z]{6}", fullmatch=True), min_size=1, max_size=5, unique=True)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(DIALECTS), NAMES, st.data())
def test_the_manifest_offers_exactly_the_offered_tools(dialect: str, names: list[str], data: st.DataObject) -> None:
    tools = [{"type": "function", "function": {"name": n, "description": f"does {n}"}} for n in names]
    allowed = data.draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
    choice = data.draw(
        st.sampled_from(
            [
                "auto",
                "required",
                "none",
                {"type": "function", "function": {"name": allowed[0]}},
                {
                    "type": "allowed_tools",
                    "allowed_tools": {
                        "mode": "auto",
                        "tools": [{"type": "function", "function": {"name": n}} for n in allowed],
                    },
                },
            ]
        )
    )
    toolset = normalize_tools({"tools": tools, "tool_choice": choice})
    text = render_manifest(dialect, toolset)
    assert text is not None
    offered = {t.name for t in toolset.offered}
    for name in names:
        assert (name in text) == (name in offered), (dialect, name, choice)
