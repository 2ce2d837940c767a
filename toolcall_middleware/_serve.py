"""`toolcall-middleware serve`: the middleware in front of an upstream endpoint (or the demo model).

```
toolcall-middleware serve --upstream http://localhost:8000 --dialect qwen3_coder --port 8080
toolcall-middleware serve --config toolcall.toml --strict
toolcall-middleware serve --dialect kimi_k2          # no upstream: the built-in demo model
```

Every `ToolCallConfig` option is a flag (derived from the model's fields: `--strict`/`--no-strict`,
`--chat-routes PATH` repeated, `--model-dialects MODEL=DIALECT` repeated, the `limits` fields as
`--max-calls N`, …) and a key of the JSON or TOML `--config` file, beside the server's own keys
(`serve_options.ServeOptions`: `upstream`, `host`, `port`, `timeout`, `workers`, `shutdown_timeout`, …), and an
environment variable, `TOOLCALL_` and the option's name (`TOOLCALL_UPSTREAM`, `TOOLCALL_MAX_CALLS`:
see `env.py`). Flags override the environment, which overrides the file. Every value is validated
by the pydantic models; an error names the field, and the flag or variable that gave it, and exits
with status 2. How the app is then run, and stopped, is `serve_workers`'s.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import json
import logging
import os
import sys
import typing
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from ._env import PREFIX, env_values, kind, merge, nest, settable, unknown_variables
from ._otlp import ExportSpans, check_export
from ._serve_options import ServeOptions
from .config import ToolCallConfig
from .logs import LogFormat, line, log_config
from .redact import redact

if typing.TYPE_CHECKING:
    from ._upstream_routes import RouteMap, Served


class ConfigError(ValueError):
    """A configuration value that failed validation; the message names the field."""


# -- flags derived from the models -----------------------------------------------------------


def _choices(annotation: Any) -> str:
    for arg in (annotation, *typing.get_args(annotation)):
        if typing.get_origin(arg) is Literal:
            return " (" + ", ".join(map(str, typing.get_args(arg))) + ")"
    return ""


def add_model_flags(parser: argparse.ArgumentParser, model: type[BaseModel], title: str) -> None:
    """One flag per option of `model` (`env.flat_fields`: `--field-name`, nested models' fields by
    their own names), its help naming its environment variable."""
    group = parser.add_argument_group(title)
    for option in settable(model):
        how = kind(option.annotation)
        repeated = " (repeatable)" if how in ("list", "map") else ""
        help_text = f"{option.help}{_choices(option.annotation)}{repeated} [env: {option.env}]"
        if how == "bool":
            action = argparse.BooleanOptionalAction
            group.add_argument(option.flag, dest=option.path, action=action, default=None, help=help_text)
        elif repeated:
            metavar = "KEY=VALUE" if how == "map" else "VALUE"
            group.add_argument(option.flag, dest=option.path, action="append", metavar=metavar, help=help_text)
        else:
            metavar = option.path.rsplit(".", 1)[-1].upper()
            group.add_argument(option.flag, dest=option.path, metavar=metavar, help=help_text)


def flag_values(args: argparse.Namespace, model: type[BaseModel]) -> dict[str, Any]:
    """The flags of `model` the command line gave, as a nested dict of field values."""
    out: dict[str, Any] = {}
    for option in settable(model):
        value = getattr(args, option.path, None)
        if value is None:
            continue
        if kind(option.annotation) == "map":
            pairs = [item.partition("=") for item in value]
            bad = [k for k, sep, _ in pairs if not sep]
            if bad:
                raise ConfigError(f"{option.path}: expected KEY=VALUE, got {bad[0]!r}")
            value = {k: v for k, _, v in pairs}
        out[option.path] = value
    return nest(out)


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


def _describe(error: ValidationError, model: type[BaseModel], from_env: set[str]) -> str:
    """Each problem on a line, named by its key in a config file and by where an option is given:
    its environment variable when the value came from there (`from_env`: the fields it set that
    no flag did), else its flag (a key no option has, which only a config file can give, by its
    key alone)."""
    options = {option.path.rsplit(".", 1)[-1]: option for option in settable(model)}
    lines = []
    for item in error.errors():
        key = ".".join(str(p) for p in item["loc"]) or "(options)"
        named = [str(p) for p in item["loc"] if not isinstance(p, int)]
        option = options.get(named[-1]) if named and item["type"] != "extra_forbidden" else None
        if option is not None:
            key += f" ({option.env if option.path in from_env else option.flag})"
        lines.append(f"{key}: {item['msg'].removeprefix('Value error, ')}")
    return "\n".join(lines)


def _given(model: type[BaseModel], file: dict[str, Any], args: argparse.Namespace) -> tuple[dict[str, Any], set[str]]:
    """The values of `model`'s options: the config file's, the environment's over them, the
    flags' over both; and the options whose value the environment gave."""
    from_env, flags = env_values(model), flag_values(args, model)
    return merge(merge(file, from_env), flags), _set_in(model, from_env) - _set_in(model, flags)


