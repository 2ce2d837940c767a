"""Ready means ready: `serve`'s `/readyz` fails while its store cannot be reached (Redis down) or
its data directory cannot be written, and an unusable `--data-dir` stops `serve` at start.

Before, `/readyz` said ready in both cases, `serve --data-dir` on a path that cannot be a folder
started fine, and every Responses request then got a plain-text 500 with a traceback. Now a
store failure is a 503 in the API's shape (`store_unavailable`), which the openai SDK raises.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import openai
import pytest

from tests.served.test_proxy import running
from tests.served.test_store_serve import upstream
from tests.servers import ROOT, free_port
from tests.store.redis_server import redis_server

__all__ = ["upstream"]  # (a fixture)


def command(upstream: str, *flags: str) -> tuple[list[str], int]:
    port = free_port()
    base = [sys.executable, "-m", "toolcall_middleware.cli", "serve", "--upstream", upstream, "--port", str(port)]
    return [*base, "--dialect", "hermes", "--log-level", "warning", *flags], port


def test_an_unusable_data_dir_stops_serve_at_start(upstream: str, tmp_path: Path) -> None:
    in_the_way = tmp_path / "file"
    in_the_way.write_text("not a folder")
    argv, _ = command(upstream, "--data-dir", str(in_the_way / "state"))
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=30)
    assert done.returncode == 2
    assert "--data-dir" in done.stderr and str(in_the_way / "state") in done.stderr
    assert "Traceback" not in done.stderr


def test_a_data_dir_lost_while_running_is_not_ready_and_a_503(upstream: str, tmp_path: Path) -> None:
    folder = tmp_path / "data"
    argv, port = command(upstream, "--data-dir", str(folder))
    proc = running(argv, port)
    base = f"http://127.0.0.1:{port}"
    try:
        shutil.rmtree(folder)  # (before the store's first use: it opens its file lazily)
        folder.write_text("a file where the folder was")  # (a folder no store can be made in)
        client = openai.OpenAI(api_key="sk-test", base_url=base + "/v1", max_retries=0)
        with pytest.raises(openai.APIStatusError) as caught:
            client.responses.create(model="m", input="Hello.")
        ready = httpx.get(base + "/readyz", timeout=10)
        healthy = httpx.get(base + "/healthz", timeout=10)
        folder.unlink()
        assert httpx.get(base + "/readyz", timeout=10).status_code == 200  # (made again: ready again)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert ready.status_code == 503 and str(folder) in ready.json()["error"]
    assert healthy.status_code == 200  # liveness only
    assert caught.value.status_code == 503
    assert caught.value.response.json()["error"]["code"] == "store_unavailable"
    assert "Traceback" not in err


def test_readyz_fails_while_redis_is_down(upstream: str) -> None:
    with redis_server() as url:
        argv, port = command(upstream, "--store", url)
        proc = running(argv, port)
        base = f"http://127.0.0.1:{port}"
        try:
            up = httpx.get(base + "/readyz", timeout=10)
        except BaseException:
            proc.kill()
            raise
    try:
        down = httpx.get(base + "/readyz", timeout=20)
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    assert up.status_code == 200
    assert down.status_code == 503 and "store cannot be reached" in down.json()["error"]


def test_a_store_that_refuses_the_answer_is_a_503_and_the_record_says_so(upstream: str) -> None:
    """The record used to say the host's 200 while the client got the store's 503."""
    argv, port = command(upstream, "--store", "memory", "--store-max-bytes", "300", "--log-format", "json")
    argv[argv.index("warning")] = "info"
    proc = running(argv, port)
    try:
        client = openai.OpenAI(api_key="sk-test", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
        with pytest.raises(openai.APIStatusError) as caught:
            client.responses.create(model="m", input="Hello there, a response too large to store.")
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert caught.value.status_code == 503
    assert caught.value.response.json()["error"]["code"] == "store_unavailable"
    # Each line is one JSON object (`--log-format json`): the exchange's record has the client's status.
    [record] = [r for r in map(json.loads, err.splitlines()) if r["message"] == "exchange"]
    assert record["status"] == 503 and record["request_id"] == caught.value.response.headers["x-request-id"]
