"""Rendering calls in every dialect's own raw text: what the renderer writes, the parser reads back.

For every registered dialect but `auto`, random calls (random names, random JSON objects with
quotes, newlines, unicode and other formats' markers in their strings) are rendered with
`render_calls` and parsed with the dialect's parser: the names and arguments come back the same.
The XML-style dialects type their raw values by the request's tool schemas, so the parse gets the
schemas of the rendered calls, as the response side does. A few formats have no escape for some
values (Gemma's `<|"|>` string delimiter inside a string, a glm value holding `</arg_value>`, a
seed/minimax value holding `</parameter>`, minimax's and step3's edge newlines, a Python keyword as
a pythonic, olmo3 or lfm2 keyword argument, FunctionGemma's `<escape>` delimiter or end marker in
a string, a MiniMax-M3 value nested in an argument that is not a string or a container, since its
nested elements are typed by nested schemas only); those values are excluded for those formats
only, and shown to break.
"""

from __future__ import annotations

import json
import keyword
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolcall_middleware import list_dialects, parse
from toolcall_middleware.core.dialects import UnknownDialectError
from toolcall_middleware.core.dialects._rendering import value_text
from toolcall_middleware.core.request import (
    BadRequest,
    ToolResult,
    native_call_id,
    render_assistant,
    render_calls,
    render_tool_result,
    render_tool_results,
    rendered_dialects,
)

DIALECTS = [d for d in list_dialects() if d != "auto"]

# Markers of every format, to appear inside values.
MARKERS = [
    "<tool_call>",
    "</tool_call>",
    "<function=f>",
    "</function>",
    "<parameter=k>",
    "</parameter>",
    "<arg_key>",
    "</arg_key>",
    "<arg_value>",
    "</arg_value>",
    "<|tool_calls_section_begin|>",
    "<|tool_call_end|>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁calls▁end｜>",
    "```",
    "```json\n",
    "[TOOL_CALLS]",
    "[ARGS]",
    "<|call|>",
    "<|end|>",
    "<|start|>assistant",
    "<|channel|>",
    "<tool_call|>",
    "<|tool_call>",
    "<|close|>argument<|sep|>",
    "<|open|>argument",
    "<|close|>call<|sep|>",
    "</｜DSML｜parameter>",
    '<｜DSML｜invoke name="f">',
    "</minimax:tool_call>",
    "</invoke>",
    '<invoke name="x">',
    "</seed:tool_call>",
    "<|python_tag|>",
    "<|eom_id|>",
    "<|eot_id|>",
    "; ",
    "]",
    "}",
    ")",
    "'",
    '"',
    "\\",
    "\n",
    "\r\n",
    '{"name": "x"}',
    "<think>",
    "</think>",
    "&amp;",
    "&quot;",
]
TEXT = st.lists(st.one_of(st.text(max_size=12), st.sampled_from(MARKERS)), max_size=5).map("".join)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    TEXT,
)
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3), max_leaves=8
)
KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)
NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True)
ARGS = st.dictionaries(KEYS, VALUES, max_size=5)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def carries(dialect: str, name: str, args: Mapping[str, Any]) -> bool:
    """Whether the dialect's format has a way to write these arguments (see the module doc)."""
    texts = [value_text(v) for v in args.values()]
    parameter_formats = ("seed_oss", "minimax_m2", "glm45", "glm47", "step3", "hunyuan_v3", "poolside_v1", "minicpm5")
    if dialect in parameter_formats and any(isinstance(v, str) and v.strip().lower() == "null" for v in args.values()):
        return False  # a value that reads `null` is a null in the parameter formats
    if dialect == "gemma4":
        return not any('<|"|>' in s for s in _strings(args))
    if dialect == "minicpm5":
        return not any("]]>" in t or "</function>" in t for t in texts)
    if dialect in ("glm45", "glm47", "hunyuan_v3", "poolside_v1"):
        return not any("</arg_value>" in t for t in texts)
    if dialect == "seed_oss":
        return not any(m in t for t in texts for m in ("</parameter>", "<parameter=", "</function>"))
    if dialect == "minimax_m2":
        return not any("</parameter>" in t or t != t.strip("\n") for t in texts)
    if dialect in ("pythonic", "olmo3", "lfm2"):
        return not keyword.iskeyword(name) and not any(keyword.iskeyword(k) for k in args)
    if dialect == "functiongemma":
        return not any(m in s for s in _strings(args) for m in ("<escape>", '<|"|>', "<end_function_call>"))
    if dialect == "step3":
        return not any("</steptml:parameter>" in t or t != t.strip("\n") for t in texts)
    if dialect == "minimax_m3":
        strings_ok = not any("]<]minimax[>[" in s or s.strip().lower() == "null" for s in _strings(args))
        return strings_ok and all(_m3_argument(v) for v in args.values())
    return True


