"""Each example served by a real server on loopback, driven by the official openai SDK through a
full tool-call turn, chat and responses, streamed and whole: Flask and Django (WSGI) under
gunicorn with threads, Django ASGI under uvicorn, Quart under hypercorn; Django both with its
MIDDLEWARE entry and with the whole application wrapped. The model endpoints only ever see the
rewritten requests and answer in raw hermes text."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest

from tests import servers

from .sdk_turns import chat_turn, responses_turn

SERVED = {
    "flask-gunicorn": lambda: servers.gunicorn("examples.flask_app:app"),
    "django-middleware-gunicorn": lambda: servers.gunicorn("examples.django_project.wsgi"),
    "django-middleware-uvicorn": lambda: servers.uvicorn("examples.django_project.asgi:application"),
    "django-wrap_wsgi-gunicorn": lambda: servers.gunicorn("tests.integrations.django_wrapped:wsgi"),
    "django-wrap_asgi-uvicorn": lambda: servers.uvicorn("tests.integrations.django_wrapped:asgi"),
    "quart-hypercorn": lambda: servers.hypercorn("examples.quart_app:app"),
}


@pytest.fixture(scope="module", params=list(SERVED))
def client(request: pytest.FixtureRequest) -> Iterator[openai.OpenAI]:
    command, port = SERVED[request.param]()
    with servers.serve(command, port) as base:
        yield openai.OpenAI(api_key="none", base_url=base + "/v1", max_retries=0, timeout=30)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_chat_tool_call_turn(client: openai.OpenAI, stream: bool) -> None:
    chat_turn(client, stream=stream)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_responses_tool_call_turn(client: openai.OpenAI, stream: bool) -> None:
    responses_turn(client, stream=stream)


def test_a_plain_question_passes_cleanly(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(model="qwen3", messages=[{"role": "user", "content": "hi"}])
    assert completion.choices[0].message.content == "Hello! How can I help?"
    assert completion.choices[0].finish_reason == "stop"
