"""Requests that offer the same tools share what is read from them (`core._memo`), and only those."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolcall_middleware.core import _memo as memo
from toolcall_middleware.core._memo import remembered
from toolcall_middleware.core._parser import StreamParser
from toolcall_middleware.core.apis.chat._rewrite import rewrite_chat_request
from toolcall_middleware.core.policy import PolicyFilter
from toolcall_middleware.core.request import BadRequest, normalize_tools, render_manifest


def tool(name: str, **properties: Any) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties or {"city": {"type": "string"}}}
    return {"type": "function", "function": {"name": name, "description": f"The {name} tool.", "parameters": schema}}


@pytest.fixture(autouse=True)
def fresh() -> Iterator[None]:
    memo.forget()
    yield
    memo.forget()


def test_the_same_tools_in_another_request_are_read_and_rendered_once() -> None:
    first = {"messages": [], "tools": [tool("get_weather")]}
    second = json.loads(json.dumps(first))  # a new request: equal, not the same objects
    a, b = normalize_tools(first), normalize_tools(second)
    assert a is b
    assert render_manifest("hermes", a) is render_manifest("hermes", b)
    assert render_manifest("hermes", a) != render_manifest("mistral", a)  # one text per dialect


def test_other_tools_or_rules_are_read_again() -> None:
    base = {"messages": [], "tools": [tool("get_weather")]}
    seen = normalize_tools(base)
    for change in (
        {"tools": [tool("get_time")]},
        {"tools": [tool("get_weather", city={"type": "integer"})]},
        {"tool_choice": "required"},
        {"parallel_tool_calls": False},
        {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}},
    ):
        other = normalize_tools({**copy.deepcopy(base), **change})
        assert other is not seen and other != seen
    manifest = render_manifest("hermes", normalize_tools({"messages": [], "tools": [tool("get_time")]}))
    assert manifest is not None and "get_time" in manifest and "get_weather" not in manifest


@pytest.mark.parametrize("a, b", [(1, 1.0), (1, True), (0, False), (1.0, True), ("1", 1)])
def test_values_equal_in_python_but_not_in_json_are_different_keys(a: Any, b: Any) -> None:
    assert a == b or str(a) == str(b)
    made: list[Any] = []
    assert remembered("k", {"default": a}, lambda: made.append(a) or a) == a
    assert remembered("k", {"default": b}, lambda: made.append(b) or b) is b
    assert made == [a, b]


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
        max_leaves=12,
    )
)
def test_a_value_read_again_from_its_json_is_the_same_key(value: Any) -> None:
    memo.forget()
    made: list[int] = []
    remembered("v", value, lambda: made.append(1))
    remembered("v", json.loads(json.dumps(value)), lambda: made.append(2))
    assert made == [1]


def test_what_marshal_cannot_write_and_what_raises_are_not_remembered() -> None:
    class Tools(Mapping[str, Any]):  # a Mapping that is no dict: made every time, still right
        def __init__(self, data: dict[str, Any]) -> None:
            self._data = data

        def __getitem__(self, key: str) -> Any:
            return self._data[key]

        def __iter__(self) -> Iterator[str]:
            return iter(self._data)

        def __len__(self) -> int:
            return len(self._data)

    made: list[int] = []
    for _ in range(2):
        remembered("m", Tools({"a": 1}), lambda: made.append(1))
    assert made == [1, 1]
    bad = {"messages": [], "tools": [{"type": "function", "function": {"name": ""}}]}
    for _ in range(2):
        with pytest.raises(BadRequest, match="tools"):
            normalize_tools(copy.deepcopy(bad))


def test_it_stays_bounded() -> None:
    for i in range(memo.MAX_ENTRIES * 3):
        remembered("n", i, lambda: None)
    assert len(memo._MEMO) <= memo.MAX_ENTRIES


def test_the_response_side_reads_shared_rules_and_schemas_and_still_judges_each_request() -> None:
    tools = [tool("get_weather")]
    # Two exchanges with equal tools: the second one's policy and parser use what the first read.
    for _ in range(2):
        policy = PolicyFilter(json.loads(json.dumps(tools)), "required", None)
        parser = StreamParser("hermes", tools=json.loads(json.dumps(tools)))
        events = parser.feed('<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>')
        out = policy.feed(events + parser.close()) + policy.close()
        assert [type(e).__name__ for e in out] == ["ToolCallStart", "ToolCallDelta", "ToolCallEnd"]
        assert policy.report.calls_emitted == 1
    # The same tools under another tool_choice are other rules: `none` turns the call into text.
    policy = PolicyFilter(json.loads(json.dumps(tools)), "none", None)
    parser = StreamParser("hermes", tools=tools)
    out = policy.feed(parser.feed('<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>') + parser.close())
    assert policy.report.calls_emitted == 0 and all(type(e).__name__ == "TextDelta" for e in out)


def test_rewritten_requests_with_shared_tools_are_whole_and_independent() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [tool("get_weather")]}
    first = rewrite_chat_request(copy.deepcopy(body), dialect="hermes")
    first.body["messages"][0]["content"] += " (changed by its host)"  # one request's body is its own
    second = rewrite_chat_request(copy.deepcopy(body), dialect="hermes")
    assert second.body["messages"][0]["content"].endswith(first.manifest or "")
    assert "(changed by its host)" not in second.body["messages"][0]["content"]
    assert "tools" not in second.body and second.tools is first.tools


def test_requests_with_the_same_strict_tools_compile_their_schemas_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every tool strict (as the Agents SDK sends them): their schemas are compiled for the first
    request's rules and taken compiled by the next; a broken one still fails every request."""
    from toolcall_middleware.core.policy import PolicyConfigError
    from toolcall_middleware.core.policy import _calls as calls

    compiled: list[str] = []
    real = calls.schema_check
    monkeypatch.setattr(calls, "schema_check", lambda schema, param: compiled.append(param) or real(schema, param))
    tools = [tool(f"f{i}") for i in range(3)]
    for offered in tools:
        offered["function"]["strict"] = True
    for _ in range(3):
        policy = PolicyFilter(json.loads(json.dumps(tools)), None, None)
        parser = StreamParser("hermes", tools=tools)
        out = policy.feed(parser.feed('<tool_call>{"name": "f1", "arguments": {"city": 1}}</tool_call>'))
        assert [type(e).__name__ for e in out + policy.close()] == ["PolicyError"]  # strict: 1 is no string
    assert sorted(compiled) == [
        "tools[0].function.parameters",
        "tools[1].function.parameters",
        "tools[2].function.parameters",
    ]
    broken = [{"type": "function", "function": {"name": "f", "strict": True, "parameters": {"type": 5}}}]
    for _ in range(2):
        with pytest.raises(PolicyConfigError):
            PolicyFilter(json.loads(json.dumps(broken)), None, None)
