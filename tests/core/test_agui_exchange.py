"""The AG-UI route's answers, through the sans-IO exchange: a run sent to a chat host, its raw
answer back as AG-UI events that the protocol's own types (`ag_ui.core`, the `ag-ui-protocol`
package) parse, in the order its client verifies, the same at every chunking of the host's
stream as from its whole answer; and one terminal event, `RUN_ERROR` when the run fails."""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.agui.protocol import EVENT, run_input
from tests.asgi.harness import chat_answer, chat_stream, sse_events
from toolcall_middleware.config import ToolCallConfig
from toolcall_middleware.core._exchange import Exchange, RouteMatch
from toolcall_middleware.core.apis.agui._transcript import Transcript

SSE = [(b"content-type", b"text/event-stream")]
JSON = [(b"content-type", b"application/json")]
RUN = run_input(messages=[{"id": "u1", "role": "user", "content": "Weather?"}])
WORDS = st.sampled_from(
    [
        "It is ",
        "sunny",
        " <think>hm</think>",
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
        "\n",
        "ok.",
        "<",
        "é",
    ]
)


def exchange(headers: list[tuple[bytes, bytes]], run: dict[str, Any] = RUN, **options: Any) -> Exchange:
    ex = Exchange(ToolCallConfig(dialect="hermes", **options), RouteMatch("agui", "chat"))
    ex.forward(json.dumps(run).encode())
    ex.start("POST", 200, headers)
    return ex


def cut(data: bytes, points: list[int]) -> list[bytes]:
    edges = sorted({0, len(data), *(p % (len(data) + 1) for p in points)})
    return [data[a:b] for a, b in itertools.pairwise(edges)]


def feed(ex: Exchange, chunks: list[bytes]) -> bytes:
    return b"".join(ex.feed(c) for c in chunks) + ex.end()


def verified(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`events`, each parsed by the protocol's types, in the order `@ag-ui/client` verifies:
    RUN_STARTED first, every content inside its open start and end, one terminal event last."""
    for event in events:
        EVENT.validate_python(event)
    assert events[0] == {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "run-2", "parentRunId": "run-1"}
    open_ids: set[str] = set()
    for event in events[1:-1]:
        kind, key = event["type"], event.get("messageId") or event.get("toolCallId")
        assert kind not in ("RUN_STARTED", "RUN_FINISHED", "RUN_ERROR")
        if kind.endswith("_START") and kind != "REASONING_START":
            assert key not in open_ids
            open_ids.add(key)
        elif kind.endswith(("_CONTENT", "_ARGS")):
            assert key in open_ids
        elif kind.endswith("_END") and kind != "REASONING_END":
            open_ids.remove(key)
    if events[-1]["type"] == "RUN_FINISHED":
        assert not open_ids
        assert events[-1] == {"type": "RUN_FINISHED", "threadId": "thread-1", "runId": "run-2"}
    else:
        assert events[-1]["type"] == "RUN_ERROR"
    return events


def view(events: list[dict[str, Any]]) -> tuple[str, str, list[tuple[str, Any]], Any]:
    """What the client makes of a run: its text, reasoning, calls, and the snapshot's messages
    with their minted ids (random, so not the same from one run to the next) put as their order."""
    text = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    reasoning = "".join(e["delta"] for e in events if e["type"] == "REASONING_MESSAGE_CONTENT")
    names = {e["toolCallId"]: e["toolCallName"] for e in events if e["type"] == "TOOL_CALL_START"}
    args: dict[str, str] = dict.fromkeys(names, "")
    for e in events:
        if e["type"] == "TOOL_CALL_ARGS":
            args[e["toolCallId"]] += e["delta"]
    snapshots = [e["messages"] for e in events if e["type"] == "MESSAGES_SNAPSHOT"]
    minted: dict[str, str] = {}
    snapshot = json.loads(
        json.dumps(snapshots),
        object_hook=lambda o: {
            k: minted.setdefault(v, f"#{len(minted)}") if k == "id" and v != "u1" else v for k, v in o.items()
        },
    )
    return text, reasoning, [(names[i], json.loads(a)) for i, a in args.items()], snapshot


def snapshot_agrees(events: list[dict[str, Any]], run: dict[str, Any] = RUN) -> None:
    """A finished run's one `MESSAGES_SNAPSHOT`, just before `RUN_FINISHED`: the run's input
    messages as it gave them, then what the events made, the calls under the events' ids."""
    assert [e["type"] for e in events].count("MESSAGES_SNAPSHOT") == 1
    assert events[-2]["type"] == "MESSAGES_SNAPSHOT" and events[-1]["type"] == "RUN_FINISHED"
    messages = events[-2]["messages"]
    assert messages[: len(run["messages"])] == run["messages"]
    made = messages[len(run["messages"]) :]
    text, reasoning, calls, _ = view(events)
    assert "".join(m.get("content", "") for m in made if m["role"] == "assistant") == text
    assert "".join(m["content"] for m in made if m["role"] == "reasoning") == reasoning
    snapshot_calls = [c for m in made for c in m.get("toolCalls", [])]
    starts = [e for e in events if e["type"] == "TOOL_CALL_START"]
    assert [c["id"] for c in snapshot_calls] == [e["toolCallId"] for e in starts]
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in snapshot_calls] == calls
    assert {m["id"] for m in made if m["role"] == "assistant"} <= {e.get("parentMessageId") for e in starts} | {
        e["messageId"] for e in events if e["type"] == "TEXT_MESSAGE_START"
    }


