"""The output policies (DESIGN.md, "Policies and their defaults"): `PolicyFilter` over event
streams, the request shapes it reads, `repair_arguments`, and the invariants as properties:
text and order kept, indexes contiguous, permissive settings change nothing."""

from __future__ import annotations

import json
import sys
import urllib.request
from collections.abc import Iterable, Sequence
from typing import Any

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletionToolChoiceOptionParam, ChatCompletionToolUnionParam
from openai.types.responses import FunctionToolParam
from openai.types.responses.response_create_params import ToolChoice as ResponsesToolChoice
from openai.types.shared import ErrorObject

from tests.wire import replay_chat, replay_responses
from toolcall_middleware import StreamParser
from toolcall_middleware.core import _memo as memo
from toolcall_middleware.core._events import (
    Event,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    TruncatedCall,
)
from toolcall_middleware.core.apis.chat import ChatStreamEmitter
from toolcall_middleware.core.apis.responses import ResponsesStreamEmitter
from toolcall_middleware.core.emitters import Upstream
from toolcall_middleware.core.policy import (
    UNLIMITED,
    MissingExtraError,
    PolicyConfigError,
    PolicyError,
    PolicyEvent,
    PolicyFilter,
    PolicyLimits,
    read_tool_choice,
    read_tools,
    render_call_text,
    repair_arguments,
)

CHAT_TOOL: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(ChatCompletionToolUnionParam)
RESPONSES_TOOL: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(FunctionToolParam)
CHAT_CHOICE: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(ChatCompletionToolChoiceOptionParam)
RESPONSES_CHOICE: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(ResponsesToolChoice)

WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"],
    "additionalProperties": False,
}
RUN_SCHEMA = {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}


def chat_tool(name: str, schema: dict[str, Any] | None = None, strict: bool | None = None) -> dict[str, Any]:
    fn: dict[str, Any] = {"name": name, "description": f"the {name} tool"}
    if schema is not None:
        fn["parameters"] = schema
    if strict is not None:
        fn["strict"] = strict
    tool = {"type": "function", "function": fn}
    CHAT_TOOL.validate_python(tool)  # the shape is OpenAI's
    return tool


def responses_tool(name: str, schema: dict[str, Any] | None, strict: bool | None) -> dict[str, Any]:
    tool = {"type": "function", "name": name, "parameters": schema, "strict": strict}
    RESPONSES_TOOL.validate_python(tool)
    return tool


WEATHER = chat_tool("get_weather", WEATHER_SCHEMA)
STRICT_WEATHER = chat_tool("get_weather", WEATHER_SCHEMA, strict=True)
RUN = chat_tool("run", RUN_SCHEMA)


