"""The `glm45` (newline layout) and `glm47` (compact) dialects.

Every sample is parsed whole, streamed one character at a time and at random splits, and all
parses must agree; then the merged result is checked.
"""

from __future__ import annotations

from typing import Any

import pytest
from canitoolcall.fixtures import load_fixtures
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.conftest import calls, check_streams, content_around_calls, random_splits, split_at, stream_parse
from toolcall_middleware import StreamParser, TextDelta, ToolCallEnd, TruncatedCall, dialect_for_model, parse
from toolcall_middleware.core._result import ParseResult

GLM45 = "zai-org/GLM-4.5"
GLM47 = "zai-org/GLM-4.7"
NO_THINK = {"thinking": False}  # GLM-4.7 would otherwise start inside the prefilled `<think>`


def tool(name: str, **props: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": props}}}


TOOLS = [
    tool("get_weather", city={"type": "string"}, unit={"type": "string", "enum": ["c", "f"]}),
    tool("set_timer", seconds={"type": "integer"}, label={"type": "string"}, ratio={"type": "number"}),
    tool("write_file", path={"type": "string"}, content={"type": "string"}),
    tool("configure", options={"type": "object"}, ids={"type": "array"}, on={"type": "boolean"}),
    tool("get_time"),
]


def call47(name: str, **args: str) -> str:
    return (
        f"<tool_call>{name}"
        + "".join(f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>" for k, v in args.items())
        + "</tool_call>"
    )


def call45(name: str, **args: str) -> str:
    body = "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n" for k, v in args.items())
    return f"<tool_call>{name}\n{body}</tool_call>"


def parse_all_ways(raw: str, model: str = GLM47, **kwargs: Any) -> ParseResult:
    """The whole parse, after checking that a char-by-char and random-split stream agree."""
    return check_streams(raw, seeds=range(1, 6), **{"model": model, "tools": TOOLS, **kwargs})


# -- model names ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "dialect"),
    [
        ("zai-org/GLM-4.5", "glm45"),
        ("zai-org/GLM-4.5-Air", "glm45"),
        ("zai-org/GLM-4.5-FP8", "glm45"),
        ("zai-org/GLM-4.5V", "glm45"),
        ("zai-org/GLM-4.6", "glm45"),
        ("glm-4.6:cloud", "glm45"),
        ("accounts/fireworks/models/glm-4p6", "glm45"),
        ("zai-org/GLM-4.7", "glm47"),
        ("zai-org/GLM-4.7-Flash", "glm47"),
        ("glm-4.7-flash:q4", "glm47"),
        ("hf.co/unsloth/GLM-4.7-Flash-GGUF:Q4_K_M", "glm47"),
        ("zai-org/GLM-5", "glm47"),
        ("zai-org/GLM-5.1", "glm47"),
        ("zai-org/GLM-5.3", "glm47"),
        ("glm5:latest", "glm47"),
    ],
)
def test_model_name_selects_the_layout(model: str, dialect: str) -> None:
    found = dialect_for_model(model)
    assert found is not None and found.name == dialect


@pytest.mark.parametrize("model", ["THUDM/glm-4-9b-chat", "THUDM/GLM-4-32B-0414", "THUDM/chatglm3-6b"])
def test_older_glm_models_are_not_claimed(model: str) -> None:
    found = dialect_for_model(model)
    assert found is None or found.name not in ("glm45", "glm47")


# -- calls ------------------------------------------------------------------------------------


def test_glm45_newline_layout_with_text_before_and_between() -> None:
    raw = "I'll check it. " + call45("get_weather", city="Paris", unit="c") + "\n" + call45("get_time")
    r = parse_all_ways(raw, GLM45, thinking=False)
    assert calls(r) == [("get_weather", {"city": "Paris", "unit": "c"}), ("get_time", {})]
    assert r.content == "I'll check it."
    assert r.finish_reason == "tool_calls"


