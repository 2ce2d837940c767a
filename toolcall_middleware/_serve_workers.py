"""How `serve` runs its app under uvicorn: in this process, or in `--workers N` processes on one
port; and how it stops.

Workers: the parent binds the port and does the start-up work once (the configuration checked,
the upstream's routes probed, the start-up lines written); each worker, a fresh process (uvicorn
spawns them), builds the same app from what the parent resolved, handed over in the environment
(`WORKER_STATE`, `worker_state`) and read by `serve.worker_app`, the factory uvicorn imports. The workers share state
through the store (SQLite in WAL mode, or Redis), so a stored response, a conversation or a
background job is the same whichever worker a request lands on; each keeps its own background
jobs' leases up. uvicorn's parent restarts a worker that dies.

Stopping: on SIGTERM (or SIGINT) the server stops accepting at once (with workers, the parent
closes its own copy of the listening socket too: a new connection is refused rather than left in
the backlog), lets the answers under way finish for up to `--shutdown-timeout` seconds, then
cancels the rest, which the middleware ends in their API's error (`core._failure.ServerStopped`); the
app's lifespan shutdown follows (the proxy's connections, the store), and the command exits 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import shutil
import signal
import tempfile
import typing
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import Any

import uvicorn
from uvicorn.supervisors import Multiprocess

if typing.TYPE_CHECKING:
    from ._serve_options import ServeOptions
    from ._upstream_routes import Served
    from .config import ToolCallConfig

WORKER_STATE = "_TOOLCALL_SERVE_WORKER"  # (no `TOOLCALL_` prefix: not an option of its own)
WORKER_FACTORY = "toolcall_middleware._serve:worker_app"
STARTUP_FAILURE = 3  # uvicorn's exit status when the server could not start
SETTLE_SECONDS = 5.0  # how long the shutdown waits for cancelled requests to say so

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def run(app: Any, options: ServeOptions, state: str, log_config: dict[str, Any]) -> int:
    """Serve `app` until a signal stops it; the exit status. With workers, each builds its app
    from `state`, what this process resolved (`worker_state`). uvicorn's own lines follow
    `log_config` (`serve.log_to_stderr`), in each worker too."""
    own_headers = not options.upstream  # a proxy forwards the upstream's own `server` and `date`
    settings: dict[str, Any] = {
        "host": options.host,
        "port": options.port,
        "log_level": options.log_level,
        "log_config": log_config,
        "lifespan": "on",
        "server_header": own_headers,
        "date_header": own_headers,
        "timeout_graceful_shutdown": options.shutdown_timeout,
    }
    if options.workers > 1:
        os.environ[WORKER_STATE] = state
        with _metrics_folder():
            return _run_workers(uvicorn.Config(WORKER_FACTORY, factory=True, workers=options.workers, **settings))
    server = uvicorn.Server(uvicorn.Config(Drained(app), **settings))
    with _stop_is_orderly():
        server.run()
    return 0 if server.started else STARTUP_FAILURE


def worker_state(options: ServeOptions, given: ToolCallConfig, served: Served | None) -> str:
    """What a worker process needs to build the app as this one did: the options (their keys in
    the clear: the workers are this process's own children), the configuration as given, and what
    the upstream was found to serve (probed once, here)."""
    dumped = options.model_dump(mode="json")
    dumped["api_keys"] = [key.get_secret_value() for key in options.api_keys]
    upstream_key = options.upstream_api_key
    dumped["upstream_api_key"] = upstream_key.get_secret_value() if upstream_key is not None else None
    config = given.model_dump(mode="json", exclude_defaults=True)
    return json.dumps({"options": dumped, "config": config, "served": served})


class Drained:
    """`serve`'s app, whose lifespan shutdown waits for the requests still under way to end.

    uvicorn cancels the requests its shutdown grace did not see end, then at once sends the
    lifespan shutdown, which closes the proxy's connections and the store; a cancelled request
    is still writing its API's error (and a Responses stream storing its failed response): it
    must finish first, or its client's answer is cut off. A cancelled request then ends here,
    its client answered, rather than as a traceback in the log."""

    def __init__(self, app: Callable[[Any, Receive, Send], Awaitable[None]]) -> None:
        self.app = app
        self.under_way = 0

    async def __call__(self, scope: Any, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, self._settled_before_shutdown(receive), send)
            return
        self.under_way += 1
        try:
            await self.app(scope, receive, send)
        except asyncio.CancelledError:
            pass  # (only the end of the shutdown's grace cancels a request: nobody awaits it)
        finally:
            self.under_way -= 1

    def _settled_before_shutdown(self, receive: Receive) -> Receive:
        async def settled() -> Message:
            message = await receive()
            if message["type"] == "lifespan.shutdown":
                deadline = asyncio.get_running_loop().time() + SETTLE_SECONDS
                while self.under_way and asyncio.get_running_loop().time() < deadline:
                    await asyncio.sleep(0.01)
            return message

        return settled


@contextlib.contextmanager
def _metrics_folder() -> Iterator[None]:
    """The workers' metrics summed on `/metrics` (`metrics`' multiprocess mode): a folder of this
    run's own, named to them in `PROMETHEUS_MULTIPROC_DIR` (which a worker reads before it imports
    prometheus-client), removed when they have stopped. A folder the environment names already is
    used as it is, and left."""
    from .metrics import MULTIPROCESS_FOLDER

    if os.environ.get(MULTIPROCESS_FOLDER):
        yield
        return
    folder = tempfile.mkdtemp(prefix="toolcall-metrics-")
    os.environ[MULTIPROCESS_FOLDER] = folder
    try:
        yield
    finally:
        del os.environ[MULTIPROCESS_FOLDER]
        shutil.rmtree(folder, ignore_errors=True)


class Supervisor(Multiprocess):
    """uvicorn's supervisor of the workers, which also closes its own copy of the listening socket
    when it stops them (until every copy is closed, the port takes connections no worker accepts),
    and takes a dead worker's background gauges out of the metrics' sum."""

    def terminate_all(self) -> None:
        for sock in self.sockets:
            sock.close()
        super().terminate_all()

    def keep_subprocess_alive(self) -> None:
        before = {process.pid for process in self.processes}
        super().keep_subprocess_alive()
        gone = before - {process.pid for process in self.processes}
        from .metrics import MULTIPROCESS_FOLDER

        if gone and os.environ.get(MULTIPROCESS_FOLDER):
            try:
                from prometheus_client import multiprocess
            except ImportError:
                return
            for pid in gone:
                if pid is not None:
                    multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]


def _run_workers(config: uvicorn.Config) -> int:
    sock = config.bind_socket()
    # (older uvicorn releases give the supervisor the workers' entry point too)
    wants_target = "target" in inspect.signature(Multiprocess.__init__).parameters
    extra = {"target": uvicorn.Server(config).run} if wants_target else {}
    supervisor = Supervisor(config, sockets=[sock], **extra)
    supervisor.run()
    failed = any(getattr(p, "exitcode", None) == STARTUP_FAILURE for p in supervisor.processes)
    return STARTUP_FAILURE if failed else 0


@contextlib.contextmanager
def _stop_is_orderly() -> Iterator[None]:
    """uvicorn, once it has shut down on a signal, raises the signal again for its default action,
    which for SIGTERM ends the process with status 143: a SIGTERM is how `serve` is meant to be
    stopped (a container's stop, Kubernetes), and a stop that went as planned exits 0."""
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: None)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


__all__ = ["WORKER_STATE", "Drained", "run"]