def _set_in(model: type[BaseModel], values: dict[str, Any]) -> set[str]:
    """The paths of the options of `model` that nested `values` set."""
    out = set()
    for option in settable(model):
        *parents, leaf = option.path.split(".")
        found: Any = values
        for parent in parents:
            found = found.get(parent, {})
        if leaf in found:
            out.add(option.path)
    return out


def resolve(args: argparse.Namespace) -> tuple[ServeOptions, ToolCallConfig]:
    """The server options and middleware config from the config file, the environment
    (`TOOLCALL_<OPTION>`) and the flags, each over the one before."""
    path = args.config or os.environ.get("TOOLCALL_CONFIG")  # (the file is no option: read here)
    values = load_config_file(path) if path else {}
    serve_keys = set(ServeOptions.model_fields)
    file_serve = {k: v for k, v in values.items() if k in serve_keys}
    file_config = {k: v for k, v in values.items() if k not in serve_keys}
    problems: list[str] = []
    options: ServeOptions | None = None
    config: ToolCallConfig | None = None
    try:
        given, from_env = _given(ServeOptions, file_serve, args)
        options = ServeOptions(**given)
    except ValidationError as e:
        problems.append(_describe(e, ServeOptions, from_env))
    except ValueError as e:  # a variable that no option can read (`env_values`)
        problems.append(str(e))
    try:
        given, from_env = _given(ToolCallConfig, file_config, args)
        config = ToolCallConfig(**given)
    except ValidationError as e:
        problems.append(_describe(e, ToolCallConfig, from_env))
    except ValueError as e:  # a variable no option can read; an unknown dialect, named by the registry
        problems.append(str(e) if str(e).startswith(PREFIX) else f"dialect (--dialect): {e}")
    if options is None or config is None:
        raise ConfigError("\n".join(problems))
    return options, config


def build_app(
    options: ServeOptions, config: ToolCallConfig, routes: RouteMap | None = None, pinned: ToolCallConfig | None = None
) -> Any:
    """The ASGI app to serve: the middleware over the proxy, or over the demo model; with
    `GET /metrics` where prometheus-client is installed (a registry of its own), and the other
    routes behind `api_keys` when there are any (`api_keys.ApiKeys`). `routes`: what
    the upstream was found to serve (`learn_routes`), which the proxy keeps up to date, bridging
    anew what `pinned` (the configuration as given) leaves to probing."""
    pinned = pinned or config
    from ._middleware import ToolCallMiddleware
    from ._request_ids import RequestIds
    from .metrics import MetricsRoute, PrometheusMetrics, observers

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

        upstream_key = options.upstream_api_key.get_secret_value() if options.upstream_api_key else None
        proxy = ProxyApp(
            options.upstream,
            timeout=options.timeout,
            read_timeout=options.read_timeout,
            routes=routes,
            api_key=upstream_key,
        )
        middleware = ToolCallMiddleware(proxy, config)
        if routes is not None:
            routes.on_change = lambda: rebridge(middleware, routes, pinned)
        store = middleware.store
        if store is not None:
            from .store._health import store_problem

            proxy.ready_checks.append(lambda: store_problem(store))  # `/readyz`: the store too
        app = Guarded(middleware)
    else:
        from .demo import DemoApp

        dialect = config.dialect if config.dialect not in (None, "auto") else "hermes"
        middleware = ToolCallMiddleware(DemoApp(dialect), config.model_copy(update={"dialect": dialect}))
        app = middleware
    if options.api_keys:  # checked first: nothing else runs for a request without a key
        from ._api_keys import ApiKeys

        app = ApiKeys(app, [key.get_secret_value() for key in options.api_keys], config.route_kind)
    app = RequestIds(app)  # every request with an id (a refused one too), forwarded upstream and on its answer
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
    from .store._health import writable_folder

    path = Path(store.removeprefix("sqlite://").removeprefix("/")).expanduser()
    return writable_folder(path.parent)


