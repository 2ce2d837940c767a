"""The `kimi_k2` (section tokens) and `kimi_k3` (XTML) dialects.

Every sample is parsed whole, streamed one character at a time and at random splits, and all
parses must agree; then the merged result is checked.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import calls, check_streams, random_splits, split_at, stream_parse
from toolcall_middleware import (
    ReasoningDelta,
    StreamParser,
    TextDelta,
    ToolCallEnd,
    ToolCallStart,
    dialect_for_model,
    merge_events,
    parse,
)
from toolcall_middleware.core._result import ParseResult

SECTION = "<|tool_calls_section_begin|>"
SECTION_END = "<|tool_calls_section_end|>"
BEGIN = "<|tool_call_begin|>"
ARGS = "<|tool_call_argument_begin|>"
END = "<|tool_call_end|>"

K2 = {"model": "moonshotai/Kimi-K2-Instruct-0905"}
K26 = {"model": "moonshotai/Kimi-K2.6"}  # thinking on by default: the output starts inside <think>
K3 = {"model": "moonshotai/Kimi-K3"}
K3_NO_THINK = {
    "model": "moonshotai/Kimi-K3",
    "thinking": False,
    "generation_prompt": '<|open|>message role="assistant"<|sep|><|open|>response<|sep|>',
}


def tools(*names: str) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in names]


def k2_call(call_id: str, args: str) -> str:
    return f"{BEGIN}{call_id}{ARGS}{args}{END}"


def k3_arg(key: str, kind: str, value: str) -> str:
    return f'<|open|>argument key="{key}" type="{kind}"<|sep|>{value}<|close|>argument<|sep|>'


def k3_call(name: str, *args: str) -> str:
    return f'<|open|>call tool="{name}" index="1"<|sep|>{"".join(args)}<|close|>call<|sep|>'


def k3_tools(*calls: str) -> str:
    return f"<|open|>tools<|sep|>{''.join(calls)}<|close|>tools<|sep|>"


def check(raw: str, **kwargs: Any) -> ParseResult:
    """The whole parse, after asserting that every stream of `raw` gives the same."""
    return check_streams(raw, seeds=range(3), **kwargs)


# -- kimi_k2 ---------------------------------------------------------------------------------


def test_k2_section_gives_calls_with_the_models_ids() -> None:
    raw = (
        "Two lookups. "
        + SECTION
        + k2_call("functions.get_weather:0", '{"city": "Paris"}')
        + k2_call("functions.get_weather:1", '{"city": "Tokyo"}')
        + SECTION_END
    )
    r = check(raw, **K2)
    assert r.content == "Two lookups. " and r.reasoning is None
    assert calls(r) == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})]
    assert [c.id for c in r.tool_calls] == ["functions.get_weather:0", "functions.get_weather:1"]
    assert r.finish_reason == "tool_calls"


def test_k2_content_around_the_section_is_verbatim() -> None:
    raw = "Before. " + SECTION + k2_call("functions.f:0", "{}") + SECTION_END + " After tools."
    r = check(raw, **K2)
    assert r.content == "Before.  After tools."
    assert calls(r) == [("f", {})]


def test_k2_id_without_prefix_and_bare_counter() -> None:
    r = check(SECTION + k2_call("get_weather:0", '{"a": 1}') + SECTION_END, **K2)
    assert calls(r) == [("get_weather", {"a": 1})] and r.tool_calls[0].id == "get_weather:0"
    bare = SECTION + k2_call("3", '{"a": 1}') + SECTION_END
    r = check(bare, **K2, tools=tools("get_weather"))
    assert calls(r) == [("get_weather", {"a": 1})] and r.tool_calls[0].id == "3"
    # With two tools the counter names neither: the call is malformed, and its text is content.
    r = check(bare, **K2, tools=tools("get_weather", "get_time"))
    assert r.tool_calls == [] and r.content == k2_call("3", '{"a": 1}')


def test_k2_singular_section_spaces_and_noise() -> None:
    raw = (
        "Hi <|tool_call_section_begin|> noise "
        + BEGIN
        + " functions.f:0 "
        + ARGS
        + ' {"k": "v"} '
        + END
        + " "
        + "<|tool_call_section_end|>"
    )
    r = check(raw, **K2)
    assert r.content == "Hi " and calls(r) == [("f", {"k": "v"})]
    assert r.tool_calls[0].id == "functions.f:0"


def test_k2_marker_inside_a_json_string_stays_in_the_value() -> None:
    value = f"stop at {END} and {SECTION_END}; </think> too"
    raw = SECTION + k2_call("functions.write_file:0", json.dumps({"content": value})) + SECTION_END
    r = check(raw, **K2)
    assert calls(r) == [("write_file", {"content": value})] and r.content is None


def test_k2_malformed_call_is_content_and_the_next_call_still_parses() -> None:
    bad = k2_call("functions.f:0", "{not json")
    raw = SECTION + bad + k2_call("functions.g:1", "{}") + SECTION_END + "!"
    r = check(raw, **K2)
    assert r.content == bad + "!" and calls(r) == [("g", {})]


def test_k2_each_call_is_emitted_when_its_own_end_arrives() -> None:
    p = StreamParser(**K2)
    first = p.feed(SECTION + k2_call("functions.f:0", '{"a": 1}'))
    assert [type(e) for e in first if isinstance(e, (ToolCallStart, ToolCallEnd))] == [ToolCallStart, ToolCallEnd]
    second = p.feed(BEGIN + "functions.g:1" + ARGS + "{}")
    assert not any(isinstance(e, ToolCallStart) for e in second)
    rest = p.feed(END + SECTION_END) + p.close()
    assert [e.name for e in rest if isinstance(e, ToolCallStart)] == ["g"]


def test_k2_truncated_call_is_never_a_call() -> None:
    raw = SECTION + k2_call("functions.f:0", '{"a": 1}') + BEGIN + "functions.g:1" + ARGS + '{"city": "Ma'
    r = check(raw, **K2)
    assert calls(r) == [("f", {"a": 1})]  # the complete first call is kept
    assert r.content is None and r.finish_reason == "length"
    assert r.truncated == BEGIN + "functions.g:1" + ARGS + '{"city": "Ma'
    r = check("Hi " + SECTION + BEGIN + "functions.g", **K2)
    assert r.tool_calls == [] and r.content == "Hi " and r.truncated == BEGIN + "functions.g"


def test_k2_call_without_a_section_and_inside_a_fence() -> None:
    r = check("Calling " + k2_call("functions.f:0", "{}") + " done", **K2)
    assert r.content == "Calling  done" and calls(r) == [("f", {})]
    # Like every dialect's, a section inside a markdown fence is an example, not a call.
    fenced = "```\n" + SECTION + k2_call("functions.f:0", "{}") + SECTION_END + "\n```"
    r = check(fenced, **K2)
    assert r.content == fenced and r.tool_calls == []


def test_k2_thinking_models_start_inside_reasoning() -> None:
    raw = "Plan it.</think>Sure." + SECTION + k2_call("functions.f:0", "{}") + SECTION_END
    r = check(raw, **K26)
    assert r.reasoning == "Plan it." and r.content == "Sure." and calls(r) == [("f", {})]
    assert check("Plan it.", model="kimi-k2-thinking").reasoning == "Plan it."
    assert check("Plan it.", model="kimi-k2.5").reasoning == "Plan it."
    assert check("Plan it.", **K26, thinking=False).content == "Plan it."
    assert check("Plan it.", **K2).content == "Plan it."


def test_k2_section_before_think_close_ends_reasoning() -> None:
    raw = "Need the weather. " + SECTION + k2_call("functions.get_weather:0", '{"city": "Rome"}') + SECTION_END
    r = check(raw, **K26)
    assert r.reasoning == "Need the weather." and r.content is None
    assert calls(r) == [("get_weather", {"city": "Rome"})]


def test_k2_section_in_the_reasoning_channel_gives_calls() -> None:
    call = k2_call("functions.get_weather:0", '{"city": "Oslo"}')
    raw = "The user wants the weather. " + SECTION + call + SECTION_END

    def run(pieces: list[str]) -> ParseResult:
        p = StreamParser(**K26)
        events = [e for piece in pieces for e in p.feed_reasoning(piece)] + p.close()
        assert not any(isinstance(e, TextDelta) for e in events)
        return merge_events(events)

    whole = run([raw])
    assert run(list(raw)) == whole
    assert whole.reasoning == "The user wants the weather." and whole.content is None
    assert calls(whole) == [("get_weather", {"city": "Oslo"})]
    assert whole.tool_calls[0].id == "functions.get_weather:0"


# -- kimi_k3 ---------------------------------------------------------------------------------


def test_k3_reasoning_content_and_typed_arguments() -> None:
    raw = (
        "Plan.<|close|>think<|sep|><|open|>response<|sep|>On it.<|close|>response<|sep|>"
        + k3_tools(
            k3_call(
                "create_event",
                k3_arg("title", "string", "Standup"),
                k3_arg("minutes", "number", "15"),
                k3_arg("all_day", "boolean", "false"),
                k3_arg("reminder", "null", "null"),
                k3_arg("tags", "array", '["a", "b"]'),
                k3_arg("where", "object", '{"room": 4}'),
                k3_arg("count", "number", "many"),  # does not decode: stays text
            )
        )
        + "<|close|>message<|sep|>"
    )
    r = check(raw, **K3)
    assert r.reasoning == "Plan." and r.content == "On it."
    args = {"title": "Standup", "minutes": 15, "all_day": False, "reminder": None}
    args |= {"tags": ["a", "b"], "where": {"room": 4}, "count": "many"}
    assert calls(r) == [("create_event", args)]
    assert r.tool_calls[0].id is None


def test_k3_thinking_disabled_and_response_only_outputs() -> None:
    r = check("Hello!<|close|>response<|sep|><|close|>message<|sep|>", **K3_NO_THINK)
    assert r.content == "Hello!" and r.reasoning is None
    r = check("<|open|>response<|sep|>Hello<|close|>response<|sep|><|close|>message<|sep|>", **K3)
    assert r.content == "Hello" and r.reasoning is None
    r = check("<|close|>response<|sep|>" + k3_tools(k3_call("calc", k3_arg("x", "number", "1"))), **K3_NO_THINK)
    assert r.content is None and calls(r) == [("calc", {"x": 1})]


def test_k3_marker_text_inside_a_value() -> None:
    close = "<|close|>argument<|sep|>"
    value = f"{close} is how args end, {close}<|close|>tools<|sep|> too"
    raw = k3_tools(k3_call("write_file", k3_arg("content", "string", value), k3_arg("path", "string", "x")))
    r = check(raw, **K3_NO_THINK)
    assert calls(r) == [("write_file", {"content": value, "path": "x"})]


def test_k3_value_end_waits_for_what_follows() -> None:
    head = '<|open|>tools<|sep|><|open|>call tool="f"<|sep|><|open|>argument key="a" type="string"<|sep|>v'
    p = StreamParser(**K3_NO_THINK)
    assert p.feed(head + "<|close|>argument<|sep|>  ") == []
    events = p.feed("<|close|>call<|sep|><|close|>tools<|sep|>") + p.close()
    assert merge_events(events).tool_calls[0].arguments == '{"a": "v"}'


def test_k3_attribute_values_are_unescaped() -> None:
    raw = k3_tools(
        '<|open|>call tool="save" index="1"<|sep|>'
        + '<|open|>argument key="q&amp;a" type="string"<|sep|>fish & chips<|close|>argument<|sep|>'
        + '<|open|>argument key="say &quot;hi&quot;" type="string"<|sep|>"hi"<|close|>argument<|sep|>'
        + "<|close|>call<|sep|>"
    )
    assert calls(check(raw, **K3_NO_THINK)) == [("save", {"q&a": "fish & chips", 'say "hi"': '"hi"'})]


def test_k3_json_element_and_empty_call() -> None:
    raw = k3_tools(
        '<|open|>call tool="f"<|sep|><|open|>json type="object"<|sep|>{"a": [1, "x"]}<|close|>json<|sep|>'
        "<|close|>call<|sep|>",
        k3_call("get_time"),
    )
    assert calls(check(raw, **K3_NO_THINK)) == [("f", {"a": [1, "x"]}), ("get_time", {})]


def test_k3_malformed_call_is_content() -> None:
    bad = '<|open|>call index="1"<|sep|>' + k3_arg("a", "string", "v") + "<|close|>call<|sep|>"
    r = check("Hi" + k3_tools(bad, k3_call("g")) + " bye", **K3_NO_THINK)
    assert r.content == "Hi" + bad + " bye" and calls(r) == [("g", {})]


def test_k3_truncated_call_is_never_a_call() -> None:
    cut = '<|open|>call tool="get_weather" index="1"<|sep|><|open|>argument key="city" type="string"<|sep|>Par'
    r = check("<|close|>response<|sep|><|open|>tools<|sep|>" + cut, **K3_NO_THINK)
    assert r.tool_calls == [] and r.content is None and r.truncated == cut
    # Cut right after a value's closing marker: the call is still unfinished.
    r = check("<|open|>tools<|sep|>" + cut + "<|close|>argument<|sep|>", **K3_NO_THINK)
    assert r.tool_calls == [] and r.truncated == cut + "<|close|>argument<|sep|>"
    r = check("The user wants", **K3)
    assert r.reasoning == "The user wants" and r.content is None


def test_k3_tools_channel_inside_think_ends_reasoning() -> None:
    r = check("Plan." + k3_tools(k3_call("f")) + "<|close|>message<|sep|>", **K3)
    assert r.reasoning == "Plan." and r.content is None and calls(r) == [("f", {})]


# -- selection -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "dialect"),
    [
        ("kimi-k3", "kimi_k3"),
        ("moonshotai/Kimi-K3", "kimi_k3"),
        ("kimi-k2", "kimi_k2"),
        ("kimi-k2.6", "kimi_k2"),
        ("kimi-k2-instruct", "kimi_k2"),
        ("moonshotai/Kimi-K2.6", "kimi_k2"),
        ("moonshotai/Kimi-K2-Thinking", "kimi_k2"),
        ("kimi-k2:1t", "kimi_k2"),
    ],
)
def test_model_names_select_the_dialect(model: str, dialect: str) -> None:
    found = dialect_for_model(model)
    assert found is not None and found.name == dialect


def test_dialects_by_name_without_a_model_start_outside_reasoning() -> None:
    assert parse("plain", "kimi_k2").content == "plain"
    assert parse("plain", "kimi_k3").content == "plain"
    assert parse("plan<|close|>think<|sep|>x", "kimi_k3", thinking=True).reasoning == "plan"


# -- split invariance --------------------------------------------------------------------------

SAMPLES: list[tuple[str, dict[str, Any]]] = [
    ("Pre " + SECTION + k2_call("functions.f:0", '{"a": "x<|tool_call_end|>y"}') + SECTION_END + " post", K2),
    ("Think </think>" + SECTION + " " + k2_call("g:1", "{bad") + k2_call("3", "{}") + SECTION_END, K26),
    ("x" + SECTION + k2_call("functions.f:0", '{"a": 1}') + BEGIN + "functions.h", K2),
    (
        "p<|close|>think<|sep|><|open|>response<|sep|>r<|close|>response<|sep|>"
        + k3_tools(k3_call("f", k3_arg("a", "string", "<|close|>argument<|sep|> v"), k3_arg("n", "number", "2")))
        + "<|close|>message<|sep|>",
        K3,
    ),
    ("ok<|close|>response<|sep|>" + k3_tools(k3_call("g"), '<|open|>call tool="h"<|sep|>'), K3_NO_THINK),
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SAMPLES), st.lists(st.integers(min_value=0, max_value=10**6), max_size=30))
def test_any_split_gives_the_whole_parse(sample: tuple[str, dict[str, Any]], cuts: list[int]) -> None:
    raw, kwargs = sample
    pieces = split_at(raw, cuts)
    whole = parse(raw, **kwargs, tools=tools("f"))
    assert stream_parse(pieces, **kwargs, tools=tools("f")) == whole


def test_long_arguments_in_small_pieces() -> None:
    text = 'line <|close|>argument<|sep|> and <|tool_call_end|> "q"\n' * 3000
    k2 = SECTION + k2_call("functions.w:0", json.dumps({"c": text})) + SECTION_END
    k3 = k3_tools(k3_call("w", k3_arg("c", "string", text)))
    for raw, kwargs in ((k2, K2), (k3, K3_NO_THINK)):
        r = stream_parse(random_splits(raw, 7, max_size=6), **kwargs)
        assert calls(r) == [("w", {"c": text})]


def test_reasoning_deltas_come_before_the_call() -> None:
    p = StreamParser(**K26)
    events = p.feed("Plan.</think>" + SECTION + k2_call("functions.f:0", "{}") + SECTION_END) + p.close()
    assert isinstance(events[0], ReasoningDelta) and isinstance(events[1], ToolCallStart)
