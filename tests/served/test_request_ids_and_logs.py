"""Request ids and the log of `toolcall-middleware serve`, run as a process, with the official
OpenAI and Anthropic SDKs as clients: the `x-request-id` a client sends is kept (one is made when
it is absent or unsafe), reaches the upstream, comes back on the answer and is in the exchange's
record; `--log-format json` makes every line on standard error one JSON object, and the text
format starts each record with a UTC timestamp."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import pytest

from tests.served.test_proxy import CHAT_TOOLS, PARAMS, QUESTION, client, proxy, running
from tests.servers import serve, uvicorn

TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"
MADE = re.compile(r"[0-9a-f]{32}")  # an id the proxy made
MESSAGES_TOOLS: Any = [{"name": "get_weather", "description": "Weather", "input_schema": PARAMS}]
ASK: Any = [{"role": "user", "content": QUESTION}]


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    """The demo model, bare, answering in `x-seen-request-id` the `x-request-id` it was sent."""
    command, port = uvicorn("tests.served.id_upstream:app")
    with serve(["env", "DEMO_DIALECT=hermes", *command], port) as base:
        yield base


@contextlib.contextmanager
def serving(upstream: str, *flags: str) -> Iterator[tuple[str, list[str]]]:
    """`serve` at `--log-level info` in front of `upstream`; the lines of its standard error
    are in the list once the block ends (the server stopped)."""
    command, port = proxy(upstream, "--dialect", "hermes", "--log-level", "info", *flags)
    proc = running(command, port)
    lines: list[str] = []
    try:
        yield f"http://127.0.0.1:{port}", lines
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
        lines.extend(err.splitlines())


def test_json_log_lines_and_a_kept_request_id(upstream: str) -> None:
    with serving(upstream, "--log-format", "json") as (base, lines):
        raw = client(base).chat.completions.with_raw_response.create(
            model="demo", messages=ASK, tools=CHAT_TOOLS, extra_headers={"x-request-id": "client-7f3a"}
        )
        stream = client(base).chat.completions.create(
            model="demo", messages=ASK, tools=CHAT_TOOLS, stream=True, extra_headers={"x-request-id": "stream-1"}
        )
        streamed = [chunk for chunk in stream]
        models = client(base).models.with_raw_response.list(extra_headers={"x-request-id": "list-models"})
    call = raw.parse().choices[0].message.tool_calls
    assert call and call[0].function.name == "get_weather"
    assert raw.headers["x-request-id"] == raw.headers["x-seen-request-id"] == "client-7f3a"
    assert streamed and stream.response.headers["x-request-id"] == "stream-1"
    assert stream.response.headers["x-seen-request-id"] == "stream-1"
    # A request the proxy only forwards takes its id upstream and back too.
    assert models.headers["x-request-id"] == models.headers["x-seen-request-id"] == "list-models"

    records = [json.loads(line) for line in lines]  # every line is JSON, and nothing else
    assert records and all(isinstance(r, dict) and re.fullmatch(TIME, r["time"]) for r in records)
    assert any(r["logger"] == "uvicorn.error" and "Uvicorn running" in r["message"] for r in records)
    assert any("proxy to" in r["message"] for r in records)  # the start-up lines too
    assert any(r["logger"] == "uvicorn.access" and r["path"] == "/v1/models" and r["status"] == 200 for r in records)
    exchanges = {r["request_id"]: r for r in records if r["message"] == "exchange"}
    assert set(exchanges) == {"client-7f3a", "stream-1"}
    whole, streaming = exchanges["client-7f3a"], exchanges["stream-1"]
    assert whole["path"] == "/v1/chat/completions" and whole["status"] == 200 and whole["dialect"] == "hermes"
    assert whole["calls_emitted"] == whole["calls_found"] == 1 and whole["outcome"] == "rewritten"
    assert whole["seconds"] > 0 and whole["parse_seconds"] > 0 and not whole["stream"]
    assert streaming["stream"] and streaming["calls_emitted"] == 1


def test_text_log_lines_have_timestamps_and_a_made_request_id(upstream: str) -> None:
    with serving(upstream) as (base, lines):
        messages = anthropic.Anthropic(base_url=base, api_key="none", max_retries=0)
        raw = messages.messages.with_raw_response.create(
            model="demo", max_tokens=256, messages=ASK, tools=MESSAGES_TOOLS
        )
    rid = raw.headers["x-request-id"]
    assert MADE.fullmatch(rid) and raw.headers["x-seen-request-id"] == rid  # made here, sent upstream
    assert [block.type for block in raw.parse().content if block.type == "tool_use"] == ["tool_use"]
    (record,) = [line for line in lines if "toolcall-middleware exchange" in line]
    assert re.fullmatch(
        TIME + r" INFO toolcall-middleware exchange messages POST /v1/messages 200 rewritten "
        r"dialect=hermes model=demo calls=1/1 \d+\.\dms id=" + rid,
        record,
    )
    assert any(re.match(TIME + r" INFO Uvicorn running on", line) for line in lines)


@pytest.mark.parametrize(
    "sent",
    ["x" * 129, "two words", "caf\u00e9", ""],
    ids=["over-128-characters", "a-space", "not-ascii", "empty"],
)
def test_an_unsafe_request_id_is_replaced(upstream: str, sent: str) -> None:
    with serving(upstream, "--log-format", "json") as (base, lines):
        answer = httpx.post(
            base + "/v1/chat/completions",
            json={"model": "demo", "messages": ASK, "tools": CHAT_TOOLS},
            headers={"x-request-id": sent.encode("utf-8")},
            timeout=20,
        )
    rid = answer.headers["x-request-id"]
    assert answer.status_code == 200 and MADE.fullmatch(rid) and answer.headers["x-seen-request-id"] == rid
    (record,) = [r for r in map(json.loads, lines) if r["message"] == "exchange"]
    assert record["request_id"] == rid


def test_the_longest_safe_request_id_is_kept(upstream: str) -> None:
    sent = "".join(chr(c) for c in range(0x21, 0x7F)) + "x" * (128 - 94)  # every printable character
    assert len(sent) == 128
    with serving(upstream) as (base, _):
        answer = httpx.post(
            base + "/v1/chat/completions",
            json={"model": "demo", "messages": ASK},
            headers={"x-request-id": sent},
            timeout=20,
        )
    assert answer.headers["x-request-id"] == answer.headers["x-seen-request-id"] == sent
