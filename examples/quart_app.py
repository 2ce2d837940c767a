"""A Quart model endpoint that returns raw model output, retrofitted with tool calling in one line.

`init_app(...)` puts the ASGI middleware around `app.asgi_app`: clients get real `tool_calls`.

    hypercorn examples.quart_app:app
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from quart import Quart, Response, request
from toolcall_middleware.integrations.quart import init_app

from examples.raw_wire import chat_answer, chat_events, responses_answer, responses_events

app = Quart(__name__)


async def _sse(events: Iterator[str]) -> AsyncIterator[bytes]:
    for event in events:
        yield event.encode()


@app.post("/v1/chat/completions")
async def chat() -> Response | dict[str, object]:
    body = await request.get_json()
    if not body.get("stream"):
        return chat_answer(body, "quart")
    return Response(_sse(chat_events(body, "quart")), mimetype="text/event-stream")


@app.post("/v1/responses")
async def responses() -> Response | dict[str, object]:
    body = await request.get_json()
    if not body.get("stream"):
        return responses_answer(body, "quart")
    return Response(_sse(responses_events(body, "quart")), mimetype="text/event-stream")


@app.get("/")
async def index() -> str:
    return "a raw-output model endpoint"


init_app(app, dialect="hermes")