@settings(max_examples=60, deadline=None)
@given(
    st.lists(WORDS, min_size=1, max_size=8),
    st.lists(st.integers(0, 10_000), max_size=12),
    st.integers(1, 9),
    st.sampled_from(["whole", "incremental"]),
)
def test_stream_equals_whole_at_any_split(words: list[str], points: list[int], piece: int, arguments: str) -> None:
    raw = "".join(words)
    streaming = exchange(SSE, arguments_streaming=arguments)
    streamed = verified(sse_events(feed(streaming, cut(chat_stream(raw, piece), points))))
    whole = verified(json.loads(feed(exchange(JSON), [chat_answer(raw)]))["events"])
    assert view(streamed) == view(whole)
    assert streamed[-1]["type"] == "RUN_FINISHED"
    snapshot_agrees(streamed)
    snapshot_agrees(whole)


def test_a_call_reaches_the_client_as_tool_call_events() -> None:
    raw = 'Let me see.<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    events = verified(sse_events(feed(exchange(SSE), [chat_stream(raw, 3)])))
    assert view(events)[:3] == ("Let me see.", "", [("get_weather", {"city": "Paris"})])
    start = next(e for e in events if e["type"] == "TOOL_CALL_START")
    text = next(e for e in events if e["type"] == "TEXT_MESSAGE_START")
    assert start["parentMessageId"] == text["messageId"] and start["toolCallId"].startswith("call_")
    snapshot_agrees(events)
    assert events[-2]["messages"] == [
        *RUN["messages"],
        {
            "id": text["messageId"],
            "role": "assistant",
            "content": "Let me see.",
            "toolCalls": [
                {
                    "id": start["toolCallId"],
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
    ]


def test_calls_with_no_text_share_one_assistant_message() -> None:
    one = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    two = one.replace("Paris", "Rome")
    history = [
        {"id": "s1", "role": "system", "content": "Be brief."},
        {"id": "u1", "role": "user", "content": [{"type": "text", "text": "Weather?"}]},
        {"id": "r0", "role": "reasoning", "content": "From an earlier run."},
    ]
    run = {**RUN, "messages": history}
    events = verified(sse_events(feed(exchange(SSE, run), [chat_stream(one + two, 5)])))
    snapshot_agrees(events, run)
    starts = [e for e in events if e["type"] == "TOOL_CALL_START"]
    assert len(starts) == 2 and starts[0]["parentMessageId"] == starts[1]["parentMessageId"]
    made = events[-2]["messages"][len(history) :]
    assert [(m["id"], m["role"], len(m["toolCalls"])) for m in made] == [(starts[0]["parentMessageId"], "assistant", 2)]
    assert "content" not in made[0]  # (as the client makes it: a message of calls only)


def test_the_runs_reasoning_is_in_the_snapshot() -> None:
    events = verified(sse_events(feed(exchange(SSE), [chat_stream("<think>hm</think>Hi")])))
    snapshot_agrees(events)
    reasoning_id = next(e["messageId"] for e in events if e["type"] == "REASONING_MESSAGE_START")
    assert events[-2]["messages"][1:] == [
        {"id": reasoning_id, "role": "reasoning", "content": "hm"},
        {
            "id": next(e["messageId"] for e in events if e["type"] == "TEXT_MESSAGE_START"),
            "role": "assistant",
            "content": "Hi",
        },
    ]


def test_reasoning_is_dropped_where_the_configuration_says() -> None:
    events = verified(sse_events(feed(exchange(SSE, reasoning_field="none"), [chat_stream("<think>x</think>Hi")])))
    assert [e["type"] for e in events] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "MESSAGES_SNAPSHOT",
        "RUN_FINISHED",
    ]
    assert [m["role"] for m in events[-2]["messages"]] == ["user", "assistant"]


def test_a_call_cut_off_is_never_a_call() -> None:
    raw = 'Hi <tool_call>{"name": "get_weather", "arguments": {"ci'
    stream = chat_stream(raw).replace(b"data: [DONE]\n\n", b"")
    stream = stream[: stream.rindex(b"data: ")]  # (no finish reason either: the connection dropped)
    events = verified(sse_events(feed(exchange(SSE), [stream])))
    assert view(events)[:3] == ("Hi", "", [])


def test_a_host_that_fails_midway_ends_the_run_in_an_error() -> None:
    ex = exchange(SSE)
    out = ex.feed(chat_stream("Hello there")[:150])
    events = verified(sse_events(out + (ex.abort("the upstream connection was lost") or b"")))
    assert events[-1] == {"type": "RUN_ERROR", "message": "the upstream connection was lost", "code": "upstream_error"}


def test_a_call_that_breaks_the_rules_ends_the_run_in_an_error() -> None:
    run = {**RUN, "forwardedProps": {"toolChoice": "required"}}
    events = verified(sse_events(feed(exchange(SSE, run), [chat_stream("No call here.")])))
    assert events[-1]["type"] == "RUN_ERROR"
    assert [e for e in events if e["type"] in ("RUN_FINISHED", "MESSAGES_SNAPSHOT")] == []


def test_a_host_error_is_a_run_error_body() -> None:
    ex = Exchange(ToolCallConfig(dialect="hermes"), RouteMatch("agui", "chat"))
    ex.forward(json.dumps(RUN).encode())
    headers = ex.start("POST", 503, JSON)
    body = feed(ex, [b'{"error": {"message": "overloaded", "type": "server_error", "code": null, "param": null}}'])
    assert (b"content-type", b"application/json") in headers
    assert json.loads(body) == {"type": "RUN_ERROR", "message": "overloaded"}
    EVENT.validate_python(json.loads(body))


def test_the_transcript_makes_messages_as_the_client_does() -> None:
    # The client's rules (`apply/default.ts`) where a call names no parent, or a reasoning one.
    transcript = Transcript()
    transcript.apply(
        [
            {"type": "REASONING_MESSAGE_START", "messageId": "rs1", "role": "reasoning"},
            {"type": "REASONING_MESSAGE_CONTENT", "messageId": "rs1", "delta": "hm"},
            {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "f", "parentMessageId": "rs1"},
            {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "{}"},
            {"type": "TOOL_CALL_START", "toolCallId": "c2", "toolCallName": "g"},
            {"type": "TEXT_MESSAGE_START", "messageId": "c2", "role": "assistant"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "c2", "delta": "Done."},
        ]
    )
    call = {"type": "function", "function": {"name": "f", "arguments": "{}"}}
    assert transcript.messages == [
        {"id": "rs1", "role": "reasoning", "content": "hm"},
        {"id": "c1", "role": "assistant", "toolCalls": [{"id": "c1", **call}]},
        {
            "id": "c2",
            "role": "assistant",
            "toolCalls": [{"id": "c2", "type": "function", "function": {"name": "g", "arguments": ""}}],
            "content": "Done.",
        },
    ]
