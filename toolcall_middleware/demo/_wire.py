"""The wire shapes a raw-output host returns, with the model's raw text as the content.

Chat Completions: a `chat.completion` body, or `chat.completion.chunk` SSE events ending in
`data: [DONE]`. Responses: a `response` body whose `message` item holds the raw text as
`output_text`, or the event stream a Responses server sends for a text answer (`response.created`,
`…output_item.added`, `…content_part.added`, `…output_text.delta`…, the `…done` events and
`response.completed`). No tool-call field ever appears: this host does not know of tools.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any


def pieces(text: str, size: int) -> list[str]:
    """The text in pieces of `size` characters, as tokens would arrive."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _usage_tokens(raw: str) -> int:
    return max(1, len(raw) // 4)


def sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


# -- Chat Completions --------------------------------------------------------------------------


def chat_completion(raw: str, *, model: str, ident: str, created: int) -> dict[str, Any]:
    out = _usage_tokens(raw)
    return {
        "id": ident,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": raw}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": out, "total_tokens": 10 + out},
    }


def chat_chunks(raw: str, *, model: str, ident: str, created: int, size: int, usage: bool) -> Iterator[bytes]:
    meta = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model}
    for n, piece in enumerate(pieces(raw, size)):
        delta = {"role": "assistant", "content": piece} if n == 0 else {"content": piece}
        yield sse({**meta, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    yield sse({**meta, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    if usage:
        out = _usage_tokens(raw)
        tokens = {"prompt_tokens": 10, "completion_tokens": out, "total_tokens": 10 + out}
        yield sse({**meta, "choices": [], "usage": tokens})
    yield b"data: [DONE]\n\n"


# -- Responses ---------------------------------------------------------------------------------


def _message(raw: str, item_id: str, status: str = "completed") -> dict[str, Any]:
    part = {"type": "output_text", "text": raw, "annotations": []}
    return {"id": item_id, "type": "message", "role": "assistant", "status": status, "content": [part]}


def response(raw: str, *, model: str, ident: str, created: int, status: str = "completed") -> dict[str, Any]:
    out = _usage_tokens(raw)
    done = status == "completed"
    return {
        "id": ident,
        "object": "response",
        "created_at": created,
        "status": status,
        "model": model,
        "output": [_message(raw, "msg_" + ident.removeprefix("resp_"))] if done else [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {"input_tokens": 10, "output_tokens": out, "total_tokens": 10 + out} if done else None,
    }


def response_events(raw: str, *, model: str, ident: str, created: int, size: int) -> Iterator[bytes]:
    item_id = "msg_" + ident.removeprefix("resp_")
    seq = 0

    def event(kind: str, **fields: Any) -> bytes:
        nonlocal seq
        data = {"type": kind, "sequence_number": seq, **fields}
        seq += 1
        return sse(data, kind)

    where = {"item_id": item_id, "output_index": 0, "content_index": 0}
    started = response(raw, model=model, ident=ident, created=created, status="in_progress")
    yield event("response.created", response=started)
    yield event("response.in_progress", response=started)
    yield event(
        "response.output_item.added", output_index=0, item={**_message("", item_id, "in_progress"), "content": []}
    )
    yield event("response.content_part.added", **where, part={"type": "output_text", "text": "", "annotations": []})
    for piece in pieces(raw, size):
        yield event("response.output_text.delta", **where, delta=piece, logprobs=[])
    yield event("response.output_text.done", **where, text=raw, logprobs=[])
    yield event("response.content_part.done", **where, part={"type": "output_text", "text": raw, "annotations": []})
    yield event("response.output_item.done", output_index=0, item=_message(raw, item_id))
    yield event("response.completed", response=response(raw, model=model, ident=ident, created=created))


__all__ = ["chat_chunks", "chat_completion", "pieces", "response", "response_events", "sse"]