def call(index: int, name: str, arguments: str, id: str | None = None, pieces: int = 1) -> list[Event]:
    """One call's events, its arguments cut into `pieces` fragments."""
    size = max(1, -(-len(arguments) // pieces))
    fragments = [arguments[i : i + size] for i in range(0, len(arguments), size)] or [""]
    return [
        ToolCallStart(index, id, name),
        *(ToolCallDelta(index, f) for f in fragments),
        ToolCallEnd(index, arguments),
    ]


def run(policy: PolicyFilter, events: Sequence[Event], cuts: Iterable[int] = ()) -> list[PolicyEvent]:
    """Feed `events` in batches cut at `cuts`, then close."""
    points = sorted({c % (len(events) + 1) for c in cuts})
    out: list[PolicyEvent] = []
    last = 0
    for p in [*points, len(events)]:
        out += policy.feed(events[last:p])
        last = p
    return out + policy.close()


def calls_out(out: Sequence[PolicyEvent]) -> list[tuple[int, str | None, str, str]]:
    """(index, id, name, arguments) of the calls that went out."""
    starts = {e.index: e for e in out if isinstance(e, ToolCallStart)}
    ends = {e.index: e.arguments for e in out if isinstance(e, ToolCallEnd)}
    return [(i, s.id, s.name, ends[i]) for i, s in sorted(starts.items())]


def texts(out: Sequence[PolicyEvent]) -> list[str]:
    return [e.text for e in out if isinstance(e, TextDelta)]


def errors_in(out: Sequence[PolicyEvent]) -> list[PolicyError]:
    return [e for e in out if isinstance(e, PolicyError)]


# -- the request: tools and tool_choice -----------------------------------------------------------


def test_both_tool_shapes_are_read_and_only_strict_true_is_strict() -> None:
    tools = [
        chat_tool("a", {"type": "object"}, strict=True),
        chat_tool("b", {"type": "object"}),
        responses_tool("c", {"type": "object"}, True),
        responses_tool("d", None, None),
        {"type": "custom", "custom": {"name": "grammar_tool"}},
        {"type": "web_search"},
    ]
    specs = read_tools(tools)
    assert specs is not None
    assert {n: s.strict for n, s in specs.items()} == {"a": True, "b": False, "c": True, "d": False}
    assert specs["a"].param == "tools[0].function.parameters"
    assert specs["c"].param == "tools[2].parameters"
    assert specs["d"].parameters is None
    assert read_tools(None) is None
    assert read_tools([]) == {}
    ready = read_tools({"f": {"type": "object"}, "g": None})  # the parser's name -> schema form
    assert ready is not None and ready["f"].parameters == {"type": "object"} and ready["g"].parameters is None


@pytest.mark.parametrize(
    ("tools", "param"),
    [
        ("get_weather", "tools"),
        ({"type": "function"}, "tools"),
        ([42], "tools[0]"),
        ([{"type": "function", "function": "x"}], "tools[0].function"),
        ([{"type": "function", "function": {"parameters": {}}}], "tools[0].function.name"),
        ([{"type": "function", "name": ""}], "tools[0].name"),
        ([{"type": "function", "function": {"name": "f", "parameters": "{}"}}], "tools[0].function.parameters"),
        ([{"type": "function", "function": {"name": "f", "strict": "yes"}}], "tools[0].function.strict"),
        ({"f": "not a schema"}, "tools"),
    ],
)
def test_unreadable_tools_name_the_param(tools: Any, param: str) -> None:
    with pytest.raises(PolicyConfigError) as info:
        PolicyFilter(tools)
    assert info.value.param == param
    error = ErrorObject.model_validate(info.value.to_error())  # an OpenAI error object
    assert error.param == param and error.type == "invalid_request_error" and error.message


@pytest.mark.parametrize(
    ("choice", "allowed", "require", "suppress"),
    [
        (None, None, False, False),
        ("auto", None, False, False),
        ("none", None, False, True),
        ("required", None, True, False),
        ({"type": "function", "function": {"name": "run"}}, {"run"}, True, False),
        ({"type": "function", "name": "run"}, {"run"}, True, False),
        (
            {
                "type": "allowed_tools",
                "allowed_tools": {"mode": "auto", "tools": [{"type": "function", "function": {"name": "run"}}]},
            },
            {"run"},
            False,
            False,
        ),
        (
            {"type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "get_weather"}]},
            {"get_weather"},
            True,
            False,
        ),
        ({"type": "custom", "custom": {"name": "grammar_tool"}}, None, False, False),
        ({"type": "web_search_preview"}, None, False, False),
    ],
)
def test_tool_choice_in_every_openai_form(choice: Any, allowed: set[str] | None, require: bool, suppress: bool) -> None:
    if choice is not None:  # each is a shape one of the two APIs accepts
        try:
            CHAT_CHOICE.validate_python(choice)
        except pydantic.ValidationError:
            RESPONSES_CHOICE.validate_python(choice)
    rules = read_tool_choice(choice, read_tools([WEATHER, RUN]))
    assert rules.allowed == (frozenset(allowed) if allowed is not None else None)
    assert (rules.require, rules.suppress) == (require, suppress)


@pytest.mark.parametrize(
    ("choice", "param"),
    [
        ("any", "tool_choice"),
        (1, "tool_choice"),
        ({"type": "function", "function": {"name": "nope"}}, "tool_choice"),
        ({"type": "function", "function": {}}, "tool_choice.function.name"),
        ({"type": "function"}, "tool_choice.name"),
        ({"function": {"name": "run"}}, "tool_choice.type"),
        ({"type": "allowed_tools", "allowed_tools": {"mode": "all", "tools": []}}, "tool_choice.allowed_tools.mode"),
        ({"type": "allowed_tools", "mode": "auto"}, "tool_choice.tools"),
        ({"type": "allowed_tools", "allowed_tools": "run"}, "tool_choice.allowed_tools"),
        ({"type": "allowed_tools", "mode": "auto", "tools": ["run"]}, "tool_choice.tools[0]"),
        (
            {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "x"}]},
            "tool_choice.tools[0]",
        ),
    ],
)
def test_unreadable_tool_choice_names_the_param(choice: Any, param: str) -> None:
    with pytest.raises(PolicyConfigError) as info:
        PolicyFilter([WEATHER, RUN], choice)
    assert info.value.param == param


def test_other_bad_settings_are_clear_errors() -> None:
    with pytest.raises(PolicyConfigError) as info:
        PolicyFilter([WEATHER], "auto", "no")
    assert info.value.param == "parallel_tool_calls"
    bad_schema = chat_tool("f", {"type": "object", "properties": {"x": {"type": "no-such-type"}}}, strict=True)
    with pytest.raises(PolicyConfigError) as info:
        PolicyFilter([bad_schema])
    assert info.value.param == "tools[0].function.parameters"
    loose = PolicyFilter([chat_tool("f", {"type": "object", "properties": {"x": {"type": "no-such-type"}}})])
    assert len(calls_out(run(loose, call(0, "f", '{"x": 1}')))) == 1  # loose: nothing to check against
    with pytest.raises(ValueError, match="max_calls"):
        PolicyLimits(max_calls=0)
    with pytest.raises(ValueError, match="on_exceed"):
        PolicyLimits(on_exceed="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="streaming"):
        PolicyFilter(streaming="live")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="rejected"):
        PolicyFilter(rejected="keep")  # type: ignore[arg-type]


# -- names and tool_choice -------------------------------------------------------------------------

PARIS = '{"city": "Paris"}'


def test_permissive_settings_pass_everything_through() -> None:
    events: list[Event] = [
        ReasoningDelta("think"),
        TextDelta("Hi "),
        *call(0, "get_weather", PARIS, id="functions.get_weather:0", pieces=3),
        TextDelta(" and "),
        *call(1, "anything", "{}", pieces=1),
        TruncatedCall("<tool_call>{"),
    ]
    policy = PolicyFilter()
    assert run(policy, events, [2, 5]) == events
    assert policy.report.calls_found == policy.report.calls_emitted == 2
    assert policy.report.notes == ()


def test_unknown_name_becomes_text_or_is_dropped_or_fails_when_strict() -> None:
    events = [TextDelta("A"), *call(0, "delete_all", '{"x": 1}'), *call(1, "get_weather", PARIS), TextDelta("B")]

    out = run(PolicyFilter([WEATHER]), events)
    assert calls_out(out) == [(0, None, "get_weather", PARIS)]
    assert texts(out) == ["A", render_call_text("delete_all", '{"x": 1}'), "B"]
    assert json.loads(texts(out)[1]) == {"name": "delete_all", "arguments": {"x": 1}}

    policy = PolicyFilter([WEATHER], rejected="drop")
    out = run(policy, events)
    assert texts(out) == ["A", "B"] and len(calls_out(out)) == 1
    assert policy.report.unknown_names == ("delete_all",) and len(policy.report.dropped) == 1

    policy = PolicyFilter([WEATHER], strict=True)
    out = run(policy, events)
    assert out == [TextDelta("A"), out[-1]]
    error = out[-1]
    assert isinstance(error, PolicyError)
    assert (error.code, error.param) == ("unknown_tool", "tools") and "delete_all" in error.message
    assert policy.report.error == error and policy.report.calls_found == 2 and policy.report.calls_emitted == 0


def test_tool_choice_none_lets_no_call_out_even_when_strict() -> None:
    events = [*call(0, "get_weather", PARIS), *call(1, "run", '{"cmd": "ls"}')]
    for strict in (False, True):
        policy = PolicyFilter([STRICT_WEATHER, RUN], "none", strict=strict)
        out = run(policy, events)
        assert calls_out(out) == [] and not errors_in(out)
        assert texts(out) == [render_call_text("get_weather", PARIS), render_call_text("run", '{"cmd": "ls"}')]
        assert [n.reason for n in policy.report.as_text] == ["tool_choice_none", "tool_choice_none"]


def test_forced_function_lets_only_that_name_out_and_requires_it() -> None:
    forced = {"type": "function", "function": {"name": "run"}}
    events = [*call(0, "get_weather", PARIS), *call(1, "run", '{"cmd": "ls"}')]
    out = run(PolicyFilter([WEATHER, RUN], forced), events)
    assert calls_out(out) == [(0, None, "run", '{"cmd": "ls"}')]
    assert texts(out) == [render_call_text("get_weather", PARIS)]

    out = run(PolicyFilter([WEATHER, RUN], forced), [TextDelta("no call"), *call(0, "get_weather", PARIS)])
    error = out[-1]
    assert isinstance(error, PolicyError) and (error.code, error.param) == ("tool_call_required", "tool_choice")
    assert "'run'" in error.message

    out = run(PolicyFilter([WEATHER, RUN], forced, strict=True), events)
    assert [type(e) for e in out] == [PolicyError]
    assert isinstance(out[0], PolicyError) and out[0].code == "tool_not_allowed"


def test_required_fails_at_close_only_when_no_call_went_out() -> None:
    out = run(PolicyFilter([WEATHER], "required"), [TextDelta("I will not")])
    assert out[0] == TextDelta("I will not") and isinstance(out[-1], PolicyError)
    assert out[-1].code == "tool_call_required"

    out = run(PolicyFilter([WEATHER], "required"), call(0, "get_weather", PARIS))
    assert not errors_in(out) and len(calls_out(out)) == 1

    # a call that cannot go out does not satisfy `required`
    out = run(PolicyFilter([WEATHER], "required"), call(0, "nope", "{}"))
    assert isinstance(out[-1], PolicyError) and calls_out(out) == []

    # cut off inside a call: `finish_reason: "length"` says why, not an error
    out = run(PolicyFilter([WEATHER], "required"), [TextDelta("x"), TruncatedCall("<tool_call>{")])
    assert not errors_in(out)


def test_allowed_tools_in_either_shape() -> None:
    chat_choice = {
        "type": "allowed_tools",
        "allowed_tools": {"mode": "required", "tools": [{"type": "function", "function": {"name": "run"}}]},
    }
    responses_choice = {"type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "run"}]}
    for choice in (chat_choice, responses_choice):
        out = run(PolicyFilter([WEATHER, RUN], choice), [*call(0, "get_weather", PARIS), *call(1, "run", "{}")])
        assert [c[2] for c in calls_out(out)] == ["run"]
        out = run(PolicyFilter([WEATHER, RUN], choice), call(0, "get_weather", PARIS))
        assert isinstance(out[-1], PolicyError) and out[-1].code == "tool_call_required"


def test_parallel_tool_calls_false_lets_the_first_call_out_and_renumbers() -> None:
    events = [*call(0, "nope", "{}"), *call(1, "get_weather", PARIS, id="c1"), *call(2, "run", "{}")]
    policy = PolicyFilter([WEATHER, RUN], "auto", False)
    out = run(policy, events)
    # the first call is text (unknown), so the first that can go out is index 1, renumbered 0
    assert calls_out(out) == [(0, "c1", "get_weather", PARIS)]
    assert [(n.action, n.reason, n.index) for n in policy.report.notes] == [
        ("text", "unknown_name", 0),
        ("dropped", "parallel_tool_calls", 2),
    ]


def test_ids_are_kept_and_indexes_renumbered_after_drops() -> None:
    events = [
        *call(0, "a", "{}", id="functions.a:0"),
        *call(1, "x", "{}", id="functions.x:1"),
        *call(2, "b", "{}", id="functions.b:2"),
        *call(3, "x", "{}"),
        *call(4, "c", "{}"),
    ]
    tools = [chat_tool(n, {"type": "object"}) for n in "abc"]
    out = run(PolicyFilter(tools, rejected="drop"), events)
    assert calls_out(out) == [(0, "functions.a:0", "a", "{}"), (1, "functions.b:2", "b", "{}"), (2, None, "c", "{}")]
    assert [e.index for e in out if isinstance(e, (ToolCallStart, ToolCallDelta, ToolCallEnd))] == [0] * 3 + [1] * 3 + [
        2
    ] * 3


# -- arguments: strict, loose, repair --------------------------------------------------------------


def test_strict_arguments_must_be_a_json_object_that_fits_the_schema() -> None:
    ok = call(0, "get_weather", '{"city": "Paris", "days": 3}')
    assert calls_out(run(PolicyFilter([STRICT_WEATHER]), ok)) == [
        (0, None, "get_weather", '{"city": "Paris", "days": 3}')
    ]

    for arguments, reason in [
        ('{"city": "Paris", "days": "3"}', "schema"),
        ('{"town": "Paris"}', "schema"),
        ("{'city': 'Paris'}", "invalid_json"),  # strict: no repair
        ('["Paris"]', "invalid_json"),
    ]:
        policy = PolicyFilter([STRICT_WEATHER])
        out = run(policy, [TextDelta("t"), *call(0, "get_weather", arguments), TextDelta("after")])
        assert out[0] == TextDelta("t") and len(out) == 2, arguments
        error = out[1]
        assert isinstance(error, PolicyError) and error.code == "invalid_tool_arguments"
        assert error.param == "tools[0].function.parameters"
        assert [n.reason for n in policy.report.strict_failures] == [reason]


def test_global_strict_checks_every_tool_and_per_tool_strict_only_its_own() -> None:
    bad = call(0, "get_weather", '{"town": "Paris"}')
    out = run(PolicyFilter([WEATHER], strict=True), bad)
    assert isinstance(out[-1], PolicyError)
    loose = PolicyFilter([WEATHER, chat_tool("run", RUN_SCHEMA, strict=True)])
    out = run(loose, bad)  # get_weather is loose: kept, the mismatch reported
    assert calls_out(out) == [(0, None, "get_weather", '{"town": "Paris"}')]
    (note,) = loose.report.schema_mismatches
    assert note.name == "get_weather" and "city" in note.detail


def test_responses_shaped_strict_tool_names_its_own_param() -> None:
    policy = PolicyFilter([responses_tool("run", RUN_SCHEMA, True)])
    out = run(policy, call(0, "run", '{"cmd": 1}'))
    assert isinstance(out[-1], PolicyError) and out[-1].param == "tools[0].parameters"
    assert "cmd" in out[-1].message


def test_loose_broken_arguments_are_repaired_once() -> None:
    policy = PolicyFilter([WEATHER])
    out = run(policy, call(0, "get_weather", "{'city': 'Paris', 'days': 3,}", pieces=4))
    assert calls_out(out) == [(0, None, "get_weather", '{"city": "Paris", "days": 3}')]
    deltas = [e.arguments for e in out if isinstance(e, ToolCallDelta)]
    assert deltas == ['{"city": "Paris", "days": 3}']  # the repaired text, as one fragment
    assert len(policy.report.repaired) == 1


def test_truncated_arguments_are_never_repaired_into_a_call() -> None:
    cut = '{"cmd": "rm -rf /tmp/bu'
    assert repair_arguments(cut) is None
    policy = PolicyFilter([RUN])
    out = run(policy, call(0, "run", cut))
    assert calls_out(out) == []
    assert texts(out) == [render_call_text("run", cut)]
    assert json.loads(texts(out)[0]) == {"name": "run", "arguments": cut}  # the text, not a command
    assert [n.reason for n in policy.report.as_text] == ["invalid_json"]
    out = run(PolicyFilter([RUN], rejected="drop", repair=False), call(0, "run", cut))
    assert out == []


def test_schema_refs_are_never_fetched(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the policy tried to fetch a schema")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    schema = {"type": "object", "properties": {"x": {"$ref": "http://127.0.0.1:9/schema.json"}}}
    out = run(PolicyFilter([chat_tool("f", schema, strict=True)]), call(0, "f", '{"x": 1}'))
    assert isinstance(out[-1], PolicyError) and "cannot be resolved" in out[-1].message
    local = {"$defs": {"n": {"type": "integer"}}, "type": "object", "properties": {"x": {"$ref": "#/$defs/n"}}}
    assert len(calls_out(run(PolicyFilter([chat_tool("f", local, strict=True)]), call(0, "f", '{"x": 1}')))) == 1


def test_schema_draft_follows_dollar_schema_and_defaults_to_2020_12() -> None:
    # `prefixItems` is 2020-12; draft-07 ignores it
    schema = {"type": "object", "properties": {"p": {"type": "array", "prefixItems": [{"type": "integer"}]}}}
    bad = call(0, "f", '{"p": ["x"]}')
    assert isinstance(run(PolicyFilter([chat_tool("f", schema, strict=True)]), bad)[-1], PolicyError)
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", **schema}
    assert len(calls_out(run(PolicyFilter([chat_tool("f", draft7, strict=True)]), bad))) == 1


def test_without_jsonschema_global_strict_fails_up_front_and_the_rest_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    memo.forget()  # a process without jsonschema: nothing compiled with it (the rules keep what they compiled)
    with pytest.raises(MissingExtraError, match=r"toolcall-middleware\[strict\]"):
        PolicyFilter([WEATHER], strict=True)
    policy = PolicyFilter([WEATHER])  # loose: no schema notes, nothing raised
    out = run(policy, [*call(0, "get_weather", '{"town": 1}'), *call(1, "get_weather", "{city: 'Paris'}")])
    assert calls_out(out) == [(0, None, "get_weather", '{"town": 1}'), (1, None, "get_weather", PARIS)]
    assert policy.report.schema_mismatches == () and len(policy.report.repaired) == 1
    # a tool strict by its own flag (the Agents SDK marks every tool so): the JSON check, and a note
    policy = PolicyFilter([STRICT_WEATHER])
    out = run(policy, call(0, "get_weather", '{"town": 1}'))
    assert len(calls_out(out)) == 1
    assert [(n.action, n.reason) for n in policy.report.notes] == [("kept", "schema_unchecked")]
    out = run(PolicyFilter([STRICT_WEATHER]), call(0, "get_weather", "{city: 'Paris'}"))
    assert isinstance(out[-1], PolicyError) and out[-1].code == "invalid_tool_arguments"


def test_legacy_functions_and_function_call_are_read() -> None:
    functions = [{"name": "run", "parameters": RUN_SCHEMA}, {"name": "get_weather", "parameters": WEATHER_SCHEMA}]
    policy = PolicyFilter(functions, {"name": "run"})
    out = run(policy, [*call(0, "get_weather", PARIS), *call(1, "run", '{"cmd": "ls"}')])
    assert [c[2] for c in calls_out(out)] == ["run"]
    assert isinstance(run(PolicyFilter(functions, {"name": "run"}), [TextDelta("no")])[-1], PolicyError)
    assert calls_out(run(PolicyFilter(functions, "none"), call(0, "run", "{}"))) == []


# -- limits ----------------------------------------------------------------------------------------


def test_max_calls_fails_or_drops() -> None:
    events = [c for i in range(4) for c in call(i, "f", "{}")]
    out = run(PolicyFilter(limits=PolicyLimits(max_calls=2)), events)
    assert len(calls_out(out)) == 2 and isinstance(out[-1], PolicyError) and out[-1].code == "too_many_tool_calls"
    assert out[-1].param is None
    policy = PolicyFilter(limits=PolicyLimits(max_calls=2, on_exceed="drop"))
    out = run(policy, events)
    assert [c[0] for c in calls_out(out)] == [0, 1] and not errors_in(out)
    assert [n.reason for n in policy.report.dropped] == ["max_calls", "max_calls"]


def test_max_arguments_bytes_fails_or_drops_and_stops_buffering() -> None:
    big = json.dumps({"text": "é" * 40})  # 80+ bytes in UTF-8, fewer characters
    events = [*call(0, "f", big, pieces=8), *call(1, "f", "{}")]
    limits = PolicyLimits(max_arguments_bytes=60)
    out = run(PolicyFilter(limits=limits), events)
    assert calls_out(out) == [] and isinstance(out[-1], PolicyError) and out[-1].code == "tool_arguments_too_large"
    policy = PolicyFilter(limits=PolicyLimits(max_arguments_bytes=60, on_exceed="drop"))
    out = run(policy, events)
    assert calls_out(out) == [(0, None, "f", "{}")]
    assert [n.reason for n in policy.report.dropped] == ["max_arguments_bytes"]
    # a repair that grows the arguments past the cap (quotes added) is over it too
    out = run(PolicyFilter(limits=PolicyLimits(max_arguments_bytes=10)), call(0, "f", "{a: True}"))
    assert isinstance(out[-1], PolicyError) and out[-1].code == "tool_arguments_too_large"
    # a call refused by name that is over the cap is dropped rather than rendered
    out = run(PolicyFilter([WEATHER], limits=PolicyLimits(max_arguments_bytes=60)), call(0, "nope", big, pieces=8))
    assert out == []


def test_many_calls_and_huge_arguments_stay_linear_and_bounded() -> None:
    # 2,000 calls of 20 KB each through a 1 KB cap: every call is settled at its first fragment over the cap
    piece = '"' + "x" * 1000 + '"'
    events: list[Event] = []
    for i in range(2000):
        events += [ToolCallStart(i, None, "f"), *[ToolCallDelta(i, piece)] * 20, ToolCallEnd(i, piece * 20)]
    policy = PolicyFilter(limits=PolicyLimits(max_arguments_bytes=1024, on_exceed="drop", max_calls=None))
    assert run(policy, events) == []
    assert policy.report.calls_found == 2000 and len(policy.report.dropped) == 2000


# -- order, errors, streaming ----------------------------------------------------------------------


def test_nothing_follows_a_policy_error() -> None:
    policy = PolicyFilter([STRICT_WEATHER])
    events = [
        TextDelta("a"),
        *call(0, "get_weather", "{}"),
        TextDelta("b"),
        *call(1, "get_weather", PARIS),
        ReasoningDelta("r"),
    ]
    out = policy.feed(events[:4]) + policy.feed(events[4:]) + policy.close()
    assert out[0] == TextDelta("a") and isinstance(out[1], PolicyError) and len(out) == 2
    assert policy.report.calls_found == 2
    assert [(n.action, n.reason) for n in policy.report.notes] == [("error", "schema"), ("dropped", "after_error")]
    assert policy.close() == []


def test_bad_event_streams_are_clear_errors() -> None:
    policy = PolicyFilter()
    with pytest.raises(ValueError, match="without an open ToolCallStart"):
        policy.feed([ToolCallDelta(0, "{}")])
    policy = PolicyFilter()
    policy.feed([ToolCallStart(0, None, "f")])
    with pytest.raises(ValueError, match="already open"):
        policy.feed([ToolCallStart(0, None, "f")])
    policy = PolicyFilter()
    policy.close()
    with pytest.raises(RuntimeError):
        policy.feed([TextDelta("x")])


def test_calls_that_never_end_are_dropped_at_close() -> None:
    policy = PolicyFilter()
    out = run(policy, [TextDelta("a"), ToolCallStart(0, None, "f"), ToolCallDelta(0, "{"), TextDelta("b")])
    assert out == [TextDelta("a"), TextDelta("b")]  # "b" waited for the call, and is kept
    assert [n.reason for n in policy.report.dropped] == ["unfinished"]


def test_text_after_a_held_call_waits_for_it() -> None:
    policy = PolicyFilter([STRICT_WEATHER], streaming="incremental")
    first = policy.feed([TextDelta("a"), ToolCallStart(0, None, "get_weather"), ToolCallDelta(0, '{"city": ')])
    assert first == [TextDelta("a")]  # strict: held until its end, even when streaming
    assert policy.feed([TextDelta("b")]) == []
    rest = policy.feed([ToolCallDelta(0, '"Paris"}'), ToolCallEnd(0, PARIS)]) + policy.close()
    assert [type(e) for e in rest] == [ToolCallStart, ToolCallDelta, ToolCallDelta, ToolCallEnd, TextDelta]


def test_incremental_streaming_passes_loose_fragments_at_once() -> None:
    policy = PolicyFilter([WEATHER], streaming="incremental")
    assert policy.feed([ToolCallStart(5, "id5", "get_weather"), ToolCallDelta(5, '{"ci')]) == [
        ToolCallStart(0, "id5", "get_weather"),
        ToolCallDelta(0, '{"ci'),
    ]
    assert policy.feed([TextDelta("later")]) == []
    assert policy.feed([ToolCallDelta(5, 'ty": "Paris"}'), ToolCallEnd(5, PARIS)]) == [
        ToolCallDelta(0, 'ty": "Paris"}'),
        ToolCallEnd(0, PARIS),
        TextDelta("later"),
    ]


def test_incremental_failures_after_fragments_went_out_fail_the_response() -> None:
    # broken JSON: it cannot be repaired or turned into text any more
    policy = PolicyFilter(streaming="incremental")
    out = run(policy, call(0, "f", "{'a': 1}", pieces=2))
    assert [type(e) for e in out] == [ToolCallStart, ToolCallDelta, ToolCallDelta, PolicyError]
    # over the size cap mid-stream: an error even with on_exceed="drop"
    limits = PolicyLimits(max_arguments_bytes=10, on_exceed="drop")
    out = run(PolicyFilter(streaming="incremental", limits=limits), call(0, "f", json.dumps({"a": "x" * 20}), pieces=4))
    assert isinstance(out[-1], PolicyError) and out[-1].code == "tool_arguments_too_large"
    # the output ends inside a streamed call
    out = run(PolicyFilter(streaming="incremental"), [ToolCallStart(0, None, "f"), ToolCallDelta(0, "{")])
    assert isinstance(out[-1], PolicyError) and out[-1].code == "incomplete_tool_call"


def test_incremental_streaming_applies_parallel_and_count_rules_before_the_start() -> None:
    events = [c for i in range(3) for c in call(i, "f", '{"a": 1}', pieces=2)]
    out = run(PolicyFilter(parallel_tool_calls=False, streaming="incremental"), events)
    assert [c[0] for c in calls_out(out)] == [0] and not errors_in(out)
    out = run(PolicyFilter(streaming="incremental", limits=PolicyLimits(max_calls=2)), events)
    assert len(calls_out(out)) == 2 and isinstance(out[-1], PolicyError) and out[-1].code == "too_many_tool_calls"


def test_interleaved_calls_keep_the_order_of_their_starts() -> None:
    # the parsers never interleave calls, but the stage does not depend on it
    policy = PolicyFilter()
    out = run(
        policy,
        [
            ToolCallStart(7, None, "a"),
            ToolCallStart(3, None, "b"),
            ToolCallEnd(3, "{}"),
            TextDelta("t"),
            ToolCallEnd(7, '{"x": 1}'),
        ],
    )
    assert out == [
        ToolCallStart(0, None, "a"),
        ToolCallEnd(0, '{"x": 1}'),
        ToolCallStart(1, None, "b"),
        ToolCallEnd(1, "{}"),
        TextDelta("t"),
    ]
    # and when the first fails, what waited behind it never goes out
    policy = PolicyFilter(strict=True)
    events = [ToolCallStart(0, None, "a"), ToolCallStart(1, None, "b"), ToolCallEnd(1, "{}"), ToolCallEnd(0, "[]")]
    out = run(policy, events)
    assert [type(e) for e in out] == [PolicyError]
    assert [(n.action, n.reason, n.index) for n in policy.report.notes] == [
        ("error", "invalid_json", 0),
        ("dropped", "after_error", 1),
    ]
    # a streamable call waiting behind a held one is ruled on when its turn comes
    policy = PolicyFilter([STRICT_WEATHER, RUN], "auto", False, streaming="incremental")
    events = [ToolCallStart(0, None, "get_weather"), ToolCallStart(1, None, "run"), ToolCallDelta(1, "{}")]
    out = run(policy, [*events, ToolCallEnd(0, PARIS), ToolCallEnd(1, "{}")])
    assert calls_out(out) == [(0, None, "get_weather", PARIS)]
    assert [(n.reason, n.index) for n in policy.report.dropped] == [("parallel_tool_calls", 1)]


def test_report_is_a_json_record() -> None:
    policy = PolicyFilter([WEATHER], "auto", False)
    run(policy, [*call(0, "nope", "{}"), *call(1, "get_weather", '{"x": 1}'), *call(2, "get_weather", PARIS)])
    record = policy.report.to_dict()
    assert json.loads(json.dumps(record)) == record
    assert record["calls_found"] == 3 and record["calls_emitted"] == 1
    assert (record["as_text"], record["dropped"], record["schema_mismatches"]) == (1, 1, 1)
    assert record["unknown_names"] == ["nope"] and record["error"] is None


# -- through the parser and the emitters -----------------------------------------------------------

HERMES_OUTPUT = (
    "Checking.\n"
    '<tool_call>\n{"name": "lookup", "arguments": {"q": 1}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "run", "arguments": {"cmd": "ls"}}\n</tool_call>'
)


def policed(text: str, policy: PolicyFilter, size: int = 7) -> list[list[PolicyEvent]]:
    parser = StreamParser("hermes")
    batches = [policy.feed(parser.feed(text[i : i + size])) for i in range(0, len(text), size)]
    return [*batches, policy.feed(parser.close()) + policy.close()]


def test_dropped_calls_leave_contiguous_indexes_the_sdk_accumulates() -> None:
    policy = PolicyFilter([WEATHER, RUN], rejected="drop")
    batches = policed(HERMES_OUTPUT, policy)
    emitter = ChatStreamEmitter(Upstream(model="m", id="chatcmpl-1", created=1))
    chunks = [c for batch in batches for c in emitter.feed(e for e in batch if not isinstance(e, PolicyError))]
    snapshot = replay_chat(chunks + emitter.finish())
    calls = snapshot.choices[0].message.tool_calls or []
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("get_weather", {"city": "Paris"}),
        ("run", {"cmd": "ls"}),
    ]
    assert snapshot.choices[0].finish_reason == "tool_calls"
    assert policy.report.unknown_names == ("lookup",)

    policy = PolicyFilter([WEATHER, RUN], "auto", False)
    r_emitter = ResponsesStreamEmitter(Upstream(model="m"), request={"tools": [WEATHER, RUN]})
    events = r_emitter.start()
    for batch in policed(HERMES_OUTPUT, policy, size=5):
        events += r_emitter.feed(e for e in batch if not isinstance(e, PolicyError))
    final = replay_responses(events + r_emitter.finish())
    text = "".join(p.text for item in final.output if item.type == "message" for p in item.content)
    assert text.startswith("Checking.") and '"lookup"' in text  # the unknown call, as text
    assert [(i.name, i.arguments) for i in final.output if i.type == "function_call"] == [
        ("get_weather", '{"city": "Paris"}')
    ]


# -- properties over random event streams ----------------------------------------------------------

NAMES = ("get_weather", "run", "search", "other")
SCHEMA = {"type": "object", "maxProperties": 2}
BROKEN = ("{'a': 1,}", '{"cmd": "rm -rf /tmp/bu', "not json", "[1, 2]", "{a: True, b: None}", "")

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
json_values = st.recursive(
    json_scalars | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
json_objects = st.dictionaries(st.text(max_size=6), json_values, max_size=4)


@st.composite
def event_streams(draw: st.DrawFn, valid: bool = True) -> list[Event]:
    """Text, reasoning and whole calls in random order (a parser's output), maybe cut off at the end."""
    events: list[Event] = []
    index = 0
    for _ in range(draw(st.integers(0, 10))):
        kind = draw(st.sampled_from(("text", "reasoning", "call", "call")))
        if kind == "text":
            events.append(TextDelta(draw(st.text(min_size=1, max_size=8))))
        elif kind == "reasoning":
            events.append(ReasoningDelta(draw(st.text(min_size=1, max_size=8))))
        else:
            name = draw(st.sampled_from(NAMES) | st.text(min_size=1, max_size=6))
            if valid or draw(st.booleans()):
                arguments = json.dumps(draw(json_objects), ensure_ascii=draw(st.booleans()))
            else:
                arguments = draw(st.sampled_from(BROKEN))
            call_id = draw(st.none() | st.text(min_size=1, max_size=6))
            events += call(index, name, arguments, id=call_id, pieces=draw(st.integers(1, 4)))
            index += 1
    if draw(st.booleans()):
        events.append(TruncatedCall(draw(st.text(max_size=8))))
    return events


@st.composite
def policies(draw: st.DrawFn) -> dict[str, Any]:
    """Random but valid settings."""
    offered = draw(st.none() | st.lists(st.sampled_from(NAMES[:3]), unique=True))
    tools = None
    if offered is not None:
        tools = [chat_tool(n, SCHEMA, strict=draw(st.sampled_from((None, False, True)))) for n in offered]
    choices: list[Any] = [None, "auto", "none", "required"]
    if offered:
        choices.append({"type": "function", "function": {"name": draw(st.sampled_from(offered))}})
        allowed = draw(st.lists(st.sampled_from(offered), unique=True))
        mode = draw(st.sampled_from(("auto", "required")))
        choices.append(
            {"type": "allowed_tools", "mode": mode, "tools": [{"type": "function", "name": n} for n in allowed]}
        )
    return {
        "tools": tools,
        "tool_choice": draw(st.sampled_from(choices)),
        "parallel_tool_calls": draw(st.sampled_from((None, True, False))),
        "strict": draw(st.booleans()),
        "repair": draw(st.booleans()),
        "streaming": draw(st.sampled_from(("whole", "incremental"))),
        "rejected": draw(st.sampled_from(("text", "drop"))),
        "limits": PolicyLimits(
            max_calls=draw(st.none() | st.integers(1, 3)),
            max_arguments_bytes=draw(st.none() | st.integers(2, 60)),
            on_exceed=draw(st.sampled_from(("error", "drop"))),
        ),
    }


cuts = st.lists(st.integers(0, 10**6), max_size=6)


@settings(max_examples=300, deadline=None)
@given(event_streams(), st.sampled_from(("whole", "incremental")), cuts)
def test_permissive_settings_equal_the_input(events: list[Event], streaming: Any, batching: list[int]) -> None:
    assert run(PolicyFilter(limits=UNLIMITED, streaming=streaming), events, batching) == events
    # offering every name, loose, changes nothing either (schema mismatches are only noted)
    tools = [chat_tool(n, SCHEMA) for n in {e.name for e in events if isinstance(e, ToolCallStart)}]
    assert run(PolicyFilter(tools, "auto", True, limits=UNLIMITED, streaming=streaming), events, batching) == events


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event_streams(valid=False), policies(), cuts)
def test_any_policy_keeps_text_and_order_and_numbers_calls_contiguously(
    events: list[Event], options: dict[str, Any], batching: list[int]
) -> None:
    policy = PolicyFilter(**options)
    out = run(policy, events, batching)
    report = policy.report

    # at most one error, and nothing after it
    errs = errors_in(out)
    assert len(errs) <= 1 and (not errs or out[-1] is errs[0]) and report.error == (errs[0] if errs else None)

    # calls: indexes 0, 1, 2… in order, each call's events together, arguments a JSON object
    call_events = [e for e in out if isinstance(e, (ToolCallStart, ToolCallDelta, ToolCallEnd))]
    starts = [e for e in call_events if isinstance(e, ToolCallStart)]
    assert [s.index for s in starts] == list(range(len(starts)))
    current = -1
    fragments: list[str] = []
    for e in call_events:
        if isinstance(e, ToolCallStart):
            assert e.index == current + 1 and not fragments
            current = e.index
        else:
            assert e.index == current
            if isinstance(e, ToolCallDelta):
                fragments.append(e.arguments)
            else:
                assert "".join(fragments) == e.arguments and isinstance(json.loads(e.arguments), dict)
                fragments = []
    assert report.calls_emitted == len(starts)
    assert report.calls_found == sum(isinstance(e, ToolCallStart) for e in events)

    # call order: what went out is a subsequence of what came in
    incoming = iter([(e.id, e.name) for e in events if isinstance(e, ToolCallStart)])
    assert all(any(pair == (s.id, s.name) for pair in incoming) for s in starts)

    # text and reasoning: every piece, in order (a prefix of them if the response failed), with
    # refused calls rendered between them
    in_text = [e.text for e in events if isinstance(e, TextDelta)]
    kept = [t for t in texts(out) if not t.startswith('{"name": ')]
    assert kept == (in_text[: len(kept)] if errs else in_text)
    if options["rejected"] == "drop":
        assert len(kept) == len(texts(out))
    in_reasoning = [e for e in events if isinstance(e, ReasoningDelta)]
    out_reasoning = [e for e in out if isinstance(e, ReasoningDelta)]
    assert out_reasoning == (in_reasoning[: len(out_reasoning)] if errs else in_reasoning)

    # the rules
    names = [s.name for s in starts]
    rules = read_tool_choice(options["tool_choice"], read_tools(options["tools"]))
    if rules.suppress:
        assert not starts
    if rules.offered is not None:
        assert set(names) <= set(rules.offered)
    if rules.allowed is not None:
        assert set(names) <= rules.allowed
    if options["parallel_tool_calls"] is False:
        assert len(starts) <= 1
    cap = options["limits"].max_calls
    assert cap is None or len(starts) <= cap
    if rules.require and not errs:
        assert starts or any(isinstance(e, TruncatedCall) for e in events)
    if options["limits"].max_arguments_bytes is not None:
        ends = [e.arguments for e in call_events if isinstance(e, ToolCallEnd)]
        assert all(len(a.encode("utf-8", "surrogatepass")) <= options["limits"].max_arguments_bytes for a in ends)


@settings(max_examples=200, deadline=None)
@given(event_streams(valid=False), policies(), cuts, cuts)
def test_batching_does_not_change_the_output(
    events: list[Event], options: dict[str, Any], one: list[int], other: list[int]
) -> None:
    assert run(PolicyFilter(**options), events, one) == run(PolicyFilter(**options), events, other)


# -- repair_arguments ------------------------------------------------------------------------------

REPAIRED = [
    ('{"a": 1,}', {"a": 1}),
    ('{"a": [1, 2,],}', {"a": [1, 2]}),
    ('{"a": "x",,}', {"a": "x"}),
    ("{'city': 'Paris'}", {"city": "Paris"}),
    ("{'a': \"it's\"}", {"a": "it's"}),
    ("{'a': 'x\\'y'}", {"a": "x'y"}),
    ('{"a": True, "b": None, "c": False}', {"a": True, "b": None, "c": False}),
    ("{'nested': {'k': [1, 2, {'x': None},],},}", {"nested": {"k": [1, 2, {"x": None}]}}),
    ('{city: "Paris", days: 3}', {"city": "Paris", "days": 3}),
    ('{"a": 1 "b": 2}', {"a": 1, "b": 2}),
    ('{"a": "x"\n"b": [1, 2,]\n"c": {}}', {"a": "x", "b": [1, 2], "c": {}}),
    ('"{\\"city\\": \\"Paris\\"}"', {"city": "Paris"}),  # double-encoded
    ("\"{'city': 'Paris'}\"", {"city": "Paris"}),  # double-encoded and single-quoted
    ('{"a": 1 // a comment\n}', {"a": 1}),
    ('/* lead */ {"a": /* mid */ 1} // tail', {"a": 1}),
    ('{"a": 1, # hash comment\n "b": 2}', {"a": 1, "b": 2}),
    ('{"a": "line1\nline2"}', {"a": "line1\nline2"}),  # a raw newline inside a string
    ('{\\n  "a": 1\\n}', {"a": 1}),  # a literal backslash-n between tokens
    ('{"path": "C:\\Users\\dir"}', {"path": "C:\\Users\\dir"}),  # invalid escapes kept as written
    ('{"re": "\\d+\\.\\w"}', {"re": "\\d+\\.\\w"}),
    (
        '{"a": 01, "b": .5, "c": +1, "d": 5., "e": -00.25E+2, "f": 1e-3,}',
        {"a": 1, "b": 0.5, "c": 1, "d": 5.0, "e": -25.0, "f": 0.001},
    ),
    ('{"a": "caf\\u00e9 \\ud83d\\ude00",}', {"a": "café 😀"}),
    ('{"a": "\\ud83d",}', {"a": "\ud83d"}),  # a lone surrogate stays escaped
    ("{}", {}),
    ("{,}", {}),
]

REFUSED = [
    '{"cmd": "rm -rf /tmp/bu',  # cut inside a string
    '{"cmd": "rm -rf /tmp/build"',  # cut after a string
    '{"a": [1, 2',  # cut inside an array
    '{"a": {"b": 1}',  # cut inside a nested object
    '{"a": ',
    '{"a": "b\\',  # a dangling escape
    '{"a": 1 /* a comment that never ends',
    "{'a': 'x",
    '"{\\"cmd\\": \\"rm -rf /tmp/bu"',  # double-encoded and cut
    '{"a": [1, 2}',  # mismatched
    '{"a": 1}}',  # an extra closer
    '{"a": 1} and then some',  # text after the object
    'Sure! {"a": 1}',  # text before it
    '```json\n{"a": 1}\n```',
    '{"a": "he said "hi" ok"}',  # unescaped quotes: a guess
    '{"a" 1}',  # a missing colon
    '{"a": undefined}',
    '{"a": NaN}',
    '{"a": tru}',
    "{'a': 'it''s'}",
    "{'a': '''x'''}",
    '{"a": `x`}',
    "{'a': '\\x41'}",  # "A" in Python, a backslash in a path: a guess either way
    "{'path': 'C:\\apps'}",
    '{"a": [1,,2]}',  # a hole in JavaScript
    '{"a": [,1]}',
    '{"a": [1, 2,,]}',
    '{"a": [1 2]}',
    '{"a": ["x" "y"]}',  # one string in Python
    '{"a":}',
    '{"a": 1,, :}',
    '{"a": 0x1F}',
    '{"a": 1_000}',
    '{"a": --1}',
    '{"a": 1e}',
    '{"a": Infinity}',
    '{{"a": 1}}',
    "{[1]: 2}",
    '{"a": 1 "b"}',
    '{"a": 1e400,}',
    "[1, 2]",
    "42",
    '"just a string"',
    "",
    "   ",
    "{" * 200 + "}" * 200,
]


@pytest.mark.parametrize(("text", "value"), REPAIRED)
def test_repairs(text: str, value: Any) -> None:
    fixed = repair_arguments(text)
    assert fixed is not None and json.loads(fixed) == value


@pytest.mark.parametrize("text", REFUSED)
def test_refuses_what_it_could_only_guess(text: str) -> None:
    assert repair_arguments(text) is None


def test_valid_objects_come_back_unchanged() -> None:
    for text in ('{"a": 1, "a": 2}', '{"a": 1}\n', '{ "x" : [ ] }'):
        assert repair_arguments(text) == text
    assert repair_arguments('"{\\"a\\": 1, \\"a\\": 2}"') == '{"a": 1, "a": 2}'  # unwrapped as written


@settings(max_examples=300, deadline=None)
@given(json_objects, st.booleans())
def test_property_valid_json_is_returned_as_is(value: dict[str, Any], ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert repair_arguments(text) == text
    assert repair_arguments(json.dumps(text)) == text  # double-encoded: unwrapped as written


def loose(value: Any, data: st.DataObject) -> str:
    """`value` written the way models break JSON: single quotes, Python literals, bare keys,
    trailing, doubled and missing commas between members, comments, literal `\\n`s between tokens."""

    def gap() -> str:
        return data.draw(st.sampled_from(("", " ", "\n", " /* c */ ", " // c\n", " # c\n", "\\n")))

    def string(s: str) -> str:
        if all(c not in "'\\" and c.isprintable() for c in s) and data.draw(st.booleans()):
            return "'" + s + "'"
        return json.dumps(s, ensure_ascii=data.draw(st.booleans()))

    def key(k: str) -> str:
        bare = k.isidentifier() and k.isascii() and k not in ("true", "false", "null", "True", "False", "None")
        return k if bare and data.draw(st.booleans()) else string(k)

    def comma(choices: tuple[str, ...]) -> str:
        return data.draw(st.sampled_from(choices))

    if isinstance(value, dict):
        members = [gap() + key(k) + gap() + ":" + gap() + loose(v, data) for k, v in value.items()]
        body = "".join(m + comma((",", ",,", " ")) for m in members[:-1]) + "".join(members[-1:])
        return "{" + comma(("", ",")) + body + (comma(("", ",", ",,")) if members else "") + gap() + "}"
    if isinstance(value, list):
        items = [gap() + loose(v, data) for v in value]
        return "[" + ",".join(items) + (comma(("", ",")) if items else "") + gap() + "]"
    if isinstance(value, str):
        return string(value)
    if isinstance(value, bool) or value is None:
        return data.draw(st.sampled_from(({True: "true", False: "false", None: "null"}[value], repr(value))))
    return json.dumps(value)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_objects, st.data())
def test_property_loose_writing_repairs_to_exactly_the_value(value: dict[str, Any], data: st.DataObject) -> None:
    text = loose(value, data)
    fixed = repair_arguments(text)
    assert fixed is not None, text
    assert json.loads(fixed) == value


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_objects, st.data())
def test_property_a_cut_off_object_is_never_repaired(value: dict[str, Any], data: st.DataObject) -> None:
    writing = data.draw(st.sampled_from(("json", "python", "loose")))
    text = json.dumps(value) if writing == "json" else repr(value) if writing == "python" else loose(value, data)
    cut = data.draw(st.integers(1, len(text) - 1))
    assert repair_arguments(text[:cut]) is None, text[:cut]


@settings(max_examples=300, deadline=None)
@given(json_objects)
def test_property_python_literals_repair_to_the_value_or_nothing(value: dict[str, Any]) -> None:
    fixed = repair_arguments(repr(value))
    assert fixed is None or json.loads(fixed) == value
    plain = json.dumps(value)
    if all(c.isalnum() or c in ' {}[]:,."-+' for c in plain):
        assert fixed is not None and json.loads(fixed) == value


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("{}[]:,'\"\\ abc01TNe.-/#*\n")), max_size=30))
def test_property_any_text_gives_an_object_or_nothing(text: str) -> None:
    fixed = repair_arguments(text)
    assert fixed is None or isinstance(json.loads(fixed), dict)
