"""`constrained_body`: which requests get a constraint, and what of the body changes beside
it (needs no grammar engine: the engine tests compile the grammars themselves)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from toolcall_middleware.core.dialects import get_dialect, list_dialects
from toolcall_middleware.core.grammar.constrain import constrained_body
from toolcall_middleware.core.request._tools import normalize_tools

PARAMS = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": PARAMS}}]


def constrained(engine: str, dialect: str = "hermes", **body: Any) -> dict[str, Any] | None:
    request = {"model": "m", "messages": [], "tools": TOOLS, **body}
    return constrained_body(
        request,
        normalize_tools(request),
        engine=engine,  # type: ignore[arg-type]
        dialect=dialect,
        model="m",
        thinking=None,
    )


def test_a_request_that_may_answer_in_prose_goes_as_it_came() -> None:
    assert constrained("vllm") is None
    assert constrained("vllm", tool_choice="none") is None
    assert constrained("vllm", tool_choice="auto") is None


def test_sglang_gets_the_tag_and_loses_tool_choice() -> None:
    body = constrained("sglang", tool_choice="required")
    assert body is not None
    assert "tool_choice" not in body and body["tools"] == TOOLS
    assert body["response_format"]["type"] == "structural_tag"


def test_vllm_gets_one_constraint() -> None:
    body = constrained("vllm", tool_choice="required", response_format={"type": "json_object"})
    assert body is not None
    assert "response_format" not in body  # vLLM takes one structured-output mode
    assert json.loads(body["structured_outputs"]["structural_tag"])["type"] == "structural_tag"
    assert "tool_choice" not in body  # vLLM would build its own JSON constraint from it


def test_an_engine_that_cannot_say_the_dialect_leaves_the_request_alone() -> None:
    # (chosen per request from the model: a configured dialect is refused at construction)
    assert constrained("tgi", "kimi_k2", tool_choice="required") is None
    assert constrained("ollama", "hermes", tool_choice="required") is None
    strict = [{"type": "function", "function": {**TOOLS[0]["function"], "strict": True}}]
    assert constrained("vllm", "hermes", tools=strict) is not None  # auto with a strict tool: the lazy form
    assert constrained("tgi", "hermes", tools=strict) is None  # which a regular expression cannot say


def test_ollama_gets_the_schema_of_the_whole_answer() -> None:
    body = constrained("ollama", "generic_json", tool_choice="required", parallel_tool_calls=False)
    assert body is not None
    calls = body["format"]["properties"]["tool_calls"]
    assert calls["maxItems"] == 1
    assert calls["items"]["anyOf"][0]["properties"]["name"] == {"const": "get_weather"}


def test_a_dialect_without_a_call_grammar_is_not_constrained() -> None:
    bare = [d for d in list_dialects() if d != "auto" and get_dialect(d).grammar is None]
    if not bare:
        pytest.skip("every dialect declares a call grammar")
    assert constrained("vllm", bare[0], tool_choice="required") is None


def test_a_python_call_dialect_gets_its_call_list() -> None:
    body = constrained("llama.cpp", "pythonic", tool_choice="required")
    assert body is not None
    assert '"[" ( call-' in body["grammar"] and '"get_weather(" ' in body["grammar"]
    body = constrained("tgi", "olmo3", tool_choice="required")
    assert body is not None
    assert body["response_format"]["value"].startswith(re.escape("<function_calls>\n"))
    assert constrained("tgi", "lfm2", tool_choice="required") is None  # (its markers are special tokens)


def test_llama_cpp_takes_a_grammar_beside_tools_only_with_tool_choice_none() -> None:
    body = constrained("llama.cpp", tool_choice="required")
    assert body is not None
    assert body["tools"] == TOOLS and body["tool_choice"] == "none"  # (llama-server: 400 otherwise)
    assert body["grammar"].startswith("root ::= ")


def test_tgi_takes_the_regex_without_tools() -> None:
    body = constrained("tgi", tool_choice="required")
    assert body is not None
    assert "tools" not in body and "tool_choice" not in body  # TGI: response_format or tools
    assert body["response_format"]["type"] == "regex"
