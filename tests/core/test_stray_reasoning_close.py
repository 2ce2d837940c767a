"""A closing reasoning marker with no opening one: the template opened the reasoning block and the
parser was not told (no `generation_prompt`, and `thinking` and the model name do not say so).

The rule (`ReasoningSyntax.stray_pairs`, `ReasoningInText`): the marker never reaches the
client (unless it closes an opening marker the model wrote in the answer: that pair is text);
the text before it stays content, streamed at once as all plain text is, so a stream and the whole parse agree
at every split. Told that the template opened the block (`generation_prompt`, or `thinking=True`
where the model's template opens it then), the text before the marker is reasoning, as the
engines' R1-style parsers read it. Every dialect with a reasoning syntax (served through the
middleware with the openai SDK: `tests/asgi/test_stray_reasoning_close.py`).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import check_streams, split_at, stream_parse
from toolcall_middleware import ParseResult, list_dialects, parse
from toolcall_middleware.core.dialects import get_dialect
from toolcall_middleware.core.request import render_calls


def stray_closes(dialect: str) -> tuple[str, ...]:
    """The dialect's closing reasoning markers that are markup wherever they stand."""
    syntax = get_dialect(dialect).reasoning
    return () if syntax is None else tuple(close for _, close in syntax.stray_pairs)


DIALECTS = [d for d in list_dialects() if stray_closes(d)]
CASES = [(d, close) for d in DIALECTS for close in stray_closes(d)]
BEFORE, AFTER = "The user wants 2 + 2.", "The answer is 4."


def syntax_of(dialect: str) -> tuple[str, str]:
    """The dialect's first (open, close) reasoning pair whose close is markup."""
    syntax = get_dialect(dialect).reasoning
    assert syntax is not None
    return syntax.stray_pairs[0]


def test_every_dialect_with_a_reasoning_syntax_drops_a_stray_close() -> None:
    # gpt_oss reads its channels itself; every other dialect has markup closes.
    assert set(list_dialects()) - set(DIALECTS) == {"gpt_oss"}


@pytest.mark.parametrize(("dialect", "close"), CASES)
def test_a_stray_close_never_reaches_the_content(dialect: str, close: str) -> None:
    result = check_streams(BEFORE + close + AFTER, seeds=range(5), dialect=dialect)
    assert result.content == BEFORE + AFTER
    assert result.reasoning is None and result.tool_calls == []


@pytest.mark.parametrize("dialect", DIALECTS)
def test_told_that_the_template_opened_reasoning_the_text_before_is_reasoning(dialect: str) -> None:
    opening, close = syntax_of(dialect)
    raw = BEFORE + close + AFTER
    result = check_streams(raw, seeds=range(3), dialect=dialect, generation_prompt="<prompt>" + opening)
    assert (result.reasoning, result.content) == (BEFORE, AFTER)


@pytest.mark.parametrize("dialect", ["deepseek_v31", "deepseek_v32", "deepseek_v4", "glm47", "kimi_k3"])
def test_thinking_says_so_for_the_templates_that_open_reasoning_when_it_is_on(dialect: str) -> None:
    _, close = syntax_of(dialect)
    raw = BEFORE + close + AFTER
    told = parse(raw, dialect, thinking=True)
    assert (told.reasoning, told.content) == (BEFORE, AFTER)
    assert parse(raw, dialect, thinking=False).content == BEFORE + AFTER


@pytest.mark.parametrize(
    "dialect", ["hermes", "qwen3_coder", "glm47", "kimi_k2", "llama3_json", "pythonic", "auto", "generic_json"]
)
def test_a_call_after_a_stray_close_is_a_call(dialect: str) -> None:
    _, close = syntax_of(dialect)
    call = render_calls("hermes" if dialect == "auto" else dialect, [("call_1", "get_weather", '{"city": "Paris"}')])
    result = check_streams(BEFORE + close + "\n" + call, seeds=range(3), dialect=dialect)
    assert [c.name for c in result.tool_calls] == ["get_weather"]
    assert close not in (result.content or "")


