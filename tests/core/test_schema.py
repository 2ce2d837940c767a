"""`schema.coerce_value`: a raw parameter text typed by the property's JSON schema."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolcall_middleware.core._schema import coerce_value, decode_json, parse_number, schema_types

INT = {"type": "integer"}
NUM = {"type": "number"}
BOOL = {"type": "boolean"}
STR = {"type": "string"}
OBJ = {"type": "object"}
ARR = {"type": "array", "items": {"type": "string"}}
NULLABLE_STR = {"type": ["string", "null"]}


@pytest.mark.parametrize(
    ("schema", "types"),
    [
        (None, set()),
        ({}, set()),
        ({"description": "no type"}, set()),
        (INT, {"integer"}),
        ({"type": ["integer", "null"]}, {"integer", "null"}),
        ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, {"integer", "null"}),
        ({"oneOf": [{"anyOf": [STR]}, ARR]}, {"string", "array"}),
        ({"type": "string", "nullable": True}, {"string", "null"}),
        ({"enum": ["c", "f"]}, {"string"}),
        ({"enum": [1, 2.5, True, None]}, {"integer", "number", "boolean", "null"}),
        ({"const": 3}, {"integer"}),
        ({"properties": {}}, {"object"}),
        ({"items": {}}, {"array"}),
        ({"type": "int"}, {"integer"}),
        ({"type": "Float"}, {"number"}),
        ({"type": "dict"}, {"object"}),
        ({"type": "no-such-type"}, set()),
    ],
)
def test_schema_types(schema: dict[str, Any] | None, types: set[str]) -> None:
    assert schema_types(schema) == types


@pytest.mark.parametrize(
    ("raw", "schema", "value"),
    [
        # Strings stay exactly as written, whatever they look like.
        ("02139", STR, "02139"),
        ("true", STR, "true"),
        ('{"a": 1}', STR, '{"a": 1}'),
        ("123456789012345678901", STR, "123456789012345678901"),
        ("  two  spaces  ", STR, "  two  spaces  "),
        ("", STR, ""),
        # Numbers: exact big integers, floats, no int64 clamping.
        ("9", INT, 9),
        (" -12 ", INT, -12),
        ("140.0", INT, 140),
        ("1e20", INT, 10**20),
        ("0.5", NUM, 0.5),
        ("1e20", NUM, 1e20),
        ("123456789012345678901", NUM, 123456789012345678901),
        ("3", NUM, 3),
        # Booleans, JSON or Python spelling.
        ("true", BOOL, True),
        ("False", BOOL, False),
        ("TRUE", BOOL, True),
        # Null: the literal whatever the schema (any case, as the engines decode it), and
        # Python's None where no string is allowed.
        ("null", NULLABLE_STR, None),
        ("null", STR, None),
        (" NULL\n", STR, None),
        ("Null", BOOL, None),
        ("nullable", STR, "nullable"),
        ("gym", NULLABLE_STR, "gym"),
        ("None", NULLABLE_STR, "None"),
        ("None", {"type": ["integer", "null"]}, None),
        ("null", INT, None),  # not an integer: the value is kept as JSON says it
        # Objects and arrays, JSON or Python literals.
        ('{"tags": ["a"], "max": 3}', OBJ, {"tags": ["a"], "max": 3}),
        ("{'ok': True, 'n': None, 't': (1, 2)}", OBJ, {"ok": True, "n": None, "t": [1, 2]}),
        ('["a", "b"]', ARR, ["a", "b"]),
        ("[1, 2]", {"anyOf": [ARR, {"type": "null"}]}, [1, 2]),
        # Unions: a structured value that fits wins over string; otherwise string wins.
        ('{"key": "value"}', {"anyOf": [STR, OBJ]}, {"key": "value"}),
        ("{not json", {"anyOf": [STR, OBJ]}, "{not json"),
        ("5", {"anyOf": [STR, INT]}, "5"),
        ("some text", {"anyOf": [STR, INT, {"type": "null"}]}, "some text"),
        ("42", {"type": ["integer", "null"]}, 42),
        # A value that fits no allowed type is kept, as JSON when it is JSON, else as text.
        ("abc", INT, "abc"),
        ("3.7", INT, 3.7),
        ("[1]", INT, [1]),
        ("yes", BOOL, "yes"),
        ("not an object", OBJ, "not an object"),
        # No type information: text, except the literal null.
        ("9", None, "9"),
        ("true", None, "true"),
        ("null", None, None),
        ("null", {}, None),
        ("None", None, "None"),
        ("\n9\n", None, "\n9\n"),
    ],
)
def test_coerce_value(raw: str, schema: dict[str, Any] | None, value: Any) -> None:
    got = coerce_value(raw, schema)
    assert got == value and type(got) is type(value)


def test_untyped_json_policy_decodes_json_and_python_literals() -> None:
    assert coerce_value("9", None, untyped="json") == 9
    assert coerce_value('{"a": [1, null]}', None, untyped="json") == {"a": [1, None]}
    assert coerce_value("True", {}, untyped="json") is True
    assert coerce_value("hello world", None, untyped="json") == "hello world"
    assert coerce_value("02139", STR, untyped="json") == "02139"


@pytest.mark.parametrize("raw", ["NaN", "Infinity", "-Infinity", "1e400", "[1e400]", "{'x': float('nan')}", "inf"])
def test_no_value_is_ever_unrepresentable_as_json(raw: str) -> None:
    for schema in (NUM, OBJ, ARR, INT, None):
        json.dumps(coerce_value(raw, schema), allow_nan=False)
    assert parse_number(raw) is None


def test_python_literals_that_are_not_json_stay_text() -> None:
    assert coerce_value("{1: 'a'}", OBJ) == "{1: 'a'}"  # non-string keys
    assert coerce_value("{1, 2}", ARR) == "{1, 2}"  # a set
    assert coerce_value("b'x'", OBJ) == "b'x'"
    assert coerce_value("__import__('os')", OBJ) == "__import__('os')"  # never evaluated


def test_deep_or_huge_values_do_not_crash() -> None:
    deep = "[" * 5000 + "]" * 5000
    assert coerce_value(deep, ARR) == deep
    assert coerce_value(deep, None, untyped="json") == deep
    digits = "9" * 10000
    assert coerce_value(digits, STR) == digits
    json.dumps(coerce_value(digits, INT))  # too many digits for int(): kept as text, never raises


def test_decode_json_rejects_non_finite() -> None:
    assert decode_json('{"a": 1.5}') == {"a": 1.5}
    for bad in ("NaN", "1e999", '{"a": -Infinity}'):
        with pytest.raises(ValueError):
            decode_json(bad)


@given(st.integers())
def test_integers_round_trip_exactly(n: int) -> None:
    assert coerce_value(str(n), INT) == n
    assert coerce_value(str(n), NUM) == n


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_floats_round_trip(x: float) -> None:
    got = coerce_value(repr(x), NUM)
    assert got == x and math.isfinite(got)


@given(st.text(), st.sampled_from([STR, NULLABLE_STR, {"anyOf": [STR, INT]}]))
def test_string_schemas_keep_any_text_but_null(text: str, schema: dict[str, Any]) -> None:
    got = coerce_value(text, schema)
    if text.strip().lower() == "null":  # the format's only way to write a null, whatever the schema
        assert got is None
    else:
        assert got == text
