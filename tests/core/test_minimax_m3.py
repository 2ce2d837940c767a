"""The `minimax_m3` dialect: MiniMax-M3's namespaced XML calls, every tag after `]<]minimax[>[`.

The samples are what vLLM's (`tests/tool_parsers/test_minimax_m3_tool_parser.py`) and SGLang's
(`test_minimax_m3_detector.py`) suites assert of the format, as inputs and expected calls. Every
sample is parsed whole, streamed one character at a time and at random splits, and all parses
must agree; then the merged result is checked.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import calls, check_streams, function_tools, split_at, stream_parse
from toolcall_middleware import StreamParser, dialect_for_model, parse
from toolcall_middleware.core._result import merge_events

NS = "]<]minimax[>["
M3: dict[str, Any] = {"dialect": "minimax_m3"}

SCHEMAS: dict[str, dict[str, Any]] = {
    "get_current_date": {},
    "get_weather": {"city": {"type": "string"}},
    "search": {
        "query": {"type": "string"},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "verbose": {"type": "boolean"},
    },
    "create_event": {
        "title": {"type": "string"},
        "location": {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "integer"}}},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "add_note": {"note": {"type": "string"}},
    "configure": {
        "mode": {"type": "string", "enum": ["none", "low", "high"]},
        "optional": {"type": ["string", "null"]},
    },
    "create_order": {
        "user_id": {"type": "integer"},
        "urgent": {"type": "boolean"},
        "note": {"type": "string"},
        "shipping": {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "integer"}}},
        "items": {
            "type": "array",
            "items": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}},
        },
        "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
        "duplicate_demo": {"type": "object"},
    },
}
TOOLS = function_tools(SCHEMAS)


def wire(*tags: str) -> str:
    """Each piece after the namespace token, as the model writes them."""
    return "".join(NS + t for t in tags)


def call(name: str, *params: str) -> str:
    return wire("<tool_call>", f'<invoke name="{name}">') + "".join(params) + wire("</invoke>", "</tool_call>")


def leaf(key: str, value: str) -> str:
    return wire(f"<{key}>{value}", f"</{key}>")


def both(raw: str, **options: Any) -> Any:
    return check_streams(raw, seeds=range(1, 6), **{**M3, "tools": TOOLS, **options})


ORDER = (
    f"{NS}<tool_call>\n"
    f'{NS}<invoke name="create_order">'
    f"{NS}<user_id>42{NS}</user_id>"
    f"{NS}<urgent>true{NS}</urgent>"
    f"{NS}<note>Please leave at front desk.{NS}</note>"
    f"{NS}<shipping>{NS}<city>Singapore{NS}</city>{NS}<zip>018956{NS}</zip>{NS}</shipping>"
    f"{NS}<items>"
    f"{NS}<item>{NS}<sku>book-001{NS}</sku>{NS}<qty>2{NS}</qty>{NS}</item>"
    f"{NS}<item>{NS}<sku>pen-007{NS}</sku>{NS}<qty>5{NS}</qty>{NS}</item>"
    f"{NS}</items>"
    f"{NS}<metadata>{NS}<source>mobile{NS}</source>{NS}<campaign>may-launch{NS}</campaign>{NS}</metadata>"
    f"{NS}<duplicate_demo>{NS}<tag>a{NS}</tag>{NS}<tag>b{NS}</tag>{NS}</duplicate_demo>"
    f"{NS}</invoke>\n"
    f"{NS}</tool_call>"
)


def test_the_issue_s_example_is_a_call() -> None:
    raw = call("get_weather", leaf("city", "Beijing"))
    result = both(raw)
    assert calls(result) == [("get_weather", {"city": "Beijing"})] and result.content is None


def test_minimax_m2_configured_for_m3_reads_its_calls_too() -> None:
    """The docs once listed M3 under `minimax_m2`: a deployment configured so keeps its calls."""
    raw = "Checking. " + call("get_weather", leaf("city", "Beijing"))
    result = both(raw, dialect="minimax_m2")
    assert calls(result) == [("get_weather", {"city": "Beijing"})] and result.content == "Checking."


def test_vllm_nested_order_call() -> None:
    result = both("I will create it.\n" + ORDER)
    assert result.content == "I will create it."
    assert calls(result) == [
        (
            "create_order",
            {
                "user_id": 42,
                "urgent": True,
                "note": "Please leave at front desk.",
                "shipping": {"city": "Singapore", "zip": 18956},
                "items": [{"sku": "book-001", "qty": 2}, {"sku": "pen-007", "qty": 5}],
                "metadata": {"source": "mobile", "campaign": "may-launch"},
                "duplicate_demo": {"tag": ["a", "b"]},
            },
        )
    ]


def test_vllm_several_invokes_in_one_section() -> None:
    one = wire('<invoke name="create_order">') + leaf("user_id", "1") + wire("</invoke>")
    two = wire('<invoke name="create_order">') + leaf("user_id", "2") + wire("</invoke>")
    result = both(f"{NS}<tool_call>\n{one}\n{two}\n{NS}</tool_call>")
    assert calls(result) == [("create_order", {"user_id": 1}), ("create_order", {"user_id": 2})]
    assert result.content is None


def test_sglang_zero_argument_call_and_separate_sections() -> None:
    assert calls(both(call("get_current_date"))) == [("get_current_date", {})]
    raw = call("get_weather", leaf("city", "Beijing")) + call("get_weather", leaf("city", "Tokyo"))
    assert calls(both(raw)) == [("get_weather", {"city": "Beijing"}), ("get_weather", {"city": "Tokyo"})]


def test_sglang_typed_scalars() -> None:
    raw = call("search", leaf("query", "pizza"), leaf("count", "7"), leaf("ratio", "0.5"), leaf("verbose", "true"))
    assert calls(both(raw)) == [("search", {"query": "pizza", "count": 7, "ratio": 0.5, "verbose": True})]


def test_sglang_nested_object_and_array() -> None:
    raw = call(
        "create_event",
        leaf("title", "Standup"),
        wire("<location>") + leaf("city", "NYC") + leaf("zip", "10001") + wire("</location>"),
        wire("<tags>") + leaf("item", "red") + leaf("item", "blue") + wire("</tags>"),
    )
    assert calls(both(raw)) == [
        ("create_event", {"title": "Standup", "location": {"city": "NYC", "zip": 10001}, "tags": ["red", "blue"]})
    ]


@pytest.mark.parametrize(
    "value",
    [
        "remember this ",
        "remember this\n",
        "remember this\t",
        "remember this\u00a0",
        "\u3000中\u3000",
        'a "quoted" word with \\ backslash and\nnewline',
    ],
)
def test_sglang_a_string_value_is_kept_verbatim(value: str) -> None:
    assert calls(both(call("add_note", leaf("note", value)))) == [("add_note", {"note": value})]


def test_sglang_an_enum_string_none_stays_a_string() -> None:
    for value in ("none", "nil"):
        assert calls(both(call("configure", leaf("mode", value)))) == [("configure", {"mode": value})]
    assert calls(both(call("configure", leaf("optional", "null")))) == [("configure", {"optional": None})]


def test_sglang_whitespace_between_the_token_and_its_tag() -> None:
    body = f'{NS}\n<invoke name="get_weather">{NS} <city>Paris{NS}\t</city>{NS}</invoke>'
    raw = f"{NS}<tool_call>\n{body}\n{NS}</tool_call>"
    assert calls(both(raw)) == [("get_weather", {"city": "Paris"})]


def test_without_a_schema_values_are_strings_and_items_a_list() -> None:
    raw = call("anything", leaf("n", "7"), wire("<xs>") + leaf("item", "1") + leaf("item", "2") + wire("</xs>"))
    assert calls(both(raw, tools=None)) == [("anything", {"n": "7", "xs": ["1", "2"]})]


def test_plain_text_and_a_partial_start_are_content() -> None:
    assert both("plain response").content == "plain response"
    partial = f"plain {NS}<tool_ca"
    result = parse(partial, **M3)
    assert result.content == partial and not result.tool_calls
    assert stream_parse([partial[:8], partial[8:]], **M3) == result


@pytest.mark.parametrize(
    "raw",
    [
        wire("<tool_call>", '<invoke name="get_weather">', "<city>Beijing", "</wrong>", "</invoke>", "</tool_call>"),
        wire("<tool_call>", "</user_id>") + " after error",
        wire(
            "<tool_call>",
            '<invoke name="get_weather">',
            "<city>Bei",
            "<x>jing",
            "</x>",
            "</city>",
            "</invoke>",
            "</tool_call>",
        ),
        wire("<tool_call>", "<invoke>", "</invoke>", "</tool_call>"),
    ],
)
def test_sglang_malformed_markup_is_content_as_written(raw: str) -> None:
    result = both(raw)
    assert not result.tool_calls and result.truncated is None and result.content == raw.strip()


def test_vllm_a_committed_call_stays_a_call_when_the_next_is_cut() -> None:
    first = wire('<invoke name="create_order">') + leaf("user_id", "1") + wire("</invoke>")
    raw = f'plain {NS}<tool_call>\n{first}\n{NS}<invoke name="create_order">{NS}<user_id>2'
    result = both(raw)
    assert calls(result) == [("create_order", {"user_id": 1})]
    assert result.content == "plain" and result.truncated is not None and "<user_id>2" in result.truncated


def test_sglang_truncated_is_never_a_call() -> None:
    raw = wire("<tool_call>", '<invoke name="get_weather">', "<city>Beijing")
    result = both(raw)
    assert not result.tool_calls and result.content is None and result.truncated == raw


def test_at_a_stop_a_call_missing_only_its_section_end_is_the_call() -> None:
    raw = call("get_weather", leaf("city", "Paris")).removesuffix(f"{NS}</tool_call>")
    parser = StreamParser(**M3, tools=TOOLS)
    result = merge_events(parser.feed(raw) + parser.close(stopped=True))
    assert calls(result) == [("get_weather", {"city": "Paris"})] and result.truncated is None


# -- model selection and reasoning ------------------------------------------------------------


@pytest.mark.parametrize("model", ["MiniMaxAI/MiniMax-M3", "minimax-m3:cloud", "mlx-community/MiniMax-M3-4bit"])
def test_model_selection(model: str) -> None:
    found = dialect_for_model(model)
    assert found is not None and found.name == "minimax_m3"


def test_reasoning_is_mm_think() -> None:
    raw = "<mm:think>Need the weather.</mm:think>Checking." + call("get_weather", leaf("city", "Paris"))
    result = both(raw)
    assert result.reasoning == "Need the weather." and result.content == "Checking."
    assert calls(result) == [("get_weather", {"city": "Paris"})]


def test_thinking_on_starts_inside_reasoning() -> None:
    raw = "Need the weather.</mm:think>" + call("get_weather", leaf("city", "Paris"))
    result = both(raw, thinking=True)
    assert result.reasoning == "Need the weather." and calls(result) == [("get_weather", {"city": "Paris"})]


def test_a_call_drafted_in_reasoning_stays_reasoning() -> None:
    draft = call("get_weather", leaf("city", "Paris"))
    result = both(f"<mm:think>Maybe {draft}</mm:think>Done.")
    assert not result.tool_calls and result.content == "Done." and draft in (result.reasoning or "")


def test_auto_detects_the_section() -> None:
    raw = "Checking. " + call("get_weather", leaf("city", "Paris"))
    result = check_streams(raw, seeds=range(1, 4), dialect="auto", tools=TOOLS)
    assert calls(result) == [("get_weather", {"city": "Paris"})] and result.content == "Checking."


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(min_value=0), max_size=16))
def test_any_split_gives_the_whole_parse(cuts: list[int]) -> None:
    raw = "Sure.\n" + ORDER + "\nDone." + wire("<tool_call>", '<invoke name="add_note">', "<note>x</y>")
    assert stream_parse(split_at(raw, cuts), **M3, tools=TOOLS) == parse(raw, **M3, tools=TOOLS)