def test_glm47_compact_layout_zero_arguments_and_text_after() -> None:
    raw = "Checking." + call47("get_time") + call47("get_weather", city="Oslo") + "Done."
    r = parse_all_ways(raw, **NO_THINK)
    assert calls(r) == [("get_time", {}), ("get_weather", {"city": "Oslo"})]
    assert r.content == "Checking.Done."


def test_each_layout_reads_the_other() -> None:
    assert calls(parse_all_ways(call45("get_weather", city="A"), GLM47, **NO_THINK)) == [("get_weather", {"city": "A"})]
    assert calls(parse_all_ways(call47("get_weather", city="A"), GLM45)) == [("get_weather", {"city": "A"})]


def test_call_indexes_count_calls_not_tools() -> None:
    raw = call47("get_weather", city="A") + call47("get_time") + call47("get_weather", city="B")
    events = StreamParser(model=GLM47, thinking=False).feed(raw)
    assert [e.index for e in events if isinstance(e, ToolCallEnd)] == [0, 1, 2]


def test_each_call_is_emitted_at_its_own_end() -> None:
    parser = StreamParser(model=GLM47, tools=TOOLS, thinking=False)
    events = parser.feed(call47("get_weather", city="A") + "<tool_call>get_weather<arg_key>city</arg_key><arg_value>B")
    assert [e.arguments for e in events if isinstance(e, ToolCallEnd)] == ['{"city": "A"}']
    events = parser.feed("</arg_value></tool_call>")
    assert [e.arguments for e in events if isinstance(e, ToolCallEnd)] == ['{"city": "B"}']


# -- values -----------------------------------------------------------------------------------


def test_values_are_typed_by_the_schema() -> None:
    raw = call47("set_timer", seconds="3", label="3", ratio="0.5") + call47(
        "configure", options='{"a": [1, 2]}', ids="['x', 'y']", on="true"
    )
    r = parse_all_ways(raw, **NO_THINK)
    assert calls(r) == [
        ("set_timer", {"seconds": 3, "label": "3", "ratio": 0.5}),
        ("configure", {"options": {"a": [1, 2]}, "ids": ["x", "y"], "on": True}),
    ]


def test_a_string_property_keeps_its_text_as_written() -> None:
    content = '  {"a": 1}\n\tline 2 with "quotes" and C:\\path \n'
    r = parse_all_ways(call47("write_file", path="0042", content=content), **NO_THINK)
    assert calls(r) == [("write_file", {"path": "0042", "content": content})]


def test_untyped_values_are_json_then_python_literals_then_text() -> None:
    args = {
        "n": "42",
        "f": "2.5",
        "obj": '{"a": null}',
        "py": "{'a': True, 'b': (1, 2)}",
        "quoted": "'hi'",
        "none": "None",
        "id": "123_456",
        "hex": "0x1F",
        "text": "hello world",
        "padded": " 7 ",
    }
    r = parse_all_ways(call47("unknown_tool", **args), **NO_THINK)
    assert calls(r) == [
        (
            "unknown_tool",
            {
                "n": 42,
                "f": 2.5,
                "obj": {"a": None},
                "py": {"a": True, "b": [1, 2]},
                "quoted": "hi",
                "none": None,
                "id": "123_456",
                "hex": "0x1F",
                "text": "hello world",
                "padded": 7,
            },
        )
    ]


def test_markers_inside_a_value_stay_in_the_value() -> None:
    content = "Wrap calls in <tool_call> and </tool_call>; keys in <arg_key>, values end with </arg_value> tags."
    r = parse_all_ways(call47("write_file", path="a.md", content=content) + " ok", **NO_THINK)
    assert calls(r) == [("write_file", {"path": "a.md", "content": content})]
    assert r.content == "ok"


def test_a_forgotten_last_close_of_a_value_is_recovered_at_the_end() -> None:
    raw = call47("get_weather", city="Berlin").replace(
        "</tool_call>", "<arg_key>unit</arg_key><arg_value>c</tool_call>"
    )
    r = parse_all_ways(raw, **NO_THINK)
    assert calls(r) == [("get_weather", {"city": "Berlin", "unit": "c"})]
    r = parse_all_ways(raw + "\nAnything else?", **NO_THINK)
    assert calls(r) == [("get_weather", {"city": "Berlin", "unit": "c"})]
    assert r.content == "Anything else?"


