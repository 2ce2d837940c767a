"""`serve --api-key` and `--upstream-api-key`: the proxy's own keys, asked of the openai and
anthropic SDKs (Bearer on the OpenAI routes, `x-api-key` or Bearer on Messages, on a WebSocket
upgrade too), refused in each API's error shape; the probes left open; the upstream given its own
key in place of the client's; the store's tenant scope following the client's key; and no key
shown on any output surface."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from websockets.exceptions import InvalidStatus

from tests.served.test_no_secrets import ask
from tests.served.test_proxy import CHAT_TOOLS, QUESTION, RESPONSES_TOOLS, proxy
from tests.servers import ROOT, free_port, serve, uvicorn
from toolcall_middleware.proxy import ProxyApp

KEYS = ("k-one", "k-two")
UPSTREAM_KEY = "up-key"
WEATHER: Any = {"name": "get_weather", "input_schema": CHAT_TOOLS[0]["function"]["parameters"]}
MESSAGES: Any = [{"role": "user", "content": QUESTION}]


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    command, port = uvicorn("tests.served.keyed_upstream:app")
    with serve(["env", f"UPSTREAM_KEY={UPSTREAM_KEY}", *command], port) as base:
        yield base


@pytest.fixture(scope="module")
def keyed(upstream: str) -> Iterator[str]:
    flags = ["--dialect", "hermes", "--bridge", "messages-to-chat", "--upstream-api-key", UPSTREAM_KEY]
    with serve(*proxy(upstream, *flags, "--api-key", KEYS[0], "--api-key", KEYS[1])) as base:
        yield base


def openai_client(base: str, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base + "/v1", api_key=key, max_retries=0)


def test_openai_clients_need_one_of_the_keys(keyed: str) -> None:
    for key in KEYS:
        answer = openai_client(keyed, key).chat.completions.create(model="demo", messages=MESSAGES, tools=CHAT_TOOLS)
        calls = answer.choices[0].message.tool_calls or []
        assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [
            ("get_weather", {"city": "Paris"})
        ]
    with openai_client(keyed, KEYS[0]).responses.stream(model="demo", input=QUESTION, tools=RESPONSES_TOOLS) as events:
        assert [item.type for item in events.get_final_response().output] == ["reasoning", "function_call"]

    with pytest.raises(openai.AuthenticationError) as refused:
        openai_client(keyed, "k-three").chat.completions.create(model="demo", messages=MESSAGES)
    assert refused.value.status_code == 401 and refused.value.code == "invalid_api_key"
    assert refused.value.response.headers["x-should-retry"] == "false"  # the same key fails the same way
    with pytest.raises(openai.AuthenticationError):
        openai_client(keyed, "k-one-and-more").responses.create(model="demo", input=QUESTION, stream=True)

    # No key, and a key in a header the OpenAI routes do not read: refused before the body is read.
    body = {"model": "demo", "messages": MESSAGES}
    missing = httpx.post(keyed + "/v1/chat/completions", json=body)
    other_header = httpx.post(keyed + "/v1/chat/completions", json=body, headers={"x-api-key": KEYS[0]})
    for answer in (missing, other_header):
        assert answer.status_code == 401
        assert answer.json()["error"]["message"] == "No API key was given: send it as `Authorization: Bearer KEY`."
        assert answer.json()["error"]["type"] == "invalid_request_error"


def test_anthropic_clients_send_x_api_key_or_bearer(keyed: str) -> None:
    by_header = anthropic.Anthropic(base_url=keyed, api_key=KEYS[0], max_retries=0)
    by_bearer = anthropic.Anthropic(base_url=keyed, auth_token=KEYS[1], max_retries=0)
    for client in (by_header, by_bearer):
        message = client.messages.create(model="demo", max_tokens=200, messages=MESSAGES, tools=[WEATHER])
        used = [(block.name, block.input) for block in message.content if block.type == "tool_use"]
        assert used == [("get_weather", {"city": "Paris"})]
    wrong = anthropic.Anthropic(base_url=keyed, api_key="k-three", max_retries=0)
    with pytest.raises(anthropic.AuthenticationError) as refused:
        wrong.messages.create(model="demo", max_tokens=200, messages=MESSAGES)
    assert refused.value.status_code == 401
    assert refused.value.body == {
        "type": "error",
        "error": {"type": "authentication_error", "message": "The API key given is not one this server accepts."},
    }
    with pytest.raises(anthropic.AuthenticationError):
        wrong.messages.count_tokens(model="demo", messages=MESSAGES)


def test_the_probes_stay_open(keyed: str) -> None:
    assert httpx.get(keyed + "/healthz").status_code == 200
    assert httpx.get(keyed + "/readyz").status_code == 200
    assert "toolcall_exchanges" in httpx.get(keyed + "/metrics").text
    assert httpx.post(keyed + "/healthz").status_code == 401  # (only their GET: the rest goes upstream)
    assert httpx.get(keyed + "/v1/models").status_code == 401
    assert httpx.get(keyed + "/v1/models", headers={"x-api-key": KEYS[1]}).json()["data"][0]["id"] == "demo"


def test_a_websocket_needs_a_key(keyed: str) -> None:
    with pytest.raises(InvalidStatus) as refused:
        with openai_client(keyed, "k-three").responses.connect() as connection:
            connection.response.create(model="demo", input="Hi")
    assert refused.value.response.status_code == 401
    assert json.loads(refused.value.response.body)["error"]["code"] == "invalid_api_key"
    with openai_client(keyed, KEYS[0]).responses.connect() as connection:
        connection.response.create(model="demo", input="Hi", store=False)
        while (event := connection.recv()).type not in ("response.completed", "response.failed", "error"):
            pass
    assert event.type == "response.completed"


def test_the_upstream_gets_its_own_key(keyed: str, upstream: str) -> None:
    openai_client(keyed, KEYS[0]).chat.completions.create(model="demo", messages=MESSAGES)
    anthropic.Anthropic(base_url=keyed, api_key=KEYS[1], max_retries=0).messages.create(
        model="demo", max_tokens=50, messages=MESSAGES
    )
    seen = httpx.get(upstream + "/credentials").json()
    # (the start-up probes of the routes carry no credential: the upstream's 401 says a route is there)
    asked = [entry for entry in seen if len(entry) > 1]
    assert len([entry for entry in asked if entry["path"] == "/v1/chat/completions"]) >= 2  # (Messages bridged)
    assert all(entry == {"path": entry["path"], "authorization": f"Bearer {UPSTREAM_KEY}"} for entry in asked)
    assert not any(key in json.dumps(seen) for key in KEYS)


def test_the_store_scope_follows_the_key(keyed: str) -> None:
    made = openai_client(keyed, KEYS[0]).responses.create(model="demo", input="Hi", store=True)
    assert openai_client(keyed, KEYS[0]).responses.retrieve(made.id).id == made.id
    with pytest.raises(openai.NotFoundError):
        openai_client(keyed, KEYS[1]).responses.retrieve(made.id)  # the other key's tenant
    # The same key in the other header is the same tenant (the upstream's key is everyone's).
    again = httpx.get(f"{keyed}/v1/responses/{made.id}", headers={"x-api-key": KEYS[0]})
    assert again.status_code == 200 and again.json()["id"] == made.id


def test_with_credential_takes_the_form_of_the_upstream_api() -> None:
    proxy_app = ProxyApp("http://127.0.0.1:1", api_key="up")
    given = [(b"Authorization", b"Bearer client"), (b"X-Api-Key", b"client"), (b"accept", b"*/*")]
    assert proxy_app.with_credential(given, "/v1/messages") == [(b"accept", b"*/*"), (b"x-api-key", b"up")]
    assert proxy_app.with_credential(given, "/v1/messages/count_tokens")[-1] == (b"x-api-key", b"up")
    assert proxy_app.with_credential(given, "/v1/responses") == [(b"accept", b"*/*"), (b"authorization", b"Bearer up")]


PLANTED = "pl4nted"


def test_no_surface_shows_a_key(upstream: str, tmp_path: Path) -> None:
    """Keys from the environment (and one wrong upstream key, so the upstream refuses): no
    start-up line, log record, probe, metric or answer shows one."""
    keys = [f"{PLANTED}-client-1", f"{PLANTED}-client-2"]
    env = [f"TOOLCALL_API_KEYS={','.join(keys)}", f"TOOLCALL_UPSTREAM_API_KEY={PLANTED}-upstream"]
    command, port = proxy(upstream, "--dialect", "hermes", "--log-level", "debug", "--log-format", "json")
    log = tmp_path / "serve.log"
    seen: list[str] = []
    shell = "exec env " + shlex.join([*env, *command]) + " >" + shlex.quote(str(log)) + " 2>&1"
    with serve(["sh", "-c", shell], port) as base:
        for path in ("/healthz", "/readyz", "/metrics"):
            seen.append(httpx.get(base + path).text)
        for key in (keys[0], "wrong", None):
            headers = {"authorization": f"Bearer {key}"} if key else {}
            for stream in (False, True):
                body = {"model": "demo", "messages": MESSAGES, "tools": CHAT_TOOLS, "stream": stream}
                seen.append(ask_with(base, "/v1/chat/completions", body, headers))
                responses = {"model": "demo", "input": "Hi", "stream": stream}
                seen.append(ask_with(base, "/v1/responses", responses, headers))
        seen.append(ask(base, "/v1/messages", {"model": "demo", "max_tokens": 5, "messages": MESSAGES}))
    bad = [sys.executable, "-m", "toolcall_middleware.cli", "serve", "--port", str(free_port())]
    refused = subprocess.run(  # keys with spaces around them: refused, and not repeated
        ["env", *env, *bad, "--api-key", f" {PLANTED}", "--upstream-api-key", f"{PLANTED} "],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 2 and "api_keys" in refused.stderr and "upstream_api_key" in refused.stderr
    everything = "\n".join([log.read_text(), refused.stdout, refused.stderr, *seen])
    assert PLANTED not in everything, [line for line in everything.splitlines() if PLANTED in line][:5]
    assert "clients send one of 2 API keys; the upstream gets its own key" in everything
    assert '"status": 401' in everything or "invalid_api_key" in everything


def ask_with(base: str, path: str, body: dict[str, Any], headers: dict[str, str]) -> str:
    answer = httpx.post(base + path, json=body, headers=headers, timeout=20)
    return f"{answer.status_code} {answer.headers} {answer.text}"
