"""The raw-output model's answers as wire bodies, for any framework: no framework imported here.

`fake_model.write` decides the model's raw text from the transcript; these put it in the shapes a
raw-output endpoint returns: a Chat Completions body or its SSE chunks, a Responses body or its
SSE events. The Flask, Django and Quart examples are each a few lines of routing around them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from examples.fake_model import pieces, write


def chat_answer(body: dict[str, Any], name: str) -> dict[str, Any]:
    raw = write(body)  # stands in for the model's generate()
    meta = {"id": f"chatcmpl-{name}", "created": int(time.time()), "model": body.get("model", name)}
    choice = {"index": 0, "message": {"role": "assistant", "content": raw}, "finish_reason": "stop"}
    usage = {"prompt_tokens": 10, "completion_tokens": len(raw) // 4, "total_tokens": 10 + len(raw) // 4}
    return {**meta, "object": "chat.completion", "choices": [choice], "usage": usage}


def chat_events(body: dict[str, Any], name: str) -> Iterator[str]:
    raw = write(body)
    meta = {"id": f"chatcmpl-{name}", "created": int(time.time()), "model": body.get("model", name)}
    for n, piece in enumerate(pieces(raw)):
        delta = {"role": "assistant", "content": piece} if n == 0 else {"content": piece}
        chunk = {**meta, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}
        yield f"data: {json.dumps(chunk)}\n\n"
    end = {**meta, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    yield f"data: {json.dumps(end)}\n\n"
    yield "data: [DONE]\n\n"


def _response(body: dict[str, Any], name: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    raw = write(body)
    model = body.get("model", name)
    base = {"id": f"resp_{name}", "object": "response", "created_at": int(time.time()), "model": model}
    message = {
        "id": f"msg_{name}",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": raw, "annotations": []}],
    }
    usage = {"input_tokens": 10, "output_tokens": len(raw) // 4, "total_tokens": 10 + len(raw) // 4}
    return base, message, usage


def responses_answer(body: dict[str, Any], name: str) -> dict[str, Any]:
    base, message, usage = _response(body, name)
    return {**base, "status": "completed", "output": [message], "usage": usage}


def responses_events(body: dict[str, Any], name: str) -> Iterator[str]:
    base, message, usage = _response(body, name)
    text = message["content"][0]["text"]
    events: list[tuple[str, dict[str, Any]]] = [("response.created", {"response": {**base, "status": "in_progress"}})]
    for piece in pieces(text):
        events.append(
            (
                "response.output_text.delta",
                {"item_id": message["id"], "output_index": 0, "content_index": 0, "delta": piece},
            )
        )
    final = {**base, "status": "completed", "output": [message], "usage": usage}
    events.append(("response.completed", {"response": final}))
    for seq, (kind, fields) in enumerate(events):
        yield f"event: {kind}\ndata: {json.dumps({'type': kind, 'sequence_number': seq, **fields})}\n\n"
