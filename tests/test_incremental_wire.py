"""`arguments_streaming="incremental"` through `ToolCallMiddleware`, driven by the official openai SDK.

A raw ASGI host answers with the model's raw text in small SSE chunks (Chat Completions or
Responses shape); the SDK's `.stream()` helpers must see several argument delta events for a long
call before it ends, and accumulate exactly the call that whole mode gives. A strict tool's call
is still checked whole before it goes out; a call that only a repair pass could read fails the
response instead of going out changed.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import openai
import pytest

from tests.asgi.harness import body, chat_stream, responses_stream, scripted, start
from toolcall_middleware import ToolCallMiddleware

LONG_NOTE = "Bring an umbrella; " * 12
ARGS = {"city": "Paris", "note": LONG_NOTE, "days": "3"}
RAW = {
    "hermes": "Checking.\n<tool_call>\n" + json.dumps({"name": "get_weather", "arguments": ARGS}) + "\n</tool_call>",
    "kimi_k2": "Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
    f"<|tool_call_argument_begin|>{json.dumps(ARGS)}<|tool_call_end|><|tool_calls_section_end|>",
    "qwen3_coder": "Checking.\n<tool_call>\n<function=get_weather>\n"
    + "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in ARGS.items())
    + "</function>\n</tool_call>",
}


def tool(strict: bool = False) -> dict[str, Any]:
    properties = {k: {"type": "string"} for k in ARGS}
    parameters = {"type": "object", "properties": properties, "required": list(ARGS), "additionalProperties": False}
    return {"type": "function", "function": {"name": "get_weather", "parameters": parameters, "strict": strict}}


def responses_tool(strict: bool = False) -> dict[str, Any]:
    return {"type": "function", **tool(strict)["function"]}


def host(raw: str, api: str) -> Any:
    data = responses_stream(raw, piece=3) if api == "responses" else chat_stream(raw, piece=3)
    events = [block + b"\n\n" for block in data.split(b"\n\n") if block]
    return scripted(
        [start(200, [(b"content-type", b"text/event-stream")]), *(body(e, more=True) for e in events), body(b"")]
    )


def client(dialect: str, raw: str, api: str, streaming: str) -> openai.AsyncOpenAI:
    app = ToolCallMiddleware(host(raw, api), dialect=dialect, arguments_streaming=streaming)
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    return openai.AsyncOpenAI(
        api_key="test",
        base_url="http://model.test/v1",
        http_client=httpx.AsyncClient(transport=transport),
        max_retries=0,
    )


def chat(dialect: str, raw: str, streaming: str, *, strict: bool = False) -> tuple[list[Any], Any]:
    async def go() -> tuple[list[Any], Any]:
        async with client(dialect, raw, "chat", streaming).chat.completions.stream(
            model="m",
            messages=[{"role": "user", "content": "Paris?"}],
            tools=[tool(strict)],  # type: ignore[list-item]
        ) as stream:
            events = [event async for event in stream]
            return events, await stream.get_final_completion()

    return asyncio.run(go())


def responses(dialect: str, raw: str, streaming: str) -> tuple[list[Any], Any]:
    async def go() -> tuple[list[Any], Any]:
        async with client(dialect, raw, "responses", streaming).responses.stream(
            model="m",
            input="Paris?",
            tools=[responses_tool()],  # type: ignore[list-item]
        ) as stream:
            events = [event async for event in stream]
            return events, await stream.get_final_response()

    return asyncio.run(go())


def chat_deltas(events: list[Any]) -> list[str]:
    """The argument fragments the SDK reported before the call's arguments were done."""
    out: list[str] = []
    for event in events:
        if event.type == "tool_calls.function.arguments.done":
            break
        if event.type == "tool_calls.function.arguments.delta" and event.arguments_delta:
            out.append(event.arguments_delta)
    return out


@pytest.mark.parametrize("dialect", sorted(RAW))
def test_chat_stream_gets_argument_fragments_as_they_come(dialect: str) -> None:
    events, final = chat(dialect, RAW[dialect], "incremental")
    _, whole = chat(dialect, RAW[dialect], "whole")
    assert len(chat_deltas(events)) > 1
    assert len(chat_deltas(chat(dialect, RAW[dialect], "whole")[0])) == 1  # whole mode: one fragment
    got, want = final.choices[0].message, whole.choices[0].message
    assert got.content == want.content == "Checking."
    assert got.tool_calls is not None and want.tool_calls is not None
    assert [(c.function.name, json.loads(c.function.arguments)) for c in got.tool_calls] == [("get_weather", ARGS)]
    assert [(c.function.name, json.loads(c.function.arguments)) for c in want.tool_calls] == [("get_weather", ARGS)]
    assert "".join(chat_deltas(events)) in got.tool_calls[0].function.arguments
    assert final.choices[0].finish_reason == "tool_calls"
    if dialect == "qwen3_coder":  # parameter formats stream the same text whole mode writes
        assert got.tool_calls[0].function.arguments == want.tool_calls[0].function.arguments


