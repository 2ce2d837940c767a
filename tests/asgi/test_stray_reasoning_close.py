"""A closing reasoning marker with no opening one never reaches the client (the rule and every
dialect: `tests/core/test_stray_reasoning_close.py`). Real uvicorn and the openai SDK's stream
helper, the host writing the marker split across its chunks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.servers import serve, uvicorn


@pytest.fixture(scope="module")
def client() -> Iterator[openai.OpenAI]:
    command, port = uvicorn("tests.asgi.failing_app:app")  # writes the user's message as its answer (hermes)
    with serve(command, port) as base:
        yield openai.OpenAI(api_key="none", base_url=base + "/v1", max_retries=0)


def test_served_a_stray_close_never_reaches_the_client(client: openai.OpenAI) -> None:
    # (`END:` makes the host end cleanly; it writes the text in pieces of 4: `</th`, `ink>`)
    messages: Any = [{"role": "user", "content": "END:" + "Let me add.</think>The answer is 4."}]
    with client.chat.completions.stream(model="m", messages=messages) as stream:
        deltas = [e.delta for e in stream if e.type == "content.delta"]
        completion = stream.get_final_completion()
    message = completion.choices[0].message
    assert message.content == "Let me add.The answer is 4."
    assert "".join(deltas) == message.content and "</think>" not in "".join(deltas)
    assert completion.choices[0].finish_reason == "stop"
