"""The `inkling` dialect: Inkling's typed model messages, a call being `<|content_invoke_tool_json|>`.

The samples are the model outputs of SGLang's Inkling detector tests
(`test/registered/unit/function_call/test_inkling_detector.py`), with the calls and content they
expect; where SGLang drops a rejected call's text, it stays content here (nothing the model wrote
is lost). Every sample is parsed whole, streamed one character at a time and at random splits,
and all parses must agree.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import calls, check_streams
from toolcall_middleware import dialect_for_model, parse
from toolcall_middleware.core._result import ParseResult

MESSAGE_MODEL = "<|message_model|>"
CONTENT_TEXT = "<|content_text|>"
CONTENT_THINKING = "<|content_thinking|>"
INVOKE_TOOL_JSON = "<|content_invoke_tool_json|>"
END_MESSAGE = "<|end_message|>"
INKLING: dict[str, Any] = {"dialect": "inkling"}


def canonical_call(args: dict[str, Any]) -> str:
    payload = json.dumps({"name": "weather", "args": args}, separators=(",", ":"))
    return f"{MESSAGE_MODEL}weather{INVOKE_TOOL_JSON}{payload}{END_MESSAGE}"


def check(raw: str, **kwargs: Any) -> ParseResult:
    return check_streams(raw, seeds=range(3), **{**INKLING, **kwargs})


def test_model_selection() -> None:
    found = dialect_for_model("inkling-ai/Inkling-1")
    assert found is not None and found.name == "inkling"


def test_visible_text_before_a_call_and_the_header_stripped() -> None:
    result = check("Sure, let me check." + canonical_call({"city": "SF"}))
    assert result.content == "Sure, let me check." and calls(result) == [("weather", {"city": "SF"})]


def test_two_calls_in_order() -> None:
    result = check(canonical_call({"city": "SF"}) + canonical_call({"city": "NY"}))
    assert calls(result) == [("weather", {"city": "SF"}), ("weather", {"city": "NY"})]


@pytest.mark.parametrize(
    "body",
    ["[1, 2, 3]", '{"args":{}}', '{"name":"weather"}'],
    ids=["array", "no_name", "no_args"],
)
def test_a_payload_that_is_not_a_call_is_text(body: str) -> None:
    result = check(INVOKE_TOOL_JSON + body + END_MESSAGE)
    assert result.tool_calls == [] and result.content is not None and body in result.content


def test_a_header_naming_another_tool_is_no_call() -> None:
    raw = f'{MESSAGE_MODEL}other{INVOKE_TOOL_JSON}{{"name":"weather","args":{{}}}}{END_MESSAGE}'
    assert check(raw).tool_calls == []


def test_the_framing_tokens_never_leak() -> None:
    raw = "Hi" + MESSAGE_MODEL + CONTENT_TEXT + "there" + END_MESSAGE
    assert check(raw) == ParseResult(content="Hithere", reasoning=None)


@pytest.mark.parametrize("lead", ["", MESSAGE_MODEL])
def test_a_thinking_block_at_the_start_is_reasoning(lead: str) -> None:
    raw = (
        f"{lead}{CONTENT_THINKING}The user wants the weather.{END_MESSAGE}"
        f"{MESSAGE_MODEL}{CONTENT_TEXT}Checking.{END_MESSAGE}"
        + canonical_call({"city": "SF"})
        + "<|content_model_end_sampling|>"
    )
    result = check(raw)
    assert result.reasoning == "The user wants the weather." and result.content == "Checking."
    assert calls(result) == [("weather", {"city": "SF"})]


def test_a_call_cut_off_is_truncated_never_a_call() -> None:
    result = parse(f'{MESSAGE_MODEL}weather{INVOKE_TOOL_JSON}{{"name":"weather","args":{{"city":"S', **INKLING)
    assert result.tool_calls == [] and result.truncated


def test_auto_reads_inkling_as_the_dialect_does() -> None:
    raw = "Sure, let me check." + canonical_call({"city": "SF"})
    assert check_streams(raw, seeds=range(3), dialect="auto") == parse(raw, **INKLING)
