"""A real `redis-server` on loopback for the store's tests, started and stopped by them.

CI installs it from Debian's packages (`.ci/run`); where it is missing the tests that need it are
skipped, unless `CI` is set, where that is a failure.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator

import pytest

from tests.servers import free_port


@contextlib.contextmanager
def redis_server(*, user: str | None = None, password: str | None = None) -> Iterator[str]:
    """Yield the URL of a fresh, empty, unsaved Redis; stop it after. With `user` and `password`,
    only that user may connect (Redis ACLs), and the URL carries them."""
    binary = shutil.which("redis-server")
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("redis-server is not installed (apt-get install -y redis-server)")
        pytest.skip("redis-server is not installed")
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        if user is not None and password is not None:
            command += ["--user", "default", "off", "--user", user, "on", f">{password}", "~*", "&*", "+@all"]
        proc = subprocess.Popen([*command, "--dir", folder], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 10
            while True:
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not start")
                time.sleep(0.05)
            credentials = f"{user}:{password}@" if user is not None and password is not None else ""
            yield f"redis://{credentials}127.0.0.1:{port}/0"
        finally:
            proc.terminate()
            proc.wait(timeout=10)
