"""How `serve` runs its app under uvicorn: in this process, or in `--workers N` processes on one
port; and how it stops.

Workers: the parent binds the port and does the start-up work once (the configuration checked,
the upstream's routes probed, the start-up lines written); each worker, a fresh process (uvicorn
spawns them), builds the same app from what the parent resolved, handed over in the environment
(`WORKER_STATE`) and read by `worker_app`, the factory uvicorn imports. The workers share state
through the store (SQLite in WAL mode, or Redis), so a stored response, a conversation or a
background job is the same whichever worker a request lands on; each keeps its own background
jobs' leases up. uvicorn's parent restarts a worker that dies.

Stopping: on SIGTERM (or SIGINT) the server stops accepting at once (with workers, the parent
closes its own copy of the listening socket too: a new connection is refused rather than left in
the backlog), lets the answers under way finish for up to `--shutdown-timeout` seconds, then
cancels the rest, which the middleware ends in their API's error (`exchange.ServerStopped`); the
app's lifespan shutdown follows (the proxy's connections, the store), and the command exits 0.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import signal
from collections.abc import Iterator
from typing import Any

import uvicorn
from uvicorn.supervisors import Multiprocess

from .config import ToolCallConfig
from .serve import ServeOptions, build_app, log_to_stderr, routes_from

WORKER_STATE = "_TOOLCALL_SERVE_WORKER"  # (no `TOOLCALL_` prefix: not an option of its own)
STARTUP_FAILURE = 3  # uvicorn's exit status when the server could not start


def run(app: Any, options: ServeOptions, config: ToolCallConfig, served: dict[str, Any] | None) -> int:
    """Serve `app` (built from `options` and `config`, the configuration as given, and `served`,
    the routes the upstream was found to serve) until a signal stops it; the exit status."""
    own_headers = not options.upstream  # a proxy forwards the upstream's own `server` and `date`
    settings: dict[str, Any] = {
        "host": options.host,
        "port": options.port,
        "log_level": options.log_level,
        "lifespan": "on",
        "server_header": own_headers,
        "date_header": own_headers,
        "timeout_graceful_shutdown": options.shutdown_timeout,
    }
    if options.workers > 1:
        os.environ[WORKER_STATE] = json.dumps(
            {
                "options": options.model_dump(mode="json"),
                "config": config.model_dump(mode="json", exclude_defaults=True),
                "served": served,
            }
        )
        return _run_workers(uvicorn.Config(f"{__name__}:worker_app", factory=True, workers=options.workers, **settings))
    server = uvicorn.Server(uvicorn.Config(app, **settings))
    with _stop_is_orderly():
        server.run()
    return 0 if server.started else STARTUP_FAILURE


def worker_app() -> Any:
    """The app of one worker process, from what its parent resolved (uvicorn calls it there)."""
    state = json.loads(os.environ[WORKER_STATE])
    options = ServeOptions(**state["options"])
    given = ToolCallConfig(**state["config"])
    log_to_stderr(options.log_level)
    if state["served"] is None:
        return build_app(options, given)
    routes, config = routes_from(state["served"], given)
    return build_app(options, config, routes, pinned=given)


class Supervisor(Multiprocess):
    """uvicorn's supervisor of the workers, which also closes its own copy of the listening socket
    when it stops them: until every copy is closed, the port takes connections no worker accepts."""

    def terminate_all(self) -> None:
        for sock in self.sockets:
            sock.close()
        super().terminate_all()


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


__all__ = ["WORKER_STATE", "run", "worker_app"]
