"""`serve --constrain ENGINE`: a request that must call reaches the host with the engine's own
grammar field (and, for SGLang, without `tool_choice` beside it), through the real proxy, from
the official openai SDK; one that may answer in prose goes as it came."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from ..servers import free_port, serve, uvicorn

PARAMS = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
TOOLS: Any = [{"type": "function", "function": {"name": "get_weather", "description": "Weather", "parameters": PARAMS}}]
STRICT_TOOLS: Any = [{"type": "function", "function": {**TOOLS[0]["function"], "strict": True}}]
MESSAGES: Any = [{"role": "user", "content": "What is the weather in Paris?"}]


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with serve(*uvicorn("tests.served.recording_upstream:app")) as base:
        yield base


def proxy(upstream: str, *flags: str, dialect: str = "hermes") -> tuple[list[str], int]:
    port = free_port()
    command = [sys.executable, "-m", "toolcall_middleware.cli", "serve", "--upstream", upstream, "--port", str(port)]
    return [*command, "--log-level", "warning", "--dialect", dialect, *flags], port


def last_request(upstream: str) -> Any:
    return httpx.get(f"{upstream}/requests").json()[-1]


def ask(base: str, **extra: Any) -> Any:
    client = openai.OpenAI(base_url=f"{base}/v1", api_key="none", max_retries=0)
    return client.chat.completions.create(model="demo", messages=MESSAGES, **extra)


def test_sglang_gets_a_structural_tag_and_no_tool_choice(upstream: str) -> None:
    with serve(*proxy(upstream, "--constrain", "sglang", "--forward-tools", "--inject-manifest")) as base:
        answer = ask(base, tools=TOOLS, tool_choice="required")
    assert answer.choices[0].message.tool_calls[0].function.name == "get_weather"
    sent = last_request(upstream)
    assert "tool_choice" not in sent  # SGLang answers 400 to a constraint beside it
    assert sent["tools"] == TOOLS  # forward_tools: the rest of the tools still travel
    tag = sent["response_format"]
    assert tag["type"] == "structural_tag"
    assert '"name": "get_weather"' in json.dumps(tag["format"], ensure_ascii=False).replace('\\"', '"')


def test_vllm_gets_its_structured_outputs_field(upstream: str) -> None:
    with serve(*proxy(upstream, "--constrain", "vllm")) as base:
        ask(base, tools=TOOLS, tool_choice={"type": "function", "function": {"name": "get_weather"}})
    sent = last_request(upstream)
    tag = json.loads(sent["structured_outputs"]["structural_tag"])  # vLLM reads a JSON string
    assert tag["type"] == "structural_tag"
    assert "guided_json" not in sent and "guided_grammar" not in sent  # removed in vLLM: ignored with a 200
    assert "<tool_call>" in json.dumps(tag, ensure_ascii=False)


def test_llama_cpp_gets_a_lazy_gbnf_for_auto_with_a_strict_tool(upstream: str) -> None:
    with serve(*proxy(upstream, "--constrain", "llama.cpp")) as base:
        ask(base, tools=STRICT_TOOLS)
        sent = last_request(upstream)
        assert sent["grammar_lazy"] is True
        assert sent["grammar_triggers"] == [{"type": 1, "value": "<tool_call>"}]
        assert sent["preserved_tokens"] == ["<tool_call>"]  # a one-token trigger must be preserved
        assert sent["grammar"].startswith("root ::= ")
        ask(base, tools=TOOLS)  # auto, no strict tool: the model may answer in prose
        assert "grammar" not in last_request(upstream)


def test_tgi_gets_the_regex_of_a_python_call_block(upstream: str) -> None:
    with serve(*proxy(upstream, "--constrain", "tgi", dialect="olmo3")) as base:
        try:
            ask(base, tools=TOOLS, tool_choice="required")
        except openai.APIStatusError:
            pass  # (the recording upstream answers in hermes: what matters is what it was sent)
    sent = last_request(upstream)
    assert "tools" not in sent and "tool_choice" not in sent  # TGI: response_format or tools
    pattern = sent["response_format"]["value"]
    assert re.fullmatch(pattern, "<function_calls>\nget_weather(city='Paris')\n</function_calls>")
    assert re.fullmatch(pattern, '<function_calls>\nget_weather(city="Paris")\n</function_calls>')
    assert not re.fullmatch(pattern, '<function_calls>\nget_weather(city="a<b")\n</function_calls>')
    assert not re.fullmatch(pattern, '<function_calls>\n{"name": "get_weather"}\n</function_calls>')
def test_dialects_in_a_notation_of_their_own_get_their_grammar(upstream: str) -> None:
    with serve(*proxy(upstream, "--constrain", "llama.cpp", "--dialect", "gemma4")) as base:
        ask(base, tools=STRICT_TOOLS)  # (the host answers as hermes: text, to gemma4)
        sent = last_request(upstream)
        assert sent["grammar_triggers"] == [{"type": 1, "value": "<|tool_call>"}]
        assert sent["preserved_tokens"] == ["<|tool_call>", "<tool_call|>", '<|"|>']
        assert '"<|tool_call>call:get_weather" "{"' in sent["grammar"] and '"city:"' in sent["grammar"]
    with serve(*proxy(upstream, "--constrain", "vllm", "--dialect", "functionary_v3_2")) as base:
        ask(base, tools=STRICT_TOOLS)
        tag = json.loads(last_request(upstream)["structured_outputs"]["structural_tag"])
        # (after the optional reasoning block) the calls, or `all` and text in which `>>>` opens one
        calls_or_text = tag["format"]["elements"][-1]["elements"]
        assert calls_or_text[1]["elements"][0] == {"type": "const_string", "value": "all\n"}
        calls = json.dumps(calls_or_text[0])  # (the first opens with the name: the template wrote `>>>`)
        assert calls.index('"value": "get_weather\\n"') < calls.index('"value": ">>>get_weather\\n"')
