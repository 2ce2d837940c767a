"""A parameter whose value is the literal `null` is JSON null, whatever the tool schema says.

The parameter formats write every value as raw text typed by the schema, so `null` is the only
way their models can write a null: vLLM and SGLang decode it for any type, and so do we. Each
call is written as the model's template writes it (the dialect's own renderer), then parsed
whole and at every split.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import calls, check_streams, function_tools
from toolcall_middleware.core.request import render_calls

PARAMETER_DIALECTS = ["qwen3_coder", "seed_oss", "minimax_m2", "glm45", "glm47"]

TOOLS = function_tools(
    {
        "note": {
            "title": {"type": "string"},
            "due": {"type": "integer"},
            "done": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "where": {"type": ["string", "null"]},
        }
    }
)


def written(dialect: str, arguments: str) -> str:
    """Text, the call as the dialect writes it, text."""
    return "Saving it.\n" + render_calls(dialect, [("call_1", "note", arguments)])


@pytest.mark.parametrize("dialect", PARAMETER_DIALECTS)
def test_null_is_null_for_every_type(dialect: str) -> None:
    raw = written(dialect, '{"title": null, "due": null, "done": null, "tags": null, "where": null}')
    result = check_streams(raw, seeds=range(4), dialect=dialect, tools=TOOLS)
    assert result.content == "Saving it."
    assert calls(result) == [("note", {"title": None, "due": None, "done": None, "tags": None, "where": None})]


@pytest.mark.parametrize("dialect", PARAMETER_DIALECTS)
@pytest.mark.parametrize("spelling", ["NULL", "Null"])
def test_null_in_any_case_and_only_alone(dialect: str, spelling: str) -> None:
    # (Written by hand: the renderers write a string that reads `null` so that it stays one.)
    raw = written(dialect, '{"title": "SPELLING", "where": "null and void"}').replace("SPELLING", spelling)
    result = check_streams(raw, seeds=range(4), dialect=dialect, tools=TOOLS)
    assert calls(result) == [("note", {"title": None, "where": "null and void"})]


@pytest.mark.parametrize("dialect", PARAMETER_DIALECTS)
def test_without_tools_null_is_null_and_other_text_keeps_its_policy(dialect: str) -> None:
    raw = written(dialect, '{"title": null, "due": "7"}')
    result = check_streams(raw, seeds=range(4), dialect=dialect)
    expected: dict[str, Any] = {"title": None, "due": 7 if dialect.startswith("glm") else "7"}
    assert calls(result) == [("note", expected)]
