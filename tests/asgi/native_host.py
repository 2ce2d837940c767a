"""A host that does tool calling itself (a serving engine with its own tool parser, given the
tools: `forward_tools=True`): it answers Chat with `tool_calls` and Responses with `function_call`
items, streamed or whole, calling every tool it was offered (two when the request offers two),
then answers from the tool result. Behind `ToolCallMiddleware`, whose rules still apply to what
it returns.

    uvicorn tests.asgi.native_host:app
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from toolcall_middleware import ToolCallMiddleware


def _names(body: dict[str, Any]) -> list[str]:
    """The offered tools' names, as the host sees them (forwarded, both shapes)."""
    out = []
    for tool in body.get("tools") or []:
        function = tool.get("function") or tool
        out.append(str(function.get("name")))
    return out


def _answered(body: dict[str, Any]) -> bool:
    """The tool's result is in the transcript (the middleware writes the history as the
    dialect's text for the host's template, tools forwarded or not)."""
    return "Sunny" in json.dumps([body.get("messages"), body.get("input"), body.get("instructions")])


def _sse(objects: list[dict[str, Any]], *, typed: bool = False, done: bool = True) -> StreamingResponse:
    async def events() -> AsyncIterator[str]:
        for obj in objects:
            head = f"event: {obj['type']}\n" if typed else ""
            yield f"{head}data: {json.dumps(obj)}\n\n"
        if done:
            yield "data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


async def chat(request: Request) -> Response:
    body = await request.json()
    meta = {"id": "chatcmpl-native", "created": 1, "model": body.get("model", "m")}
    calls = [] if _answered(body) else _names(body)
    args = [json.dumps({"city": "Paris"}) for _ in calls]
    if not body.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": "It is sunny." if not calls else None}
        if calls:
            message["tool_calls"] = [
                {"id": f"call_host{n}", "type": "function", "function": {"name": name, "arguments": args[n]}}
                for n, name in enumerate(calls)
            ]
        choice = {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
        return JSONResponse({**meta, "object": "chat.completion", "choices": [choice]})
    chunks: list[dict[str, Any]] = []

    def chunk(delta: dict[str, Any], finish: str | None = None) -> None:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        chunks.append({**meta, "object": "chat.completion.chunk", "choices": [choice]})

    if not calls:
        chunk({"role": "assistant", "content": "It is "})
        chunk({"content": "sunny."})
    for n, name in enumerate(calls):
        first = {"index": n, "id": f"call_host{n}", "type": "function", "function": {"name": name, "arguments": ""}}
        chunk({"role": "assistant", "content": None, "tool_calls": [first]} if n == 0 else {"tool_calls": [first]})
        half = len(args[n]) // 2
        for piece in (args[n][:half], args[n][half:]):
            chunk({"tool_calls": [{"index": n, "function": {"arguments": piece}}]})
    chunk({}, "tool_calls" if calls else "stop")
    return _sse(chunks)


async def responses(request: Request) -> Response:
    body = await request.json()
    calls = [] if _answered(body) else _names(body)
    shell = {"id": "resp_native", "object": "response", "created_at": 1, "model": body.get("model", "m")}
    arguments = json.dumps({"city": "Paris"})
    items: list[dict[str, Any]] = [
        {"id": f"fc_{n}", "type": "function_call", "call_id": f"call_host{n}", "name": name, "arguments": arguments}
        for n, name in enumerate(calls)
    ]
    text = {"type": "output_text", "text": "It is sunny.", "annotations": []}
    items = items or [{"id": "msg_1", "type": "message", "role": "assistant", "content": [text]}]
    for item in items:
        item["status"] = "completed"
    final = {**shell, "status": "completed", "output": items}
    if not body.get("stream"):
        return JSONResponse(final)
    started = {**shell, "status": "in_progress", "output": []}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": started}]
    for n, item in enumerate(items):
        if item["type"] == "function_call":
            added = {**item, "arguments": "", "status": "in_progress"}
            events.append({"type": "response.output_item.added", "output_index": n, "item": added})
            half = len(item["arguments"]) // 2
            for piece in (item["arguments"][:half], item["arguments"][half:]):
                delta = {"output_index": n, "item_id": item["id"], "delta": piece}
                events.append({"type": "response.function_call_arguments.delta", **delta})
        else:
            delta = {"output_index": n, "item_id": item["id"], "content_index": 0, "delta": "It is sunny."}
            events.append({"type": "response.output_text.delta", **delta})
        events.append({"type": "response.output_item.done", "output_index": n, "item": item})
    events.append({"type": "response.completed", "response": final})
    for seq, event in enumerate(events):
        event["sequence_number"] = seq
    return _sse(events, typed=True, done=False)


host = Starlette(
    routes=[
        Route("/v1/chat/completions", chat, methods=["POST"]),
        Route("/v1/responses", responses, methods=["POST"]),
        Route("/", lambda request: JSONResponse({"ok": True})),
    ]
)
app = ToolCallMiddleware(host, dialect="hermes", forward_tools=True)
