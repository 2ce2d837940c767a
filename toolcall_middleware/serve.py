"""`toolcall-middleware serve`: the middleware in front of an upstream endpoint (or the demo model).

```
toolcall-middleware serve --upstream http://localhost:8000 --dialect qwen3_coder --port 8080
toolcall-middleware serve --config toolcall.toml --strict
toolcall-middleware serve --dialect kimi_k2          # no upstream: the built-in demo model
```

Every `ToolCallConfig` option is a flag (derived from the model's fields: `--strict`/`--no-strict`,
`--chat-routes PATH` repeated, `--model-dialects MODEL=DIALECT` repeated, the `limits` fields as
`--max-calls N`, …) and a key of the JSON or TOML `--config` file, beside the server's own keys
(`ServeOptions`: `upstream`, `host`, `port`, `timeout`, `workers`, `shutdown_timeout`, …). Flags
override the file. How the app is then run, and stopped, is `serve_workers`'s.
Every value is validated by the pydantic models; an error names the field and exits with status 2.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import sys
import types
import typing
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .config import ToolCallConfig
from .logs import LogFormat, line, log_config
from .otlp import ExportSpans, check_export
from .redact import redact

if typing.TYPE_CHECKING:
    from .upstream_routes import RouteMap, Served


class ServeOptions(BaseModel):
    """The server's own settings (the rest of the configuration is `ToolCallConfig`)."""

    # (an error never repeats the value given: the upstream URL may carry a password)
    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)

    upstream: str | None = Field(None, description="the endpoint to proxy to; none: serve the built-in demo model")
    host: str = Field("127.0.0.1", description="the address to listen on")
    port: int = Field(8080, ge=0, le=65535, description="the port to listen on")
    timeout: float = Field(10.0, gt=0, description="seconds to connect to the upstream before answering 504")
    read_timeout: float | None = Field(
        600.0, gt=0, description="seconds to wait for each upstream read before answering 504"
    )
    log_level: Literal["critical", "error", "warning", "info", "debug"] = Field(
        "info", description="the server's log level, and the middleware's"
    )
    data_dir: str | None = Field(
        None,
        description="where the default store (SQLite, state.db) lives; none: $XDG_DATA_HOME/toolcall-middleware "
        "or ~/.local/share/toolcall-middleware",
    )
    workers: int = Field(
        1, ge=1, description="worker processes serving the one port; they share the store (SQLite or Redis)"
    )
    shutdown_timeout: float = Field(
        25.0,
        gt=0,
        description="seconds a stop (SIGTERM) lets the answers under way finish; the rest end in the API's error",
    )


class ConfigError(ValueError):
    """A configuration value that failed validation; the message names the field."""


# -- flags derived from the models -----------------------------------------------------------


def _flat_fields(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, Any, str]]:
    """`(dotted field path, annotation, help)` for each field, nested models flattened; the help
    ends with the field's default where it has one to show."""
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from _flat_fields(annotation, f"{prefix}{name}.")
        else:
            default = field.get_default(call_default_factory=True)
            shown = ", ".join(map(str, default)) if isinstance(default, (tuple, frozenset)) else default
            suffix = f" (default: {shown})" if shown not in (None, "", {}) and not callable(shown) else ""
            yield f"{prefix}{name}", annotation, (field.description or "") + suffix


def _kind(annotation: Any) -> str:
    """How a field is given on the command line: `bool`, `list`, `map`, `value`, or `skip`."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    origin = typing.get_origin(annotation)
    if annotation is bool or (args == [bool] and origin is not None and origin is not Literal):
        return "bool"
    if origin in (tuple, frozenset, set, list):
        return "list"
    if origin is dict:
        return "map"
    union = origin in (typing.Union, types.UnionType)
    if union and len(args) == 1:
        return _kind(args[0])
    if origin is Literal or annotation in (str, int, float) or union:
        return "value" if "Callable" not in str(annotation) else "skip"
    return "skip"


def _choices(annotation: Any) -> str:
    for arg in (annotation, *typing.get_args(annotation)):
        if typing.get_origin(arg) is Literal:
            return " (" + ", ".join(map(str, typing.get_args(arg))) + ")"
    return ""


def add_model_flags(parser: argparse.ArgumentParser, model: type[BaseModel], title: str) -> None:
    """One flag per field of `model`: `--field-name`; nested models' fields by their own names."""
    group = parser.add_argument_group(title)
    for path, annotation, help_text in _flat_fields(model):
        kind = _kind(annotation)
        if kind == "skip":
            continue
        flag = "--" + path.rsplit(".", 1)[-1].replace("_", "-")
        help_text += _choices(annotation)
        if kind == "bool":
            group.add_argument(flag, dest=path, action=argparse.BooleanOptionalAction, default=None, help=help_text)
        elif kind == "list":
            group.add_argument(flag, dest=path, action="append", metavar="VALUE", help=help_text + " (repeatable)")
        elif kind == "map":
            group.add_argument(flag, dest=path, action="append", metavar="KEY=VALUE", help=help_text + " (repeatable)")
        else:
            group.add_argument(flag, dest=path, metavar=path.rsplit(".", 1)[-1].upper(), help=help_text)


