"""The Python-call dialects' grammars (`pythonic`, `olmo3`, `lfm2`), compiled by the engine's
own library: the Python literals they admit, and that the dialect's own parser reads each call
they admit as the call it is; what is no Python call of the schema is refused."""

from __future__ import annotations

import string
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import calls
from toolcall_middleware import parse
from toolcall_middleware.core.dialects import get_dialect
from toolcall_middleware.core.grammar.engines import ENGINES, dialect_unexpressible

from .engine import accepts
from .test_engine_grammars import NESTED, grammar_or_skip, rendered, tool

PYTHON_DIALECTS = ["pythonic", "olmo3", "lfm2"]
CASES = [(d, e) for d in PYTHON_DIALECTS for e in ENGINES if dialect_unexpressible(e, d) is None]  # type: ignore[arg-type]

KINDS = {
    "type": "object",
    "properties": {
        "s": {"type": "string"},
        "n": {"type": "integer"},
        "x": {"type": "number"},
        "b": {"type": "boolean"},
        "z": {"type": "null"},
        "l": {"type": "array", "items": {"type": "string"}},
        "d": {"type": "object", "properties": {"k": {"type": "integer"}}, "required": ["k"]},
        "e": {"enum": ["a", "b c", 1, None]},
    },
    "required": ["s", "n"],
}
LOOSE = {"type": "object", "properties": {"a": {"type": "string"}}}


def test_every_engine_but_ollama_holds_python_calls() -> None:
    assert set(CASES) == {(d, e) for d in PYTHON_DIALECTS for e in ENGINES if e != "ollama"} - {("lfm2", "tgi")}


def block(dialect: str, *calls_text: str) -> str:
    """The call texts in the dialect's call block, as its renderer joins and wraps them."""
    grammar = get_dialect(dialect).grammar
    assert grammar is not None
    opening, closing = grammar.section
    return opening + grammar.separator.join(calls_text) + closing


def grammar_for(dialect: str, engine: str) -> Any:
    body = {"tools": [tool("f", KINDS), tool("g", LOOSE, strict=False)], "tool_choice": "required"}
    return grammar_or_skip(dialect, engine, body)


READ = [
    ("f(s='Paris', n=3)", {"s": "Paris", "n": 3}),
    ("""f(s="it's", n=-1, x=2.5, b=True, z=None)""", {"s": "it's", "n": -1, "x": 2.5, "b": True, "z": None}),
    (
        r"""f(s='a\'b\n\x3c\u00e9', n=0, l=['x', "y"], d={'k': 1}, e='b c')""",
        {"s": "a'b\n<é", "n": 0, "l": ["x", "y"], "d": {"k": 1}, "e": "b c"},
    ),
    ("""f(s="", n=1, x=1e-07, d={"k": 2}, e=None)""", {"s": "", "n": 1, "x": 1e-07, "d": {"k": 2}, "e": None}),
    ("f(s='a',n=1,l=[],e=1)", {"s": "a", "n": 1, "l": [], "e": 1}),
    ("g()", {}),
    ("""g(a=[True, {'k': None}], b_2="x", c=-0.5)""", {"a": [True, {"k": None}], "b_2": "x", "c": -0.5}),
]


@pytest.mark.parametrize(("dialect", "engine"), CASES)
def test_python_literals_are_accepted_and_read_back(dialect: str, engine: str) -> None:
    grammar = grammar_for(dialect, engine)
    for text, arguments in READ:
        call = block(dialect, text)
        assert accepts(grammar, call), call
        assert calls(parse(call, dialect)) == [(text[0], arguments)]
    both = block(dialect, READ[0][0], READ[5][0])
    assert accepts(grammar, both)
    assert calls(parse(both, dialect)) == [("f", READ[0][1]), ("g", {})]


REFUSED = [
    "f(s='Paris', n='3')",  # a string for an integer
    "f(s='Paris', n=3.5)",
    "f(s='Paris', n=3, b=true)",  # JSON's literals are not Python's
    "f(s='Paris', n=3, z=null)",
    "f(s=Paris, n=3)",  # a name, not a literal
    "f('Paris', 3)",  # positional arguments
    "f(s='Paris', n=3, d={k: 1})",  # a dict key must be quoted
    "f(s='Paris', n=3, e='c')",  # not in the enum
    "f(s='Paris', n=3, q=1)",  # no such parameter
    "f(s='Paris\nLyon', n=3)",  # a raw line break in a string
    "f(s='Paris', n=3",  # never closed
    "g(1)",
    "g(a=true)",
    "h(a=1)",  # no such tool
]


