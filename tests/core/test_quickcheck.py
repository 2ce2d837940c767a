"""The quick check says yes only where jsonschema finds no error, and says it for usual tools."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolcall_middleware.core.policy._quickcheck import quick_check
from toolcall_middleware.core.policy._validation import SchemaCheck

TYPES = ["string", "integer", "number", "boolean", "null", "object", "array"]
NUMBERS = st.one_of(st.integers(-3, 3), st.floats(-2, 2), st.sampled_from([0.0, 1.0, 2.0]))
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, st.text(max_size=3))
TYPE_LISTS = st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True)
NAMES = st.sampled_from(["a", "b", "c", "path", "mode"])


def schemas() -> st.SearchStrategy[Any]:
    """Schemas of the quick check's subset (and a few annotations)."""

    def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        keywords = st.fixed_dictionaries(
            {},
            optional={
                "type": st.one_of(st.sampled_from(TYPES), TYPE_LISTS),
                "properties": st.dictionaries(NAMES, inner, max_size=3),
                "required": st.lists(NAMES, max_size=3, unique=True),
                "additionalProperties": st.one_of(st.booleans(), inner),
                "items": inner,
                "enum": st.lists(SCALARS, min_size=1, max_size=4),
                "description": st.text(max_size=5),
                "default": SCALARS,
            },
        )
        return keywords

    return st.recursive(st.one_of(st.booleans(), st.just({})), extend, max_leaves=8)


VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(NAMES, inner, max_size=3)),
    max_leaves=8,
)


@settings(max_examples=1500, deadline=None)
@given(schemas(), VALUES)
def test_a_quick_yes_is_a_jsonschema_yes(schema: Any, value: Any) -> None:
    quick = quick_check(schema)
    assert quick is not None  # the subset is the quick check's
    if quick(value):
        assert jsonschema.Draft202012Validator(schema).is_valid(value), (schema, value)


@settings(max_examples=300, deadline=None)
@given(schemas(), VALUES)
def test_the_check_gives_what_jsonschema_gives(schema: Any, value: Any) -> None:
    """Through `SchemaCheck`: the same verdict as jsonschema alone, quick check or not."""
    if isinstance(schema, bool):
        schema = {"allOf": [schema]}  # (a tool's parameters schema is an object)
    problem = SchemaCheck(schema, "tools[0].function.parameters").problem(value)
    assert (problem is None) == jsonschema.Draft202012Validator(schema).is_valid(value)


AGENT_TOOL = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "a path in the workspace"},
        "content": {"type": "string"},
        "mode": {"type": "string", "enum": ["read", "write", "append"]},
        "lines": {"type": "array", "items": {"type": "integer"}},
        "options": {"type": "object", "properties": {"force": {"type": "boolean"}}, "additionalProperties": False},
    },
    "required": ["path"],
    "additionalProperties": False,
}


def test_usual_calls_are_a_quick_yes() -> None:
    quick = quick_check(AGENT_TOOL)
    assert quick is not None
    assert quick({"path": "a.py", "content": "x", "mode": "write", "lines": [1, 2], "options": {"force": True}})
    assert quick({"path": "a.py"})
    # Not sure, or no: jsonschema decides (and words the error).
    assert not quick({"content": "x"})
    assert not quick({"path": "a.py", "mode": "delete"})
    assert not quick({"path": "a.py", "lines": [1.0]})
    assert not quick({"path": "a.py", "other": 1})


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"type": "string", "minLength": 2}}},
        {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"},
        {"anyOf": [{"type": "string"}]},
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}, "$defs": {"a": {}}},
        {"type": "custom"},
        {"enum": [{"a": 1}]},
    ],
)
def test_schemas_outside_the_subset_get_no_quick_check(schema: Any) -> None:
    assert quick_check(schema) is None
