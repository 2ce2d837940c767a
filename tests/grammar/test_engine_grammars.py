"""Every dialect's call grammar, in every engine's field, compiled by the engine's own library:
what our renderer writes is accepted; prose, unknown names, wrong types, missing fields and
unclosed calls are refused."""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolcall_middleware.core.dialects import get_dialect, list_dialects
from toolcall_middleware.core.dialects._rendering import CallToRender
from toolcall_middleware.core.dialects.call_grammar import Args, ObjectNotation
from toolcall_middleware.core.grammar.build import build_constraint
from toolcall_middleware.core.grammar.engines import (
    ENGINES,
    Unexpressible,
    constrain_fields,
    dialect_unexpressible,
    without_reasoning,
)
from toolcall_middleware.core.request._tools import normalize_tools

from .engine import accepts, from_fields

DIALECTS = [d for d in list_dialects() if get_dialect(d).grammar is not None]
# (the dialects whose arguments are XML elements, a string value's bare text in each)
XML = {d for d in DIALECTS if any(isinstance(p, Args) and p.xml for p in get_dialect(d).grammar.call)}  # type: ignore[union-attr]
# The string delimiter of each dialect in Gemma's object notation: a string has no escapes, so
# one that holds its own delimiter cannot be written (its renderer's text reads back otherwise).
DELIMITERS = {
    d: p.notation.string
    for d in DIALECTS
    for p in get_dialect(d).grammar.call  # type: ignore[union-attr]
    if isinstance(p, Args) and isinstance(p.notation, ObjectNotation)
}
NATIVE_IDS = {"mistral": "abcDEF123"}

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city", "days"],
    "additionalProperties": False,
}


def tool(name: str, schema: Mapping[str, Any], strict: bool = True) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": schema, "strict": strict}}


