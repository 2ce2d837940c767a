"""A model whose name selects one dialect while it writes another's markup (a Llama fine-tune
trained on Hermes tags), under a real uvicorn, driven by the openai SDK: with the default
`dialect_mismatch="read"` the client gets a real tool call, the warning is logged once per model
and dialect found, and the record and `/metrics` count it; `"warn"` and `"off"` leave the text."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from tests.servers import serve, uvicorn

TOOLS: Any = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
OTHER_TOOLS: Any = [{"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}]
ASK: Any = [{"role": "user", "content": "What is the weather in Paris? (get_weather)"}]


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    command, port = uvicorn("tests.asgi.mismatch_app:app")
    with serve(command, port) as url:
        yield url


def client(base: str, mode: str = "read") -> openai.OpenAI:
    return openai.OpenAI(api_key="none", base_url=base + "/v1", max_retries=0, default_headers={"x-mismatch": mode})


def logged(base: str, model: str) -> tuple[list[str], list[str]]:
    """The warnings about `model` and its exchange records, as the server logged them."""
    entries = httpx.get(base + "/log").json()
    warnings = [e["message"] for e in entries if e["level"] == "WARNING" and model in e["message"]]
    records = [e["message"] for e in entries if "exchange" in e["message"] and f"model={model}" in e["message"]]
    return warnings, records


def mismatches(base: str, found: str = "hermes") -> float:
    for line in httpx.get(base + "/metrics").text.splitlines():
        if line.startswith("toolcall_dialect_mismatches_total{") and f'found="{found}"' in line:
            if 'dialect="llama3_json"' in line and 'api="chat"' in line:
                return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_a_llama_name_over_hermes_markup_gives_a_real_call_and_one_warning(base: str) -> None:
    model = "meta-llama/Llama-3.1-8B-Instruct"
    before = mismatches(base)
    whole = client(base).chat.completions.create(model=model, messages=ASK, tools=TOOLS).choices[0]
    assert whole.finish_reason == "tool_calls"
    assert whole.message.content == "Let me check.\n"
    (call,) = whole.message.tool_calls or []
    assert call.function.name == "get_weather" and call.function.arguments == '{"city": "Paris"}'  # type: ignore[union-attr]

    stream = client(base).chat.completions.create(model=model, messages=ASK, tools=TOOLS, stream=True)
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    calls = [t for c in chunks if c.choices for t in c.choices[0].delta.tool_calls or []]
    assert "<tool_call>" not in text
    assert [t.function.name for t in calls if t.function and t.function.name] == ["get_weather"]
    assert chunks[-1].choices[0].finish_reason == "tool_calls"

    warnings, records = logged(base, model)
    assert len(warnings) == 1  # once per model and dialect found, not once per answer
    assert "'llama3_json'" in warnings[0] and "'hermes'" in warnings[0] and "model_dialects" in warnings[0]
    assert len(records) == 2 and all("calls=1/1 mismatch=hermes" in r for r in records)
    assert mismatches(base) == before + 2


def test_the_responses_api_gets_the_call_too(base: str) -> None:
    tools: Any = [{"type": "function", **TOOLS[0]["function"]}]
    response = client(base).responses.create(
        model="meta-llama/Llama-3.1-8B-Instruct", input=ASK[0]["content"], tools=tools
    )
    (call,) = [item for item in response.output if item.type == "function_call"]
    assert call.name == "get_weather" and call.arguments == '{"city": "Paris"}'


def test_a_call_to_a_tool_not_offered_is_text_as_any_other(base: str) -> None:
    model = "meta-llama/Llama-3.1-70B-Instruct"
    choice = client(base).chat.completions.create(model=model, messages=ASK, tools=OTHER_TOOLS).choices[0]
    assert choice.message.tool_calls is None and choice.finish_reason == "stop"
    assert '"name": "get_weather"' in (choice.message.content or "")
    _, records = logged(base, model)
    assert "unknown_tools=get_weather" in records[-1] and "mismatch=hermes" in records[-1]


def test_warn_only_leaves_the_markup_and_says_so(base: str) -> None:
    model = "meta-llama/Llama-3.3-70B-Instruct"
    before = mismatches(base)
    choice = client(base, "warn").chat.completions.create(model=model, messages=ASK, tools=TOOLS).choices[0]
    assert choice.message.tool_calls is None and choice.finish_reason == "stop"
    assert "<tool_call>" in (choice.message.content or "")
    warnings, records = logged(base, model)
    assert len(warnings) == 1 and "went to the client as text" in warnings[0]
    assert "calls=0/0 mismatch=hermes" in records[-1]
    assert mismatches(base) == before + 1


def test_off_looks_for_nothing(base: str) -> None:
    model = "meta-llama/Llama-3.2-3B-Instruct"
    before = mismatches(base)
    stream = client(base, "off").chat.completions.create(model=model, messages=ASK, tools=TOOLS, stream=True)
    chunks = list(stream)
    assert "<tool_call>" in "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert chunks[-1].choices[0].finish_reason == "stop"
    warnings, records = logged(base, model)
    assert warnings == [] and "mismatch=" not in records[-1]
    assert mismatches(base) == before
