"""POST /v1/responses/compact through the WSGI middleware: the Flask example under gunicorn, a
host without compaction, compacted by the official SDK and continued from the compacted window."""

from __future__ import annotations

import httpx
from openai import OpenAI

from tests import servers

HISTORY = [
    {"role": "user", "content": "Remember the code word: slate."},
    {"role": "assistant", "content": "OK."},
]


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