@pytest.mark.parametrize("dialect", ["hermes", "qwen3_coder", "llama3_json", "auto", "generic_json"])
def test_a_close_in_code_or_in_arguments_is_kept(dialect: str) -> None:
    inline = "Reasoning ends at `</think>`, and\n```\n</think>\n```\n"
    assert check_streams(inline, seeds=range(3), dialect=dialect).content == inline
    if dialect == "hermes":
        raw = '<tool_call>{"name": "f", "arguments": {"tag": "</think>"}}</tool_call>'
        assert check_streams(raw, seeds=range(3), dialect=dialect).tool_calls[0].arguments == '{"tag": "</think>"}'


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_pair_written_in_the_answer_stays_text(dialect: str) -> None:
    # Reasoning counts only at the start: a pair the model writes later is its text, whole; a
    # close after the pair has none open, and is dropped.
    opening, close = syntax_of(dialect)
    raw = f"Sure. {opening}a note{close} and done{close}."
    result = check_streams(raw, seeds=range(3), dialect=dialect)
    assert result.content == f"Sure. {opening}a note{close} and done." and result.reasoning is None


def every_split(raw: str, **kwargs: object) -> ParseResult:
    """The whole parse of `raw`, after asserting that a stream cut at any one place, and one of
    single characters, gives the same."""
    whole = parse(raw, **kwargs)  # type: ignore[arg-type]
    for cut in range(len(raw) + 1):
        assert stream_parse([raw[:cut], raw[cut:]], **kwargs) == whole, cut
    assert stream_parse(list(raw), **kwargs) == whole
    return whole


CALL_F = '{"name": "f", "arguments": {"x": 1}}'


@pytest.mark.parametrize(
    ("raw", "content", "names"),
    [
        # The template opened the reasoning: what the model wrote before the close is content (it
        # was not told), and the object after it is the forced answer.
        (BEFORE + "</think>\n" + CALL_F, BEFORE, ["f"]),
        ("</think>" + CALL_F, None, ["f"]),
        (BEFORE + '</think>{"response": "Four."}', BEFORE + "Four.", []),
        # After the object the output is, the close is dropped and the rest is text.
        (CALL_F + "</think> " + CALL_F, " " + CALL_F, ["f"]),
        ('{"response": "Four."}</think> Done.', "Four. Done.", []),
        # A pair the model wrote is text; a close in code is text.
        ("Note <think>a</think>: " + CALL_F, "Note <think>a</think>: " + CALL_F, []),
        ("Write `</think>` to end.</think>" + CALL_F, "Write `</think>` to end.", ["f"]),
    ],
)
def test_generic_json_drops_a_stray_close_and_reads_the_object_after_it(
    raw: str, content: str | None, names: list[str]
) -> None:
    result = every_split(raw, dialect="generic_json")
    assert (result.content, [c.name for c in result.tool_calls]) == (content, names)
    assert result.reasoning is None


def test_a_close_that_is_a_phrase_stays_text() -> None:
    # Granite's `Here is my response:` closes its plain-text thinking; in an answer with no thought
    # process before it, it is the model's own text.
    raw = "Sure. Here is my response: 4.</think> Done."
    assert check_streams(raw, seeds=range(3), dialect="granite").content == "Sure. Here is my response: 4. Done."


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(CASES),
    st.text(alphabet="ab <>/\n`", max_size=12),
    st.text(alphabet="ab <>/\n`", max_size=12),
    st.lists(st.integers(min_value=0, max_value=10**6), max_size=20),
)
def test_any_split_of_a_stray_close_is_the_whole_parse(
    case: tuple[str, str], before: str, after: str, cuts: list[int]
) -> None:
    dialect, close = case
    raw = "x" + before + close + after
    whole = parse(raw, dialect)
    assert stream_parse(split_at(raw, cuts), dialect=dialect) == whole
    if "`" not in raw and "<" not in before + after:  # (else code or another marker may be around it)
        assert whole.content == (raw.replace(close, "", 1) or None)
