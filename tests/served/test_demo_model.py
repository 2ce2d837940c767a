"""The demo model: in every dialect, what it writes for a request the middleware rewrote is read back
by our own parser as exactly the call it meant; tool results come back as its answer."""

from __future__ import annotations

import json
import keyword
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import check_streams
from toolcall_middleware import parse
from toolcall_middleware.core.apis.chat import rewrite_chat_request
from toolcall_middleware.core.apis.responses import rewrite_responses_request
from toolcall_middleware.core.request._render import rendered_dialects
from toolcall_middleware.demo import DemoModel, read_manifest

DIALECTS = rendered_dialects()


def weather_tool(name: str = "get_weather", **properties: Any) -> dict[str, Any]:
    props = properties or {"city": {"type": "string"}}
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": "Current weather for a city",
            "parameters": {"type": "object", "properties": props, "required": list(props)},
        },
    }


def as_called(raw: str, dialect: str, tools: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(c.name, json.loads(c.arguments)) for c in parse(raw, dialect, tools=tools).tool_calls]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_dialect_manifest_reads_back(dialect: str) -> None:
    tools = [
        weather_tool(city={"type": "string"}, days={"type": "integer"}),
        weather_tool("get_time", timezone={"type": "string"}),
    ]
    body = rewrite_chat_request({"messages": [{"role": "user", "content": "hi"}], "tools": tools}, dialect=dialect).body
    manifest = read_manifest(body["messages"][0]["content"])
    assert [t.name for t in manifest.tools] == ["get_weather", "get_time"]
    assert set(manifest.tools[0].properties) == {"city", "days"}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_dialect_full_tool_turn(dialect: str) -> None:
    model = DemoModel(dialect)
    tools = [weather_tool(city={"type": "string"}, days={"type": "integer"})]
    question = {"role": "user", "content": "What is the weather in Paris and Oslo for 3 days?"}
    first = rewrite_chat_request({"messages": [question], "tools": tools}, dialect=dialect).body
    raw = model.respond(first)
    result = check_streams(raw, seeds=[1, 2], dialect=dialect, tools=tools)
    expected = [("get_weather", {"city": "Paris", "days": 3}), ("get_weather", {"city": "Oslo", "days": 3})]
    assert [(c.name, json.loads(c.arguments)) for c in result.tool_calls] == expected
    assert result.reasoning  # the short reasoning block, in the dialect's own syntax
    assert "<think>" not in (result.content or "") and "</think>" not in (result.content or "")

    # The client runs the tools and sends the results back: the model answers from them.
    calls = [
        {"id": c.id or f"call_{i}", "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
        for i, c in enumerate(result.tool_calls)
    ]
    results = [
        {
            "role": "tool",
            "tool_call_id": c["id"],
            "content": f"Sunny in {json.loads(c['function']['arguments'])['city']}",
        }
        for c in calls
    ]
    history = [question, {"role": "assistant", "content": None, "tool_calls": calls}, *results]
    second = rewrite_chat_request({"messages": history, "tools": tools}, dialect=dialect).body
    answer = parse(model.respond(second), dialect, tools=tools)
    assert answer.tool_calls == []
    assert answer.content == "get_weather returned: Sunny in Paris get_weather returned: Sunny in Oslo"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_responses_shape_and_rules(dialect: str) -> None:
    """The Responses request shape, a forced tool and `parallel_tool_calls: false` are all read from the text."""
    tools = [
        {"type": "function", "name": "get_time", "parameters": {"type": "object", "properties": {}}},
        {
            "type": "function",
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    ]
    body = {
        "input": "Time in Paris and Oslo?",
        "tools": tools,
        "tool_choice": {"type": "function", "name": "get_weather"},
        "parallel_tool_calls": False,
    }
    rewritten = rewrite_responses_request(body, dialect=dialect).body
    raw = DemoModel(dialect).respond(rewritten)
    assert as_called(raw, dialect, tools) == [("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize("dialect", ["hermes", "gpt_oss", "kimi_k2"])
def test_no_fitting_tool_or_no_tools_answers_in_text(dialect: str) -> None:
    model = DemoModel(dialect, reasoning=False)
    unrelated = rewrite_chat_request(
        {"messages": [{"role": "user", "content": "Hello there"}], "tools": [weather_tool()]}, dialect=dialect
    ).body
    result = parse(model.respond(unrelated), dialect)
    assert result.tool_calls == [] and result.reasoning is None
    assert result.content is not None and "get_weather" in result.content
    plain = parse(model.respond({"messages": [{"role": "user", "content": "Hello"}]}), dialect)
    assert plain.tool_calls == [] and plain.content is not None and plain.content.startswith("I am the demo model")


names = st.from_regex(r"[a-z][a-z0-9]{2,8}(_[a-z0-9]{2,8}){0,2}", fullmatch=True).filter(
    lambda n: not keyword.iskeyword(n)
)
places = st.from_regex(r"[A-Z][a-z]{2,9}", fullmatch=True)
kinds = st.sampled_from(
    [{"type": "string"}, {"type": "integer"}, {"type": "boolean"}, {"type": "string", "enum": ["metric", "imperial"]}]
)


@settings(max_examples=60, deadline=None)
@given(
    dialect=st.sampled_from(DIALECTS),
    name=names,
    params=st.dictionaries(names, kinds, max_size=3),
    place=places,
    number=st.integers(0, 99),
)
def test_demo_output_round_trips(dialect: str, name: str, params: dict[str, Any], place: str, number: int) -> None:
    """Property: whatever tool is offered, the call the demo model means is the call our parser reads."""
    params = {"city": {"type": "string"}, **{k: v for k, v in params.items() if k != "city"}}
    tools = [{"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": params}}}]
    question = f"Please {name.replace('_', ' ')} for {place} with {number} imperial"
    request = {"messages": [{"role": "user", "content": question}], "tools": tools, "tool_choice": "required"}
    body = rewrite_chat_request(request, dialect=dialect)
    model = DemoModel(dialect)
    reply = model.reply(body.body)
    assert [n for n, _ in reply.calls] == [name]
    assert reply.calls[0][1]["city"] == place
    assert as_called(model.write(reply), dialect, tools) == list(reply.calls)
