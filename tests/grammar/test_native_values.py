"""Values written in a dialect's own notation, beyond what the generic property tests draw:
MiniCPM 5's CDATA sections, Functionary's first call after the template's `>>>`, nested values in
MiniMax-M3's elements."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .engine import accepts
from .test_engine_grammars import NESTED, grammar_or_skip, rendered, tool

GRAMMAR_ENGINES = ["vllm", "sglang", "llama.cpp"]

NOTE = {
    "type": "object",
    "properties": {
        "text": {"type": "string"},
        "opts": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        "n": {"type": "integer"},
    },
    "required": ["text", "opts"],
}
# (a CDATA section cannot hold its own end)
CDATA_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12).filter(lambda s: "]]>" not in s)


@pytest.mark.parametrize("engine", GRAMMAR_ENGINES)
@settings(deadline=None)
@given(text=CDATA_TEXT, q=CDATA_TEXT)
def test_minicpm5_values_with_markup_or_lines_are_cdata_sections(engine: str, text: str, q: str) -> None:
    grammar = grammar_or_skip("minicpm5", engine, {"tools": [tool("note", NOTE)], "tool_choice": "required"})
    assert accepts(grammar, rendered("minicpm5", [("note", {"text": text, "opts": {"q": q}})]))


@pytest.mark.parametrize("engine", GRAMMAR_ENGINES)
def test_minicpm5_refuses_markup_outside_a_cdata_section(engine: str) -> None:
    grammar = grammar_or_skip("minicpm5", engine, {"tools": [tool("note", NOTE)], "tool_choice": "required"})
    good = rendered("minicpm5", [("note", {"text": "a <b>\nc", "opts": {"q": "x&y"}, "n": 2})])
    assert "<![CDATA[a <b>\nc]]>" in good and '<![CDATA[{"q": "x&y"}]]>' in good
    assert accepts(grammar, good)
    assert not accepts(grammar, good.replace("<![CDATA[a <b>\nc]]>", "a <b>\nc"))
    assert not accepts(grammar, good.replace("c]]>", "c"))  # a section left open
    assert accepts(grammar, good.replace(">2</param>", "><![CDATA[2]]></param>"))
    assert not accepts(grammar, good.replace(">2</param>", "><![CDATA[two]]></param>"))  # (an integer)


@pytest.mark.parametrize("engine", [*GRAMMAR_ENGINES, "tgi"])
def test_functionary_first_call_opens_with_the_name(engine: str) -> None:
    body: dict[str, Any] = {"tools": [tool("get_weather", NOTE)], "tool_choice": "required"}
    grammar = grammar_or_skip("functionary_v3_2", engine, body)
    call = ("get_weather", {"text": "a", "opts": {"q": "b"}})
    assert accepts(grammar, 'get_weather\n{"text": "a", "opts": {"q": "b"}}')
    assert accepts(grammar, rendered("functionary_v3_2", [call, call]))
    assert not accepts(grammar, rendered("functionary_v3_2", [call], whole=False))  # (the template wrote `>>>`)
    assert not accepts(grammar, 'all\nget_weather\n{"text": "a", "opts": {"q": "b"}}')


NOTATIONS = ["minimax_m3", "gemma4", "functiongemma"]


@pytest.mark.parametrize("engine", GRAMMAR_ENGINES)
@pytest.mark.parametrize("dialect", NOTATIONS)
def test_notations_follow_refs_unions_and_optional_members(dialect: str, engine: str) -> None:
    body = {"tools": [tool("f", NESTED), tool("g", {"type": "object"}, strict=False)], "tool_choice": "required"}
    grammar = grammar_or_skip(dialect, engine, body)
    tree = {"name": "r", "children": [{"name": "c", "children": []}, {"name": "d"}]}
    free = {"a": [1, "x y", {"b": None}], "c_d": True}
    assert accepts(grammar, rendered(dialect, [("f", {"node": tree, "kind": None, "n": 3, "e": "two"})]))
    assert accepts(grammar, rendered(dialect, [("f", {"node": tree, "kind": "k", "opt": {"b": 1.5}, "free": [1]})]))
    assert accepts(grammar, rendered(dialect, [("f", {"node": tree, "kind": "k", "n": None, "free": free})]))
    assert accepts(grammar, rendered(dialect, [("g", free), ("g", {}), ("f", {"node": {"name": ""}, "kind": "k"})]))
    assert not accepts(grammar, rendered(dialect, [("f", {"node": {"children": []}, "kind": None})]))
    assert not accepts(grammar, rendered(dialect, [("f", {"node": tree, "kind": None, "e": 2})]))
    assert not accepts(grammar, rendered(dialect, [("f", {"node": tree, "kind": None, "opt": {"a": "x"}})]))
    assert not accepts(grammar, rendered(dialect, [("f", {"node": tree, "kind": None, "n": 1.5})]))


ODD_KEYS = {
    "type": "object",
    "properties": {"c d": {"type": "string"}, "a:b": {"type": "number"}, "list": {"type": "array", "items": {}}},
    "required": ["c d", "a:b"],
}


@pytest.mark.parametrize("engine", GRAMMAR_ENGINES)
@pytest.mark.parametrize("dialect", ["gemma4", "functiongemma"])
def test_gemma_notation_keys_strings_and_numbers(dialect: str, engine: str) -> None:
    grammar = grammar_or_skip(dialect, engine, {"tools": [tool("f", ODD_KEYS)], "tool_choice": "required"})
    good = rendered(dialect, [("f", {"c d": 'say "hi",\n{x}: [y]', "a:b": 1e-05, "list": [None, -2, "z"]})])
    assert "{c d:" in good and ":1e-05," in good  # (a bare key with a space; a Python-formatted number)
    assert accepts(grammar, good)
    assert accepts(grammar, rendered(dialect, [("f", {"c d": "", "a:b": 3})]))
    assert not accepts(grammar, good.replace("{c d:", '{"c d":'))  # (JSON's quoted key)
    assert not accepts(grammar, good.replace(":1e-05,", ":1e-05 ,"))  # (the notation writes no space)
    assert not accepts(grammar, rendered(dialect, [("f", {"c d": "x", "a:b": "3"})]))


@pytest.mark.parametrize("engine", GRAMMAR_ENGINES)
def test_functionary_under_auto_is_the_calls_or_text_for_the_user(engine: str) -> None:
    body: dict[str, Any] = {"tools": [tool("get_weather", NOTE)], "tool_choice": "auto"}
    grammar = grammar_or_skip("functionary_v3_2", engine, body)
    call = ("get_weather", {"text": "a", "opts": {"q": "b"}})
    broken = ("get_weather", {"opts": {"q": "b"}})
    assert accepts(grammar, rendered("functionary_v3_2", [call, call]))  # (the first segment a call)
    assert not accepts(grammar, rendered("functionary_v3_2", [broken]))
    assert accepts(grammar, "all\nLet me look." + rendered("functionary_v3_2", [call, call], whole=False))
    assert accepts(grammar, "all\nIt is sunny.")
    assert not accepts(grammar, "all\nLet me look." + rendered("functionary_v3_2", [broken], whole=False))
    assert not accepts(grammar, "It is sunny.")  # (a segment opens with its recipient)
    assert not accepts(grammar, "all\nIt is sunny.>>>")  # (`>>>` opens a call)