def flag_values(args: argparse.Namespace, model: type[BaseModel]) -> dict[str, Any]:
    """The flags of `model` the command line gave, as a nested dict of field values."""
    out: dict[str, Any] = {}
    for path, annotation, _ in _flat_fields(model):
        value = getattr(args, path, None)
        if value is None:
            continue
        if _kind(annotation) == "map":
            pairs = [item.partition("=") for item in value]
            bad = [k for k, sep, _ in pairs if not sep]
            if bad:
                raise ConfigError(f"{path}: expected KEY=VALUE, got {bad[0]!r}")
            value = {k: v for k, _, v in pairs}
        *parents, leaf = path.split(".")
        target = out
        for parent in parents:
            target = target.setdefault(parent, {})
        target[leaf] = value
    return out


# -- the config file -------------------------------------------------------------------------


def load_config_file(path: str) -> dict[str, Any]:
    """A JSON or TOML file (by its suffix; TOML unless it ends in `.json`) as a dict."""
    file = Path(path)
    if file.suffix.lower() in (".yaml", ".yml"):
        raise ConfigError(f"--config {path}: a config file is TOML or JSON (.toml, .json), not YAML")
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"--config {path}: {e.strerror or e}") from None
    try:
        if file.suffix.lower() == ".json":
            value = json.loads(text)
        else:
            value = _toml_loads(text)
    except ValueError as e:
        kind = "JSON" if file.suffix.lower() == ".json" else "TOML"
        raise ConfigError(f"--config {path}: not valid {kind} (a config file is TOML or JSON): {e}") from None
    if not isinstance(value, dict):
        raise ConfigError(f"--config {path}: expected an object of options")
    return {k.replace("-", "_"): v for k, v in value.items()}


def _toml_loads(text: str) -> dict[str, Any]:
    name = "tomllib" if sys.version_info >= (3, 11) else "tomli"  # the `serve` extra installs tomli on 3.10
    try:
        toml = importlib.import_module(name)
    except ImportError:  # pragma: no cover - Python 3.10 without the extra
        raise ConfigError("TOML config files need tomli on Python 3.10: pip install tomli") from None
    value: dict[str, Any] = toml.loads(text)
    return value


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _describe(error: ValidationError) -> str:
    """Each problem on a line, named by its key in a config file and by its flag (a key no option
    has, which only a config file can give, by its key alone)."""
    lines = []
    for item in error.errors():
        key = ".".join(str(p) for p in item["loc"]) or "(options)"
        named = [str(p) for p in item["loc"] if not isinstance(p, int)]
        if named and item["type"] != "extra_forbidden":
            key += f" (--{named[-1].replace('_', '-')})"
        lines.append(f"{key}: {item['msg'].removeprefix('Value error, ')}")
    return "\n".join(lines)


def resolve(args: argparse.Namespace) -> tuple[ServeOptions, ToolCallConfig]:
    """The server options and middleware config from the config file and the flags (flags win)."""
    values = load_config_file(args.config) if args.config else {}
    serve_keys = set(ServeOptions.model_fields)
    file_serve = {k: v for k, v in values.items() if k in serve_keys}
    file_config = {k: v for k, v in values.items() if k not in serve_keys}
    problems: list[str] = []
    options: ServeOptions | None = None
    config: ToolCallConfig | None = None
    try:
        options = ServeOptions(**_merge(file_serve, flag_values(args, ServeOptions)))
    except ValidationError as e:
        problems.append(_describe(e))
    try:
        config = ToolCallConfig(**_merge(file_config, flag_values(args, ToolCallConfig)))
    except ValidationError as e:
        problems.append(_describe(e))
    except ValueError as e:  # an unknown dialect is reported by the registry, naming the dialects
        problems.append(f"dialect (--dialect): {e}")
    if options is None or config is None:
        raise ConfigError("\n".join(problems))
    return options, config


