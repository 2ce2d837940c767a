"""Flask through `init_app`: the example under Flask's own test client (whole, generator and
`stream_with_context` streams), wsgiref's validator around the wrapped `wsgi_app`, the request
context kept alive until the stream is closed, and the error that names the extra."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from wsgiref.validate import validator

import pytest
from flask import Flask, Response, request, stream_with_context
from toolcall_middleware.integrations.flask import init_app

from examples.flask_app import app as example
from toolcall_middleware import ToolCallWSGIMiddleware

from .inproc import chat_request, check_chat, check_responses, responses_request


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_chat_through_the_test_client(stream: bool) -> None:
    response = example.test_client().post("/v1/chat/completions", json=chat_request(stream=stream), buffered=False)
    chunks = list(response.response)
    response.close()
    if stream:
        assert len(chunks) > 10 and "Content-Length" not in response.headers  # still a stream
    else:
        assert response.headers["Content-Length"] == str(len(b"".join(chunks)))
    check_chat(b"".join(chunks), stream=stream)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_responses_through_the_test_client(stream: bool) -> None:
    response = example.test_client().post("/v1/responses", json=responses_request(stream=stream))
    check_responses(response.data, stream=stream)


def test_the_wrapped_wsgi_app_is_valid_wsgi_on_both_sides() -> None:
    app = Flask(__name__)
    torn_down: list[str] = []

    @app.post("/v1/chat/completions")
    def chat() -> Response:
        body = request.get_json()

        def events() -> Iterator[str]:
            yield from _events(json.dumps(body))  # the request context is alive in here

        return Response(stream_with_context(events()), mimetype="text/event-stream")

    @app.teardown_request
    def teardown(_: BaseException | None) -> None:
        torn_down.append(request.path)

    app.wsgi_app = validator(ToolCallWSGIMiddleware(validator(app.wsgi_app), dialect="hermes"))  # type: ignore[method-assign]
    response = app.test_client().post("/v1/chat/completions", json=chat_request(stream=True), buffered=False)
    body = b"".join(response.response)
    response.close()  # the validators check that close() went all the way down
    assert "/v1/chat/completions" in torn_down  # the request context ended with the stream
    check_chat(body, stream=True)


def _events(transcript: str) -> Iterator[str]:
    from examples.fake_model import pieces, write

    raw = write({"messages": [{"role": "user", "content": transcript}]})
    for piece in pieces(raw):
        chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
        yield f"data: {json.dumps({**chunk, 'choices': [{'index': 0, 'delta': {'content': piece}}]})}\n\n"
    yield "data: [DONE]\n\n"


def test_init_app_returns_the_middleware_around_wsgi_app() -> None:
    app = Flask(__name__)
    middleware = init_app(app, dialect="hermes", strict=True)
    assert app.wsgi_app is middleware and middleware.config.strict
    with pytest.raises(TypeError, match="Flask application"):
        init_app(object())


def test_a_missing_flask_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "flask", None)  # what an environment without Flask raises
    with pytest.raises(ImportError, match=r"pip install 'toolcall-middleware\[flask\]'"):
        init_app(object())


def test_init_app_reads_the_apps_config() -> None:
    app = Flask(__name__)
    app.config["TOOLCALL_MIDDLEWARE"] = {"dialect": "kimi_k2", "strict": True}
    middleware = init_app(app, strict=False)  # keyword options over the app's config
    assert middleware.config.dialect == "kimi_k2" and middleware.config.strict is False
    app = Flask(__name__)
    app.config["TOOLCALL_MIDDLEWARE"] = {"dialect": "nope"}
    with pytest.raises(ValueError, match="unknown dialect 'nope'"):
        init_app(app)


@pytest.mark.parametrize(
    ("option", "where"),
    [({"store": "memory"}, "toolcall-middleware serve"), ({"keepalive_interval": 5}, "ASGI middleware")],
)
def test_an_option_wsgi_cannot_honour_fails_at_construction(option: dict[str, object], where: str) -> None:
    """`store=` was accepted and ignored: `previous_response_id` then found nothing, silently."""
    app = Flask(__name__)
    with pytest.raises(ValueError, match="ToolCallWSGIMiddleware cannot honour") as caught:
        init_app(app, dialect="hermes", **option)
    assert where in str(caught.value)
    init_app(Flask(__name__), dialect="hermes", store="none", keepalive_interval=0)  # what it does honour
