"""Schema-guided coercion of a loose call's arguments (`core/policy/_coerce.py`) and where the
policy applies it: only when the typed arguments fit the schema, only for loose calls that did
not go out piece by piece, only with the repair pass on. Through the middleware too, with the
openai SDK's accumulator as the client."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.asgi.harness import SSE_HEADERS, body, chat_request, chat_stream, start
from tests.servers import serve, uvicorn
from tests.wire import replay_chat
from toolcall_middleware.core._events import ToolCallDelta, ToolCallEnd, ToolCallStart
from toolcall_middleware.core.policy import PolicyFilter
from toolcall_middleware.core.policy._coerce import coerce_arguments
from toolcall_middleware.core.policy._validation import schema_check

from .test_policy import call, calls_out, chat_tool, run

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "line": {"type": "integer"},
        "ratio": {"type": "number"},
        "force": {"type": "boolean"},
        "limit": {"type": ["integer", "null"]},
        "files": {"type": "array", "items": {"type": "string"}},
        "counts": {"type": "array", "items": {"type": "integer"}},
        "range": {"type": "object", "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}}},
        "zip": {"type": "string"},
        "labels": {"type": "object", "additionalProperties": {"type": "integer"}},
    },
    "required": ["path"],
    "additionalProperties": False,
}
EDIT = chat_tool("edit", SCHEMA)


# -- coerce_arguments ------------------------------------------------------------------------


def test_strings_become_the_values_they_spell_where_the_schema_allows_no_string() -> None:
    value = {
        "path": "42",  # a string property: stays a string
        "line": "42",
        "ratio": "0.5",
        "force": "true",
        "limit": "null",
        "files": '["a.py", "b.py"]',
        "counts": ["1", 2, "3"],
        "range": '{"start": 1, "end": "9"}',
        "zip": 2139,  # a number where only a string goes: its JSON spelling
        "labels": {"bug": "3"},
    }
    assert coerce_arguments(value, SCHEMA) == {
        "path": "42",
        "line": 42,
        "ratio": 0.5,
        "force": True,
        "limit": None,
        "files": ["a.py", "b.py"],
        "counts": [1, 2, 3],
        "range": {"start": 1, "end": "9"},  # decoded once: its own strings are not walked again
        "zip": "2139",
        "labels": {"bug": 3},
    }
    assert list(coerce_arguments(value, SCHEMA)) == list(value)  # same keys, same order


def test_nothing_to_type_gives_back_the_same_object() -> None:
    fitting = {"path": "a.py", "line": 3, "files": ["x"], "range": {"start": 1}}
    assert coerce_arguments(fitting, SCHEMA) is fitting
    unspellable = {"path": "a.py", "line": "three", "force": "yes please"}
    assert coerce_arguments(unspellable, SCHEMA) is unspellable
    untyped = {"anything": "42"}
    assert coerce_arguments(untyped, {"type": "object"}) is untyped


SCALARS = {
    "integer": st.integers(-(10**12), 10**12),
    "number": st.floats(allow_nan=False, allow_infinity=False, width=32),
    "boolean": st.booleans(),
}


@st.composite
def typed_objects(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A schema of typed properties and a value that fits it."""
    names = draw(st.lists(st.from_regex(r"[a-z]{1,8}", fullmatch=True), min_size=1, max_size=5, unique=True))
    properties: dict[str, Any] = {}
    value: dict[str, Any] = {}
    for name in names:
        kind = draw(st.sampled_from(["integer", "number", "boolean", "string", "array"]))
        if kind == "array":
            inner = draw(st.sampled_from(["integer", "boolean"]))
            properties[name] = {"type": "array", "items": {"type": inner}}
            value[name] = draw(st.lists(SCALARS[inner], max_size=3))
        elif kind == "string":
            properties[name] = {"type": "string"}
            value[name] = draw(st.text(max_size=8))
        else:
            properties[name] = {"type": kind}
            value[name] = draw(SCALARS[kind])
    return {"type": "object", "properties": properties}, value


@settings(max_examples=200, deadline=None)
@given(typed_objects(), st.data())
def test_a_value_written_with_its_typed_leaves_as_strings_types_back_to_itself(
    case: tuple[dict[str, Any], dict[str, Any]], data: st.DataObject
) -> None:
    schema, value = case
    assert coerce_arguments(value, schema) is value  # it fits: nothing changes
    stringified = dict(value)
    for name, item in value.items():
        kind = schema["properties"][name]["type"]
        if kind != "string" and data.draw(st.booleans()):
            stringified[name] = json.dumps(item)  # `"3"`, `"true"`, `"[1, 2]"`: what models write
    typed = coerce_arguments(stringified, schema)
    assert typed == value
    assert schema_check(schema, "tools[0].function.parameters").problem(typed) is None


# -- in the policy ---------------------------------------------------------------------------


def test_a_loose_call_is_typed_by_its_schema_and_says_so() -> None:
    policy = PolicyFilter([EDIT])
    out = run(policy, call(0, "edit", '{"path": "a.py", "line": "42", "force": "false"}', pieces=3))
    assert calls_out(out) == [(0, None, "edit", '{"path": "a.py", "line": 42, "force": false}')]
    deltas = [e.arguments for e in out if isinstance(e, ToolCallDelta)]
    assert deltas == ['{"path": "a.py", "line": 42, "force": false}']  # the typed text, one fragment
    (note,) = policy.report.repaired
    assert note.reason == "coerced" and "line" in note.detail
    assert policy.report.schema_mismatches == ()


