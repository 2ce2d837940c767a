"""The two lines of logging configuration docs/observability.md shows make the exchange records
visible in process, on standard error, under uvicorn and under gunicorn (its uvicorn worker for an
ASGI app, its threaded worker for a WSGI app), each server at its own `--log-level warning`; and
in process too, the request id the client sent comes back and is on the line (one made when it
sent none is on the line alone)."""

from __future__ import annotations

import contextlib
import re
import shlex
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from tests.docs_snippets import ROOT, blocks
from tests.servers import gunicorn, serve, uvicorn

# The page's block, as written: the test runs the servers with it, not with a copy.
LINES = next(b.code for b in blocks(ROOT / "docs" / "observability.md") if "basicConfig" in b.code)
TOOLS: Any = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
ASK: Any = [{"role": "user", "content": "What is the weather in Paris?"}]


def gunicorn_asgi(app: str) -> tuple[list[str], int]:
    command, port = gunicorn(app)
    return [*command, "--worker-class", "uvicorn.workers.UvicornWorker"], port


# server: (the example app it runs, its command)
SERVERS: dict[str, tuple[str, Callable[[str], tuple[list[str], int]]]] = {
    "uvicorn": ("examples.fastapi_app", uvicorn),
    "gunicorn-uvicorn-worker": ("examples.fastapi_app", gunicorn_asgi),
    "gunicorn-wsgi": ("examples.flask_app", gunicorn),
}


@contextlib.contextmanager
def logged(server: str, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The example app of `server`, its module starting with the page's lines; its base URL and
    the file its standard error goes to."""
    example, command_for = SERVERS[server]
    (tmp_path / "logged_app.py").write_text(f"{LINES}\nfrom {example} import app  # noqa: E402,F401\n")
    command, port = command_for("logged_app:app")
    log = tmp_path / "stderr.log"
    shell = "exec " + shlex.join(command) + " 2>" + shlex.quote(str(log))
    with serve(["env", f"PYTHONPATH={tmp_path}:{ROOT}", "sh", "-c", shell], port) as base:
        yield base, log


@pytest.mark.parametrize("server", list(SERVERS))
def test_the_docs_lines_show_the_records_with_their_request_ids(server: str, tmp_path: Path) -> None:
    with logged(server, tmp_path) as (base, log):
        client = openai.OpenAI(base_url=base + "/v1", api_key="test", max_retries=0)
        kept = client.chat.completions.with_raw_response.create(
            model="m", messages=ASK, tools=TOOLS, extra_headers={"x-request-id": "in-process-1"}
        )
        made = client.chat.completions.with_raw_response.create(model="m", messages=ASK, tools=TOOLS)
        for _ in range(50):  # (the record is written as the answer ends)
            if log.read_text().count("toolcall-middleware exchange") >= 2:
                break
            time.sleep(0.1)
        err = log.read_text()
    assert kept.parse().choices[0].message.tool_calls
    assert kept.headers["x-request-id"] == "in-process-1"  # the client's id, echoed
    assert made.parse().choices[0].message.tool_calls and "x-request-id" not in made.headers
    lines = [line for line in err.splitlines() if "toolcall-middleware exchange" in line]
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO toolcall_middleware "
    record = stamp + r"toolcall-middleware exchange chat POST /v1/chat/completions 200 rewritten .* id="
    assert len(lines) == 2 and re.fullmatch(record + "in-process-1", lines[0])
    assert re.fullmatch(record + "[0-9a-f]{32}", lines[1])  # none sent: one made for the record
