"""Raw-output model servers scripted to drive Claude Code through a file task, for
`test_claude_code.py` (served by uvicorn behind `ToolCallMiddleware`).

The "model" writes hermes text (`<think>…</think>`, then `<tool_call>{…}</tool_call>`), deciding
from the transcript alone, as `examples/fake_model.py` does: the task names a file; with no tool
result yet it reads the file (Claude Code's `Read`), after one it edits it (`Edit`), after two it
runs `cat` on it (`Bash`), and after three it answers with what the command printed. A request
that offers no tools (a title or a summary Claude Code asks for on the side) gets a short text.

- `chat_app`: serves `/v1/chat/completions` only (behind the `messages-to-chat` bridge).
- `messages_app`: serves `/v1/messages` itself, the raw text in `text` blocks (the native route).

Both record each request body they get in `SEEN`, served at `GET /seen` for the test to inspect.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.hosts import anthropic_events
from toolcall_middleware import ToolCallMiddleware

SEEN: list[dict[str, Any]] = []
RESULT = re.compile(r"<tool_response>\s*(.*?)\s*</tool_response>", re.S)


def transcript(body: dict[str, Any]) -> str:
    """Every text the model is shown, in order: system prompt, then each turn's text."""
    parts: list[str] = []

    def add(value: Any) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            for block in value:
                if isinstance(block, dict) and isinstance(block.get("text"), str):
                    parts.append(block["text"])

    add(body.get("system"))
    for message in body.get("messages") or []:
        add(message.get("content"))
    return "\n".join(parts)


def write(body: dict[str, Any]) -> str:
    """The model's raw output for one request (see the module doc)."""
    text = transcript(body)
    found = re.search(r"(/\S+/notes\.txt)", text)
    offered = "Read" in json.dumps(body.get("tools") or []) or "<tools>" in text
    if found is None or not offered:
        return "Done."
    path = found.group(1)
    results = RESULT.findall(text)
    if len(results) >= 3:
        return f"<think>\nThe command printed the file.\n</think>\n\nThe file now says: {results[-1].strip()}"
    name, arguments = [
        ("Read", {"file_path": path}),
        ("Edit", {"file_path": path, "old_string": "hello", "new_string": "goodbye"}),
        ("Bash", {"command": f"cat {path}", "description": "Show the edited file"}),
    ][len(results)]
    call = json.dumps({"name": name, "arguments": arguments})
    return f"<think>\nStep {len(results) + 1}: use {name}.\n</think>\n\n<tool_call>\n{call}\n</tool_call>"


def _pieces(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


async def chat(request: Request) -> Response:
    body = await request.json()
    SEEN.append(body)
    raw = write(body)
    meta = {"id": f"chatcmpl-{uuid.uuid4().hex}", "created": int(time.time()), "model": body.get("model", "m")}
    usage = {"prompt_tokens": len(transcript(body)) // 4, "completion_tokens": len(raw) // 4}
    if not body.get("stream"):
        choice = {"index": 0, "message": {"role": "assistant", "content": raw}, "finish_reason": "stop"}
        return JSONResponse({**meta, "object": "chat.completion", "choices": [choice], "usage": usage})

    async def events() -> AsyncIterator[str]:
        for n, piece in enumerate(_pieces(raw)):
            delta = {"role": "assistant", "content": piece} if n == 0 else {"content": piece}
            chunk = {**meta, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}
            yield f"data: {json.dumps(chunk)}\n\n"
        chunk = {**meta, "object": "chat.completion.chunk"}
        yield f"data: {json.dumps({**chunk, 'choices': [{'index': 0, 'delta': {}, 'finish_reason': 'stop'}]})}\n\n"
        yield f"data: {json.dumps({**chunk, 'choices': [], 'usage': usage})}\n\n"
        yield "data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


async def messages(request: Request) -> Response:
    body = await request.json()
    SEEN.append(body)
    raw = write(body)
    model = body.get("model", "m")
    blocks = [{"type": "text", "text": raw}]
    if not body.get("stream"):
        usage = {"input_tokens": len(transcript(body)) // 4, "output_tokens": len(raw) // 4}
        message = {"id": f"msg_{uuid.uuid4().hex}", "type": "message", "role": "assistant", "model": model}
        return JSONResponse(
            {**message, "content": blocks, "stop_reason": "end_turn", "stop_sequence": None, "usage": usage}
        )

    stream = anthropic_events(blocks, "end_turn", model)
    stream[0]["message"]["id"] = f"msg_{uuid.uuid4().hex}"  # a host's ids are unique: Claude Code joins equal ones

    async def events() -> AsyncIterator[str]:
        for event in stream:
            yield f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


async def seen(request: Request) -> Response:
    return JSONResponse(SEEN)


chat_host = Starlette(
    routes=[Route("/v1/chat/completions", chat, methods=["POST"]), Route("/seen", seen), Route("/", seen)]
)
messages_host = Starlette(
    routes=[Route("/v1/messages", messages, methods=["POST"]), Route("/seen", seen), Route("/", seen)]
)

chat_app = ToolCallMiddleware(chat_host, dialect="hermes", bridge="messages-to-chat")
messages_app = ToolCallMiddleware(messages_host, dialect="hermes")