def _m3_tags(value: Mapping[str, Any]) -> bool:
    return all(k and not any(c.isspace() or c in "<>/\"'=" for c in k) for k in value)  # keys are tag names


def _m3_argument(value: Any) -> bool:
    """An argument the request's schema types at its top; its members and items, nested ones."""
    if isinstance(value, dict):
        return _m3_tags(value) and all(_m3_nested(v) for v in value.values())
    if isinstance(value, list):
        return all(_m3_nested(v) for v in value)
    return True


def _m3_nested(value: Any) -> bool:
    """MiniMax-M3 writes a nested value as elements that only a nested schema types: a string (not
    empty: an empty element is a container), or a container of such values (an object whose keys
    are all `item` reads as a list, an empty list as an object)."""
    if isinstance(value, str):
        return value != ""
    if isinstance(value, dict):
        items = bool(value) and all(k == "item" for k in value)
        return _m3_tags(value) and not items and all(_m3_nested(v) for v in value.values())
    if isinstance(value, list):
        return bool(value) and all(_m3_nested(v) for v in value)
    return False


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object" if isinstance(value, Mapping) else "array"


def tools_for(calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The tool schemas a request offering these calls would carry."""
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "parameters": {"type": "object", "properties": {k: {"type": json_type(v)} for k, v in args.items()}},
            },
        }
        for name, args in calls
    ]


def canonical(value: Any) -> str:
    """JSON text that tells `1` from `1.0` from `true`."""
    return json.dumps(value, sort_keys=True)


def test_every_dialect_but_auto_has_a_renderer() -> None:
    assert rendered_dialects() == DIALECTS
    with pytest.raises(UnknownDialectError):
        render_calls("auto", [])
    with pytest.raises(UnknownDialectError, match="dialects are"):
        render_calls("no_such_dialect", [])


@pytest.mark.parametrize("dialect", DIALECTS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_rendered_calls_parse_back_to_the_same_calls(dialect: str, data: st.DataObject) -> None:
    raw = data.draw(st.lists(st.tuples(NAMES, ARGS), min_size=1, max_size=3))
    # Unique names, so each call gets its own schema; only what the format can write.
    calls = [(f"{name}_{i}", args) for i, (name, args) in enumerate(raw) if carries(dialect, f"{name}_{i}", args)]
    if not calls:
        return
    ids = [f"call_{i}abcdefghijklmnopqrstuv" for i in range(len(calls))]
    rendered = [(cid, name, json.dumps(args)) for cid, (name, args) in zip(ids, calls, strict=True)]
    text = render_calls(dialect, rendered)
    result = parse(text, dialect, tools=tools_for(calls))
    got = [(c.name, canonical(json.loads(c.arguments))) for c in result.tool_calls]
    assert got == [(name, canonical(args)) for name, args in calls], text
    assert result.content is None and result.truncated is None


PLAIN = st.text(
    alphabet=st.characters(codec="utf-8", categories=["L", "N", "Zs"], include_characters=".,!?:'\n"), max_size=40
).filter(lambda t: t.strip() != "")


@pytest.mark.parametrize("dialect", DIALECTS)
@settings(max_examples=25, deadline=None)
@given(content=PLAIN, raw=st.lists(st.tuples(NAMES, ARGS), min_size=1, max_size=2))
def test_an_assistant_turn_parses_back_to_its_text_and_calls(
    dialect: str, content: str, raw: list[tuple[str, dict[str, Any]]]
) -> None:
    calls = [(f"{name}_{i}", args) for i, (name, args) in enumerate(raw) if carries(dialect, f"{name}_{i}", args)]
    text = render_assistant(dialect, content, [(f"call_{i}", n, json.dumps(a)) for i, (n, a) in enumerate(calls)])
    result = parse(text, dialect, tools=tools_for(calls))
    assert [(c.name, canonical(json.loads(c.arguments))) for c in result.tool_calls] == [
        (n, canonical(a)) for n, a in calls
    ]
    assert (result.content or "").strip() == content.strip()


def test_the_formats_without_an_escape_really_lose_those_values() -> None:
    """What `carries` excludes is excluded because the format cannot write it, not by choice."""
    cases = [
        ("gemma4", {"s": 'a<|"|>b'}),
        ("glm47", {"s": "a</arg_value><arg_key>b"}),
        ("seed_oss", {"s": "a</parameter>\n<parameter=b>"}),
        ("minimax_m2", {"s": "\nedge\n"}),
        ("step3", {"s": "\nedge\n"}),
        ("functiongemma", {"s": "a<escape>b"}),
        ("functiongemma", {"s": "a<end_function_call>b"}),
        ("seed_oss", {"s": "null"}),
        ("glm45", {"s": " NULL"}),
        ("minimax_m3", {"a": [False]}),
        ("minimax_m3", {"o": {"n": 1}}),
        ("minimax_m3", {"o": {"a b": "x"}}),
    ]
    for dialect, args in cases:
        assert not carries(dialect, "f", args)
        tools = tools_for([("f", args)])
        result = parse(render_calls(dialect, [("c", "f", json.dumps(args))]), dialect, tools=tools)
        assert [json.loads(c.arguments) for c in result.tool_calls] != [args], dialect


def test_qwen3_coder_falls_back_to_json_for_values_xml_cannot_carry() -> None:
    plain = render_calls("qwen3_coder", [("c", "f", '{"path": "a.txt", "n": 2}')])
    assert plain == (
        "<tool_call>\n<function=f>\n<parameter=path>\na.txt\n</parameter>\n"
        "<parameter=n>\n2\n</parameter>\n</function>\n</tool_call>"
    )
    for tricky in ({"code": "x = '</parameter>\\n<parameter=y>'"}, {"code": "null"}):
        text = render_calls("qwen3_coder", [("c", "f", json.dumps(tricky))])
        assert text.startswith('<tool_call>\n{"name": "f"')
        assert json.loads(parse(text, "qwen3_coder").tool_calls[0].arguments) == tricky


def test_dsml_writes_a_string_holding_its_marker_as_json() -> None:
    args = {"s": "x</｜DSML｜parameter>y", "t": "plain"}
    text = render_calls("deepseek_v32", [("c", "f", json.dumps(args))])
    assert 'name="s" string="false">"x</｜DSML｜parameter>y"' in text
    assert 'name="t" string="true">plain<' in text


def test_kimi_k3_moves_markup_into_the_json_element() -> None:
    args = {"s": "a<|close|>argument<|sep|><|close|>call<|sep|>b"}
    text = render_calls("kimi_k3", [("c", "f", json.dumps(args))])
    assert '<|open|>json type="object"<|sep|>{"s": "a\\u003c|close|>' in text
    assert json.loads(parse(text, "kimi_k3").tool_calls[0].arguments) == args


def test_ids_the_formats_carry() -> None:
    # Kimi: `functions.NAME:N`, N counting calls across the conversation; the parser keeps it as the id.
    assert native_call_id("kimi_k2", "call_x", "get_weather", 3) == "functions.get_weather:3"
    assert native_call_id("kimi_k2", "functions.get_weather:0", "get_weather", 3) == "functions.get_weather:0"
    text = render_calls("kimi_k2", [("functions.a:7", "a", "{}"), ("call_q", "b", "{}")])
    assert [c.id for c in parse(text, "kimi_k2").tool_calls] == ["functions.a:7", "functions.b:1"]
    # Mistral: 9 alphanumerics (vllm#9019, mlx-lm#1375), derived from the client's id.
    assert native_call_id("mistral", "call_abcdefghijklmnopqrstuvwx", "f", 0) == "pqrstuvwx"
    assert native_call_id("mistral", "a1B2c3D4e", "f", 0) == "a1B2c3D4e"
    short = native_call_id("mistral", "x", "f", 0)
    assert len(short) == 9 and short.isalnum() and short == native_call_id("mistral", "x", "f", 5)
    text = render_calls("mistral", [("call_abcdefghijklmnopqrstuvwx", "f", "{}")])
    assert [c.id for c in parse(text, "mistral").tool_calls] == ["pqrstuvwx"]
    # Formats without ids keep the client's.
    assert native_call_id("hermes", "call_x", "f", 2) == "call_x"


def test_calls_in_the_templates_layout() -> None:
    calls = [("call_1", "get_weather", '{"city": "Paris", "days": 3}')]
    expected = {
        "hermes": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>',
        "glm45": "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
        "<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>",
        "glm47": "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value>"
        "<arg_key>days</arg_key><arg_value>3</arg_value></tool_call>",
        "deepseek_v31": "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
        '{"city": "Paris", "days": 3}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        "gemma4": '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<tool_call|>',
        "pythonic": "[get_weather(city='Paris', days=3)]",
        "llama3_json": '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}',
        "llama_function": '<function=get_weather>{"city": "Paris", "days": 3}</function>',
        "minimax_m2": '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n'
        '<parameter name="days">3</parameter>\n</invoke>\n</minimax:tool_call>',
        "gpt_oss": "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
        '{"city": "Paris", "days": 3}<|call|>',
    }
    for dialect, text in expected.items():
        assert render_calls(dialect, calls) == text, dialect
    assert all(render_calls(d, []) == "" for d in DIALECTS)


@pytest.mark.parametrize("arguments", ["[1, 2]", "not json", '"{}"', "{", "3"])
def test_arguments_must_be_a_json_object(arguments: str) -> None:
    with pytest.raises(BadRequest) as err:
        render_calls("hermes", [("c", "f", arguments)])
    assert err.value.param == "calls[0].arguments"
    assert render_calls("hermes", [("c", "f", "")]) == render_calls("hermes", [("c", "f", "{}")])


# -- tool results ---------------------------------------------------------------------------------

RESULTS = [ToolResult("call_1", "18C", "get_weather"), ToolResult("call_2", '{"t": 21}', "get_weather")]


def test_tool_results_in_the_templates_markup() -> None:
    want = {
        "hermes": '<tool_response>\n18C\n</tool_response>\n<tool_response>\n{"t": 21}\n</tool_response>',
        "qwen3_coder": '<tool_response>\n18C\n</tool_response>\n<tool_response>\n{"t": 21}\n</tool_response>',
        "glm47": '<tool_response>\n18C\n</tool_response>\n<tool_response>\n{"t": 21}\n</tool_response>',
        "minimax_m2": '<response>18C</response>\n<response>{"t": 21}</response>',
        "deepseek_v3": "<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>18C<｜tool▁output▁end｜>\n"
        '<｜tool▁output▁begin｜>{"t": 21}<｜tool▁output▁end｜><｜tool▁outputs▁end｜>',
        "deepseek_v31": '<｜tool▁output▁begin｜>18C<｜tool▁output▁end｜><｜tool▁output▁begin｜>{"t": 21}'
        "<｜tool▁output▁end｜>",
        "deepseek_v32": '<function_results>\n<result>18C</result>\n<result>{"t": 21}</result>\n</function_results>',
        "deepseek_v4": '<tool_result>18C</tool_result>\n\n<tool_result>{"t": 21}</tool_result>',
        "kimi_k2": '## Return of call_1\n18C\n\n## Return of call_2\n{"t": 21}',
        "mistral": '[TOOL_RESULTS] {"content": "18C", "call_id": "call_1"}[/TOOL_RESULTS]'
        '[TOOL_RESULTS] {"content": {"t": 21}, "call_id": "call_2"}[/TOOL_RESULTS]',
        "gemma4": '<|tool_response>response:get_weather{value:<|"|>18C<|"|>}<tool_response|>'
        "<|tool_response>response:get_weather{t:21}<tool_response|>",
    }
    for dialect, text in want.items():
        assert render_tool_results(dialect, RESULTS) == text, dialect


@pytest.mark.parametrize(
    "dialect", ["gpt_oss", "llama3_json", "pythonic", "llama_function", "seed_oss", "kimi_k3", "generic_json"]
)
def test_formats_without_result_markup_use_the_plain_form(dialect: str) -> None:
    """With the function's name where it is known: these formats' calls may carry no id."""
    assert render_tool_result(dialect, "call_1", "18C") == "[function_call_output call_id=call_1 output=18C]"
    assert (
        render_tool_results(dialect, RESULTS).splitlines()[1]
        == '[function_call_output call_id=call_2 name=get_weather output={"t": 21}]'
    )


OUTPUTS = st.text(alphabet=st.characters(codec="utf-8", categories=["L", "N", "Zs"], include_characters=".,:!?<>/"))


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(DIALECTS), st.lists(st.tuples(st.from_regex(r"call_[a-z0-9]{4}", fullmatch=True), OUTPUTS)))
def test_every_result_is_written_in_order(dialect: str, results: list[tuple[str, str]]) -> None:
    text = render_tool_results(dialect, [ToolResult(cid, f"<<{k}>> {out}") for k, (cid, out) in enumerate(results)])
    position = 0
    for k, (_, out) in enumerate(results):
        position = text.index(f"<<{k}>> {out}", position)
