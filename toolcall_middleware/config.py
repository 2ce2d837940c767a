"""`ToolCallConfig`: every option of the middleware, validated once, at construction.

Keyword arguments to `ToolCallMiddleware(app, **options)` (and `add_middleware`) map onto these
fields; a bad value fails at once with a message that names the field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ._reporting import caught, report
from .core._api import APIS, Api, spec_for
from .core._depth import MAX_DEPTH
from .core._exchange_data import Report, RouteMatch
from .core.dialects import get_dialect, list_dialects
from .core.grammar import Engine
from .redact import redact

# The defaults of two limits the store applies (`Limits.max_chain_responses`,
# `Limits.max_item_references`): the store reads them here, with its other options.
MAX_CHAIN = 2048  # responses a continuation may reach back
MAX_REFERENCES = 1024  # `item_reference`s per request
STORE_URLS = ("memory", "sqlite:///path/to/file.db", "redis://host:port/db", "rediss://…", "none")


def check_store_url(spec: str) -> None:
    """Raise a ValueError when `store.open_store` would refuse `spec` (without connecting to
    anything); its message shows the URL redacted. (The store reads its options here: the check
    is the option's, and the store asks it before it opens one.)"""
    shown = redact(spec)
    if spec == "memory" or spec.startswith(("sqlite://", "redis://", "rediss://", "unix://")):
        if spec.startswith("sqlite://") and not spec.removeprefix("sqlite://").removeprefix("/"):
            raise ValueError(f"store {shown!r}: name a file, as sqlite:///path/to/state.db")
        if not spec.startswith(("memory", "sqlite")):
            try:
                import redis.asyncio  # noqa: F401
            except ImportError:
                raise ValueError(
                    f"store {shown!r} needs the redis package: pip install 'toolcall-middleware[redis]'"
                ) from None
        return
    raise ValueError(f"store {shown!r}: expected one of {', '.join(STORE_URLS)}")


Profile = Literal["required_action", "extensions", "ping_events", "open_responses"]
Bridge = Literal["responses-to-chat", "messages-to-chat", "chat-to-messages", "responses-to-messages"]
BridgeTarget = Literal["chat", "messages"]
BRIDGE_ROUTES: dict[BridgeTarget, str] = {target: spec_for(target).path for target in ("chat", "messages")}
COUNT_TOKENS = "/count_tokens"  # under a Messages route: Anthropic's token counting


class Limits(BaseModel):
    """Caps that keep one response bounded; exceeding one passes the rest through or fails clearly."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_request_bytes: int = Field(
        16 * 1024 * 1024, gt=0, description="request bodies larger than this are not rewritten"
    )
    max_response_bytes: int = Field(
        64 * 1024 * 1024, gt=0, description="whole JSON bodies larger than this pass through"
    )
    max_call_bytes: int = Field(
        4 * 1024 * 1024,
        gt=0,
        description="the arguments of one call; a larger call fails the response, an open one as it passes this",
    )
    max_calls: int = Field(128, gt=0, description="calls per response")
    max_sse_event_bytes: int = Field(8 * 1024 * 1024, gt=0, description="one upstream SSE event")
    # Agents' tool schemas nest 20-30 schemas deep (each two levels: `properties`, then the
    # property), a transcript a few levels more; past this, a body is refused with a 400. At most
    # 512: deeper than that, JSON's own decoder and the rewrite's recursion give out.
    max_depth: int = Field(
        MAX_DEPTH,
        gt=1,
        le=512,
        description="levels of arrays and objects in a request body (deeper: a 400) and in a host answer "
        "(deeper: passed through unread)",
    )
    max_websocket_bytes: int = Field(
        16 * 1024 * 1024,
        gt=0,
        description="what one WebSocket keeps in memory: its lanes' last responses (as JSON; past this, the longest "
        "idle lane's is forgotten) and, apart, its turns waiting (past this, a turn is refused)",
    )
    max_websockets: int = Field(
        128, gt=0, description="WebSocket mode sockets open at once; past these, an upgrade is refused with a 503"
    )
    max_chain_responses: int = Field(
        MAX_CHAIN,
        gt=0,
        description="stored responses a `previous_response_id` chain may reach back (longer: a 400)",
    )
    max_item_references: int = Field(
        MAX_REFERENCES, gt=0, description="`item_reference` items in one request's input (more: a 400)"
    )
    # Background responses (`background: true`, with a store), per process. Running jobs stay well
    # under the proxy's upstream pool (100 connections), so interactive requests keep the rest.
    max_background_jobs: int = Field(
        32, gt=0, description="background responses running at once in a process; more wait, queued"
    )
    max_background_jobs_per_credential: int = Field(
        8, gt=0, description="background responses of one credential running at once in a process"
    )
    max_background_queued: int = Field(
        1024, ge=0, description="background responses waiting to run in a process; past it, a 429 with retry-after"
    )
    max_background_queued_per_credential: int = Field(
        256, ge=0, description="background responses of one credential waiting to run; past it, a 429"
    )


class ToolCallConfig(BaseModel):
    """The middleware's options. Only `dialect` (or a model the dialects know) is usually needed.

    ```python
    ToolCallConfig(dialect="qwen3_coder", strict=True, profiles={"required_action"})
    ```
    """

    # (an error never repeats the value given: a store URL may carry a password)
    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True, hide_input_in_errors=True)

    dialect: str | None = Field(
        None, description="the format the model writes; None selects it from the request's `model` (or `auto`)"
    )
    model_dialects: dict[str, str] = Field(
        default_factory=dict, description="served model name -> dialect, checked before the built-in patterns"
    )
    chat_routes: tuple[str, ...] = Field(spec_for("chat").routes, description="Chat Completions paths")
    responses_routes: tuple[str, ...] = Field(spec_for("responses").routes, description="Responses API paths")
    completions_routes: tuple[str, ...] = Field(spec_for("completions").routes, description="legacy completions paths")
    messages_routes: tuple[str, ...] = Field(
        spec_for("messages").routes, description="Anthropic Messages paths (and their /count_tokens)"
    )
    agui_routes: tuple[str, ...] = Field(
        spec_for("agui").routes,
        description="AG-UI paths: a frontend's runs (RunAgentInput), sent to the host as Chat Completions "
        "requests, answered as AG-UI events; () turns the route off",
    )
    route_prefixes: tuple[str, ...] = Field(("",), description="mount prefixes routes may sit under, e.g. '/api'")
    generation_prompt: str | None = Field(None, description="the text the chat template appends after the last message")
    thinking: bool | None = Field(None, description="whether the template opens a reasoning block (None: by model)")
    forward_tools: bool = Field(False, description="the backend takes `tools` itself: forward them too")
    inject_manifest: bool | None = Field(
        None, description="write the tool manifest and calling rules into the prompt (None: unless forward_tools)"
    )
    strict: bool = Field(False, description="validate every call against its schema, as if each tool were strict")
    repair: bool = Field(True, description="one safe repair pass on broken JSON arguments (never on truncation)")
    arguments_streaming: Literal["whole", "incremental"] = Field(
        "whole", description="'incremental': stream a call's argument fragments as the model writes them"
    )
    reasoning_calls: Literal["keep", "fallback"] = Field(
        "keep",
        description="'fallback': when the output makes no call after its reasoning, the calls written in it count",
    )
    dialect_mismatch: Literal["read", "warn", "off"] = Field(
        "read",
        description="a complete call in another dialect's own markup where the dialect in force finds none: "
        "'read' it as that dialect's (and warn), 'warn' only (it stays text), or 'off'",
    )
    reasoning_field: Literal["reasoning_content", "reasoning", "both", "none"] = Field(
        "reasoning_content", description="the Chat message field reasoning goes in ('none': dropped)"
    )
    responses_reasoning: bool = Field(True, description="emit reasoning items in Responses output")
    profiles: frozenset[Profile] = Field(frozenset(), description="compatibility profiles to switch on")
    call_ids: Literal["openai", "model"] = Field(
        "openai",
        description="tool call ids: 'openai' mints call_ + 24 alphanumerics (unique across a conversation); "
        "'model' keeps the model's own where its format writes one (Kimi's functions.NAME:N), minting the rest",
    )
    regenerate: int = Field(
        0,
        ge=0,
        le=5,
        description="times the host is asked again when a whole (non-streamed) answer misses a call 'tool_choice' "
        "requires or breaks a strict tool; 0: one request is one generation, and such an answer is a 502",
    )
    constrain: Engine | None = Field(
        None,
        description="the host's engine: a request whose tool_choice is 'required' or a named function, or that "
        "offers strict tools, is sent with the engine's grammar field, which admits only the dialect's own calls",
    )
    limits: Limits = Field(default_factory=Limits)
    bridge: frozenset[Bridge] = Field(
        frozenset(), description="client APIs the host does not serve, translated to one it does ('responses-to-chat')"
    )
    bridge_routes: dict[BridgeTarget, str] = Field(
        default_factory=lambda: dict(BRIDGE_ROUTES),
        description="where a bridged request goes, under the client route's prefix: API -> path",
    )
    compaction: Literal["emulate", "host"] = Field(
        "emulate",
        description="POST /v1/responses/compact: 'emulate' asks the host's model for a summary (and reads the "
        "compaction items it made back in later input); 'host': the host compacts, requests pass through",
    )
    keepalive_interval: float | None = Field(
        15.0, ge=0, description="seconds of silence on a rewritten stream before a `: ping` comment; 0/None: off"
    )
    on_report: Callable[[dict[str, Any]], None] | None = Field(
        None, description="called once per rewritten exchange with its telemetry record"
    )
    log_format: Literal["text", "json"] = Field(
        "text",
        description="each exchange's record at INFO: a readable line, or one line of JSON "
        "(serve: every line of its log, timestamped, as text or one JSON object)",
    )
    tracing: bool = Field(
        False,
        description="an OpenTelemetry span per exchange (needs opentelemetry-api); 'serve' exports them over "
        "OTLP, configured by the OTEL_* variables (the otlp extra)",
    )
    store: str | None = Field(
        None,
        description="keep responses and conversations (previous_response_id, conversation, item_reference, "
        "GET/DELETE /v1/responses/{id}, /v1/conversations): 'memory', 'sqlite:///path.db', 'redis://host:6379/0'; "
        "None or 'none': stateless ('serve' defaults to SQLite)",
    )
    stateful_host: bool = Field(
        False, description="the host keeps response state itself: stateful requests and routes pass through untouched"
    )
    store_ttl: float | None = Field(
        30 * 24 * 3600.0, gt=0, description="seconds a stored response or conversation lives after its last write"
    )
    store_max_records: int = Field(100_000, gt=0, description="records the in-memory store holds before refusing")
    store_max_bytes: int = Field(
        16 * 1024 * 1024, gt=0, description="the largest stored record (a response, a conversation)"
    )
    background_lease: float = Field(
        10.0,
        gt=0,
        description="seconds a background response's lease lasts unrenewed: when its process dies, another "
        "ends it failed within 1.25 times this",
    )
    store_secret: str | None = Field(
        None,
        description="the key of the hash that scopes stored state to a credential, the same for every worker "
        "(else $TOOLCALL_STORE_SECRET, else made once in the store)",
    )

    @classmethod
    def from_env(cls, **options: Any) -> ToolCallConfig:
        """The options the environment sets, as `serve` reads them (`TOOLCALL_<OPTION>`: see
        `toolcall_middleware._env`), under `options`, which win. Needs pydantic-settings (the `env`
        extra). Nothing else reads the environment: `ToolCallConfig(...)` takes only what it is given.

        ```python
        app = ToolCallMiddleware(app, ToolCallConfig.from_env(dialect="hermes"))
        ```
        """
        from ._env import env_values, merge

        return cls(**merge(env_values(cls), options))

    @field_validator("dialect")
    @classmethod
    def _known_dialect(cls, value: str | None) -> str | None:
        if value is not None and value != "auto":
            get_dialect(value)  # raises UnknownDialectError, a ValueError, listing the dialects
        return value

    @field_validator("model_dialects")
    @classmethod
    def _known_dialects(cls, value: dict[str, str]) -> dict[str, str]:
        for model, name in value.items():
            if name != "auto" and name not in list_dialects():
                raise ValueError(
                    f"model {model!r} maps to unknown dialect {name!r}; the dialects are: {', '.join(list_dialects())}"
                )
        return value

    @field_validator(
        "chat_routes",
        "responses_routes",
        "completions_routes",
        "messages_routes",
        "agui_routes",
        "route_prefixes",
        mode="before",
    )
    @classmethod
    def _one_path(cls, value: Any) -> Any:
        return (value,) if isinstance(value, str) else value  # `route_prefixes="/api"`: one prefix, not four

    @field_validator("bridge", mode="before")
    @classmethod
    def _one_bridge(cls, value: Any) -> Any:
        return {value} if isinstance(value, str) else value  # `bridge="responses-to-chat"`

    @field_validator("bridge_routes")
    @classmethod
    def _bridge_paths(cls, value: dict[BridgeTarget, str]) -> dict[BridgeTarget, str]:
        for path in value.values():
            if not path.startswith("/"):
                raise ValueError(f"{path!r} must start with '/'")
        return {**BRIDGE_ROUTES, **value}

    @field_validator(
        "chat_routes", "responses_routes", "completions_routes", "messages_routes", "agui_routes", "route_prefixes"
    )
    @classmethod
    def _paths(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for path in value:
            if path and not path.startswith("/"):
                raise ValueError(f"{path!r} must start with '/'")
        return tuple(p.rstrip("/") if p != "/" else p for p in value)

    @field_validator("store")
    @classmethod
    def _store_url(cls, value: str | None) -> str | None:
        if value is None or value == "none":
            return value
        check_store_url(value)  # a ValueError naming the schemes, or the extra to install
        return value

    @model_validator(mode="after")
    def _extras_installed(self) -> ToolCallConfig:
        """An option that needs an extra fails here, naming it, not on every request."""
        if self.strict:
            from .core.policy._validation import jsonschema_available

            if not jsonschema_available():
                raise ValueError("strict=True needs the jsonschema package: pip install 'toolcall-middleware[strict]'")
        if self.tracing:
            try:
                import opentelemetry.trace  # noqa: F401
            except ImportError:
                raise ValueError(
                    "tracing=True needs the opentelemetry-api package: pip install 'toolcall-middleware[tracing]'"
                ) from None
        return self

    @model_validator(mode="after")
    def _constrain_expressible(self) -> ToolCallConfig:
        """An engine whose grammar cannot say the dialect's calls is named here, not ignored."""
        if self.constrain is None:
            return self
        from .core.grammar.engines import dialect_unexpressible

        for name in {self.dialect, *self.model_dialects.values()} - {None, "auto"}:
            assert name is not None
            why = dialect_unexpressible(self.constrain, name)
            if why is not None:
                raise ValueError(f"constrain={self.constrain!r} cannot hold dialect {name!r} to its calls: {why}")
        return self

    @model_validator(mode="after")
    def _routes_distinct(self) -> ToolCallConfig:
        seen: dict[str, str] = {}
        for api in APIS:
            kind = f"{api}_routes"
            for path in self.routes_for(api):
                if path in seen:
                    raise ValueError(f"route {path!r} is in both {seen[path]} and {kind}")
                seen[path] = kind
        bridged = {b.split("-to-")[0]: b for b in sorted(self.bridge)}
        if len(bridged) < len(self.bridge):
            raise ValueError(f"bridge {sorted(self.bridge)} translates one client API to two host APIs: choose one")
        for name in self.bridge:
            target = name.split("-to-")[1]
            if target in bridged:
                raise ValueError(
                    f"bridge {name!r} sends requests to {target!r}, which {bridged[target]!r} says the host lacks"
                )
        if self.compaction == "host" and "responses" in bridged:
            raise ValueError("compaction='host' needs a host that serves the Responses API, not a bridged one")
        return self

    def route(self, path: str) -> RouteMatch | None:
        """The client API of a request path, the host's API (another one when bridged) and the path
        the host gets (the request's own path, unless bridged); None when the middleware leaves the
        request alone."""
        asked, path = path, path.rstrip("/") or "/"
        for prefix in self.route_prefixes:
            if prefix and not path.startswith(prefix):
                continue
            rest = path[len(prefix) :] if prefix else path
            for api in APIS:
                if rest in self.routes_for(api):
                    upstream = self.upstream_api(api)
                    target = asked if upstream == api else prefix + self.bridge_routes[upstream]  # type: ignore[index]
                    return RouteMatch(api, upstream, target, asked=asked)
            if rest.endswith(COUNT_TOKENS) and rest[: -len(COUNT_TOKENS)] in self.messages_routes:
                # Counted where the client asked, bridged or not: a host that cannot is estimated.
                return RouteMatch("messages", "messages", asked, count_tokens=True, asked=asked)
        return None

    def routes_for(self, api: Api) -> tuple[str, ...]:
        """The paths clients call `api` at: its `<api>_routes` option, or for an API that has no
        option of its own, the paths its spec declares."""
        routes: tuple[str, ...] = getattr(self, f"{api}_routes", spec_for(api).routes)
        return routes

    def upstream_api(self, api: Api) -> Api:
        """The API the host speaks for requests of client API `api` (one no host speaks, AG-UI,
        goes in its spec's `host_api`, and on through that API's bridge, if it has one)."""
        api = spec_for(api).host_api or api
        for name in self.bridge:
            client, upstream = name.split("-to-")
            if client == api:
                return upstream  # type: ignore[return-value]
        return api

    def report(self, record: Report, upstream: str) -> None:
        """An exchange's record, at its end: logged, to `on_report` and as a span (`reporting`)."""
        report(record, upstream, self)

    def caught(self, error: Exception, doing: str) -> None:
        """A failure of ours an exchange recovered from, logged (`reporting`)."""
        caught(error, doing)

    def request_checks(self) -> dict[str, Callable[[Mapping[str, Any]], None]]:
        """The request checks beyond the core's, by client API: AG-UI runs by the protocol's own
        types, where its route is on and the `agui` extra installed (`toolcall_middleware._agui`)."""
        from ._agui import request_checks

        return request_checks(bool(self.agui_routes))

    def route_kind(self, path: str) -> Api | None:
        """Which API a request path is, or None when the middleware leaves it alone."""
        found = self.route(path)
        return found.api if found is not None else None

    def dialect_for(self, model: str | None) -> str:
        """The dialect for a request's `model`: explicit mapping, then `dialect`, then the patterns, then `auto`."""
        if model and model in self.model_dialects:
            return self.model_dialects[model]
        if self.dialect is not None and self.dialect != "auto":
            return self.dialect
        from .core.dialects import dialect_for_model

        found = dialect_for_model(model) if model else None
        return found.name if found is not None else "auto"


__all__ = [
    "BRIDGE_ROUTES",
    "COUNT_TOKENS",
    "Bridge",
    "BridgeTarget",
    "Limits",
    "Profile",
    "RouteMatch",
    "ToolCallConfig",
]
