"""A Flask model endpoint that returns raw model output, retrofitted with tool calling in one line.

The views are what such endpoints look like: the model's text as `message.content`, or streamed
as SSE (one view with `stream_with_context`, one with a plain generator). `init_app(...)` puts the
native WSGI middleware around `app.wsgi_app`: clients get real `tool_calls`.

    gunicorn --threads 4 examples.flask_app:app
"""

from __future__ import annotations

from flask import Flask, Response, request, stream_with_context
from toolcall_middleware.integrations.flask import init_app

from examples.raw_wire import chat_answer, chat_events, responses_answer, responses_events

app = Flask(__name__)


@app.post("/v1/chat/completions")
def chat() -> Response | dict[str, object]:
    body = request.get_json()
    if not body.get("stream"):
        return chat_answer(body, "flask")
    return Response(stream_with_context(chat_events(body, "flask")), mimetype="text/event-stream")


@app.post("/v1/responses")
def responses() -> Response | dict[str, object]:
    body = request.get_json()
    if not body.get("stream"):
        return responses_answer(body, "flask")
    return Response(responses_events(body, "flask"), mimetype="text/event-stream")


@app.get("/")
def index() -> str:
    return "a raw-output model endpoint"


init_app(app, dialect="hermes")