@pytest.mark.parametrize("dialect", sorted(RAW))
def test_responses_stream_gets_argument_fragments_as_they_come(dialect: str) -> None:
    events, final = responses(dialect, RAW[dialect], "incremental")
    _, whole = responses(dialect, RAW[dialect], "whole")
    kinds = [e.type for e in events]
    deltas = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert len(deltas) > 1
    assert kinds.index("response.output_item.added") < kinds.index("response.function_call_arguments.delta")
    done = next(e for e in events if e.type == "response.function_call_arguments.done")
    assert done.arguments == "".join(deltas)
    calls = [item for item in final.output if item.type == "function_call"]
    whole_calls = [item for item in whole.output if item.type == "function_call"]
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("get_weather", ARGS)]
    assert [(c.name, json.loads(c.arguments)) for c in whole_calls] == [("get_weather", ARGS)]
    assert calls[0].arguments == done.arguments
    assert final.output_text == whole.output_text == "Checking."


def raw_chat_stream(raw: str, dialect: str, tools: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """The middleware's streamed chat answer as JSON chunks, read without the SDK (it raises on errors)."""

    async def go() -> tuple[list[dict[str, Any]], str]:
        app = ToolCallMiddleware(host(raw, "chat"), dialect=dialect, arguments_streaming="incremental")
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app)) as http:  # type: ignore[arg-type]
            payload = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "Paris?"}]}
            response = await http.post("http://model.test/v1/chat/completions", json={**payload, "tools": tools})
            chunks = [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: {")]
            return chunks, response.text

    return asyncio.run(go())


def streamed_arguments(chunks: list[dict[str, Any]]) -> str:
    return "".join(
        (call.get("function") or {}).get("arguments") or ""
        for chunk in chunks
        for choice in chunk["choices"]
        for call in choice["delta"].get("tool_calls") or []
    )


def test_a_strict_tool_call_is_checked_whole_before_it_goes_out() -> None:
    _, final = chat("hermes", RAW["hermes"], "incremental", strict=True)
    call = (final.choices[0].message.tool_calls or [])[0]
    assert json.loads(call.function.arguments) == ARGS
    # Not the schema (an extra property): nothing of the call went out before the check failed.
    bad = RAW["hermes"].replace('"days": "3"', '"days": "3", "extra": 1')
    chunks, _ = raw_chat_stream(bad, "hermes", [tool(strict=True)])
    assert not any(choice["delta"].get("tool_calls") for chunk in chunks for choice in chunk["choices"])
    assert chunks[-1]["choices"][0]["finish_reason"] == "error"
    assert chunks[-1]["error"]["code"] == "invalid_tool_arguments"


def test_a_call_only_a_repair_could_read_fails_instead_of_going_out_changed() -> None:
    raw = "Checking.\n<tool_call>\n" + '{"name": "get_weather", "arguments": {' + "'city': 'Paris'}}\n</tool_call>"
    _, whole = chat("hermes", raw, "whole")
    assert json.loads((whole.choices[0].message.tool_calls or [])[0].function.arguments) == {"city": "Paris"}

    chunks, text = raw_chat_stream(raw, "hermes", [tool()])
    streamed = streamed_arguments(chunks)
    assert streamed == "{'city': 'Paris'}"  # the model's text went out as it came ...
    last = chunks[-1]
    assert last["choices"][0]["finish_reason"] == "error"  # ... and the response fails: never a changed call
    assert last["error"]["code"] == "incomplete_tool_call"
    assert text.rstrip().endswith("data: [DONE]")


def test_on_responses_a_call_only_a_repair_could_read_fails_the_response() -> None:
    raw = "Checking.\n<tool_call>\n" + '{"name": "get_weather", "arguments": {' + "'city': 'Paris'}}\n</tool_call>"

    async def go() -> list[dict[str, Any]]:
        app = ToolCallMiddleware(host(raw, "responses"), dialect="hermes", arguments_streaming="incremental")
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app)) as http:  # type: ignore[arg-type]
            payload = {"model": "m", "stream": True, "input": "Paris?", "tools": [responses_tool()]}
            response = await http.post("http://model.test/v1/responses", json=payload)
            return [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: {")]

    events = asyncio.run(go())
    kinds = [e["type"] for e in events]
    deltas = [e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta"]
    assert "".join(deltas) == "{'city': 'Paris'}"
    assert kinds[-1] == "response.failed"
    # The streamed item is closed as it must be for the client, marked incomplete: never a call to run.
    calls = [item for item in events[-1]["response"]["output"] if item["type"] == "function_call"]
    assert [item["status"] for item in calls] == ["incomplete"]
