"""`reasoning_calls`: a call the model wrote inside its reasoning block. `"keep"` (the default)
leaves it reasoning; `"fallback"` reads the complete ones as calls when the output makes no call
after its reasoning. Split anywhere, streamed or whole, in the parser and through the middleware
(the openai SDK's accumulator as the client)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.asgi.harness import SSE_HEADERS, body, chat_request, chat_stream, start
from tests.asgi.test_http_details import through
from tests.wire import replay_chat
from toolcall_middleware import StreamParser, parse
from toolcall_middleware.core._result import merge_events

TOOLS: Any = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
REASONING = "The user wants the weather.\n" + CALL + "\nThat should do it."
DRAFTED = "<think>" + REASONING + "</think>\n\nLet me check the weather for you."
AFTER = "<think>Maybe " + CALL + " would do.</think>\n\n" + CALL.replace("Paris", "Lyon")
UNFINISHED = '<think>Let me try <tool_call>\n{"name": "get_weather", "argu</think>\n\nChecking.'


def calls_of(result: Any) -> list[tuple[str, Any]]:
    return [(c.name, json.loads(c.arguments)) for c in result.tool_calls]


def test_keep_leaves_a_drafted_call_in_the_reasoning() -> None:
    result = parse(DRAFTED, "hermes", tools=TOOLS)
    assert result.tool_calls == [] and CALL in (result.reasoning or "")
    assert result.content == "Let me check the weather for you."


def test_fallback_reads_the_drafted_call_when_none_comes_after() -> None:
    kept = parse(DRAFTED, "hermes", tools=TOOLS)
    result = parse(DRAFTED, "hermes", tools=TOOLS, reasoning_calls="fallback")
    assert calls_of(result) == [("get_weather", {"city": "Paris"})]
    # the reasoning and the content are what they were: nothing moved, nothing lost
    assert (result.reasoning, result.content) == (kept.reasoning, kept.content)


def test_fallback_leaves_drafts_alone_when_a_call_comes_after_the_reasoning() -> None:
    result = parse(AFTER, "hermes", tools=TOOLS, reasoning_calls="fallback")
    assert calls_of(result) == [("get_weather", {"city": "Lyon"})]


def test_an_unfinished_draft_is_no_call_and_no_truncation() -> None:
    result = parse(UNFINISHED, "hermes", tools=TOOLS, reasoning_calls="fallback")
    assert result.tool_calls == [] and not result.truncated
    assert result.content == "Checking."


def test_a_bad_setting_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="reasoning_calls"):
        StreamParser("hermes", reasoning_calls="extract")  # type: ignore[arg-type]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([DRAFTED, AFTER, UNFINISHED]), st.lists(st.integers(0, 400), max_size=12))
def test_fallback_is_the_same_however_the_output_is_split(text: str, cuts: list[int]) -> None:
    parser = StreamParser("hermes", tools=TOOLS, reasoning_calls="fallback")
    events = []
    last = 0
    for cut in [*sorted({c % (len(text) + 1) for c in cuts}), len(text)]:
        events += parser.feed(text[last:cut])
        last = cut
    events += parser.close()
    assert merge_events(events) == parse(text, "hermes", tools=TOOLS, reasoning_calls="fallback")


def test_reasoning_the_host_labelled_is_read_too() -> None:
    for mode, expected in (("keep", []), ("fallback", [("get_weather", {"city": "Paris"})])):
        parser = StreamParser("hermes", tools=TOOLS, reasoning_calls=mode)  # type: ignore[arg-type]
        events = []
        for i in range(0, len(REASONING), 5):  # `reasoning_content` deltas, then the content
            events += parser.feed_reasoning(REASONING[i : i + 5])
        events += parser.feed("Let me check.") + parser.close()
        assert calls_of(merge_events(events)) == expected


# -- through the middleware ------------------------------------------------------------------


def reasoning_field_stream(reasoning: str, content: str, piece: int = 5) -> bytes:
    """A host with a reasoning parser: the reasoning in `reasoning_content`, a few characters a
    chunk (the chunks the middleware's fast lane takes), then the content."""
    meta = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "qwen3"}
    deltas = [{"reasoning_content": reasoning[i : i + piece]} for i in range(0, len(reasoning), piece)]
    deltas += [{"content": content[i : i + piece]} for i in range(0, len(content), piece)]
    deltas[0] = {"role": "assistant", **deltas[0]}
    chunks = [{**meta, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    chunks.append({**meta, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


@pytest.mark.parametrize("style", ["reasoning_content", "think"])
@pytest.mark.parametrize("mode", ["keep", "fallback"])
def test_the_client_gets_the_drafted_call_only_with_fallback(mode: str, style: str) -> None:
    if style == "think":  # a host without a reasoning parser: `<think>` in the content
        data = chat_stream(DRAFTED, piece=5)
    else:
        data = reasoning_field_stream(REASONING, "Let me check the weather for you.")
    events = [event + b"\n\n" for event in data.split(b"\n\n") if event]
    send = through(  # one event a message, as hosts send them: the fast lane's way where it may go
        [start(200, SSE_HEADERS), *(body(event, more=True) for event in events), body(b"")],
        req=chat_request(stream=True, tools=TOOLS),
        reasoning_calls=mode,
    )
    chunks = [json.loads(line[6:]) for line in send.body.decode().split("\n") if line.startswith("data: {")]
    message = replay_chat(chunks).choices[0]
    calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.message.tool_calls or []]
    assert calls == ([("get_weather", {"city": "Paris"})] if mode == "fallback" else [])
    assert message.finish_reason == ("tool_calls" if mode == "fallback" else "stop")
    reasoning = "".join(c["choices"][0]["delta"].get("reasoning_content") or "" for c in chunks if c["choices"])
    assert reasoning == REASONING  # the reasoning reaches the client whole either way
    assert message.message.content == "Let me check the weather for you."


def test_a_host_that_calls_itself_gets_no_drafts_added() -> None:
    """A host that makes its calls itself (`tool_calls` deltas): the drafts in its reasoning stay
    drafts even with fallback; the client gets the host's call alone."""
    meta = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "qwen3"}
    native = {"index": 0, "id": "call_host", "type": "function"}
    native["function"] = {"name": "get_weather", "arguments": '{"city": "Rome"}'}
    deltas: list[dict[str, Any]] = [
        {"role": "assistant", "reasoning_content": REASONING},
        {"tool_calls": [native]},
    ]
    chunks = [{**meta, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    chunks.append({**meta, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    data = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
    send = through(
        [start(200, SSE_HEADERS), body(data)], req=chat_request(stream=True, tools=TOOLS), reasoning_calls="fallback"
    )
    out = [json.loads(line[6:]) for line in send.body.decode().split("\n") if line.startswith("data: {")]
    message = replay_chat(out).choices[0].message
    assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []] == [
        ("get_weather", {"city": "Rome"})
    ]


# -- drafts and the rules, cut-offs, size -----------------------------------------------------


def drafted_policy_run(policy: Any, text: str) -> list[Any]:
    parser = StreamParser("hermes", tools=TOOLS, reasoning_calls="fallback")
    return list(policy.feed(parser.feed(text) + parser.close()) + policy.close())


@pytest.mark.parametrize(
    ("tools", "choice", "strict"),
    [
        (TOOLS, "none", False),  # no call wanted
        ([{"type": "function", "function": {"name": "other", "parameters": {"type": "object"}}}], None, False),
        ([{"type": "function", "function": {"name": "other", "parameters": {"type": "object"}}}], None, True),
        (TOOLS, None, True),  # strict, and the draft does not fit (`city` must be a string)
    ],
    ids=["tool_choice-none", "unknown-name", "unknown-name-strict", "strict-mismatch"],
)
def test_a_draft_the_rules_refuse_is_dropped_never_shown_or_failed(tools: Any, choice: Any, strict: bool) -> None:
    from toolcall_middleware.core._events import TextDelta, ToolCallStart
    from toolcall_middleware.core.policy import PolicyError, PolicyFilter

    draft = DRAFTED.replace('"Paris"', "5") if strict and tools is TOOLS else DRAFTED
    out = drafted_policy_run(PolicyFilter(tools, choice, strict=strict), draft)
    assert not any(isinstance(e, (ToolCallStart, PolicyError)) for e in out)
    assert "".join(e.text for e in out if isinstance(e, TextDelta)) == "Let me check the weather for you."


def test_a_call_cut_off_after_the_reasoning_keeps_the_drafts_out() -> None:
    cut = DRAFTED.replace("Let me check the weather for you.", 'Text <tool_call>{"name": "get_weather", "argu')
    for streaming in ("whole", "incremental"):
        parser = StreamParser("hermes", tools=TOOLS, reasoning_calls="fallback", arguments_streaming=streaming)  # type: ignore[arg-type]
        result = merge_events(parser.feed(cut) + parser.close())
        assert result.tool_calls == [] and result.truncated, streaming


def test_a_reasoning_over_the_size_limit_gives_no_drafts(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolcall_middleware.core import _parser as parser_module

    monkeypatch.setattr(parser_module, "MAX_DRAFT_CHARS", len(REASONING) - 1)
    assert parse(DRAFTED, "hermes", tools=TOOLS, reasoning_calls="fallback").tool_calls == []
    monkeypatch.setattr(parser_module, "MAX_DRAFT_CHARS", len(REASONING))
    assert len(parse(DRAFTED, "hermes", tools=TOOLS, reasoning_calls="fallback").tool_calls) == 1