def build_app(
    options: ServeOptions, config: ToolCallConfig, routes: RouteMap | None = None, pinned: ToolCallConfig | None = None
) -> Any:
    """The ASGI app to serve: the middleware over the proxy, or over the demo model; with
    `GET /metrics` where prometheus-client is installed (a registry of its own). `routes`: what
    the upstream was found to serve (`learn_routes`), which the proxy keeps up to date, bridging
    anew what `pinned` (the configuration as given) leaves to probing."""
    pinned = pinned or config
    from .asgi import ToolCallMiddleware
    from .metrics import MetricsRoute, PrometheusMetrics, observers
    from .request_ids import RequestIds

    metrics: PrometheusMetrics | None = None
    try:
        metrics = PrometheusMetrics(registry=_fresh_registry())
    except ImportError:
        pass
    else:
        config = config.model_copy(update={"on_report": observers(config.on_report, metrics.observe)})
    if config.store is None:
        config = config.model_copy(update={"store": default_store(options)})
    app: Any
    if options.upstream:
        from .proxy import Guarded, ProxyApp

        proxy = ProxyApp(options.upstream, timeout=options.timeout, read_timeout=options.read_timeout, routes=routes)
        middleware = ToolCallMiddleware(proxy, config)
        if routes is not None:
            routes.on_change = lambda: rebridge(middleware, routes, pinned)
        store = middleware.store
        if store is not None:
            from .store.health import store_problem

            proxy.ready_checks.append(lambda: store_problem(store))  # `/readyz`: the store too
        app = Guarded(middleware)
    else:
        from .demo import DemoApp

        dialect = config.dialect if config.dialect not in (None, "auto") else "hermes"
        middleware = ToolCallMiddleware(DemoApp(dialect), config.model_copy(update={"dialect": dialect}))
        app = middleware
    app = RequestIds(app)  # every request with an id, forwarded upstream and on its answer
    if metrics is None:
        return app
    if middleware.state is not None:
        metrics.watch_state(middleware.state)  # the store's operations, the background jobs
    return MetricsRoute(app, metrics)


def default_store(options: ServeOptions) -> str:
    """`serve`'s store when none is named: one SQLite file under the data directory, which several
    `serve` processes on this machine can share."""
    if options.data_dir is not None:
        folder = Path(options.data_dir).expanduser()
    else:
        folder = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "toolcall-middleware"
    return f"sqlite:///{(folder / 'state.db').absolute()}"


def store_folder_problem(store: str) -> str | None:
    """Why a SQLite store's folder (the data directory, by default) cannot be used, or None."""
    if not store.startswith("sqlite://"):
        return None
    from .store.health import writable_folder

    path = Path(store.removeprefix("sqlite://").removeprefix("/")).expanduser()
    return writable_folder(path.parent)


def learn_routes(options: ServeOptions, config: ToolCallConfig) -> tuple[RouteMap, ToolCallConfig]:
    """Which API routes the upstream serves (`upstream_routes`), and the configuration with a
    missing Responses or Messages route bridged through Chat, unless `--bridge` chose."""
    from .proxy import ProxyApp
    from .upstream_routes import RouteMap, probe_sync

    url_for = ProxyApp(str(options.upstream)).url_for
    served = probe_sync(url_for, RouteMap.of(config), timeout=min(options.timeout, 5.0))
    return routes_from(served, config)


def routes_from(served: Served, config: ToolCallConfig) -> tuple[RouteMap, ToolCallConfig]:
    """The route map and the configuration for what the upstream was found to serve (a worker
    process gets them from what its parent probed, rather than probing again)."""
    from .upstream_routes import RouteMap, with_default_bridges

    config = with_default_bridges(config, served)
    routes = RouteMap.of(config)
    routes.served = served
    return routes, config


def rebridge(middleware: Any, routes: RouteMap, pinned: ToolCallConfig) -> None:
    """The upstream was found to serve other routes while running: the bridges the routes now
    call for, unless `--bridge` chose (`pinned`), and the routes in use with them."""
    from .upstream_routes import RouteMap, with_default_bridges

    config = with_default_bridges(pinned, routes.served)
    if config.bridge == middleware.config.bridge:
        return
    middleware.use_bridges(config.bridge)
    routes.in_use = RouteMap.of(config).in_use
    bridges = ", ".join(sorted(config.bridge)) or "none"
    logger = logging.getLogger("toolcall_middleware")
    logger.warning("toolcall-middleware: the upstream's routes changed; bridges now: %s", bridges)


def _fresh_registry() -> Any:
    from prometheus_client import CollectorRegistry

    return CollectorRegistry()


