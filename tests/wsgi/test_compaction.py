"""POST /v1/responses/compact through the WSGI middleware: the Flask example under gunicorn, a
host without compaction, compacted by the official SDK and continued from the compacted window."""

from __future__ import annotations

import json

import httpx
import pytest
from openai import OpenAI

from tests import servers
from tests.asgi.test_compaction import DEPTH_LIMIT, SUMMARY, summary_answer
from toolcall_middleware.core.apis.responses._compaction import unseal

from .driver import RESPONSES, Environ, Server, environ, json_headers, scripted, wrapped

HISTORY = [
    {"role": "user", "content": "Remember the code word: slate."},
    {"role": "assistant", "content": "OK."},
]
COMPACT = "/v1/responses/compact"


def test_a_flask_host_compacts_and_continues_under_gunicorn() -> None:
    command, port = servers.gunicorn("examples.flask_app:app")
    with servers.serve(command, port) as base:
        client = OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
        compacted = client.responses.compact(model="qwen3", input=HISTORY)  # type: ignore[arg-type]
        *users, item = compacted.output
        assert compacted.object == "response.compaction" and item.type == "compaction"
        assert [u.content[0].text for u in users] == ["Remember the code word: slate."]  # type: ignore[union-attr]
        window = [i.model_dump(exclude_none=True, warnings=False) for i in compacted.output]
        response = client.responses.create(model="qwen3", input=[*window, {"role": "user", "content": "Go on."}])
        assert response.status == "completed"
        missing = httpx.post(base + "/v1/responses/compact", json={"input": "Hi"})
        assert missing.status_code == 400 and missing.json()["error"]["param"] == "model"


@pytest.mark.parametrize("levels", [DEPTH_LIMIT, DEPTH_LIMIT + 1])
def test_a_summary_answer_deeper_than_max_depth_is_a_502(levels: int) -> None:
    """As through the ASGI middleware (tests/asgi/test_compaction.py): the summary answer is read
    within `limits.max_depth`, and one level deeper is no summary."""
    answer = summary_answer(levels)
    seen: list[Environ] = []
    host = scripted("200 OK", json_headers(answer), [answer], seen=seen)
    body = json.dumps({"model": "qwen3", "input": HISTORY}).encode()
    server = Server().run(wrapped(host, limits={"max_depth": DEPTH_LIMIT}), environ(body, path=COMPACT))
    assert [env["PATH_INFO"] for env in seen] == [RESPONSES]
    if levels <= DEPTH_LIMIT:
        assert server.code == 200 and unseal(server.json()["output"][-1]["encrypted_content"]) == SUMMARY
    else:
        assert server.code == 502 and "was not a response" in server.json()["error"]["message"]