def learn_routes(options: ServeOptions, config: ToolCallConfig) -> tuple[RouteMap, ToolCallConfig]:
    """Which API routes the upstream serves (`upstream_routes`), and the configuration with a
    missing Responses or Messages route bridged through Chat, unless `--bridge` chose."""
    from ._upstream_routes import RouteMap, probe_sync
    from .proxy import ProxyApp

    url_for = ProxyApp(str(options.upstream)).url_for
    served = probe_sync(url_for, RouteMap.of(config), timeout=min(options.timeout, 5.0))
    return routes_from(served, config)


def routes_from(served: Served, config: ToolCallConfig) -> tuple[RouteMap, ToolCallConfig]:
    """The route map and the configuration for what the upstream was found to serve (a worker
    process gets them from what its parent probed, rather than probing again)."""
    from ._upstream_routes import RouteMap, with_default_bridges

    config = with_default_bridges(config, served)
    routes = RouteMap.of(config)
    routes.served = served
    return routes, config


def rebridge(middleware: Any, routes: RouteMap, pinned: ToolCallConfig) -> None:
    """The upstream was found to serve other routes while running: the bridges the routes now
    call for, unless `--bridge` chose (`pinned`), and the routes in use with them."""
    from ._upstream_routes import RouteMap, with_default_bridges

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


ENVIRONMENT = (
    "Every option is also read from the environment variable named in its help, TOOLCALL_ and the "
    "option's name (TOOLCALL_UPSTREAM, TOOLCALL_MAX_CALLS, TOOLCALL_API_KEYS): flags override the "
    "environment, which overrides the --config file. A list is comma-separated or a JSON array; a map "
    "comma-separated KEY=VALUE pairs or a JSON object."
)


def add_serve_command(sub: Any) -> None:
    p = sub.add_parser(
        "serve",
        help="serve the middleware in front of --upstream URL (or in front of the built-in demo model)",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog=ENVIRONMENT,
    )
    p.add_argument(
        "--config", metavar="FILE", help="a JSON or TOML file of options (flags override it) [env: TOOLCALL_CONFIG]"
    )
    add_model_flags(p, ServeOptions, "server")
    add_model_flags(p, ToolCallConfig, "middleware (ToolCallConfig)")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    for name in unknown_variables(ServeOptions, ToolCallConfig, environ=os.environ):
        known = [o.env for model in (ServeOptions, ToolCallConfig) for o in settable(model)]
        near = difflib.get_close_matches(name.upper(), known, n=1)
        hint = f" (did you mean {near[0]}?)" if near else ""
        announce(f"toolcall-middleware: warning: {name} is set, but no option reads it{hint}")
    try:
        options, config = resolve(args)
    except ImportError as e:
        print(f"toolcall-middleware serve: {e}", file=sys.stderr)
        return 2
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
        from ._upstream_routes import route_map
        from .proxy import ProxyApp

        announce(route_map(config, routes, ProxyApp(str(options.upstream)).url_for), fmt)
    if store != "none" and not config.stateful_host:
        announce(f"toolcall-middleware: responses stored in {store}", fmt)
    if options.api_keys or options.upstream_api_key:  # (how many, never which)
        asked = f"clients send one of {len(options.api_keys)} API keys" if options.api_keys else "no key asked"
        sent = "; the upstream gets its own key" if options.upstream_api_key else ""
        announce(f"toolcall-middleware: {asked}{sent}", fmt)
    from ._serve_workers import run, worker_state

    state = worker_state(options, given, routes.served if routes is not None else None)
    return run(ExportSpans(app) if config.tracing else app, options, state, logging_config)


def worker_app() -> Any:
    """The app of one `serve --workers` process, from what its parent resolved
    (`serve_workers.worker_state`, in the environment): uvicorn imports and calls it in each worker."""
    from ._serve_workers import WORKER_STATE, Drained

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


__all__ = ["ConfigError", "add_serve_command", "build_app", "cmd_serve", "resolve"]
