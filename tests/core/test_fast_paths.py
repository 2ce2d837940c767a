"""The per-chunk fast paths give exactly what the general paths give.

Each shortcut (the one-line SSE events, the reader's chunk template, the parser's plain text, the
emitters' chunk templates, and the answer's one fast path, `Answer.feed_event`, with each of its
steps from the reader's text to the emitter's bytes) is checked against the same input taken the
long way: byte by byte or cut inside each event (where no shortcut applies), or through the plain
`feed` API.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from toolcall_middleware.config import ToolCallConfig
from toolcall_middleware.core._answer import Answer
from toolcall_middleware.core._events import (
    Event,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    TruncatedCall,
)
from toolcall_middleware.core._exchange import Exchange, RouteMatch
from toolcall_middleware.core._parser import StreamParser
from toolcall_middleware.core.apis.chat import ChatReader, ChatStreamEmitter
from toolcall_middleware.core.apis.responses import ResponsesStreamEmitter
from toolcall_middleware.core.dialects._base import BlockParser
from toolcall_middleware.core.emitters._meta import Upstream
from toolcall_middleware.core.framing.sse import SSEDecoder, SSEEvent, encode_data, encode_event
from toolcall_middleware.core.inbound import RawText
from toolcall_middleware.core.policy import PolicyFilter
from toolcall_middleware.core.request import render_calls, rendered_dialects

TEXT = st.text(st.characters(codec="utf-8"), max_size=12)
TRICKY = st.sampled_from(['"', "\\", "\n", "\r", "\x00", "\u2028", "é", "<", "<tool_call>", "`", " ", ""])
PIECE = st.one_of(TEXT, TRICKY, st.lists(st.one_of(TEXT, TRICKY), max_size=4).map("".join))


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


@contextmanager
def _general_path() -> Iterator[None]:
    """Every chunk the general way: the answer's one fast path (`Answer.feed_event`) declines
    every event, so each is decoded, read, parsed, judged and written in full."""
    with mock.patch.object(Answer, "feed_event", lambda self, raw: None):
        yield


# -- SSE decoding ---------------------------------------------------------------------------

SSE_BLOCK = st.one_of(
    PIECE.map(lambda t: b"data: " + json.dumps(t).encode() + b"\n\n"),
    PIECE.map(lambda t: b"data:" + json.dumps(t, ensure_ascii=False).encode() + b"\n\n"),
    st.sampled_from(
        [
            b"data: a\ndata: b\n\n",
            b": comment\n\n",
            b"event: x\ndata: y\n\n",
            b"data: crlf\r\n\r\n",
            b"data: cr\r\r",
            b"\n",
            b"data: bad \xff utf-8\n\n",
            b"id: 3\n\n",
            b"data: [DONE]\n\n",
            b"data: no end",
        ]
    ),
)


def _decode(pieces: list[bytes]) -> list[SSEEvent]:
    decoder = SSEDecoder()
    return [e for p in pieces for e in decoder.feed(p)] + decoder.flush()


@settings(max_examples=300, deadline=None)
@given(st.lists(SSE_BLOCK, max_size=8), st.lists(st.integers(min_value=0), max_size=6))
def test_sse_events_are_the_same_in_one_piece_any_pieces_and_byte_by_byte(blocks: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(blocks)
    slow = _decode([stream[i : i + 1] for i in range(len(stream))])
    assert _decode([stream]) == slow
    assert _decode(_split(stream, cuts)) == slow
    assert _decode(blocks) == slow


# -- the reader's chunk template ----------------------------------------------------------------

META = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 7, "model": "m"}


@st.composite
def chat_chunks(draw: Any) -> list[str]:
    """A streamed answer as a host might write it: mostly one shape, with odd chunks mixed in."""
    ascii_only = draw(st.booleans())
    separators = draw(st.sampled_from([(", ", ": "), (",", ":")]))
    out: list[str] = []
    for n in range(draw(st.integers(min_value=1, max_value=12))):
        kind = draw(st.sampled_from(["text"] * 6 + ["reasoning", "usage", "finish", "list", "two", "error", "native"]))
        piece = draw(PIECE)
        delta: dict[str, Any] = {"role": "assistant"} if n == 0 else {}
        choice: dict[str, Any] = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}
        chunk: dict[str, Any] = {**META, "choices": [choice]}
        if kind == "text":
            delta["content"] = piece
        elif kind == "reasoning":
            delta[draw(st.sampled_from(["reasoning_content", "reasoning"]))] = piece
        elif kind == "usage":
            delta["content"] = piece
            chunk["usage"] = {"prompt_tokens": 1, "completion_tokens": n, "total_tokens": n + 1}
        elif kind == "finish":
            delta["content"] = piece
            choice["finish_reason"] = "stop"
        elif kind == "list":
            delta["content"] = [{"type": "text", "text": piece}]
        elif kind == "two":
            delta["content"] = piece
            chunk["choices"] = [choice, {**choice, "index": 1}]
        elif kind == "error":
            chunk = {"error": {"message": piece or "x"}}
        else:
            delta["tool_calls"] = [{"index": 0, "function": {"arguments": piece}}]
        out.append(json.dumps(chunk, ensure_ascii=ascii_only, separators=separators))
    return out


def _by_template(reader: ChatReader, raw: bytes) -> RawText | None:
    """The event of a whole SSE event as the one fast path reads it (`Answer.feed_event`): the
    reader's template matched against the bytes as they came, before any SSE decoding."""
    reader.settle()
    template = reader.template
    text = None if template is None or reader.done else template.match_text(raw)
    learned = None if template is None else template.learned
    return None if text is None or learned is None else RawText(text, learned.channel, learned.choice)


