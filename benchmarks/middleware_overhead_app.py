"""The host app `middleware_overhead.py` serves: a raw-output model server with a realistic answer.

Every `POST /v1/chat/completions` streams the same answer, the way vLLM frames it (one
`chat.completion.chunk` JSON per SSE event, `finish_reason` chunk, `data: [DONE]`): about
`text_bytes` of prose in `chunks` small deltas, ending in one hermes `<tool_call>`. The request
body is read and decoded (as a real server would) but does not change the answer, so the bare app
and the app behind `ToolCallMiddleware` do the same work upstream of the middleware.

    python benchmarks/middleware_overhead_app.py --port 8001 [--middleware] [--text-bytes N] [--chunks N]
        [--first-token-ms F]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

CALL_NAME = "get_weather"
CALL_ARGS = {"city": "Paris", "unit": "celsius"}
MODEL = "bench-model"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": CALL_NAME,
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    }
]


def agent_tool(i: int) -> dict[str, Any]:
    """A tool the size of an agent's (a description, four typed parameters)."""
    properties = {
        "path": {"type": "string", "description": "a path in the workspace"},
        "content": {"type": "string"},
        "mode": {"type": "string", "enum": ["read", "write", "append"]},
        "lines": {"type": "array", "items": {"type": "integer"}},
    }
    parameters = {"type": "object", "properties": properties, "required": ["path"]}
    description = "Reads or changes a file in the workspace; paths are relative to its root."
    function = {"name": f"file_tool_{i}", "description": description, "parameters": parameters}
    return {"type": "function", "function": function}


def request_body(tools: int = 1) -> dict[str, Any]:
    """What the benchmark's client sends: a short chat, streamed, offering the benchmark's tool and,
    with `tools` > 1, file tools of an agent's size up to that many (as agents send every turn)."""
    return {
        "model": MODEL,
        "stream": True,
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Plan my afternoon in Paris, and check the weather first."},
        ],
        "tools": TOOLS + [agent_tool(i) for i in range(tools - 1)],
    }


def answer(text_bytes: int, seed: int = 3) -> str:
    """Prose (ASCII plus some non-ASCII, no `<`) then one hermes call; about `text_bytes` UTF-8 bytes."""
    call = f"\n<tool_call>\n{json.dumps({'name': CALL_NAME, 'arguments': CALL_ARGS})}\n</tool_call>"
    rng = random.Random(seed)
    words = ["the", "museum", "opens", "at", "two", "and", "a", "walk", "along", "Seine", "café", "is", "nice"]
    out: list[str] = ["Sure. "]
    size = len(out[0])
    budget = max(0, text_bytes - len(call.encode()))
    while size < budget:
        word = rng.choice(words) + (".\n" if rng.random() < 0.07 else " ")
        out.append(word)
        size += len(word.encode())
    return "".join(out).rstrip() + call


def split(text: str, chunks: int) -> list[str]:
    """`text` in `chunks` pieces of near-equal length (a few characters each, like tokens)."""
    chunks = max(1, min(chunks, len(text)))
    step, extra = divmod(len(text), chunks)
    out: list[str] = []
    i = 0
    for n in range(chunks):
        size = step + (1 if n < extra else 0)
        out.append(text[i : i + size])
        i += size
    return out


def make_app(
    text_bytes: int = 2000,
    chunks: int = 400,
    media_type: str = "text/event-stream",
    reasoning: str = "none",
    first_token_ms: float = 0.0,
) -> Starlette:
    """The host app; another `media_type` gives the same bytes as a body the middleware passes
    through. `reasoning`: "field" streams the first half of the prose as `reasoning_content`, as a
    host with a reasoning parser does; "think" writes it inside `<think>…</think>` in the content,
    as a host without one does; "none", all of it is content. `first_token_ms`: the time from the
    request read to the first chunk, as a model server's engine computes the first token (the
    prompt's prefill) while the server sends its response head; 0 answers at once."""
    text = answer(text_bytes)
    half = len(text) // 2
    if reasoning == "think":
        text = "<think>" + text[:half] + "</think>\n\n" + text[half:]
    pieces = split(text, chunks)
    thinking = len(pieces) // 2 if reasoning == "field" else 0  # pieces sent as `reasoning_content`

    async def chat(request: Request) -> Response:
        body = await request.json()
        model = body.get("model", MODEL)
        meta = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}

        # The model starts on the prompt once the request is read, apart from the server's loop
        # (an engine's own thread or process), and hands its first token over `first_token_ms`
        # later: a thread's precise sleep, which wakes the loop as an engine's output does (a
        # timer on the loop would be rounded to the millisecond).
        first_token = (
            asyncio.get_running_loop().run_in_executor(None, time.sleep, first_token_ms / 1000)
            if first_token_ms
            else None
        )

        async def events() -> AsyncIterator[str]:
            if first_token is not None:
                await first_token
            for n, piece in enumerate(pieces):
                key = "reasoning_content" if n < thinking else "content"
                delta = {"role": "assistant", key: piece} if n == 0 else {key: piece}
                chunk = {**meta, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}]}
                yield f"data: {json.dumps(chunk)}\n\n"
            end = {**meta, "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}]}
            yield f"data: {json.dumps(end)}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type=media_type)

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


def main() -> None:
    import uvicorn

    from toolcall_middleware import ToolCallMiddleware

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--middleware", action="store_true")
    ap.add_argument("--text-bytes", type=int, default=2000)
    ap.add_argument("--chunks", type=int, default=400)
    ap.add_argument("--first-token-ms", type=float, default=0.0)
    args = ap.parse_args()
    app: Any = make_app(args.text_bytes, args.chunks, first_token_ms=args.first_token_ms)
    if args.middleware:
        app = ToolCallMiddleware(app, dialect="hermes")
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False, lifespan="off")


if __name__ == "__main__":
    main()
