"""A stored chain's context, read once: the middleware below the Responses state reads only what a
turn adds (`core._stored_input`) and writes the host the very bytes it wrote reading the whole body.

Chains of random turns (messages of every role, function and custom tool calls and their
results, reasoning, items of the wrong shape; a dialect per turn, out of all of them; with tools
or without) go through the state's own expansion (`expand`, `forward_bytes`) as the state layer
runs it; each turn's body is forwarded twice, with what the state says of it and without, and
must come out the same, or be refused with the same error."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from toolcall_middleware import ToolCallMiddleware
from toolcall_middleware._inprocess import STORED_INPUT
from toolcall_middleware.config import ToolCallConfig
from toolcall_middleware.core._exchange_data import Report
from toolcall_middleware.core._forwarded import Forwarded, forward_request
from toolcall_middleware.core._stored_input import StoredInput
from toolcall_middleware.core.dialects import list_dialects
from toolcall_middleware.core.request._errors import BadRequest
from toolcall_middleware.store import open_store
from toolcall_middleware.store._layer import ResponsesState
from toolcall_middleware.store._state import expand, forward_bytes, items_json

DIALECTS = list_dialects()
CONFIG = ToolCallConfig(model_dialects={f"m-{d}": d for d in DIALECTS})
TOOLS = [
    {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {}}}},
    {"type": "function", "name": "search", "parameters": {"type": "object"}},
]
CALL_IDS = st.sampled_from(["call_1", "call_2", "call_3", "call_9"])
WORDS = st.text(st.characters(codec="utf-8") | st.sampled_from(["\n", '"', "ü", "\ud800"]), max_size=12) | st.just(
    "<tool_call>"
)
ARGUMENTS = st.sampled_from(['{"city": "Paris"}', "{}", '{"q": [1, 2]}', "", "{not json"])
NAMES = st.sampled_from(["get_weather", "search", "unknown_tool"])


def _message(role: str, text: str, typed: bool) -> dict[str, Any]:
    if not typed:
        return {"role": role, "content": text}
    part = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": part, "text": text}]}


MESSAGES = st.builds(_message, st.sampled_from(["user", "developer", "system", "assistant"]), WORDS, st.booleans())
CALLS = st.builds(
    lambda call_id, name, arguments: {
        "type": "function_call",
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
    },
    CALL_IDS,
    NAMES,
    ARGUMENTS,
)
OUTPUTS = st.builds(
    lambda call_id, output: {"type": "function_call_output", "call_id": call_id, "output": output},
    CALL_IDS,
    WORDS | st.just([{"type": "input_text", "text": "done"}]),
)
OTHERS = st.sampled_from(
    [
        {"type": "reasoning", "summary": []},
        {"type": "custom_tool_call", "call_id": "call_c", "name": "apply_patch", "input": "*** Begin"},
        {"type": "custom_tool_call_output", "call_id": "call_c", "output": "applied"},
        {"type": "local_shell_call", "id": "ls_1", "action": {"command": ["ls"]}},
        # Of the wrong shape: refused, by either way of reading.
        {"type": "function_call", "name": "search", "arguments": "{}"},
        {"type": "message", "content": "no role"},
        {"type": "function_call_output", "output": "no call id"},
    ]
)
ITEMS = st.lists(st.one_of(MESSAGES, CALLS, OUTPUTS, OTHERS), max_size=4)
REPLY = st.lists(
    st.one_of(st.builds(lambda text: {**_message("assistant", text, True), "id": "msg_o"}, WORDS), CALLS), max_size=3
)
TURN = st.tuples(ITEMS, REPLY, st.sampled_from(DIALECTS), st.booleans(), st.booleans())


def forward(raw: bytes, stored: StoredInput | None) -> tuple[Forwarded | None, BadRequest | None, Report]:
    record = Report(api="responses", dialect="")
    try:
        found = forward_request(raw, api="responses", upstream="responses", config=CONFIG, record=record, stored=stored)
    except BadRequest as error:
        return None, error, record
    return found, None, record


def same(read_once: tuple[Any, ...], read_whole: tuple[Any, ...]) -> None:
    (fast, fast_error, fast_record), (slow, slow_error, slow_record) = read_once, read_whole
    if slow_error is not None:
        assert fast_error is not None and fast_error.body() == slow_error.body()
        return
    assert fast is not None and slow is not None and fast_error is None
    assert fast.body == slow.body  # (None: the body the state wrote goes on as it is)
    assert fast.request == slow.request and fast.rules == slow.rules
    for field in ("dialect", "model", "stream", "echoed_function_calls", "dropped_tool_types", "rewritten_request"):
        assert getattr(fast_record, field) == getattr(slow_record, field), field


@settings(deadline=None)
@given(st.lists(TURN, min_size=1, max_size=6))
def test_a_chain_read_once_gives_the_host_the_bytes_read_whole_would(turns: list[Any]) -> None:
    history: list[dict[str, Any]] = []
    folded: dict[Any, Any] = {}
    for own, reply, dialect, tools, stream in turns:
        request: dict[str, Any] = {"model": f"m-{dialect}", "input": own, "stream": stream}
        if tools:
            request["tools"] = TOOLS
        body, whole, _ = expand(request, history, {})
        raw, span = forward_bytes(body, len(history), items_json(history) if history else None)
        stored = None if span is None else StoredInput(raw, *span, history, folded)
        fast = forward(raw, stored)
        same(fast, forward(raw, None))
        if fast[1] is not None:
            continue  # refused: the chain goes on from the turn before
        if stored is not None:
            event("resumed" if folded else "from the start", "rewritten" if fast[0] and fast[0].body else "as written")
            # Read less the context (never whole): where the next turn goes on from, for this
            # turn's dialect; for any other, where it stood.
            kept = {key: f.length for key, f in stored.after.items()}
            assert sorted(kept.values())[-1] == len(history) and set(kept) >= set(folded)
            assert all(kept[key] == f.length for key, f in folded.items() if kept[key] != len(history))
            folded = stored.after
        history = [*whole, *reply]


def test_a_turn_reads_only_what_it_adds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Given where the flattening of the context stood, a turn decodes the body less the
    context's bytes, and checks and flattens only the items after it."""
    from toolcall_middleware.core import _stored_input as stored_input
    from toolcall_middleware.core.apis.responses import _rewrite as responses

    call = {"type": "function_call", "call_id": "c", "name": "get_weather", "arguments": "{}"}
    history: list[dict[str, Any]] = []
    folded: dict[Any, Any] = {}
    user = [{"role": "user", "content": text} for text in ("one", "two")]
    for own in ([user[0]], [user[1], call], [{"type": "function_call_output", "call_id": "c", "output": "42"}]):
        request = {"model": "m-kimi_k2", "input": own, "tools": TOOLS}
        body, whole, _ = expand(request, history, {})
        raw, span = forward_bytes(body, len(history), items_json(history) if history else None)
        if span is None:
            forward(raw, None)
            history = whole
            continue
        read_whole = forward(raw, None)
        decoded: list[int] = []
        checked: list[int] = []
        read, check = stored_input.read_request, responses.check_input_items

        def reading(raw: bytes, decoded: list[int] = decoded, read: Any = read) -> Any:
            decoded.append(len(raw))
            return read(raw)

        def checking(items: list[Any], start: int = 0, checked: list[int] = checked, check: Any = check) -> None:
            checked.append(start)
            check(items, start)

        monkeypatch.setattr(stored_input, "read_request", reading)
        monkeypatch.setattr(responses, "check_input_items", checking)
        stored = StoredInput(raw, *span, history, folded)
        read_once = forward(raw, stored)
        monkeypatch.undo()
        same(read_once, read_whole)
        assert decoded == [len(raw) - (span[1] - span[0])]
        assert checked == [max((f.length for f in folded.values()), default=0)]
        folded, history = stored.after, [*whole, {"type": "message", "role": "assistant", "content": "ok"}]
    assert max(f.length for f in folded.values()) > 0