@pytest.mark.parametrize(("dialect", "engine"), CASES)
def test_what_is_no_python_call_of_the_schema_is_refused(dialect: str, engine: str) -> None:
    grammar = grammar_for(dialect, engine)
    for text in REFUSED:
        assert not accepts(grammar, block(dialect, text)), text


@pytest.mark.parametrize(("dialect", "engine"), CASES)
def test_a_string_holds_no_end_marker_where_the_block_ends_at_one(dialect: str, engine: str) -> None:
    grammar = grammar_for(dialect, engine)
    raw = block(dialect, "f(s='a<b', n=1)")
    if dialect == "pythonic":  # (its list ends at the bracket that closes it: `<` is plain text)
        assert accepts(grammar, raw)
        assert calls(parse(raw, dialect)) == [("f", {"s": "a<b", "n": 1})]
        return
    assert not accepts(grammar, raw)  # Olmo 3 and LFM2 read the block up to its end marker
    closing = get_dialect(dialect).grammar.section[1].strip()  # type: ignore[union-attr]
    assert not accepts(grammar, block(dialect, f"f(s='{closing}', n=1)"))
    assert accepts(grammar, rendered(dialect, [("f", {"s": f"a<b{closing}", "n": 1})]))


def json_values(depth: int = 0) -> st.SearchStrategy[Any]:
    """Any JSON value, nested at most two levels (TGI's regular expression holds three)."""
    leaves = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**6), 10**6),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=6),
    )
    if depth >= 2:
        return leaves
    inner = json_values(depth + 1)
    keys = st.text(st.characters(blacklist_categories=("Cs",)), max_size=4)
    return st.one_of(leaves, st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=3))


@pytest.mark.parametrize(("dialect", "engine"), CASES)
@settings(deadline=None)  # (each example compiles a grammar: its time is the engine's, not ours)
@given(data=st.data())
def test_a_loose_tool_takes_any_keyword_arguments(dialect: str, engine: str, data: st.DataObject) -> None:
    keywords = st.text(string.ascii_lowercase + "_", min_size=1, max_size=6)
    arguments = data.draw(st.dictionaries(keywords, json_values(), max_size=3))
    body = {"tools": [tool("g", {"type": "object"}, strict=False)], "tool_choice": "required"}
    grammar = grammar_or_skip(dialect, engine, body)
    assert accepts(grammar, rendered(dialect, [("g", arguments)]))
    assert accepts(grammar, rendered(dialect, [("g", arguments), ("g", {})]))


@pytest.mark.parametrize("engine", ["vllm", "llama.cpp", "tgi"])
@pytest.mark.parametrize("dialect", ["pythonic", "olmo3"])
def test_recursive_refs_unions_and_optional_members(dialect: str, engine: str) -> None:
    body = {"tools": [tool("f", NESTED)], "tool_choice": "required"}
    grammar = grammar_or_skip(dialect, engine, body)
    tree = {"name": "r<", "children": [{"name": "c"}]}  # (TGI's regular expression nests three levels)
    assert accepts(grammar, rendered(dialect, [("f", {"node": tree, "kind": None, "n": 3, "e": "two"})]))
    assert accepts(grammar, rendered(dialect, [("f", {"node": tree, "kind": "k", "opt": {"b": 1.5}, "free": [1]})]))
    assert not accepts(grammar, rendered(dialect, [("f", {"node": tree, "kind": None, "e": 2})]))
    assert not accepts(grammar, rendered(dialect, [("f", {"node": tree, "kind": None, "opt": {"a": "x"}})]))
    assert not accepts(grammar, rendered(dialect, [("f", {"node": tree})]))  # `kind` is required
    if engine != "tgi":  # (a regular expression does not follow `$ref`: there the node is any value)
        assert not accepts(grammar, rendered(dialect, [("f", {"node": {"children": []}, "kind": None})]))


@pytest.mark.parametrize("engine", ["vllm", "llama.cpp", "tgi"])
def test_a_quoted_key_writes_its_escaped_characters_as_the_renderer_does(engine: str) -> None:
    schema = {"type": "object", "properties": {"d": {"type": "object", "properties": {"a<b": {"type": "integer"}}}}}
    grammar = grammar_or_skip("olmo3", engine, {"tools": [tool("f", schema)], "tool_choice": "required"})
    assert accepts(grammar, rendered("olmo3", [("f", {"d": {"a<b": 1}})]))
    assert not accepts(grammar, block("olmo3", "f(d={'a<b': 1})"))