def fields_for(dialect: str, engine: str, body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    declared = get_dialect(dialect)
    assert declared.grammar is not None
    pair = declared.reasoning.pairs[0] if declared.reasoning and declared.reasoning.pairs else None
    constraint = build_constraint(declared.grammar, normalize_tools(body), reasoning=pair, prefilled=False)
    assert constraint is not None
    if engine == "tgi":
        constraint = without_reasoning(constraint)
    try:
        fields, _ = constrain_fields(engine, constraint, body.get("parallel_tool_calls", True))  # type: ignore[arg-type]
    except Unexpressible:
        return None
    return fields


def rendered(dialect: str, calls: list[tuple[str, Mapping[str, Any]]], *, whole: bool = True) -> str:
    """The calls as our renderer writes them; `whole`: as the model's output, without the text
    the chat template wrote before it (Functionary's first `>>>`)."""
    declared = get_dialect(dialect)
    assert declared.renderer is not None
    text = declared.renderer.calls(
        [CallToRender(id=NATIVE_IDS.get(dialect, ""), name=name, arguments=args) for name, args in calls]
    )
    opened = declared.grammar.opened if whole and declared.grammar else ""
    assert text.startswith(opened)
    return text[len(opened) :]


def cases() -> list[tuple[str, str]]:
    """Every dialect and engine whose grammar can say the dialect's calls (the others are
    refused when the configuration is made: `test_constrain_table.py`)."""
    return [(d, e) for d in DIALECTS for e in ENGINES if dialect_unexpressible(e, d) is None]  # type: ignore[arg-type]


def grammar_or_skip(dialect: str, engine: str, body: Mapping[str, Any]) -> Any:
    fields = fields_for(dialect, engine, body)
    assert fields is not None, f"{engine} was to hold {dialect}"
    return from_fields(engine, fields)


# -- random schemas and arguments that follow them -----------------------------------------


def text_values(dialect: str) -> st.SearchStrategy[str]:
    if dialect in XML:  # a value the XML form carries as it is (the renderer writes JSON otherwise)
        return st.text(string.ascii_letters + string.digits + " _-.,", min_size=1, max_size=8).filter(
            lambda s: s.strip() == s and s.lower() != "null" and s != ""
        )
    text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
    if dialect in DELIMITERS:
        return text.filter(lambda s: DELIMITERS[dialect] not in s)
    return text


def schema_and_value(dialect: str, depth: int = 0) -> st.SearchStrategy[tuple[dict[str, Any], Any]]:
    leaves = st.one_of(
        text_values(dialect).map(lambda s: ({"type": "string"}, s)),
        st.integers(-1000, 1000).map(lambda n: ({"type": "integer"}, n)),
        st.booleans().map(lambda b: ({"type": "boolean"}, b)),
        st.sampled_from(["a", "b c"]).map(lambda s: ({"enum": ["a", "b c"]}, s)),
    )
    if depth >= 1:
        return leaves
    nested = st.one_of(
        st.lists(st.integers(0, 9), max_size=3).map(lambda xs: ({"type": "array", "items": {"type": "integer"}}, xs)),
        objects(dialect, depth + 1),
    )
    return st.one_of(leaves, nested) if dialect not in XML else leaves


def objects(dialect: str, depth: int = 0) -> st.SearchStrategy[tuple[dict[str, Any], Any]]:
    keys = st.text(string.ascii_lowercase + "_", min_size=1, max_size=6)
    members = st.dictionaries(keys, schema_and_value(dialect, depth), min_size=1, max_size=3)

    def build(entries: dict[str, tuple[dict[str, Any], Any]]) -> tuple[dict[str, Any], Any]:
        schema = {
            "type": "object",
            "properties": {k: s for k, (s, _) in entries.items()},
            "required": list(entries),
            "additionalProperties": False,
        }
        return schema, {k: v for k, (_, v) in entries.items()}

    return members.map(build)


@pytest.mark.parametrize(("dialect", "engine"), cases())
@settings(deadline=None)  # (each example compiles a grammar: its time is the engine's, not ours)
@given(data=st.data())
def test_every_rendered_call_is_accepted(dialect: str, engine: str, data: st.DataObject) -> None:
    schema, args = data.draw(objects(dialect))
    other_schema, other_args = data.draw(objects(dialect))
    body = {"tools": [tool("get_weather", schema), tool("other_tool", other_schema)], "tool_choice": "required"}
    grammar = grammar_or_skip(dialect, engine, body)
    assert accepts(grammar, rendered(dialect, [("get_weather", args)]))
    assert accepts(grammar, rendered(dialect, [("get_weather", args), ("other_tool", other_args)]))


@pytest.mark.parametrize(("dialect", "engine"), cases())
def test_what_is_no_valid_call_is_refused(dialect: str, engine: str) -> None:
    body = {"tools": [tool("get_weather", WEATHER)], "tool_choice": "required"}
    grammar = grammar_or_skip(dialect, engine, body)
    good = rendered(dialect, [("get_weather", {"city": "Paris", "days": 3})])
    assert accepts(grammar, good)
    assert not accepts(grammar, "It is sunny in Paris.")
    assert not accepts(grammar, rendered(dialect, [("get_time", {"city": "Paris", "days": 3})]))
    assert not accepts(grammar, rendered(dialect, [("get_weather", {"city": "Paris", "days": "three"})]))
    assert not accepts(grammar, rendered(dialect, [("get_weather", {"city": "Paris"})]))
    assert not accepts(grammar, good[: len(good) - 3])  # the call never closed


@pytest.mark.parametrize(("dialect", "engine"), cases())
def test_one_call_when_parallel_calls_are_off(dialect: str, engine: str) -> None:
    body = {"tools": [tool("get_weather", WEATHER)], "tool_choice": "required", "parallel_tool_calls": False}
    grammar = grammar_or_skip(dialect, engine, body)
    one = ("get_weather", {"city": "Paris", "days": 3})
    assert accepts(grammar, rendered(dialect, [one]))
    assert not accepts(grammar, rendered(dialect, [one, one]))


@pytest.mark.parametrize(("dialect", "engine"), cases())
def test_a_named_function_is_the_only_one(dialect: str, engine: str) -> None:
    body = {
        "tools": [tool("get_weather", WEATHER), tool("get_time", WEATHER)],
        "tool_choice": {"type": "function", "function": {"name": "get_time"}},
    }
    grammar = grammar_or_skip(dialect, engine, body)
    assert accepts(grammar, rendered(dialect, [("get_time", {"city": "Paris", "days": 3})]))
    assert not accepts(grammar, rendered(dialect, [("get_weather", {"city": "Paris", "days": 3})]))


@pytest.mark.parametrize(("dialect", "engine"), [c for c in cases() if c[1] in ("vllm", "sglang", "llama.cpp")])
def test_the_reasoning_block_comes_first(dialect: str, engine: str) -> None:
    declared = get_dialect(dialect)
    assert declared.grammar is not None
    pair = declared.grammar.reasoning or (declared.reasoning.pairs[0] if declared.reasoning else None)
    if pair is None:
        pytest.skip("no reasoning block")
    body = {"tools": [tool("get_weather", WEATHER)], "tool_choice": "required"}
    grammar = grammar_or_skip(dialect, engine, body)
    call = rendered(dialect, [("get_weather", {"city": "Paris", "days": 3})])
    assert accepts(grammar, f"{pair[0]}Which city? Paris.{pair[1]}\n{call}")
    assert not accepts(grammar, f"{pair[0]}Which city? Paris.{pair[1]}\nParis is sunny.")


@pytest.mark.parametrize(("dialect", "engine"), [c for c in cases() if c[1] in ("vllm", "sglang", "llama.cpp")])
def test_auto_with_a_strict_tool_is_free_text_until_the_call(dialect: str, engine: str) -> None:
    body = {"tools": [tool("get_weather", WEATHER)], "tool_choice": "auto"}
    grammar = grammar_or_skip(dialect, engine, body)
    # (a call after text: Functionary's opens with its own `>>>`, the trigger)
    call = rendered(dialect, [("get_weather", {"city": "Paris", "days": 3})], whole=False)
    broken = rendered(dialect, [("get_weather", {"city": "Paris"})], whole=False)
    fields = fields_for(dialect, engine, body)
    # (Functionary's output is held whole: the calls, or `all\n` and text in which `>>>` opens a call)
    if engine == "llama.cpp" and not get_dialect(dialect).grammar.prose:  # type: ignore[union-attr]
        # llama.cpp applies a lazy grammar from its trigger on: the text before is free
        assert fields is not None and fields["grammar_lazy"] is True
        trigger = fields["grammar_triggers"][0]["value"]
        assert call.startswith(trigger)
        assert accepts(grammar, call)
        assert not accepts(grammar, broken)
        return
    prose = get_dialect(dialect).grammar.prose  # type: ignore[union-attr]  # (Functionary's `all\n`)
    assert accepts(grammar, prose + "Let me look. " + call)
    assert accepts(grammar, prose + "It is sunny in Paris.")
    assert not accepts(grammar, prose + "Let me look. " + broken)


def test_auto_without_strict_tools_is_not_constrained() -> None:
    declared = get_dialect("hermes")
    assert declared.grammar is not None
    body = {"tools": [tool("get_weather", WEATHER, strict=False)], "tool_choice": "auto"}
    assert build_constraint(declared.grammar, normalize_tools(body), reasoning=None, prefilled=False) is None


@pytest.mark.parametrize("dialect", ["hermes", "qwen3_coder", "kimi_k2", "deepseek_v31", "glm47"])
def test_a_reasoning_block_the_template_opened_is_closed_first(dialect: str) -> None:
    declared = get_dialect(dialect)
    assert declared.grammar is not None and declared.reasoning is not None
    opening, closing = declared.reasoning.pairs[0]
    body = {"tools": [tool("get_weather", WEATHER)], "tool_choice": "required"}
    constraint = build_constraint(declared.grammar, normalize_tools(body), reasoning=(opening, closing), prefilled=True)
    assert constraint is not None
    fields, _ = constrain_fields("vllm", constraint)
    grammar = from_fields("vllm", fields)
    call = rendered(dialect, [("get_weather", {"city": "Paris", "days": 3})])
    assert accepts(grammar, f"Paris, then.{closing}\n\n{call}")
    assert not accepts(grammar, call)  # (the template opened the block: the model must close it)
    assert not accepts(grammar, f"Paris, then.{closing}\nIt is sunny.")


NESTED = {
    "type": "object",
    "properties": {
        "node": {"$ref": "#/$defs/node"},
        "kind": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "n": {"type": ["integer", "null"]},
        "e": {"enum": [1, "two", None]},
        "opt": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "number"}}, "required": ["b"]},
        "free": {},
    },
    "required": ["node", "kind"],
    "$defs": {
        "node": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            },
            "required": ["name"],
        }
    },
}