def test_a_call_typing_does_not_make_fit_goes_out_as_the_model_wrote_it() -> None:
    policy = PolicyFilter([EDIT])
    arguments = '{"line": "42"}'  # `path` is required: typed or not, it does not fit
    out = run(policy, call(0, "edit", arguments))
    assert calls_out(out) == [(0, None, "edit", arguments)]
    assert policy.report.repaired == () and len(policy.report.schema_mismatches) == 1


def test_strict_calls_repair_false_and_streamed_calls_are_not_typed() -> None:
    arguments = '{"path": "a.py", "line": "42"}'
    out = run(PolicyFilter([chat_tool("edit", SCHEMA, strict=True)]), call(0, "edit", arguments))
    assert calls_out(out) == [] and "line" in str(out[-1])  # strict: the schema error, as before
    policy = PolicyFilter([EDIT], repair=False)
    assert calls_out(run(policy, call(0, "edit", arguments))) == [(0, None, "edit", arguments)]
    assert len(policy.report.schema_mismatches) == 1
    # incremental: the fragments went out as the model wrote them; the end must say the same
    policy = PolicyFilter([EDIT], streaming="incremental")
    out = run(policy, call(0, "edit", arguments, pieces=2))
    assert [e.arguments for e in out if isinstance(e, ToolCallEnd)] == [arguments]
    assert isinstance(out[0], ToolCallStart) and policy.report.repaired == ()


def test_without_jsonschema_the_quick_check_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    policy = PolicyFilter([EDIT])
    out = run(policy, call(0, "edit", '{"path": "a.py", "counts": "[1, 2]"}'))
    assert calls_out(out) == [(0, None, "edit", '{"path": "a.py", "counts": [1, 2]}')]
    assert [n.reason for n in policy.report.repaired] == ["coerced"]
    # a schema the quick check does not cover gives no certain yes: left as the model wrote it
    odd = chat_tool("odd", {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}})
    out = run(PolicyFilter([odd]), call(0, "odd", '{"n": "3"}'))
    assert calls_out(out) == [(0, None, "odd", '{"n": "3"}')]


def test_through_the_middleware_the_client_gets_typed_arguments() -> None:
    from tests.asgi.test_http_details import streamed_calls, through

    raw = 'Let me look.\n<tool_call>\n{"name": "edit", "arguments": {"path": "a.py", "line": "42"}}\n</tool_call>'
    request = chat_request(stream=True, tools=[EDIT])
    send = through([start(200, SSE_HEADERS), body(chat_stream(raw))], req=request)
    assert streamed_calls(send.body) == [("edit", '{"path": "a.py", "line": 42}')]
    chunks = [json.loads(line[6:]) for line in send.body.decode().split("\n") if line.startswith("data: {")]
    completion = replay_chat(chunks)
    (tool_call,) = completion.choices[0].message.tool_calls or []
    assert json.loads(tool_call.function.arguments) == {"path": "a.py", "line": 42}


@pytest.fixture(scope="module")
def echo_client() -> Iterator[openai.OpenAI]:
    """A uvicorn-served host whose model writes the user's message as its raw output
    (`tests/asgi/failing_app.py`; `END:` ends its stream normally), behind the middleware."""
    command, port = uvicorn("tests.asgi.failing_app:app")
    with serve(command, port) as base:
        yield openai.OpenAI(api_key="none", base_url=base + "/v1", max_retries=0)


def test_served_the_openai_sdk_gets_the_typed_call(echo_client: openai.OpenAI) -> None:
    arguments = {"path": "a.py", "line": "42", "files": '["b.py"]'}  # as the model wrote them
    raw = "END:<tool_call>\n" + json.dumps({"name": "edit", "arguments": arguments}) + "\n</tool_call>"
    messages: Any = [{"role": "user", "content": raw}]
    with echo_client.chat.completions.stream(model="m", messages=messages, tools=[EDIT]) as stream:  # type: ignore[list-item]
        for _ in stream:
            pass
        completion = stream.get_final_completion()
    (tool_call,) = completion.choices[0].message.tool_calls or []
    assert json.loads(tool_call.function.arguments) == {"path": "a.py", "line": 42, "files": ["b.py"]}
    assert completion.choices[0].finish_reason == "tool_calls"


def test_typed_arguments_over_the_size_cap_go_as_the_model_wrote_them() -> None:
    from toolcall_middleware.core.policy import PolicyLimits

    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "c": {"type": "integer"}}}
    arguments = '{"a":1,"c":"3"}'  # 15 bytes; typed and written anew, 16
    policy = PolicyFilter([chat_tool("f", schema)], limits=PolicyLimits(max_arguments_bytes=len(arguments)))
    out = run(policy, call(0, "f", arguments))
    assert calls_out(out) == [(0, None, "f", arguments)]
    assert policy.report.repaired == () and len(policy.report.schema_mismatches) == 1


def test_floats_are_not_spelled_anew_as_strings() -> None:
    value = {"path": "a.py", "zip": 1.10}  # the model's `1.10` is gone once read: left alone
    assert coerce_arguments(value, SCHEMA) is value
