"""Real servers on loopback for end-to-end tests: started in a subprocess, stopped after."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import httpx

ROOT = Path(__file__).parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve(command: list[str], port: int, *, timeout: float = 20.0) -> Iterator[str]:
    """Run a server command until it answers on `port`; yield its base URL; stop it."""
    with running(command, port, timeout=timeout) as (_, base):
        yield base


class Output:
    """A server's output (standard output and error together), read as it comes so that a chatty
    server never blocks on a full pipe, its last `limit` bytes kept to say why a server failed."""

    def __init__(self, stream: IO[bytes], limit: int = 64 * 1024) -> None:
        self.limit = limit
        self._kept = bytearray()
        self._lock = threading.Lock()
        self._stream = stream
        self._reader = threading.Thread(target=self._drain, name="server-output", daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        fd = self._stream.fileno()
        while chunk := os.read(fd, 65536):
            with self._lock:
                self._kept += chunk
                del self._kept[: max(0, len(self._kept) - self.limit)]

    def text(self, *, wait: float = 0.0) -> str:
        """The output kept so far (after waiting up to `wait` seconds for the server's last)."""
        self._reader.join(wait)
        with self._lock:
            return self._kept.decode(errors="replace")


_OUTPUTS: dict[int, Output] = {}


def output_of(proc: subprocess.Popen[bytes]) -> Output:
    """The output of a process `running` started (its stdout is read there, never by a test)."""
    return _OUTPUTS[proc.pid]


@contextlib.contextmanager
def running(
    command: list[str], port: int, *, timeout: float = 20.0, env: dict[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """`serve`, yielding the process too (for a test that kills it). `env`: the variables it runs
    with, this process's by default. The process's output is read all along (`Output`), and its
    end is in the error when it fails to start."""
    env = {**(os.environ if env is None else env), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    output = _OUTPUTS[proc.pid] = Output(proc.stdout)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited early:\n{output.text(wait=5)}")
            try:
                httpx.get(base + "/", timeout=0.5)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{command} did not answer on {port}:\n{output.text()}") from None
                time.sleep(0.1)
        yield proc, base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def uvicorn(app: str) -> tuple[list[str], int]:
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port)]
    return [*command, "--log-level", "warning"], port


def gunicorn(app: str, *, threads: int = 4) -> tuple[list[str], int]:
    """A WSGI app under gunicorn's threaded worker (the sync worker cuts long streams at its timeout)."""
    port = free_port()
    command = [sys.executable, "-m", "gunicorn", app, "--bind", f"127.0.0.1:{port}", "--threads", str(threads)]
    return [*command, "--workers", "1", "--log-level", "warning"], port


def hypercorn(app: str) -> tuple[list[str], int]:
    port = free_port()
    return [sys.executable, "-m", "hypercorn", app, "--bind", f"127.0.0.1:{port}", "--log-level", "warning"], port
