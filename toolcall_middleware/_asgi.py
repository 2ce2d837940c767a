"""`StatelessMiddleware`: the pure ASGI middleware that gives a raw-output LLM endpoint OpenAI
tool calling, keeping nothing between requests. Users add `ToolCallMiddleware` (`middleware.py`),
which is this with the Responses state (`store/`) in front when the configuration names a store;
nothing here knows of a store.

It chooses the requests that are ours (a POST to a configured route, its body not
content-encoded) and hands each to `asgi_request.ASGIRequest`, which moves its bytes; the
decisions are the exchange's (`core._exchange.Exchange`, driven the same way by the WSGI
middleware and Django's). A WebSocket on a
Responses route is `websocket.py`'s (WebSocket mode), a POST to `…/responses/compact`
`compact.py`'s when the host cannot compact: both come back here, in process, as ordinary
Responses requests.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ._asgi_request import ASGIApp, ASGIRequest, Receive, Scope, Send
from ._compact import compact_route, serve_compact
from ._inprocess import RESPONSE_HOOK, respond
from ._request_ids import with_request_id
from ._routing import route_request
from ._websocket import ResponsesSocket, refuse
from .config import RouteMatch, ToolCallConfig
from .core._exchange import Exchange
from .core._http import headers_named, json_head
from .core._replaced import openai_error

logger = logging.getLogger("toolcall_middleware")

__all__ = ["StatelessMiddleware"]

CLIENT_SAYS = "toolcall-middleware: invalid configuration"


class StatelessMiddleware:
    """Pure ASGI middleware; keyword options are `ToolCallConfig` fields, validated here, once.

    A bad option raises here. Starlette and FastAPI build `add_middleware`'s middleware lazily,
    inside the server's first call (the lifespan's startup, or the first request), where an
    exception cannot stop the server: uvicorn takes it for "lifespan unsupported" and every
    request is then a 500. So a middleware built while an event loop runs keeps the error
    instead (`misconfigured`) and says it in the ASGI protocol: the lifespan startup fails with
    the message (the server exits), and without a lifespan each request is a 500 whose body
    says it, logged once. `config=ToolCallConfig(...)` fails earlier still, where it is written.
    """

    def __init__(self, app: ASGIApp, config: ToolCallConfig | None = None, **options: Any) -> None:
        self.app = app
        self.misconfigured: str | None = None
        try:
            self.config = config if config is not None else ToolCallConfig(**options)
        except ValueError as e:  # (pydantic's ValidationError is one)
            if not _serving():
                raise
            self.misconfigured = f"{CLIENT_SAYS}: {e}"
            logger.error("%s", self.misconfigured)
            self.config = ToolCallConfig()
        # A proxy's upstream is another process: an answer that is not its API's is the client's
        # 502 there, while an app in process (the user's own code) is passed on with a warning.
        self._remote_host = getattr(app, "remote_host", False) is True
        self._routes: dict[str, RouteMatch | None] = {}  # what `route_request` says of a path
        self._sockets = 0  # WebSocket mode sockets open (`limits.max_websockets`)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._stateless(scope, receive, send)

    def use_bridges(self, bridge: frozenset[str]) -> None:
        """Serve these client APIs through their bridges from now on (`serve` calls it when it
        finds, while running, that its upstream lacks a route, or has it back); a request under
        way keeps its route."""
        self.config = self.config.model_copy(update={"bridge": bridge})
        self._routes = {}

    async def _stateless(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.misconfigured is not None:
            await self._refuse(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
            return
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        coding, length = headers_named(scope.get("headers") or [], b"content-encoding", b"content-length")
        path = scope.get("path", "")
        # (a compressed request body is left alone: `route` reads the coding; most requests have none)
        route = self._route(path) if coding is None else route_request(self.config, "POST", path, coding)
        if route is None:
            compacted = compact_route(self.config, "POST", path) if coding is None else None
            if compacted is not None:  # `compaction="emulate"`: the host's model summarizes
                await serve_compact(self, scope, receive, send, compacted, self.config.limits)
                return
            await self.app(scope, receive, send)
            return
        exchange = Exchange(self.config, route, remote_host=self._remote_host)
        exchange.response_hook = scope.get(RESPONSE_HOOK)  # (set by the Responses state in front, if any)
        send, exchange.record.request_id = with_request_id(scope, send)
        await ASGIRequest(self.app, exchange, scope, receive, send).run(length)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        """WebSocket mode on the Responses routes (`websocket.py`); any other WebSocket is the app's."""
        route = self.config.route(scope.get("path", ""))
        if route is None or route.api != "responses" or route.count_tokens:
            await self.app(scope, receive, send)
            return
        limits = self.config.limits
        if self._sockets >= limits.max_websockets:
            await refuse(scope, receive, send, f"Over {limits.max_websockets} WebSockets open: try again later.")
            return
        self._sockets += 1
        try:
            await ResponsesSocket(self, scope, receive, send, limits=limits).run()
        finally:
            self._sockets -= 1

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A misconfigured middleware's answer: the startup fails, a request is a 500, with the message."""
        message = self.misconfigured or ""
        if scope["type"] == "lifespan":
            await receive()  # lifespan.startup
            await send({"type": "lifespan.startup.failed", "message": message})
        elif scope["type"] == "http":
            # The client is told that, not the validator's text (the server's log has it, once).
            body = openai_error(f"{CLIENT_SAYS}: the server's log names the option", 500)
            await respond(send, 500, json_head(body, final=True), body)  # (a retry meets the same options)

    def _route(self, path: str) -> RouteMatch | None:
        """`route_request` of a POST with no content-coding, remembered by path."""
        found = self._routes.get(path, _NOT_SEEN)
        if found is _NOT_SEEN:
            found = route_request(self.config, "POST", path, None)
            if len(self._routes) < 256:  # (a client may send any path: past these, asked each time)
                self._routes[path] = found
        return found  # type: ignore[return-value]


_NOT_SEEN = object()


def _serving() -> bool:
    """Whether an event loop runs here: a middleware made now is made by a framework inside the
    server's first call (see `StatelessMiddleware`), not where the application is written."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