@settings(max_examples=400, deadline=None)
@given(chat_chunks(), st.booleans())
def test_the_chat_reader_template_reads_what_decoding_reads(datas: list[str], whole_events: bool) -> None:
    fast, slow = ChatReader(), ChatReader()
    for data in datas:
        raw = b"data: " + data.encode() + b"\n\n"
        one = _by_template(fast, raw) if whole_events else None
        got = [one] if one is not None else fast.feed_data(data)
        assert got == slow.feed(json.loads(data))
    assert fast.feed_data("[DONE]") == slow.feed("[DONE]")
    assert fast.feed_data("not json") is None


def test_the_template_is_used_and_stops_after_shapes_that_never_repeat() -> None:
    reader = ChatReader()
    chunks = [{**META, "choices": [{"index": 0, "delta": {"content": f"w{n} "}}]} for n in range(3)]
    assert _by_template(reader, b"data: " + json.dumps(chunks[0]).encode() + b"\n\n") is None  # nothing learned yet
    reader.feed_data(json.dumps(chunks[0]))  # the metadata comes with it: not a text-only chunk
    reader.feed_data(json.dumps(chunks[1]))  # learned from
    event = _by_template(reader, b"data: " + json.dumps(chunks[2]).encode() + b"\n\n")
    assert event is not None and event.text == "w2 "
    varying, slow = ChatReader(), ChatReader()  # a per-chunk timestamp: no two chunks share a shape
    for n in range(10):
        data = json.dumps({**META, "created": n, "choices": [{"index": 0, "delta": {"content": "x"}}]})
        assert varying.feed_data(data) == slow.feed(json.loads(data))
    assert varying._template is not None and varying._template._unused == 3


# -- the emitters' chunk templates ------------------------------------------------------------


@st.composite
def event_runs(draw: Any) -> list[list[Event]]:
    runs: list[list[Event]] = []
    index = 0
    for _ in range(draw(st.integers(min_value=0, max_value=10))):
        kind = draw(st.sampled_from(["text", "text", "text", "texts", "reasoning", "call", "truncated", "empty"]))
        piece = draw(PIECE)
        if kind == "text":
            runs.append([TextDelta(piece)])
        elif kind == "texts":
            runs.append([TextDelta(piece), TextDelta(draw(PIECE))])
        elif kind == "reasoning":
            runs.append([ReasoningDelta(piece)])
        elif kind == "call":
            args = json.dumps({"a": piece})
            runs.append(
                [ToolCallStart(index, f"call_{index}", "f"), ToolCallDelta(index, args), ToolCallEnd(index, args)]
            )
            index += 1
        elif kind == "truncated":
            runs.append([TruncatedCall("<tool_call>{")])
        else:
            runs.append([])
    return runs


_IDS = re.compile(rb"(msg|rs|fc)_[A-Za-z0-9]{24}")


def _same_ids(data: bytes) -> bytes:
    seen: dict[bytes, bytes] = {}
    return _IDS.sub(lambda m: seen.setdefault(m.group(), b"id%d" % len(seen)), data)


@settings(max_examples=300, deadline=None)
@given(
    event_runs(),
    st.booleans(),
    st.sampled_from([None, "fp_1"]),
    st.sampled_from(["reasoning_content", "reasoning", "both", "none"]),
)
def test_the_chat_emitter_template_writes_what_encoding_writes(
    runs: list[list[Event]], usage: bool, fingerprint: str | None, field: Any
) -> None:
    def emitter() -> ChatStreamEmitter:
        upstream = Upstream(id="chatcmpl-1", model="m", created=1, system_fingerprint=fingerprint)
        return ChatStreamEmitter(upstream, include_usage=usage, reasoning_field=field)

    fast, slow = emitter(), emitter()
    for events in runs:
        assert fast.feed_sse(events) == b"".join(encode_data(c) for c in slow.feed(events))
    assert fast.finish() == slow.finish()


