"""The `gigachat3` dialect: GigaChat 3's `function call<|role_sep|>` message and 3.1's `<|function_call|>`.

The samples are the model outputs of vLLM's gigachat3 tests (`tests/tool_parsers/`) and SGLang's
`GigaChat3Detector` tests, with the calls and content those suites expect; the layout is the
GigaChat3 chat template's (llama.cpp `GigaChat3-10B-A1.8B.jinja`). Every sample is parsed whole,
streamed one character at a time and at random splits, and all parses must agree.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import calls, check_streams
from toolcall_middleware import dialect_for_model, parse
from toolcall_middleware.core._result import ParseResult
from toolcall_middleware.core.request import render_assistant

MSG_SEP = "<|message_sep|>\n\n"
HEADER_3 = "function call<|role_sep|>\n"
HEADER_31 = "<|function_call|>"
EOS = "</s>"
GIGACHAT: dict[str, Any] = {"dialect": "gigachat3"}

SIMPLE_ARGS = {"action": "create", "id": "preferences"}
SIMPLE = json.dumps({"name": "manage_user_memory", "arguments": SIMPLE_ARGS}, ensure_ascii=False)
PARAMETERLESS = json.dumps({"name": "manage_user_memory", "arguments": {}})
COMPLEX_ARGS = {
    "action": "create",
    "id": "preferences",
    "content": {"short_answers": True, "hate_emojis": True, "english_ui": False, "russian_math_explanations": True},
}
COMPLEX = json.dumps({"name": "manage_user_memory", "arguments": COMPLEX_ARGS}, ensure_ascii=False)
CONTENT = "I'll check that for you."


def check(raw: str, **kwargs: Any) -> ParseResult:
    return check_streams(raw, seeds=range(3), **{**GIGACHAT, **kwargs})


@pytest.mark.parametrize(
    "model",
    ["ai-sage/GigaChat3-10B-A1.8B", "ai-sage/GigaChat3-702B-A36B-preview-bf16", "ai-sage/GigaChat3.1-10B-A1.8B"],
)
def test_model_selection(model: str) -> None:
    found = dialect_for_model(model)
    assert found is not None and found.name == "gigachat3"


def test_gigachat_3_5_is_not_selected() -> None:
    # GigaChat 3.5 writes another format (vLLM's gigachat35 parser): its output is read as it comes.
    found = dialect_for_model("ai-sage/GigaChat3.5-10B")
    assert found is None or found.name != "gigachat3"


def test_no_tool_call() -> None:
    assert check("How can I help you today?") == ParseResult(content="How can I help you today?", reasoning=None)


@pytest.mark.parametrize("header", [MSG_SEP + HEADER_3, HEADER_31], ids=["gigachat3", "gigachat31"])
@pytest.mark.parametrize(
    ("body", "args"),
    [(SIMPLE, SIMPLE_ARGS), (PARAMETERLESS, {}), (COMPLEX, COMPLEX_ARGS)],
    ids=["simple", "parameterless", "complex"],
)
def test_the_engines_calls(header: str, body: str, args: dict[str, Any]) -> None:
    result = check(header + body)
    assert calls(result) == [("manage_user_memory", args)] and result.content is None


@pytest.mark.parametrize("header", [MSG_SEP + HEADER_3, HEADER_31], ids=["gigachat3", "gigachat31"])
@pytest.mark.parametrize("eos", ["", EOS])
def test_content_before_the_call_and_the_end_token(header: str, eos: str) -> None:
    result = check(CONTENT + header + SIMPLE + eos)
    assert result.content == CONTENT
    assert calls(result) == [("manage_user_memory", SIMPLE_ARGS)]


def test_sglang_samples() -> None:
    result = check(
        "I'll remember that.<|message_sep|>\n\nfunction call<|role_sep|>\n"
        '{"name": "manage_user_memory", "arguments": {"action": "create", "id": "test"}}</s>'
    )
    assert result.content == "I'll remember that."
    assert calls(result) == [("manage_user_memory", {"action": "create", "id": "test"})]
    nested = check(
        MSG_SEP + HEADER_3 + '{"name": "manage_user_memory", "arguments": {"action": "create", "id": "prefs", '
        '"content": {"likes": ["short", "clear"], "dislikes": ["emojis", "verbose"]}}}'
    )
    content = {"likes": ["short", "clear"], "dislikes": ["emojis", "verbose"]}
    assert calls(nested) == [("manage_user_memory", {"action": "create", "id": "prefs", "content": content})]


@pytest.mark.parametrize(
    "body",
    [
        '{"name": "manage_user_memory", "arguments": {invalid json}}',
        '{"arguments": {"action": "create"}}',  # no name
        '{"name": "manage_user_memory"}',  # no arguments
        '{"name": "manage_user_memory", "arguments": "string_args"}',  # arguments not an object
    ],
)
def test_what_is_not_a_call_is_text(body: str) -> None:
    result = check(MSG_SEP + HEADER_3 + body)
    assert result.tool_calls == []
    assert result.content is not None and (HEADER_3 + body) in result.content


def test_a_call_cut_off_is_truncated_never_a_call() -> None:
    result = parse(MSG_SEP + HEADER_3 + '{"name": "get_weather", "arguments": {"city": "London"', **GIGACHAT)
    assert result.tool_calls == [] and result.truncated


def test_the_markup_never_leaks_and_the_end_token_is_text_inside_prose() -> None:
    assert check("Done.<|message_sep|>") == ParseResult(content="Done.", reasoning=None)
    assert check("Use <s>old</s> new.") == ParseResult(content="Use <s>old</s> new.", reasoning=None)
    # `</s>` inside the call's JSON is the value's text.
    result = check(HEADER_31 + '{"name": "say", "arguments": {"text": "a</s>b"}}')
    assert calls(result) == [("say", {"text": "a</s>b"})]


def test_the_rendered_turn_is_the_templates_layout() -> None:
    raw = render_assistant("gigachat3", "Let me look.", [("call_1", "get_weather", '{"city": "Paris"}')])
    call = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    assert raw == f"Let me look.<|message_sep|>\n\nfunction call<|role_sep|>\n{call}"
    assert calls(check(raw)) == [("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize(
    "raw",
    [CONTENT + MSG_SEP + HEADER_3 + SIMPLE + EOS, CONTENT + HEADER_31 + COMPLEX, "Done.<|message_sep|>"],
    ids=["gigachat3", "gigachat31", "end_of_turn"],
)
def test_auto_reads_gigachat_as_the_dialect_does(raw: str) -> None:
    assert check_streams(raw, seeds=range(3), dialect="auto") == parse(raw, "gigachat3")
