"""A request nested too deep is a 400 through the WSGI middleware too (see tests/asgi/test_deep_requests.py)."""

from __future__ import annotations

import pytest

from tests.asgi.test_deep_requests import CHAT, MESSAGES, RESPONSES, assert_too_deep, deep_text

from .driver import Environ, Server, environ, json_headers, scripted, wrapped

ANSWER = b'{"never": "read"}'


@pytest.mark.parametrize("where", ["messages", "tools", "content"])
@pytest.mark.parametrize("path", [CHAT, RESPONSES, MESSAGES])
def test_a_body_1000_deep_is_a_400_and_the_app_never_runs(path: str, where: str) -> None:
    seen: list[Environ] = []
    app = scripted("200 OK", json_headers(ANSWER), [ANSWER], seen=seen)
    server = Server().run(wrapped(app), environ(deep_text(path, where, 1000), path=path))
    assert_too_deep(path, server.code, server.json())
    assert server.header("content-length") == [str(len(server.body))]
    assert seen == []