@settings(max_examples=300, deadline=None)
@given(event_runs(), st.booleans())
def test_the_responses_emitter_template_writes_what_encoding_writes(runs: list[list[Event]], reasoning: bool) -> None:
    def emitter() -> ResponsesStreamEmitter:
        return ResponsesStreamEmitter(Upstream(id="chatcmpl-1", model="m", created=1), reasoning=reasoning)

    fast, slow = emitter(), emitter()
    fast_out, slow_out = [], []
    for events in runs:
        fast_out.append(fast.feed_sse(events))
        slow_out.append(b"".join(encode_event(e) for e in slow.feed(events)))
    fast_out.append(b"".join(encode_event(e) for e in fast.finish()))
    slow_out.append(b"".join(encode_event(e) for e in slow.finish()))
    assert _same_ids(b"".join(fast_out)) == _same_ids(b"".join(slow_out))


# -- the exchange's whole-event fast path ----------------------------------------------------------

HERMES_PIECE = st.one_of(
    PIECE,
    st.sampled_from(['<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>', "<tool_call>", "</tool_call>"]),
)
_CALL_IDS = re.compile(rb"call_[A-Za-z0-9]{24}")


def _exchange(messages: list[bytes], *, general: bool = False) -> bytes:
    """The client's bytes for the host's `messages`; `general`: with the fast path off."""
    if general:
        with _general_path():
            return _exchange(messages)
    exchange = Exchange(ToolCallConfig(dialect="hermes"), RouteMatch("chat", "chat"))
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    request = {"model": "m", "stream": True, "tools": tools, "messages": [{"role": "user", "content": "x"}]}
    exchange.forward(json.dumps(request).encode())
    exchange.start("POST", 200, [(b"content-type", b"text/event-stream")])
    out = b"".join(exchange.feed(m) for m in messages) + exchange.end()
    return _same_ids(_CALL_IDS.sub(b"call_x", out))


