"""`ToolCallMiddleware` in process, under uvicorn run with `--timeout-graceful-shutdown`: a
stream of ours that the server cancels when the grace runs out ends in the API's error (the
openai SDK raises it), never cut off mid-answer as if the connection had merely dropped."""

from __future__ import annotations

import signal
import time
from typing import Any

import openai
import pytest

from tests.served.test_serve_shutdown import STOPPED
from tests.served.test_store_jobs import LONG
from tests.servers import running, uvicorn


def test_a_stream_the_server_cancels_ends_in_the_api_error() -> None:
    command, port = uvicorn("tests.store.hosts:native")
    with running([*command, "--timeout-graceful-shutdown", "1"], port) as (proc, base):
        client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0, timeout=30)
        chunks: list[Any] = []
        with pytest.raises(openai.APIError) as caught:
            for chunk in client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": LONG}], stream=True
            ):
                chunks.append(chunk)
                if len(chunks) == 3:
                    proc.send_signal(signal.SIGTERM)
                    signalled = time.monotonic()
        assert STOPPED in caught.value.message
        assert time.monotonic() - signalled < 4  # (the grace, not the 7 s the stream would take)
        assert not [c for c in chunks if c.choices and c.choices[0].finish_reason == "stop"]
