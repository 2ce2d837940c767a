"""The end-to-end tests' server helper (`tests.servers.running`): a server that writes more than a
pipe holds (a log line per request, for long enough) keeps serving, and one that fails to start
is reported with the end of what it wrote."""

from __future__ import annotations

import sys

import httpx
import pytest

from tests.servers import free_port, running, serve

# A server that writes 256 KiB (four times what a pipe holds) before it listens and with each
# answer, as a server logging every request at a verbose level ends up doing.
CHATTY = """
import http.server, sys
NOISE = ("x" * 1023 + "\\n") * 256
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        sys.stdout.write(NOISE); sys.stdout.flush()
        self.send_response(200); self.send_header("content-length", "2"); self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *args):
        sys.stderr.write(NOISE); sys.stderr.flush()
sys.stdout.write(NOISE); sys.stdout.flush()
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""

FAILING = """
import sys
sys.stdout.write(("x" * 1023 + "\\n") * 256)
sys.stderr.write("the reason it stopped\\n")
sys.exit(3)
"""


def test_a_server_that_writes_more_than_a_pipe_holds_keeps_serving() -> None:
    port = free_port()
    with serve([sys.executable, "-c", CHATTY, str(port)], port, timeout=10) as base:
        for _ in range(10):  # (each answer writes 512 KiB more)
            assert httpx.get(base + "/", timeout=5).text == "ok"


def test_a_server_that_fails_to_start_is_reported_with_its_last_output() -> None:
    port = free_port()
    with pytest.raises(RuntimeError, match="server exited early") as failed:
        with running([sys.executable, "-c", FAILING], port, timeout=10):
            pass
    message = str(failed.value)
    assert message.rstrip().endswith("the reason it stopped")
    assert len(message) < 70_000  # (the end of the output, not all 256 KiB of it)