@pytest.mark.parametrize("engine", ["vllm", "sglang", "llama.cpp"])
def test_recursive_refs_unions_and_optional_members(engine: str) -> None:
    body = {"tools": [tool("f", NESTED)], "tool_choice": "required"}
    grammar = grammar_or_skip("hermes", engine, body)
    tree = {"name": "r", "children": [{"name": "c", "children": []}]}
    assert accepts(grammar, rendered("hermes", [("f", {"node": tree, "kind": None, "n": 3, "e": "two"})]))
    assert accepts(grammar, rendered("hermes", [("f", {"node": tree, "kind": "k", "opt": {"b": 1.5}, "free": [1]})]))
    assert not accepts(grammar, rendered("hermes", [("f", {"node": {"children": []}, "kind": None})]))
    assert not accepts(grammar, rendered("hermes", [("f", {"node": tree, "kind": None, "e": 2})]))
    assert not accepts(grammar, rendered("hermes", [("f", {"node": tree, "kind": None, "opt": {"a": "x"}})]))


TYPED = {
    "type": "object",
    "properties": {
        "when": {"$ref": "#/$defs/day"},
        "n": {"type": ["integer", "null"]},
        "kind": {"anyOf": [{"type": "string"}, {"type": "boolean"}]},
        "free": {},
    },
    "required": ["when", "n"],
    "$defs": {"day": {"type": "integer"}},
}
TYPE_ATTRIBUTES = {"kimi_k3": ('type="number"', 'type="string"'), "deepseek_v4": ('string="false"', 'string="true"')}


