"""Quart through `init_app`: the example under Quart's own test client, whole and streamed, chat
and responses; a 400; and the error that names the extra. Served for real in test_served."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest
from quart import Quart
from toolcall_middleware.integrations.quart import init_app

from examples.quart_app import app as example

from .inproc import chat_request, check_chat, check_responses, responses_request


def post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    async def run() -> tuple[int, dict[str, str], bytes]:
        response = await example.test_client().post(url, json=body)
        return response.status_code, dict(response.headers), await response.get_data()

    return asyncio.run(run())


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_chat_through_the_test_client(stream: bool) -> None:
    status, _, body = post("/v1/chat/completions", chat_request(stream=stream))
    assert status == 200
    check_chat(body, stream=stream)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_responses_through_the_test_client(stream: bool) -> None:
    check_responses(post("/v1/responses", responses_request(stream=stream))[2], stream=stream)


def test_a_malformed_request_is_a_400() -> None:
    status, _, body = post("/v1/chat/completions", {**chat_request(stream=False), "tools": "nope"})
    assert status == 400 and b'"param": "tools"' in body


def test_init_app_wraps_asgi_app() -> None:
    app = Quart(__name__)
    middleware = init_app(app, dialect="hermes")
    assert app.asgi_app is middleware


def test_a_missing_quart_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "quart", None)
    with pytest.raises(ImportError, match=r"pip install 'toolcall-middleware\[quart\]'"):
        init_app(object())