def test_a_body_not_the_one_the_state_wrote_is_read_whole() -> None:
    """What the state says of a body holds for that body only: any other (a layer in between
    changed it) is read whole, its items checked."""
    history = [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}]
    body, _, _ = expand({"model": "m-hermes", "input": "hi"}, history, {})
    raw, span = forward_bytes(body, 1, items_json(history))
    assert span is not None
    stored = StoredInput(raw, *span, history)
    changed = raw.replace(b'"arguments": "{}"', b'"arguments": "{"')
    _, error, _ = forward(changed, stored)
    assert error is not None and error.param == "input[0].arguments"
    assert not stored.after  # (nothing kept for a body it did not read)


@pytest.mark.parametrize("upstream", ["chat", "messages"])
def test_a_bridged_request_is_read_whole_as_before(upstream: str) -> None:
    """A Responses request for a Chat or Messages host is translated whole: what the state says
    changes nothing there."""
    history = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a"}]}]
    body, _, _ = expand({"model": "m-hermes", "input": "b", "tools": TOOLS}, history, {})
    raw, span = forward_bytes(body, 1, items_json(history))
    assert span is not None
    stored = StoredInput(raw, *span, history)
    record = Report(api="responses", dialect="")
    kw: dict[str, Any] = {"api": "responses", "upstream": upstream, "config": CONFIG}
    with_stored = forward_request(raw, record=record, stored=stored, **kw)
    assert with_stored.body == forward_request(raw, record=Report(api="responses", dialect=""), **kw).body
    assert not stored.after


CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def test_an_agents_chain_gives_the_host_the_bytes_read_whole_would(store_url: str) -> None:
    """An agent's loop with the `openai` SDK through the state and the middleware (a question, a
    call of `get_weather`, its result, an answer; again and again, each turn continuing the last):
    the host gets, on every turn, the bytes reading the state's body whole gives; every turn
    after the first goes on from the flattening the turn before it kept."""
    received: list[bytes] = []
    expected: list[bytes] = []
    resumed: list[int] = []

    async def agent_host(scope: Any, receive: Any, send: Any) -> None:
        """Calls `get_weather` when last given a question, answers when given its result."""
        while scope["type"] == "lifespan":
            kind = (await receive())["type"]
            await send({"type": f"{kind}.complete"})
            if kind == "lifespan.shutdown":
                return
        message = await receive()
        received.append(message.get("body", b""))
        last = json.loads(received[-1])["input"][-1]
        text = "It is sunny." if "Sunny" in json.dumps(last) else CALL
        content = [{"type": "output_text", "text": text, "annotations": []}]
        output = [{"id": "msg_h", "type": "message", "role": "assistant", "status": "completed", "content": content}]
        answer = {"id": "resp_h", "object": "response", "created_at": 0, "status": "completed", "output": output}
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps({**answer, "model": "m"}).encode()})

    stateless = ToolCallMiddleware(agent_host, dialect="hermes")

    async def reading_whole(scope: Any, receive: Any, send: Any) -> None:
        stored = scope.get(STORED_INPUT)
        if stored is not None:
            record = Report(api="responses", dialect="")
            kw: dict[str, Any] = {"api": "responses", "upstream": "responses", "record": record}
            expected.append(forward_request(stored.body, config=stateless.config, **kw).body or stored.body)
            resumed.append(max((f.length for f in stored.folded.values()), default=0))
        await stateless(scope, receive, send)

    state = ResponsesState(reading_whole, open_store(store_url), responses_paths=("/v1/responses",), secret="s")
    tools: Any = [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}]
    with TestClient(state) as http:
        client = openai.OpenAI(base_url="http://testserver/v1", api_key="sk-a", http_client=http, max_retries=0)
        previous = None
        for n in range(6):
            asked = client.responses.create(
                model="m", tools=tools, input=f"Weather in Paris? ({n}) é", previous_response_id=previous
            )
            (call,) = [item for item in asked.output if item.type == "function_call"]
            result: Any = {"type": "function_call_output", "call_id": call.call_id, "output": "Sunny"}
            answered = client.responses.create(model="m", tools=tools, input=[result], previous_response_id=asked.id)
            assert answered.output_text == "It is sunny."
            previous = answered.id
    assert len(expected) == 11 and len(received) == 12  # (the first turn continues nothing)
    assert received[1:] == expected
    assert received[-1].count(b"<tool_response>") == 6  # (every call and result, flattened)
    assert resumed[0] == 0 and all(resumed[1:]) and resumed == sorted(resumed)