# -- malformed and truncated ------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        "<tool_call>get_weather<arg_key>city</arg_key></tool_call>",  # no <arg_value>: not `{}`
        "<tool_call>get_weather<arg_key>city</arg_key>Paris</tool_call>",
        "<tool_call>get_weather<arg_key> </arg_key><arg_value>x</arg_value></tool_call>",
        "<tool_call>get_weather<arg_key>city<arg_value>x</arg_value></tool_call>",
        "<tool_call>get_weather<arg_value>x</arg_value></tool_call>",
        "<tool_call></tool_call>",
        "<tool_call> get_time</tool_call>",
        "Wrap calls in <tool_call> tags, then stop.",
    ],
)
def test_malformed_calls_come_back_as_the_text_written(raw: str) -> None:
    r = parse_all_ways(raw, **NO_THINK)
    assert r.tool_calls == []
    assert r.content == raw
    assert r.truncated is None


def test_a_malformed_call_next_to_a_good_one_is_content() -> None:
    bad = "<tool_call>get_weather<arg_key>city</arg_key></tool_call>"
    r = parse_all_ways(call47("get_time") + bad, **NO_THINK)
    assert calls(r) == [("get_time", {})]
    assert r.content == bad


@pytest.mark.parametrize(
    "cut",
    [
        "<tool_call>get_wea",
        "<tool_call>get_weather<arg_key>city</arg_key>",
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Ber",
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Berlin</arg_value>",
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Berlin</arg_value>\n<arg_key>unit</arg_key>\n",
    ],
)
def test_output_cut_inside_a_call_is_truncated_never_a_call_nor_content(cut: str) -> None:
    r = parse_all_ways("Sure. " + cut, **NO_THINK)
    assert r.tool_calls == []
    assert r.content == "Sure."
    assert r.truncated == cut
    assert r.finish_reason == "length"
    parser = StreamParser(model=GLM47, thinking=False)
    assert not any(isinstance(e, TruncatedCall) for e in parser.feed(cut))
    assert [e.text for e in parser.close() if isinstance(e, TruncatedCall)] == [cut]


def test_a_call_in_a_code_fence_is_an_example() -> None:
    raw = "Example:\n```\n" + call47("get_time") + "\n```\nThat is all."
    r = parse_all_ways(raw, **NO_THINK)
    assert r.tool_calls == []
    assert r.content == raw


# -- reasoning --------------------------------------------------------------------------------


def test_glm47_template_opens_think_unless_thinking_is_off() -> None:
    raw = "Need the time.</think>" + call47("get_time")
    r = parse_all_ways(raw)
    assert r.reasoning == "Need the time." and calls(r) == [("get_time", {})]
    assert parse("Hi", model=GLM47, thinking=False).content == "Hi"
    assert parse("Hi", model=GLM47, generation_prompt="<|assistant|></think>").content == "Hi"
    assert parse("Hi", model=GLM47).reasoning == "Hi"
    # Named without a model or a thinking flag, nothing says the template opened `<think>`.
    assert parse("Hi", dialect="glm47").content == "Hi"
    assert parse("Hm.</think>Hi", dialect="glm47", thinking=True).reasoning == "Hm."


def test_glm45_writes_its_own_think() -> None:
    r = parse_all_ways("\n<think>Plan.</think>\n" + call45("get_time"), GLM45)
    assert r.reasoning == "Plan." and calls(r) == [("get_time", {})] and r.content is None
    assert parse("Hi", model=GLM45).content == "Hi"


def test_a_call_before_the_close_of_think_ends_the_reasoning() -> None:
    r = parse_all_ways("Let me look." + call47("get_weather", city="Rome") + " Done.")
    assert r.reasoning == "Let me look."
    assert calls(r) == [("get_weather", {"city": "Rome"})]
    assert r.content == "Done."


# -- streaming cost and delay -----------------------------------------------------------------


