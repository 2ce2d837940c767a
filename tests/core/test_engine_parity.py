"""Facts the engines' own parser suites assert (vLLM's `tests/tool_parsers`, SGLang's
`test/registered/unit/function_call`), as inputs and the calls they must give: each whole and
streamed at every split, so stream = whole holds for each of them too."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.conftest import calls, stream_parse
from toolcall_middleware import StreamParser, parse
from toolcall_middleware.core._result import ParseResult, merge_events
from toolcall_middleware.core.dialects import get_dialect, list_dialects
from toolcall_middleware.core.dialects._rendering import CallToRender


def every_split(raw: str, **options: Any) -> ParseResult:
    """The whole parse of `raw`, after asserting that every two-piece split and the one-character
    stream give the same."""
    whole = parse(raw, **options)
    for i in range(len(raw) + 1):
        assert stream_parse([raw[:i], raw[i:]], **options) == whole, f"split at {i}"
    assert stream_parse(list(raw), **options) == whole
    return whole


# -- xlam: the call array pretty-printed --------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        '[\n  {"name": "get_weather", "arguments": {"city": "Paris"}}\n]',
        '[\n    {\n        "name": "get_weather",\n        "arguments": {"city": "Paris"}\n    }\n]',
        '[ {"name": "get_weather", "arguments": {"city": "Paris"}} ]',
        '[\r\n\t{"name": "get_weather", "arguments": {"city": "Paris"}}\r\n]',
    ],
)
def test_xlam_reads_a_pretty_printed_call_array(raw: str) -> None:
    result = every_split(raw, dialect="xlam")
    assert calls(result) == [("get_weather", {"city": "Paris"})]
    assert result.content is None


@pytest.mark.parametrize("raw", ["[ ] a checkbox", "[\nnot JSON]", "[\n", 'Use [\n  {"name": "f"}] here.'])
def test_xlam_a_spaced_bracket_that_opens_no_call_is_text(raw: str) -> None:
    result = every_split(raw, dialect="xlam")
    assert not result.tool_calls and result.content == raw and result.truncated is None


# -- gpt_oss: a call to a bare recipient ----------------------------------------------------------

BARE = '<|channel|>commentary to=get_weather <|constrain|>json<|message|>{"city": "Tokyo"}<|call|>'
WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


@pytest.mark.parametrize("raw", [BARE, BARE.removesuffix("<|call|>"), "<|start|>assistant" + BARE])
def test_gpt_oss_reads_a_bare_recipient_the_request_offers_as_its_call(raw: str) -> None:
    result = every_split(raw, dialect="gpt_oss", tools=WEATHER)
    assert calls(result) == [("get_weather", {"city": "Tokyo"})]
    assert result.content is None


def test_gpt_oss_a_bare_recipient_nobody_offered_is_text() -> None:
    """Nothing the model wrote is lost: the message comes back as it was written."""
    result = every_split(BARE, dialect="gpt_oss")
    assert not result.tool_calls
    assert result.content == BARE


def test_gpt_oss_still_drops_a_built_in_tool_message() -> None:
    raw = '<|channel|>analysis to=browser.search code<|message|>{"query": "x"}<|call|>'
    result = every_split(raw, dialect="gpt_oss", tools=WEATHER)
    assert not result.tool_calls and result.content is None


# -- a stray special token of the format is markup, never content ---------------------------------

STRAY_TOKENS = [
    ("kimi_k2", "normal text<|tool_calls_section_end|>", "normal text"),
    ("kimi_k2", "text<|tool_call_argument_begin|>more", "textmore"),
    ("kimi_k2", "a<|tool_call_end|> b<|tool_call_section_end|>", "a b"),
    ("deepseek_v3", "done<｜tool▁calls▁end｜>", "done"),
    ("deepseek_v31", "a<｜tool▁sep｜>b<｜tool▁call▁end｜>", "ab"),
    ("step3", "done<｜tool_calls_end｜>", "done"),
    ("apertus", "done<|tools_suffix|>", "done"),
    ("lfm2", "done<|tool_call_end|>", "done"),
    ("internlm2", "done<|action_end|>", "done"),
    ("cohere_command", "done<|END_ACTION|>", "done"),
    ("mistral", "done[ARGS] now[CALL_ID]", "done now"),
]


@pytest.mark.parametrize(("dialect", "raw", "content"), STRAY_TOKENS)
def test_a_stray_special_token_is_dropped(dialect: str, raw: str, content: str) -> None:
    result = every_split(raw, dialect=dialect)
    assert result.content == content and not result.tool_calls


def test_a_stray_kimi_token_after_a_call_is_dropped_too() -> None:
    raw = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
        '{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>Done.<|tool_calls_section_end|>'
    )
    result = every_split(raw, dialect="kimi_k2")
    assert calls(result) == [("get_weather", {"city": "Paris"})] and result.content == "Done."


def test_a_special_token_in_markdown_code_is_text() -> None:
    raw = "Write `<|tool_calls_section_end|>` to close it."
    assert every_split(raw, dialect="kimi_k2").content == raw


# -- function names are whatever the tool list says ---------------------------------------------

NAMES = ["grocery.order", "get-weather", "ns:get", "tool2v3", "a.b-c:d9"]


@pytest.mark.parametrize(
    ("dialect", "raw"),
    [
        ("pythonic", '[grocery.order(item="apple")]'),
        ("pythonic", 'I will order. [grocery.order(item="apple")]'),
        ("lfm2", '<|tool_call_start|>[grocery.order(item="apple")]<|tool_call_end|>'),
        ("olmo3", '<function_calls>\ngrocery.order(item="apple")\n</function_calls>'),
    ],
)
def test_a_dotted_name_is_read_as_vllm_reads_it(dialect: str, raw: str) -> None:
    result = every_split(raw, dialect=dialect)
    assert calls(result) == [("grocery.order", {"item": "apple"})]


def test_pythonic_reads_names_with_marks_among_several_calls() -> None:
    raw = '[ns:get(q="a, b(c)"), get-weather(city="x-y(z)"), plain(n=1), a.b-c:d9()]'
    result = every_split(raw, dialect="pythonic")
    assert calls(result) == [
        ("ns:get", {"q": "a, b(c)"}),
        ("get-weather", {"city": "x-y(z)"}),
        ("plain", {"n": 1}),
        ("a.b-c:d9", {}),
    ]


def test_pythonic_a_list_of_differences_is_still_text() -> None:
    raw = "[a-b(c=1) is not a call: x-y]"
    assert every_split(raw, dialect="pythonic").content == raw


@pytest.mark.parametrize("dialect", [d for d in list_dialects() if get_dialect(d).renderer is not None])
@pytest.mark.parametrize("name", NAMES)
def test_every_dialect_reads_back_a_name_with_marks_and_digits(dialect: str, name: str) -> None:
    tools = [{"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}]
    renderer = get_dialect(dialect).renderer
    assert renderer is not None
    raw = renderer.calls([CallToRender(id="call_1", name=name, arguments={"item": "apple"})])
    result = parse(raw, dialect=dialect, tools=tools)
    assert calls(result) == [(name, {"item": "apple"})]


# -- a call missing only its closing marker, at a stop ------------------------------------------

END_MARKER = re.compile(r"(?:\]<\]minimax\[>\[)?(<[^<>]*>|<\|[^<>]*\|>|<｜[^<>]*｜>|```)$")  # (M3: with its token)
WEATHER_TOOL = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def _closed_by_a_marker() -> list[tuple[str, str]]:
    """Each dialect whose rendered call ends with a marker: the call without that marker."""
    cases = []
    for name in list_dialects():
        renderer = get_dialect(name).renderer
        if renderer is None:
            continue
        text = renderer.calls([CallToRender(id="call_1", name="get_weather", arguments={"city": "Paris"})]).rstrip()
        found = END_MARKER.search(text)
        if found is not None:
            cases.append((name, text[: found.start()]))
    return cases


def at_close(raw: str, dialect: str, *, stopped: bool, pieces: list[str] | None = None) -> ParseResult:
    parser = StreamParser(dialect, tools=WEATHER_TOOL)
    events = [e for piece in (pieces or [raw]) for e in parser.feed(piece)]
    return merge_events(events + parser.close(stopped=stopped))


@pytest.mark.parametrize(("dialect", "raw"), _closed_by_a_marker())
def test_a_call_missing_only_its_end_marker_is_the_call_at_a_stop(dialect: str, raw: str) -> None:
    whole = at_close(raw, dialect, stopped=True)
    assert calls(whole) == [("get_weather", {"city": "Paris"})] and whole.truncated is None
    for i in range(len(raw) + 1):
        assert at_close(raw, dialect, stopped=True, pieces=[raw[:i], raw[i:]]) == whole, f"split at {i}"


@pytest.mark.parametrize(("dialect", "raw"), _closed_by_a_marker())
def test_without_a_stop_it_is_cut_off_unless_the_call_s_own_end_came(dialect: str, raw: str) -> None:
    """(A format whose calls end before their section does, kimi_k2 or deepseek, has the call
    whole already: only the section's end is missing.) Never content either way."""
    result = at_close(raw, dialect, stopped=False)
    assert result.content is None
    assert (result.truncated is None) == (calls(result) == [("get_weather", {"city": "Paris"})])


@pytest.mark.parametrize(("dialect", "raw"), _closed_by_a_marker())
def test_a_call_cut_inside_its_arguments_is_cut_off_even_at_a_stop(dialect: str, raw: str) -> None:
    cut = raw[: raw.index("Paris") + 2]
    result = at_close(cut, dialect, stopped=True)
    assert not result.tool_calls and result.truncated is not None


def test_the_engines_own_cases_apertus_and_minimax_m1() -> None:
    apertus = at_close('<|tools_prefix|>[{"get_weather": {"city": "Paris"}}]', "apertus", stopped=True)
    m1 = at_close('<tool_calls>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n', "minimax_m1", stopped=True)
    assert calls(apertus) == calls(m1) == [("get_weather", {"city": "Paris"})]
