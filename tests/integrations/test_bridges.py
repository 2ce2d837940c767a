"""The Responses-to-Chat bridge in the WSGI shells: a Flask app and a Django project that serve
only Chat Completions answer the official openai SDK's Responses calls through a full tool turn
(the same bridge the ASGI middleware runs; see tests/asgi/test_bridge.py)."""

from __future__ import annotations

import json
import os
from typing import Any

import anthropic
import django
import httpx
import httpx2
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


def anthropic_flask_client(app: Flask) -> anthropic.Anthropic:
    http = httpx2.Client(transport=httpx2.WSGITransport(app=app), base_url="http://flask")
    return anthropic.Anthropic(base_url="http://flask", api_key="none", http_client=http, max_retries=0)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_chat_only_flask_app_answers_claude_codes_request_shapes(stream: bool) -> None:
    """Anthropic clients on a WSGI app through the messages-to-chat bridge: a system turn inside
    `messages`, `thinking`, the beta namespace (`?beta=true`), then a token count the host cannot
    give, estimated, and a host error in Anthropic's shape."""
    app = chat_only_flask(bridge="messages-to-chat")
    SEEN.clear()
    client = anthropic_flask_client(app)
    ask: Any = {
        "model": "qwen3",
        "max_tokens": 256,
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "thinking": {"type": "adaptive"},
        "tools": [{"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {}}}}],
        "messages": [
            {"role": "user", "content": "What is the weather in Paris?"},
            {"role": "system", "content": "Agents available: none."},
        ],
        "betas": ["interleaved-thinking-2025-05-14"],
    }
    if stream:
        with client.beta.messages.stream(**ask) as events:
            answer = events.get_final_message()
    else:
        answer = client.beta.messages.create(**ask)
    assert answer.stop_reason == "tool_use"
    call = answer.content[-1]
    assert call.type == "tool_use" and call.name == "get_weather" and call.input == {"city": "Paris"}
    ((path, sent),) = SEEN
    assert path == "/v1/chat/completions" and [m["role"] for m in sent["messages"]] == ["system", "user"]
    assert sent["messages"][0]["content"].startswith("Be brief.\n\nAgents available: none.")
    assert sent["chat_template_kwargs"] == {"enable_thinking": True, "thinking": True}

    counted = client.messages.count_tokens(model="qwen3", messages=ask["messages"], tools=ask["tools"])
    assert counted.input_tokens > 50  # the manifest counted in
    assert len(SEEN) == 1  # a count is never a generation


def test_a_flask_hosts_error_reaches_anthropic_clients_in_their_shape() -> None:
    app = Flask(__name__)

    @app.post("/v1/chat/completions")
    def busy() -> tuple[dict[str, object], int]:
        return {"error": {"message": "slow down", "type": "rate_limit", "code": None}}, 429

    init_app(app, dialect="hermes", bridge="messages-to-chat")
    client = anthropic_flask_client(app)
    with pytest.raises(anthropic.RateLimitError) as info:
        client.messages.create(model="qwen3", max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    assert info.value.body == {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