def log_to_stderr(level: str, log_format: LogFormat = "text") -> dict[str, Any]:
    """The middleware's log (one record per exchange at INFO, warnings) and uvicorn's on standard
    error at `level`, each line timestamped, as text or JSON (`logs`); the configuration, which
    uvicorn is given too."""
    from logging.config import dictConfig

    config = log_config(log_format, level)
    dictConfig(config)
    return config


def announce(text: str, log_format: LogFormat = "text") -> None:
    """A start-up line on standard error, written whatever the level, its URLs redacted (an
    upstream's or a store's credentials never reach a terminal or a log collector)."""
    print(line(redact(text), log_format), file=sys.stderr, flush=True)


def add_serve_command(sub: Any) -> None:
    p = sub.add_parser(
        "serve",
        help="serve the middleware in front of --upstream URL (or in front of the built-in demo model)",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    p.add_argument("--config", metavar="FILE", help="a JSON or TOML file of options (flags override it)")
    add_model_flags(p, ServeOptions, "server")
    add_model_flags(p, ToolCallConfig, "middleware (ToolCallConfig)")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        options, config = resolve(args)
    except ConfigError as e:
        print(redact(f"toolcall-middleware serve: invalid configuration:\n{e}"), file=sys.stderr)
        return 2
    store = config.store or default_store(options)
    problem = store_folder_problem(store) if not config.stateful_host else None
    if problem is not None:
        flag = "--store" if config.store else "--data-dir"
        print(redact(f"toolcall-middleware serve: {flag}: {problem}"), file=sys.stderr)
        return 2
    if options.workers > 1 and store == "memory" and not config.stateful_host:
        problem = "a store in memory is each worker's own: with --workers, use SQLite (the default) or Redis"
        print(f"toolcall-middleware serve: --store memory: {problem}", file=sys.stderr)
        return 2
    routes: RouteMap | None = None
    try:
        import uvicorn  # noqa: F401  (the `serve` extra: said here, before any start-up work)

        if config.tracing:
            check_export()  # (each server process exports its own: `ExportSpans`)

        given = config
        if options.upstream:
            routes, config = learn_routes(options, config)
        app = build_app(options, config, routes, pinned=given)
    except ImportError as e:
        extra = "" if "pip install" in str(e) else " (pip install 'toolcall-middleware[serve]')"
        print(f"toolcall-middleware serve: {e}{extra}", file=sys.stderr)
        return 2
    except ValueError as e:
        print(redact(f"toolcall-middleware serve: invalid configuration:\nupstream: {e}"), file=sys.stderr)
        return 2
    what = f"proxy to {options.upstream}" if options.upstream else "built-in demo model"
    fmt = config.log_format
    logging_config = log_to_stderr(options.log_level, fmt)
    processes = f" ({options.workers} worker processes)" if options.workers > 1 else ""
    address = f"http://{options.host}:{options.port}"
    announce(f"toolcall-middleware: {what}, dialect {config.dialect or 'by model'}, on {address}{processes}", fmt)
    if routes is not None:
        from .proxy import ProxyApp
        from .upstream_routes import route_map

        announce(route_map(config, routes, ProxyApp(str(options.upstream)).url_for), fmt)
    if store != "none" and not config.stateful_host:
        announce(f"toolcall-middleware: responses stored in {store}", fmt)
    from .serve_workers import run

    state = worker_state(options, given, routes.served if routes is not None else None)
    return run(ExportSpans(app) if config.tracing else app, options, state, logging_config)


def worker_state(options: ServeOptions, given: ToolCallConfig, served: Served | None) -> str:
    """What a worker process needs to build the app as this one did: the options, the
    configuration as given, and what the upstream was found to serve (probed once, here)."""
    config = given.model_dump(mode="json", exclude_defaults=True)
    return json.dumps({"options": options.model_dump(mode="json"), "config": config, "served": served})


def worker_app() -> Any:
    """The app of one `serve --workers` process, from what its parent resolved (`worker_state`,
    in the environment): uvicorn imports and calls it in each worker."""
    from .serve_workers import WORKER_STATE, Drained

    state = json.loads(os.environ[WORKER_STATE])
    options = ServeOptions(**state["options"])
    given = ToolCallConfig(**state["config"])
    log_to_stderr(options.log_level, given.log_format)
    if state["served"] is None:
        app = build_app(options, given)
    else:
        routes, config = routes_from(state["served"], given)
        app = build_app(options, config, routes, pinned=given)
    return Drained(ExportSpans(app) if given.tracing else app)  # (each worker exports its own spans)


__all__ = ["ConfigError", "ServeOptions", "add_serve_command", "build_app", "cmd_serve", "resolve"]
