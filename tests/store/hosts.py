"""A raw-output model that remembers: it answers with every user message it was sent, so a test
sees whether the state put the earlier turns back in front of the new one (a last turn that
starts with "Count " gets an answer of one size: how many user turns came, and the first). It calls
`get_weather` when the tool is offered (hermes markup), and answers from the tool's result.

Chat and Responses, whole or streamed. A stream whose last user turn says "slowly" takes
`SLOW_SECONDS` per chunk; `GET /stats` counts those started, finished and cut off (a cancelled
background response must cut its upstream off). "please fail" gets the host's own 500.

Behind `ToolCallMiddleware` with a store named by `$TOOLCALL_TEST_STORE` (default `memory`):

    uvicorn tests.store.hosts:bridged    # a Chat-only host, Responses clients bridged
    uvicorn tests.store.hosts:native     # a host that speaks the Responses API itself
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from toolcall_middleware import ToolCallMiddleware


def user_texts(body: dict[str, Any]) -> list[str]:
    """The user turns the host was given, in order (Chat messages or Responses input items)."""
    texts: list[str] = []
    given = body.get("input")
    turns = body.get("messages") or ([{"role": "user", "content": given}] if isinstance(given, str) else given or [])
    for turn in turns:
        if turn.get("role") != "user":
            continue
        content = turn.get("content")
        if isinstance(content, str):
            texts.append(content)
        else:
            texts.extend(str(part.get("text")) for part in content or [] if part.get("type") in ("text", "input_text"))
    return texts


def write(body: dict[str, Any]) -> str:
    transcript = json.dumps(body)
    if "Sunny" in transcript:
        return "<think>\nThe tool answered.\n</think>\n\nIt is Sunny."
    if "get_weather" in transcript:
        call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
        return "<think>\nI need the weather tool.\n</think>\n\n" + call
    texts = user_texts(body)
    if texts and texts[-1].startswith("Count "):  # (an answer of one size, however long the chain)
        return f"<think>\nCounting.\n</think>\n\nHeard {len(texts)} turns, first {texts[0][:20]!r}."
    return "<think>\nRecalling.\n</think>\n\nHeard: " + " | ".join(texts)


def pieces(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


SLOW_SECONDS = 0.15
STATS = {"started": 0, "finished": 0, "cut": 0}


def sse(objects: list[dict[str, Any]], *, typed: bool, slow: bool = False) -> StreamingResponse:
    async def events() -> AsyncIterator[str]:
        STATS["started"] += slow
        finished = False
        try:
            for obj in objects:
                yield (f"event: {obj['type']}\n" if typed else "") + f"data: {json.dumps(obj)}\n\n"
                if slow:
                    await asyncio.sleep(SLOW_SECONDS)
            if not typed:
                yield "data: [DONE]\n\n"
            finished = True
        finally:
            if slow:
                STATS["finished" if finished else "cut"] += 1

    return StreamingResponse(events(), media_type="text/event-stream")


def is_slow(body: dict[str, Any]) -> bool:
    texts = user_texts(body)
    return bool(texts) and "slowly" in texts[-1]


async def stats(request: Request) -> Response:
    return JSONResponse(STATS)


def refused(body: dict[str, Any]) -> Response | None:
    """The host's own error, for a last user turn that asks for one."""
    texts = user_texts(body)
    if texts and "please fail" in texts[-1]:
        error = {"message": "the model is overloaded", "type": "server_error", "param": None, "code": None}
        return JSONResponse({"error": error}, status_code=500)
    return None


async def chat(request: Request) -> Response:
    body = await request.json()
    if (error := refused(body)) is not None:
        return error
    raw = write(body)
    meta = {"id": "chatcmpl-recall", "created": int(time.time()), "model": body.get("model", "recall")}
    if not body.get("stream"):
        choice = {"index": 0, "message": {"role": "assistant", "content": raw}, "finish_reason": "stop"}
        return JSONResponse({**meta, "object": "chat.completion", "choices": [choice]})
    chunks = [
        {**meta, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": piece}}]}
        for piece in pieces(raw)
    ]
    chunks.append(
        {**meta, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    )
    return sse(chunks, typed=False, slow=is_slow(body))


async def responses(request: Request) -> Response:
    body = await request.json()
    if (error := refused(body)) is not None:
        return error
    raw = write(body)
    base = {
        "id": "resp_recall",
        "object": "response",
        "created_at": int(time.time()),
        "model": body.get("model", "recall"),
    }
    message = {
        "id": "msg_recall",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": raw, "annotations": []}],
    }
    done = {**base, "status": "completed", "output": [message]}
    if not body.get("stream"):
        return JSONResponse(done)
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**base, "status": "in_progress", "output": []}}
    ]
    events += [
        {
            "type": "response.output_text.delta",
            "item_id": "msg_recall",
            "output_index": 0,
            "content_index": 0,
            "delta": p,
        }
        for p in pieces(raw)
    ]
    events.append({"type": "response.completed", "response": done})
    return sse([{**e, "sequence_number": n} for n, e in enumerate(events)], typed=True, slow=is_slow(body))


host = Starlette(
    routes=[
        Route("/v1/chat/completions", chat, methods=["POST"]),
        Route("/v1/responses", responses, methods=["POST"]),
        Route("/stats", stats),
    ]
)
STORE = os.environ.get("TOOLCALL_TEST_STORE", "memory")
bridged = ToolCallMiddleware(host, dialect="hermes", bridge="responses-to-chat", store=STORE)
native = ToolCallMiddleware(host, dialect="hermes", store=STORE)