@pytest.mark.parametrize("engine", ["vllm", "llama.cpp"])
@pytest.mark.parametrize("dialect", list(TYPE_ATTRIBUTES))
def test_typed_elements_name_the_type_the_value_has(dialect: str, engine: str) -> None:
    body = {"tools": [tool("f", TYPED), tool("g", {"type": "object", "properties": {}})], "tool_choice": "required"}
    grammar = grammar_or_skip(dialect, engine, body)
    assert accepts(grammar, rendered(dialect, [("f", {"when": 3, "n": None, "kind": True, "free": [1, {"a": "b"}]})]))
    assert accepts(grammar, rendered(dialect, [("f", {"when": 3, "n": 2, "kind": "x y", "free": "text"})]))
    assert accepts(grammar, rendered(dialect, [("g", {}), ("f", {"when": 3, "n": 2})]))
    assert not accepts(grammar, rendered(dialect, [("f", {"when": "monday", "n": 2})]))
    assert not accepts(grammar, rendered(dialect, [("f", {"when": 3, "n": "two"})]))
    numeric, textual = TYPE_ATTRIBUTES[dialect]
    good = rendered(dialect, [("f", {"when": 3, "n": 2})])
    assert accepts(grammar, good) and numeric in good
    assert not accepts(grammar, good.replace(numeric, textual, 1))  # a number that says it is text
