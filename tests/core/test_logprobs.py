"""The host's log probabilities reach a Chat client with the text they describe: each client
chunk that carries them carries exactly the entries of its content's tokens; plain text keeps
all of them, streamed and whole; text that became a call (or reasoning) takes its entries along."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from toolcall_middleware.config import ToolCallConfig
from toolcall_middleware.core._exchange import Exchange, RouteMatch
from toolcall_middleware.core._logprobs import LogprobQueue
from toolcall_middleware.core.framing.sse import SSEDecoder

META = {"id": "c", "created": 1, "model": "m"}
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
WORDS = st.sampled_from(["Hello", " the", " cat", ".", ",", " sat", "\n", "\n\n", " é", " ok"])
MARKUP = st.sampled_from(["<tool_call>", '{"name": "f", "arguments": {}}', "</tool_call>", " <", "b>", "<think>"])


def entry(token: str) -> dict[str, Any]:
    return {"token": token, "logprob": -0.5, "bytes": list(token.encode()), "top_logprobs": []}


def test_the_queue_gives_the_entries_of_the_text_that_goes_out() -> None:
    queue = LogprobQueue()
    queue.add("Hello\n", [entry("Hello"), entry("\n")])
    assert [e["token"] for e in queue.take("Hello") or []] == ["Hello"]  # "\n" held back
    queue.add(" world", [entry(" world")])
    assert [e["token"] for e in queue.take("\n world") or []] == ["\n", " world"]
    assert not queue


def test_the_queue_gives_nothing_for_text_out_of_step() -> None:
    queue = LogprobQueue()
    queue.add("ab", [entry("ab")])
    assert queue.take("a") is None and not queue  # a token cut in two
    queue.add("xy", [entry("x"), entry("z")])  # tokens that do not spell the text: not kept
    assert not queue
    queue.add("x", [entry("x")])
    queue.drop()
    assert not queue and queue.take("x") is None


def _exchange(stream: bool) -> Exchange:
    exchange = Exchange(ToolCallConfig(dialect="hermes"), RouteMatch("chat", "chat"))
    request = {"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": TOOLS, "logprobs": True}
    exchange.forward(json.dumps({**request, "stream": stream}).encode())
    return exchange


def _streamed(chunks: list[list[str]]) -> list[dict[str, Any]]:
    """The client's chunks for a host that streams `chunks` (each a list of tokens) with logprobs."""
    exchange = _exchange(True)
    exchange.start("POST", 200, [(b"content-type", b"text/event-stream")])
    out = b""
    for n, tokens in enumerate(chunks):
        delta = {"content": "".join(tokens), **({"role": "assistant"} if n == 0 else {})}
        logprobs = {"content": [entry(t) for t in tokens], "refusal": None}
        choice = {"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": None}
        out += exchange.feed(
            b"data: " + json.dumps({**META, "object": "chat.completion.chunk", "choices": [choice]}).encode() + b"\n\n"
        )
    end = {"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}
    out += exchange.feed(
        b"data: " + json.dumps({**META, "object": "chat.completion.chunk", "choices": [end]}).encode() + b"\n\n"
    )
    out += exchange.feed(b"data: [DONE]\n\n") + exchange.end()
    return [json.loads(e.data) for e in SSEDecoder().feed(out) if e.data and e.data != "[DONE]"]


def _carried(chunk: dict[str, Any]) -> list[str] | None:
    logprobs = chunk["choices"][0]["logprobs"] if chunk["choices"] else None
    return None if logprobs is None else [e["token"] for e in logprobs["content"]]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.one_of(WORDS, MARKUP), min_size=1, max_size=3), min_size=1, max_size=10))
def test_a_chunk_carries_exactly_the_entries_of_its_content(chunks: list[list[str]]) -> None:
    for chunk in _streamed(chunks):
        ChatCompletionChunk.model_validate(chunk)
        tokens = _carried(chunk)
        if tokens is not None:
            assert "".join(tokens) == chunk["choices"][0]["delta"].get("content")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(WORDS, min_size=1, max_size=3), min_size=1, max_size=10), st.sampled_from(["x", "!"]))
def test_plain_text_keeps_every_entry(chunks: list[list[str]], last: str) -> None:
    chunks = [*chunks, [last]]  # (text that ends in whitespace is let out at the end, without a token to go with)
    out = _streamed(chunks)
    content = "".join(c["choices"][0]["delta"].get("content") or "" for c in out if c["choices"])
    tokens = [t for c in out for t in _carried(c) or []]
    assert content == "".join(t for chunk in chunks for t in chunk)
    assert tokens == [t for chunk in chunks for t in chunk]


def _whole(tokens: list[str]) -> dict[str, Any]:
    exchange = _exchange(False)
    exchange.start("POST", 200, [(b"content-type", b"application/json")])
    logprobs = {"content": [entry(t) for t in tokens], "refusal": None}
    message = {"role": "assistant", "content": "".join(tokens)}
    choice = {"index": 0, "message": message, "logprobs": logprobs, "finish_reason": "stop"}
    body = json.dumps({**META, "object": "chat.completion", "choices": [choice]}).encode()
    result: dict[str, Any] = json.loads(exchange.feed(body) + exchange.end())
    ChatCompletion.model_validate(result)
    return result["choices"][0]


def test_a_whole_answer_keeps_the_entries_of_its_text() -> None:
    choice = _whole(["Hello", " the", " cat", "."])
    assert [e["token"] for e in choice["logprobs"]["content"]] == ["Hello", " the", " cat", "."]


def test_a_whole_answer_keeps_the_entries_of_the_text_before_its_call() -> None:
    call = ["\n", "<tool_call>", '{"name": "f", "arguments": {}}', "</tool_call>"]
    choice = _whole(["Let", " me", " check", ".", *call])
    assert choice["message"]["content"] == "Let me check." and choice["message"]["tool_calls"]
    assert [e["token"] for e in choice["logprobs"]["content"]] == ["Let", " me", " check", "."]


def test_a_streamed_call_takes_its_entries_along() -> None:
    out = _streamed(
        [["Let", " me"], [" check", "."], ["\n", "<tool_call>"], ['{"name": "f", "arguments": {}}'], ["</tool_call>"]]
    )
    tokens = [t for c in out for t in _carried(c) or []]
    assert tokens == ["Let", " me", " check", "."]
    assert any(c["choices"] and c["choices"][0]["delta"].get("tool_calls") for c in out)
