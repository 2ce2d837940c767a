"""The Responses-to-Chat bridge in the WSGI shells: a Flask app and a Django project that serve
only Chat Completions answer the official openai SDK's Responses calls through a full tool turn
(the same bridge the ASGI middleware runs; see tests/asgi/test_bridge.py)."""

from __future__ import annotations

import json
import os
from typing import Any

import django
import httpx
import openai
import pytest
from flask import Flask, Response, request, stream_with_context
from toolcall_middleware.integrations.flask import init_app

from examples.raw_wire import chat_answer, chat_events
from toolcall_middleware import ToolCallWSGIMiddleware

from .inproc import check_responses, responses_request
from .sdk_turns import responses_turn

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "examples.django_project.settings")
django.setup()

from django.test import Client, override_settings  # noqa: E402

SEEN: list[tuple[str, dict[str, Any]]] = []


def chat_only_flask(**config: Any) -> Flask:
    app = Flask(__name__)

    @app.post("/v1/chat/completions")
    def chat() -> Response | dict[str, object]:
        body = request.get_json()
        SEEN.append((request.path, body))
        if not body.get("stream"):
            return chat_answer(body, "flask")
        return Response(stream_with_context(chat_events(body, "flask")), mimetype="text/event-stream")

    init_app(app, dialect="hermes", **config)
    return app


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_chat_only_flask_app_answers_the_responses_api_through_a_tool_turn(stream: bool) -> None:
    app = chat_only_flask(bridge="responses-to-chat")
    SEEN.clear()
    http = httpx.Client(transport=httpx.WSGITransport(app=app), base_url="http://flask")
    client = openai.OpenAI(base_url="http://flask/v1", api_key="none", http_client=http)
    responses_turn(client, stream=stream)
    # The host only ever saw Chat Completions requests, with the tool history flattened to text.
    assert [path for path, _ in SEEN] == ["/v1/chat/completions", "/v1/chat/completions"]
    first, second = (body for _, body in SEEN)
    assert "messages" in first and "input" not in first and "tools" not in first
    assert "Sunny, 21 C" in json.dumps(second["messages"])


def test_without_the_bridge_a_chat_only_flask_app_has_no_responses_route() -> None:
    app = chat_only_flask()
    response = app.test_client().post("/v1/responses", json=responses_request(stream=False))
    assert response.status_code in (404, 405)


def test_the_bridge_keeps_the_wsgi_mount_point() -> None:
    seen: list[str] = []

    def chat_only(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        seen.append(environ["SCRIPT_NAME"] + environ["PATH_INFO"])
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = json.loads(environ["wsgi.input"].read(length))
        data = json.dumps(chat_answer(body, "wsgi")).encode()
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
        return [data]

    app = ToolCallWSGIMiddleware(chat_only, dialect="hermes", bridge="responses-to-chat", route_prefixes=("/api",))
    client = httpx.Client(transport=httpx.WSGITransport(app=app, script_name="/api"), base_url="http://x")
    # httpx's transport gives the URL path as PATH_INFO, under SCRIPT_NAME "/api": the full path is
    # /api/v1/responses, and the host must get /api/v1/chat/completions (PATH_INFO without the mount).
    answer = client.post("/v1/responses?trace=1", json=responses_request(stream=False))
    assert answer.status_code == 200
    assert seen == ["/api/v1/chat/completions"]
    check_responses(answer.content, stream=False)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_chat_only_django_project_answers_the_responses_api(stream: bool) -> None:
    config = {"dialect": "hermes", "bridge": "responses-to-chat"}
    with override_settings(ROOT_URLCONF="tests.integrations.test_bridges", TOOLCALL_MIDDLEWARE=config):
        response = Client().post(
            "/v1/responses", data=json.dumps(responses_request(stream=stream)), content_type="application/json"
        )
        body = b"".join(response.streaming_content) if response.streaming else response.content  # type: ignore[attr-defined]
    assert response.status_code == 200
    check_responses(body, stream=stream)


def test_a_bridged_django_request_too_large_to_translate_is_a_413() -> None:
    config = {"dialect": "hermes", "bridge": "responses-to-chat", "limits": {"max_request_bytes": 64}}
    with override_settings(ROOT_URLCONF="tests.integrations.test_bridges", TOOLCALL_MIDDLEWARE=config):
        response = Client().post(
            "/v1/responses", data=json.dumps(responses_request(stream=False)), content_type="application/json"
        )
    assert response.status_code == 413
    assert json.loads(response.content)["error"]["code"] == "request_too_large"


# The Django project for the tests above: the example's chat view only (no /v1/responses route).
from django.urls import path  # noqa: E402

from examples.django_project import views  # noqa: E402

urlpatterns = [path("v1/chat/completions", views.chat)]