@settings(max_examples=200, deadline=None)
@given(st.lists(HERMES_PIECE, max_size=12), st.booleans())
def test_the_exchange_gives_the_same_bytes_by_whole_events_and_byte_by_byte(pieces: list[str], finished: bool) -> None:
    events = []
    for n, piece in enumerate(pieces):
        delta = {"role": "assistant", "content": piece} if n == 0 else {"content": piece}
        events.append({**META, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}]})
    if finished:
        events.append({**META, "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}]})
    stream = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
    stream += b"data: [DONE]\n\n" if finished else b""
    per_event = [b"data: " + json.dumps(e).encode() + b"\n\n" for e in events]
    per_event += [b"data: [DONE]\n\n"] if finished else []
    slow = _exchange([stream[i : i + 1] for i in range(len(stream))], general=True)
    assert _exchange(per_event) == slow
    assert _exchange([stream]) == slow
    assert _exchange([stream[i : i + 1] for i in range(len(stream))]) == slow


@pytest.mark.parametrize(
    "first",
    [
        b'data: {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "Hi"}}]}',
        b'data:{"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "Hi"}}]}',
        b'data: {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "caf\xe9"}}]}',
        b'data: {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "Hi\r"}}]}',
        b'data: {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"reasoning_content": "Hm"}}]}',
        b"data: [DONE]",
        b'data: {"error": {"message": "overloaded"}}',
        b'data: {"not": "an answer"}',
        b"data: not json",
        b": a comment",
        b'event: message\ndata: {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}}]}',
    ],
)
def test_a_first_event_gives_the_same_bytes_whole_and_byte_by_byte(first: bytes) -> None:
    """The stream's first event, whatever it holds, gives what the decoder's reading gives when it
    comes whole, and so do the events after it (which the fast path may take)."""
    rest = [{**META, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in ("a", "b")]
    events = [first + b"\n\n", *(b"data: " + json.dumps(e).encode() + b"\n\n" for e in rest), b"data: [DONE]\n\n"]
    stream = b"".join(events)

    def minted(out: bytes) -> bytes:  # (a host that names no id or time gets them minted per answer)
        out = re.sub(rb"chatcmpl-[A-Za-z0-9]+", b"chatcmpl-x", out)
        return re.sub(rb'"created": ?[0-9]+', b'"created":0', out)

    slow = minted(_exchange([stream[i : i + 1] for i in range(len(stream))], general=True))
    assert minted(_exchange(events)) == slow
    assert minted(_exchange([stream])) == slow


def test_an_upstream_that_holds_the_probe_is_encoded_the_long_way() -> None:
    """A model named like the template's probe: no template can be made, the bytes are still right."""
    upstream = Upstream(id="chatcmpl-1", model="toolcall-text-probe", created=1)
    fast, slow = ChatStreamEmitter(upstream), ChatStreamEmitter(upstream)
    for events in ([TextDelta("a")], [TextDelta("b")], [TextDelta('"c"')]):
        assert fast.feed_sse(list(events)) == b"".join(encode_data(c) for c in slow.feed(events))


# -- the fast path: each short step against its long form -------------------------


@settings(max_examples=300, deadline=None)
@given(chat_chunks())
def test_the_templates_text_is_the_event_decoding_gives(datas: list[str]) -> None:
    """The fast path's first step: a whole event's text by the template, under the channel and
    choice it learned, is the one event the reader gives for the decoded chunk."""
    short, whole = ChatReader(), ChatReader()
    for data in datas:
        raw = b"data: " + data.encode() + b"\n\n"
        event = _by_template(short, raw)
        decoded = whole.feed_data(data)
        if event is not None:
            assert decoded == [event]
        short.feed_data(data)  # both learn the same way, then go on


LAYOUT_PIECE = st.one_of(PIECE, st.sampled_from([" ", "\n", "\n\n", "a.", "a. ", "x\n", "<think>", "</think>", " \n"]))


def _without_plain_shortcut(parser: StreamParser) -> StreamParser:
    """`parser` with its block machine's plain-text scan declining every piece, so that each one
    takes the text mode (and the watch its own look): the general path, with no shortcut."""
    machine = getattr(parser._tools, "_inner", parser._tools)
    if isinstance(machine, BlockParser):
        machine._plain_stop = lambda text: text  # (a piece "has a marker's first character")
        machine.stop_plain_at = lambda markers: None  # type: ignore[method-assign]
    return parser


# Another format's markers and calls, which the watch for another dialect (`dialect_mismatch`)
# looks for in the same scan as the dialect in force's own markers.
OTHER_PIECE = st.sampled_from(
    [
        "[TOOL_CALLS]",
        '[TOOL_CALLS][{"name": "f", "arguments": {"a": 1}}]',
        "<|python_tag|>",
        '<|python_tag|>{"name": "f", "parameters": {}}',
        "<function=f>",
        '<function=f>{"a": 1}</function>',
        "<minimax:tool_call>",
        "[",
        "]",
        "{",
        "|",
        "```",
        "`x`",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["hermes", "gemma4", "qwen3_coder", "mistral", "kimi_k2", "deepseek_v3", "llama3_json"]),
    st.sampled_from(["read", "warn", "off"]),
    st.lists(st.one_of(LAYOUT_PIECE, HERMES_PIECE, OTHER_PIECE), max_size=14),
)
@example("hermes", "read", ["Hi ", '[TOOL_CALLS][{"name": "f", "arguments": {"a": 1}}]'])
@example("mistral", "warn", ["Hi ", '<tool_call>{"name": "f", "arguments": {}}</tool_call>'])
# A piece taken as plain text by the dialect in force's parser alone: the watch still reads the
# backticks after it as a literal run (not a fence at a line start), and the call after them.
@example("mistral", "read", ["Hello\n", "Hi", '```<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>'])
def test_the_parser_take_plain_gives_what_feed_gives(dialect: str, mismatch: Any, pieces: list[str]) -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    short = StreamParser(dialect, tools=tools, dialect_mismatch=mismatch)
    long = _without_plain_shortcut(StreamParser(dialect, tools=tools, dialect_mismatch=mismatch))
    for piece in pieces:
        text = short.take_plain(piece)
        if text is None:
            got = short.feed(piece)
        else:
            got = [TextDelta(text)] if text else []
        assert got == long.feed(piece)
    assert short.close() == long.close()
    assert short.dialect_found == long.dialect_found


@settings(max_examples=200, deadline=None)
@given(event_runs(), PIECE, st.sampled_from([None, "required", "none"]), st.sampled_from([None, False]))
def test_the_policy_passes_text_only_when_feeding_it_gives_it_back(
    runs: list[list[Event]], text: str, choice: str | None, parallel: bool | None
) -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    policy = PolicyFilter(tools, choice, parallel)
    for events in runs:
        if policy.passes_text:
            # A tuple is not a list: the rules run in full, past `feed`'s own shortcut.
            for event in (TextDelta(text), ReasoningDelta(text)):
                probe = copy.deepcopy(policy)
                assert probe.feed((event,)) == [event]
                assert probe.passes_text  # and nothing was left waiting
        try:
            policy.feed(events)
        except ValueError:
            return  # a delta without its start: not what a parser writes
    policy.close()
    assert not policy.passes_text


@settings(max_examples=200, deadline=None)
@given(event_runs(), PIECE)
def test_the_emitters_text_sse_writes_what_feed_sse_writes(runs: list[list[Event]], text: str) -> None:
    upstream = Upstream(id="chatcmpl-1", model="m", created=1)
    chat, chat_long = ChatStreamEmitter(upstream), ChatStreamEmitter(upstream)
    responses, responses_long = ResponsesStreamEmitter(upstream), ResponsesStreamEmitter(upstream)
    responses.start(), responses_long.start()
    last: list[Event] = [TextDelta(text)]
    for events in [*runs, last]:
        for short, long in ((chat, chat_long), (responses, responses_long)):
            written = short.text_sse(text)
            expected = long.feed_sse([TextDelta(text)])
            assert written is None or _same_ids(written) == _same_ids(expected)
            if written is None:
                short.feed_sse([TextDelta(text)])
            short.feed_sse(events), long.feed_sse(events)


def _exchange_api(api: str, messages: list[bytes], *, general: bool = False, dialect: str = "hermes") -> bytes:
    """A client of `api` served by a Chat host, given the host's `messages`; `general`: with the
    fast path off."""
    if general:
        with _general_path():
            return _exchange_api(api, messages, dialect=dialect)
    exchange = Exchange(ToolCallConfig(dialect=dialect), RouteMatch(api, "chat"))  # type: ignore[arg-type]
    tools: list[dict[str, Any]] = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    request: dict[str, Any] = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "x"}]}
    if api == "responses":
        request = {"model": "m", "stream": True, "input": "x", "tools": [{"type": "function", "name": "f"}]}
    elif api == "messages":
        request = {**request, "max_tokens": 9, "tools": [{"name": "f", "input_schema": {"type": "object"}}]}
    else:
        request["tools"] = tools
    exchange.forward(json.dumps(request).encode())
    exchange.start("POST", 200, [(b"content-type", b"text/event-stream")])
    out = b"".join(exchange.feed(m) for m in messages) + exchange.end()
    return _same_ids(_TOOLU_IDS.sub(b"toolu_x", _CALL_IDS.sub(b"call_x", out)))