def test_text_is_not_held_back_beyond_a_possible_marker() -> None:
    parser = StreamParser(model=GLM47, thinking=False)
    assert parser.feed("Hello there") == [TextDelta("Hello there")]
    assert parser.feed(" and <tool") == [TextDelta(" and")]


def test_long_arguments_stream_in_small_pieces() -> None:
    content = "".join(f"{n:06d}: <a href='x'>fox</a> \"q\" {{}} \\\n" for n in range(6000))
    assert len(content) > 200_000
    raw = "Writing.</think>" + call47("write_file", path="fox.html", content=content)
    pieces = list(random_splits(raw, 7, max_size=6))
    r = stream_parse(pieces, model=GLM47, tools=TOOLS)
    assert calls(r) == [("write_file", {"path": "fox.html", "content": content})]


# -- properties -------------------------------------------------------------------------------

SAMPLES = load_fixtures(families=("glm",))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SAMPLES), st.lists(st.integers(min_value=0, max_value=10**6), max_size=40))
def test_any_split_of_a_glm_fixture_gives_the_whole_parse(fixture: Any, cuts: list[int]) -> None:
    kwargs = {
        "model": fixture.models[0],
        "tools": list(fixture.tools),
        "generation_prompt": fixture.generation_prompt,
        "thinking": fixture.thinking,
    }
    assert stream_parse(split_at(fixture.raw_output, cuts), **kwargs) == parse(fixture.raw_output, **kwargs)


TRICKY = st.sampled_from(["<", "<tool", "</tool_call", "<arg_key", "</arg_value", ">", "`", "\n", " ", "</tool_call>"])
WORDS = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="<`"), min_size=1, max_size=10)
TEXT = (
    st.lists(st.one_of(WORDS, TRICKY), max_size=6)
    .map("".join)
    .filter(lambda t: "<tool_call>" not in t and "```" not in t and t.strip() == t)
)
VALUE = (
    st.lists(st.one_of(WORDS, TRICKY, st.sampled_from(["<tool_call>", "<arg_key>", "\t"])), max_size=6)
    .map("".join)
    .filter(lambda v: "</arg_value>" not in v)
)
ARGS = st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), VALUE, max_size=3)
CALL = st.tuples(st.from_regex(r"[a-z_][a-z0-9_]{0,12}", fullmatch=True), ARGS)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from([(GLM45, call45, "\n"), (GLM47, call47, "")]),
    st.lists(st.tuples(TEXT, st.lists(CALL, max_size=2)), min_size=1, max_size=3),
    st.lists(st.integers(min_value=0, max_value=10**6), max_size=30),
)
def test_round_trip_loses_and_invents_nothing(
    layout: Any, segments: list[tuple[str, list[tuple[str, dict[str, str]]]]], cuts: list[int]
) -> None:
    model, render, sep = layout
    content = "".join(t for t, _ in segments)
    assume("<tool_call>" not in content and "```" not in content)
    raw_parts: list[str] = []
    props: dict[str, dict[str, Any]] = {}
    expected_calls: list[tuple[str, dict[str, str]]] = []
    for text, seg_calls in segments:
        raw_parts.append(text)
        for name, args in seg_calls:
            raw_parts.append(sep + render(name, **args) + sep)
            props.setdefault(name, {}).update({k: {"type": "string"} for k in args})
            expected_calls.append((name, args))
    raw = "".join(raw_parts)
    tools = [tool(name, **p) for name, p in props.items()]
    kwargs: dict[str, Any] = {"model": model, "tools": tools, "thinking": False}
    whole = parse(raw, **kwargs)
    assert stream_parse(split_at(raw, cuts), **kwargs) == whole
    # A backtick before a call on its line may open an inline code span that a backtick after it
    # closes: the call is then an example, text (`test_inline_code.py`). GLM-4.5's calls stand on
    # lines of their own.
    assume(sep or "`" not in content)
    assert calls(whole) == expected_calls
    assert whole.content == (content_around_calls(segments, sep) or None)
    assert whole.reasoning is None and whole.truncated is None
