"""A bad option is loud: it fails where it is written, or, under a framework that builds the
middleware lazily (FastAPI's `add_middleware`), when the server starts, with one clear message,
never as a 500 per request with a traceback each."""

from __future__ import annotations

import subprocess
import sys
import time

import httpx
import pytest
from pydantic import ValidationError

from tests.servers import ROOT, free_port
from toolcall_middleware import ToolCallConfig, ToolCallMiddleware

SAID = "toolcall-middleware: invalid configuration"


def test_a_bad_option_fails_where_it_is_written() -> None:
    with pytest.raises(ValidationError, match="did you mean 'hermes'"):
        ToolCallMiddleware(lambda *a: None, dialect="hermez")
    with pytest.raises(ValidationError, match="did you mean 'hermes'"):
        ToolCallConfig(dialect="hermez")


def test_strict_without_jsonschema_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema", None)  # what an install without the extra raises
    with pytest.raises(ValidationError, match=r"pip install 'toolcall-middleware\[strict\]'"):
        ToolCallMiddleware(lambda *a: None, dialect="hermes", strict=True)
    ToolCallMiddleware(lambda *a: None, dialect="hermes")  # the default needs no extra


def test_fastapis_lazy_middleware_fails_the_servers_start() -> None:
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "tests.asgi.misconfigured_app:app", "--port", str(port)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode != 0
    assert SAID in done.stderr and "did you mean 'hermes'" in done.stderr
    assert "Application startup failed" in done.stderr


def test_without_a_lifespan_each_request_says_why_and_it_is_logged_once() -> None:
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "tests.asgi.misconfigured_app:app", "--port", str(port)]
    proc = subprocess.Popen([*command, "--lifespan", "off"], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                answers = [httpx.post(base + "/v1/chat/completions", json={"messages": []}) for _ in range(3)]
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    for answer in answers:
        assert answer.status_code == 500
        # A short message: pydantic's text (its URL, its error count) stays in the server's log.
        assert answer.json()["error"]["message"] == f"{SAID}: the server's log names the option"
    assert "did you mean 'hermes'" in err
    assert err.count(SAID) == 1 and "Traceback" not in err


def test_one_route_prefix_given_as_a_string_is_one_prefix() -> None:
    """`route_prefixes="/api"` was read as four prefixes, "/", "a", "p", "i", and matched nothing."""
    config = ToolCallConfig(dialect="hermes", route_prefixes="/api", chat_routes="/v1/chat/completions")
    assert config.route_prefixes == ("/api",) and config.chat_routes == ("/v1/chat/completions",)
    found = config.route("/api/v1/chat/completions")
    assert found is not None and found.api == "chat"