_TOOLU_IDS = re.compile(rb"toolu_[A-Za-z0-9]{24}")


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["chat", "responses", "messages"]),
    st.lists(st.tuples(st.sampled_from(["content"] * 4 + ["reasoning_content"]), HERMES_PIECE), max_size=12),
)
def test_every_client_api_gets_the_same_bytes_by_whole_events_and_byte_by_byte(
    api: str, pieces: list[tuple[str, str]]
) -> None:
    events = [{**META, "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]}]
    for field, piece in pieces:
        events.append({**META, "choices": [{"index": 0, "delta": {field: piece}, "finish_reason": None}]})
    events.append({**META, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    per_event = [b"data: " + json.dumps(e, ensure_ascii=False).encode() + b"\n\n" for e in events]
    per_event.append(b"data: [DONE]\n\n")
    stream = b"".join(per_event)
    slow = _exchange_api(api, [stream[i : i + 1] for i in range(len(stream))], general=True)
    assert _exchange_api(api, per_event) == slow
    assert _exchange_api(api, [stream[i : i + 1] for i in range(len(stream))]) == slow


# -- the fast path against the general path -------------------------------------------------------

LANE_PIECE = st.one_of(
    LAYOUT_PIECE,
    HERMES_PIECE,
    st.sampled_from(["word ", " word", "two  ", "café ", 'say "hi" ', "a\\b", "tab\t", "é", "  ", "[TOOL_CALLS]"]),
    st.sampled_from(["<|tool_call>call:f{a:1}<tool_call|>", "<|tool_call>", "Done.", "ok"]),
)


def _encode_chunk(event: dict[str, Any], style: str) -> bytes:
    """One SSE event the way a host writes it: Python's default (ASCII), UTF-8 as is, or Go's
    `encoding/json`, which also escapes `<`, `>` and `&` (so a marker can arrive escaped)."""
    data = json.dumps(event, ensure_ascii=style == "ascii")
    if style == "go":
        data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return b"data: " + data.encode() + b"\n\n"


def _lane_exchange(
    dialect: str, messages: list[bytes], use_lane: bool, api: str = "chat", **options: Any
) -> tuple[bytes, int]:
    """The exchange driven the way the middleware drives it, one message a host event. With
    `use_lane`, each whole event may take the fast path (`Answer.feed_event`); without, the fast
    path is off and each is fed cut after its first byte, so the SSE decoder reads it and the
    general path takes it.
    Returns the bytes and how many messages the fast path took. `api` "responses": a Responses
    client, the host answering Chat."""
    if not use_lane:
        with _general_path():
            return _driven(dialect, messages, False, api, **options)
    return _driven(dialect, messages, True, api, **options)


def _driven(dialect: str, messages: list[bytes], use_lane: bool, api: str, **options: Any) -> tuple[bytes, int]:
    settings = ToolCallConfig(dialect=dialect, **options)
    exchange = Exchange(settings, RouteMatch(api, "chat"))  # type: ignore[arg-type]
    tools: list[dict[str, Any]] = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    turns = [{"role": "user", "content": "x"}]
    request: dict[str, Any] = {"model": "m", "stream": True, "tools": tools, "messages": turns}
    if api == "responses":
        request = {"model": "m", "stream": True, "input": "x", "tools": [{"type": "function", "name": "f"}]}
    exchange.forward(json.dumps(request).encode())
    exchange.start("POST", 200, [(b"content-type", b"text/event-stream")])
    out: list[bytes] = []
    taken = 0
    for message in messages:
        if not use_lane:
            out.append(exchange.feed(message[:1]) + exchange.feed(message[1:]))
            continue
        stream = exchange._stream.answer if exchange._stream is not None else None
        fast = stream.feed_event(message) if stream is not None and not stream.ended else None
        if fast is None:
            out.append(exchange.feed(message))  # (the fast path changed nothing: it is tried again)
        else:
            taken += 1
            out.append(fast)
    out.append(exchange.end())
    return _same_ids(_RESP_IDS.sub(b"resp_x", _CALL_IDS.sub(b"call_x", b"".join(out)))), taken


_RESP_IDS = re.compile(rb"resp_[A-Za-z0-9]{24}")


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["hermes", "gemma4", "qwen3_coder", "mistral", "kimi_k2", "deepseek_v3", "pythonic"]),
    st.lists(LANE_PIECE, max_size=16),
    st.sampled_from(["ascii", "utf8", "go"]),
    st.booleans(),
    st.sampled_from(["chat", "chat", "responses"]),
)
# Gemma 4 holds whitespace back only after a finished sentence: the lane must keep the last
# character it saw, or a space after "ok" would be held as if it followed "Done.".
@example("gemma4", ["a", "Done.", "ok", " ", "more"], "utf8", True, "chat")
def test_the_fast_path_gives_what_the_general_path_gives(
    dialect: str, pieces: list[str], style: str, finished: bool, api: str
) -> None:
    events = [{**META, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}]
    events += [{**META, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in pieces]
    if finished:
        events.append({**META, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    per_event = [_encode_chunk(e, style) for e in events]
    per_event += [b"data: [DONE]\n\n"] if finished else []
    stream = b"".join(per_event)
    slow = None
    if dialect == "hermes" and api == "chat":
        slow = _exchange([stream[i : i + 1] for i in range(len(stream))], general=True)
    laned, _ = _lane_exchange(dialect, per_event, use_lane=True, api=api)
    general, _ = _lane_exchange(dialect, per_event, use_lane=False, api=api)
    assert laned == general
    if slow is not None:
        assert laned == slow


def test_the_fast_path_takes_every_chunk_of_the_learned_shape() -> None:
    """Every chunk shaped like the learned one takes the fast path: plain text (escaped or not,
    with spaces held back before a possible call) straight to the emitter, and the rest (a
    marker's pieces, a call's body) to the parser from its text, without SSE decoding."""
    pieces = ["Sure", ". The ", "café ", 'is "open"', " today.\n", "Then", " a call:", "\n<tool", "_ca", "ll>", "\n{"]
    pieces += ['"name": "f", ', '"arguments": {"q": "a<b"', ', "n": 1}', "}\n</tool", "_call>"]
    opening = {"role": "assistant", "content": "Hi"}
    events = [{**META, "choices": [{"index": 0, "delta": opening, "finish_reason": None}]}]
    events += [{**META, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in pieces]
    per_event = [b"data: " + json.dumps(e).encode() + b"\n\n" for e in events]
    laned, taken = _lane_exchange("hermes", per_event, use_lane=True)
    general, none = _lane_exchange("hermes", per_event, use_lane=False)
    assert laned == general and none == 0
    # The role chunk has a shape of its own and the first text chunk teaches the template: from
    # then on every chunk is the fast path's (15).
    assert taken == len(pieces) - 1
    chunks = [json.loads(e.data) for e in SSEDecoder().feed(laned) if e.data and e.data != "[DONE]"]
    content = "".join(chunk["choices"][0]["delta"].get("content") or "" for chunk in chunks)
    assert content == 'HiSure. The café is "open" today.\nThen a call:'
    calls = [c for chunk in chunks for c in chunk["choices"][0]["delta"].get("tool_calls") or []]
    assert [c["function"]["name"] for c in calls if c.get("function", {}).get("name")] == ["f"]
    arguments = "".join(c["function"].get("arguments") or "" for c in calls)
    assert json.loads(arguments) == {"q": "a<b", "n": 1}


# A call's body, the way a model writes one: cut anywhere into chunks, with markers, quotes,
# escapes and `<` inside its strings (which cannot end it) and outside them (which may).
CALL_TEXT = st.sampled_from(
    [
        '<tool_call>\n{"name": "f", "arguments": {"q": "a </tool_call> b", "n": [1, 2], "s": "say \\"hi\\"\\n"}}'
        "\n</tool_call>",
        '<tool_call>{"name": "f", "arguments": {"path": "C:\\\\x", "html": "<b>é</b>"}}</tool_call>',
        '<tool_call>{"name": "f", "arguments": {"a": 1}</tool_call>',  # broken: text after all
        '<function=f>{"q": "x < y", "e": "\\u00e9"}</function>',
        '<function=f>{"q": "</function>"}</function>',
        '<tool_call>{"name": "f", "arguments": {"q": "cut off',
    ]
)


def _cut_stream(text: str, cuts: list[int], style: str) -> list[bytes]:
    """A host's finished stream of `text`, cut into chunks at `cuts` (modulo its length)."""
    points = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    pieces = [text[a:b] for a, b in itertools.pairwise(points)]
    events = [{**META, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}]
    events += [{**META, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in pieces]
    events.append({**META, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return [_encode_chunk(e, style) for e in events] + [b"data: [DONE]\n\n"]


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["hermes", "llama_function"]),
    st.tuples(st.sampled_from(["", "Sure. ", "Let me look.\n\n"]), CALL_TEXT, st.sampled_from(["", "\nDone."])),
    st.lists(st.integers(min_value=0, max_value=200), max_size=30),
    st.sampled_from(["ascii", "utf8", "go"]),
    st.sampled_from(["whole", "incremental"]),
    st.sampled_from(["chat", "chat", "responses"]),
)
def test_the_fast_path_inside_a_call_gives_what_the_general_path_gives(
    dialect: str, parts: tuple[str, str, str], cuts: list[int], style: str, streaming: str, api: str
) -> None:
    """A call's body cut into chunks anywhere: the pieces the open block takes quietly go the
    lane, and the client gets the bytes it gets with every chunk fed the general way (and, for
    Hermes, byte by byte)."""
    per_event = _cut_stream("".join(parts), cuts, style)
    laned, _ = _lane_exchange(dialect, per_event, use_lane=True, api=api, arguments_streaming=streaming)
    general, _ = _lane_exchange(dialect, per_event, use_lane=False, api=api, arguments_streaming=streaming)
    assert laned == general
    if dialect == "hermes" and streaming == "whole" and api == "chat":
        stream = b"".join(per_event)
        assert laned == _exchange([stream[i : i + 1] for i in range(len(stream))], general=True)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(rendered_dialects()),
    st.sampled_from(["", "Sure. ", "Let me look.\n\n", "a < b and "]),
    st.sampled_from(["", "\nDone.", " ok"]),
    st.lists(st.integers(min_value=0, max_value=400), max_size=40),
    st.sampled_from(["utf8", "go"]),
)
def test_every_format_cut_anywhere_gives_with_the_fast_path_what_it_gives_without(
    dialect: str, before: str, after: str, cuts: list[int], style: str
) -> None:
    """A call in each format as its model writes it (`render_calls`), cut into chunks anywhere,
    its markers too: with the lanes (the text's, the marker start's, the call body's) the client
    gets the bytes it gets with every chunk fed the general way."""
    text = before + render_calls(dialect, [("call_1", "f", '{"a": 1, "q": "x</y> <b>"}')]) + after
    per_event = _cut_stream(text, cuts, style)
    laned, _ = _lane_exchange(dialect, per_event, use_lane=True)
    general, _ = _lane_exchange(dialect, per_event, use_lane=False)
    assert laned == general


def test_a_call_body_goes_the_fast_path() -> None:
    """The chunks of a call's arguments (here a long one, as an agent writing a file sends) take
    the fast path to the parser; the client gets the call whole."""
    code = 'def add(a, b):\n    return a + b  # "sum"\n' * 20
    body = json.dumps({"name": "f", "arguments": {"path": "add.py", "content": code}})
    pieces = ["<tool_call>"] + [body[i : i + 4] for i in range(0, len(body), 4)] + ["</tool_call>"]
    events = [{**META, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}]
    events += [{**META, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in pieces]
    events.append({**META, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    per_event = [_encode_chunk(e, "ascii") for e in events] + [b"data: [DONE]\n\n"]
    laned, taken = _lane_exchange("hermes", per_event, use_lane=True)
    general, _ = _lane_exchange("hermes", per_event, use_lane=False)
    assert laned == general
    assert taken == len(pieces) - 1  # all but the opening marker's, which teaches the shape
    chunks = [json.loads(e.data) for e in SSEDecoder().feed(laned) if e.data and e.data != "[DONE]"]
    calls = [c for chunk in chunks for c in chunk["choices"][0]["delta"].get("tool_calls") or []]
    arguments = "".join(c["function"].get("arguments") or "" for c in calls)
    assert json.loads(arguments) == {"path": "add.py", "content": code}
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


REASONING_PIECE = st.one_of(
    LANE_PIECE,
    st.sampled_from(["<think>", "</think>", "</", "think>", "Let me think", " about it. ", "\n\n", "</think>\n\nSo"]),
)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["hermes", "qwen3_coder", "kimi_k2", "deepseek_v3", "mistral", "gpt_oss"]),
    st.lists(st.tuples(st.sampled_from(["content", "content", "reasoning_content"]), REASONING_PIECE), max_size=16),
    st.sampled_from(["reasoning_content", "reasoning", "both", "none"]),
    st.sampled_from([None, "<|im_start|>assistant\n<think>\n"]),
    st.sampled_from(["ascii", "utf8", "go"]),
)
def test_reasoning_by_the_fast_path_gives_what_the_general_path_gives(
    dialect: str, pieces: list[tuple[str, str]], field: str, prompt: str | None, style: str
) -> None:
    """Reasoning in the host's reasoning field, or raw `<think>` text in the content: the lane
    gives the bytes the general path gives, whatever the reasoning field the client wants."""
    opening = {"role": "assistant", "content": "<think>" if prompt is None else ""}
    events = [{**META, "choices": [{"index": 0, "delta": opening, "finish_reason": None}]}]
    for key, piece in pieces:
        events.append({**META, "choices": [{"index": 0, "delta": {key: piece}, "finish_reason": None}]})
    events.append({**META, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    per_event = [_encode_chunk(e, style) for e in events]
    per_event.append(b"data: [DONE]\n\n")
    options = {"reasoning_field": field, "generation_prompt": prompt}
    laned, _ = _lane_exchange(dialect, per_event, use_lane=True, **options)
    general, _ = _lane_exchange(dialect, per_event, use_lane=False, **options)
    assert laned == general


@pytest.mark.parametrize("key", ["reasoning_content", "content"])
def test_the_fast_path_takes_reasoning_chunks(key: str) -> None:
    """A reasoning model's stream: after the first chunks, every reasoning chunk is the lane's,
    in the host's reasoning field or as `<think>` text in the content."""
    pieces = ["Let", " me", " think", " about", " it", " carefully", " now", "."]
    opening = {"role": "assistant", "content": "" if key != "content" else "<think>"}
    events = [{**META, "choices": [{"index": 0, "delta": opening, "finish_reason": None}]}]
    events += [{**META, "choices": [{"index": 0, "delta": {key: p}, "finish_reason": None}]} for p in pieces]
    per_event = [b"data: " + json.dumps(e).encode() + b"\n\n" for e in events]
    laned, taken = _lane_exchange("hermes", per_event, use_lane=True)
    general, _ = _lane_exchange("hermes", per_event, use_lane=False)
    assert laned == general
    assert taken >= len(pieces) - 2
    reasoning = "".join(
        chunk["choices"][0]["delta"].get("reasoning_content") or ""
        for chunk in (json.loads(e.data) for e in SSEDecoder().feed(laned) if e.data and e.data != "[DONE]")
    )
    assert reasoning == "Let me think about it carefully now."


def test_a_chunk_the_fast_path_refuses_leaves_the_template_unused() -> None:
    """The template counts shapes it learned and never matched (to stop learning for hosts whose
    chunks never repeat): a chunk the fast path refuses (here an unescaped quote inside the frame)
    must not count as a match, as it does not in `TextTemplate.match_text`."""
    exchange = Exchange(ToolCallConfig(dialect="hermes"), RouteMatch("chat", "chat"))
    exchange.forward(json.dumps({"model": "m", "stream": True, "messages": []}).encode())
    exchange.start("POST", 200, [(b"content-type", b"text/event-stream")])

    def chunk(delta: dict[str, Any]) -> bytes:
        return _encode_chunk({**META, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}, "utf8")

    for delta in ({"role": "assistant", "content": ""}, {"content": "Hi"}, {"content": "Hi"}):
        exchange.feed(chunk(delta))
    answer = exchange._stream.answer if exchange._stream is not None else None
    assert answer is not None
    lane = answer.feed_event
    template = answer.reader.template
    assert template is not None
    template.used = False
    assert lane(chunk({"content": "@@"}).replace(b"@@", b'a", "x": "b')) is None
    assert template.used is False
    assert lane(chunk({"content": "ok"}))
    assert template.used is True


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["chat", "responses", "messages"]),
    st.sampled_from(["hermes", "qwen3_coder", "mistral", "kimi_k2", "gemma4", "deepseek_v3", "gpt_oss"]),
    st.lists(st.tuples(st.sampled_from(["content"] * 4 + ["reasoning_content"]), LANE_PIECE), max_size=12),
    st.sampled_from(["ascii", "utf8", "go"]),
    st.lists(st.integers(min_value=0), max_size=12),
)
def test_the_fast_path_on_gives_the_bytes_of_the_general_path_at_every_split(
    api: str, dialect: str, pieces: list[tuple[str, str]], style: str, cuts: list[int]
) -> None:
    """The one fast path against the general path alone: for every client API and several
    dialects, a host's stream cut anywhere (inside events, several events a piece, one event a
    piece) gives, with the fast path on, exactly the bytes every chunk gets the general way."""
    events = [{**META, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}]
    for field, piece in pieces:
        events.append({**META, "choices": [{"index": 0, "delta": {field: piece}, "finish_reason": None}]})
    events.append({**META, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    per_event = [_encode_chunk(e, style) for e in events] + [b"data: [DONE]\n\n"]
    stream = b"".join(per_event)
    general = _exchange_api(api, per_event, general=True, dialect=dialect)
    assert _exchange_api(api, per_event, dialect=dialect) == general
    assert _exchange_api(api, _split(stream, cuts), dialect=dialect) == general
