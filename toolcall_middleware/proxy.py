"""`ProxyApp`: an ASGI reverse proxy to an HTTP endpoint in another process, for the middleware to wrap.

```python
app = ToolCallMiddleware(ProxyApp("http://localhost:8000"), dialect="qwen3_coder")
```

`toolcall-middleware serve --upstream URL` runs exactly this. Every request goes to the upstream
with its method, path, query and headers: the path under the upstream URL's own path, unless it
already starts with it, so a base URL written as clients write it (`http://host:8000/v1`, as for
vLLM or LiteLLM) and one without `/v1` both send `/v1/chat/completions` to
`http://host:8000/v1/chat/completions` (`url_for`). The body streams
both ways (`aiter_raw`: bytes as they arrive, content-coding untouched). Hop-by-hop headers
(RFC 9110 §7.6.1, and any the `Connection` header names) are dropped both ways, and `Host` becomes
the upstream's. `GET /healthz` is answered here, without asking the upstream; `GET /readyz` asks it
(`GET /v1/models` under its URL: any answer below 500 is ready, else a 503 that says why).

An upstream that cannot be reached is a 502 and one that does not answer in time a 504, each with
an OpenAI-style error body (`{"error": {"message", "type", "param", "code"}}`), so SDK clients
raise their usual `APIStatusError`. One that fails after its head (breaks off, resets the
connection, goes silent past the read timeout) raises `UpstreamFailure`: the middleware ends the
client's stream in its API's error shape, or answers a whole body's request 502 / 504; without
the middleware, the server cuts the connection, so a client never takes it for a complete answer.
A client that disconnects closes the upstream response; the lifespan `shutdown` closes the
connection pool. `api_key` replaces the client's credential on the way up (`with_credential`).
Needs `httpx` (the `serve` extra).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

try:
    import httpx
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("the proxy needs httpx: pip install 'toolcall-middleware[serve]'") from e

from ._inprocess import respond
from ._upstream_routes import MISSING, RouteMap
from .config import COUNT_TOKENS
from .core._api import spec_for
from .core._detect import kind_of_route
from .core._exchange_head import PROXY_ERROR
from .core._failure import UpstreamFailure
from .core._http import json_head, without
from .redact import redact

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

logger = logging.getLogger("toolcall_middleware.proxy")

HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"proxy-connection",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
    }
)
HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"
READY_PROBE = b"/v1/models"  # what every OpenAI-compatible server answers (a 404 still says it is up)


def end_to_end(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """The headers less the hop-by-hop ones, including those the `Connection` header names."""
    named = {
        token.strip().lower() for key, value in headers if key.lower() == b"connection" for token in value.split(b",")
    }
    return [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP and k.lower() not in named]


def error_body(message: str, code: str, kind: str = "upstream_error") -> bytes:
    """An OpenAI-style error body."""
    return json.dumps({"error": {"message": message, "type": kind, "param": None, "code": code}}).encode()


class ProxyApp:
    """Forwards every request to `upstream` (see the module doc).

    `timeout`: seconds to connect (and to wait for each read) before answering 504; `read_timeout`
    overrides the read part (generation can be slow; `None` waits for ever). `client`: an
    `httpx.AsyncClient` to use instead of the proxy's own (then the caller closes it).
    """

    # The host is another process: an answer of its that is not its API's is broken, and the
    # middleware over this app answers 502 instead of passing it on (the exchange's `remote_host`).
    remote_host = True

    def __init__(
        self,
        upstream: str,
        *,
        timeout: float = 10.0,
        read_timeout: float | None = 600.0,
        client: httpx.AsyncClient | None = None,
        routes: RouteMap | None = None,
        api_key: str | None = None,
    ) -> None:
        url = httpx.URL(upstream)
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"upstream {upstream!r} must be an http:// or https:// URL")
        self.upstream = url
        self.timeout = httpx.Timeout(timeout, read=read_timeout)
        self._client = client
        self._own_client = client is None
        # Which API routes the upstream serves (`upstream_routes`): a route answering 404 / 405
        # is probed again, and `/readyz` probes those in use. None: the proxy knows no routes.
        self.routes = routes
        # The upstream's credential, in place of the client's (`serve --upstream-api-key`).
        self._api_key = api_key.encode() if api_key is not None else None
        # More of what `/readyz` checks (`serve` adds the store's): each says what is wrong, or None.
        self.ready_checks: list[Callable[[], Awaitable[str | None]]] = []

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            # Redirects and compression are the client's business: pass them through as they are.
            self._client = httpx.AsyncClient(timeout=self.timeout, follow_redirects=False, trust_env=False)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None and self._own_client:
            await self._client.aclose()
            self._client = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            if scope.get("method") == "GET" and scope.get("path") == HEALTH_PATH:
                body = json.dumps({"status": "ok", "upstream": str(self.upstream)}).encode()
                await _respond(send, 200, body)
                return
            if scope.get("method") == "GET" and scope.get("path") == READY_PATH:
                await self._ready(send)
                return
            await self._forward(scope, receive, send)

    async def _ready(self, send: Send) -> None:
        """`GET /readyz`: 200 when the upstream answers (any status below 500), else 503 saying why."""
        url = self.url_for(READY_PROBE)
        try:
            response = await self.client.get(url, timeout=self.timeout.connect)
        except httpx.HTTPError as e:
            problem = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        else:
            if response.status_code < 500:
                problem = "; ".join(await self.not_ready())
                if not problem:
                    body = {"status": "ready", "upstream": str(self.upstream), "probe": str(url)}
                    await _respond(send, 200, json.dumps(body).encode())
                    return
            else:
                problem = f"status {response.status_code}"
        body = {"status": "unavailable", "upstream": str(self.upstream), "probe": str(url), "error": problem}
        await _respond(send, 503, json.dumps(body).encode())

    async def not_ready(self) -> list[str]:
        """What keeps requests from succeeding though the upstream answers: an API route in use
        that it answers 404 / 405, and what `ready_checks` find (the store, the data directory)."""
        problems = []
        if self.routes is not None:
            problems += await self.routes.problems(self.client, self.url_for, self.timeout.connect or 10.0)
        for check in self.ready_checks:
            problem = await check()
            if problem:
                problems.append(problem)
        return problems

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def url_for(self, path: bytes, query: bytes = b"") -> httpx.URL:
        """The upstream URL a request for `path` goes to (see the module doc)."""
        base = self.upstream.raw_path.split(b"?", 1)[0].rstrip(b"/")
        if base and (path == base or path.startswith(base + b"/")):
            base = b""  # the client already wrote the upstream's prefix (`/v1` in both)
        return self.upstream.copy_with(raw_path=base + path + (b"?" + query if query else b""))

    def with_credential(self, headers: list[tuple[bytes, bytes]], path: str) -> list[tuple[bytes, bytes]]:
        """`headers` with the client's credential (`Authorization`, `x-api-key`) replaced by the
        upstream's, as the API of `path` takes it: `x-api-key` on Messages, else Bearer."""
        key = self._api_key or b""
        api = kind_of_route(path)
        counting = path.rstrip("/").endswith("/messages" + COUNT_TOKENS)  # (Messages' sub-route)
        x_api_key = (api is not None and spec_for(api).x_api_key) or counting
        credential = (b"x-api-key", key) if x_api_key else (b"authorization", b"Bearer " + key)
        return [*without(headers, b"authorization", b"x-api-key"), credential]

    def _url(self, scope: Scope) -> httpx.URL:
        path = scope.get("raw_path") or scope.get("path", "/").encode()
        return self.url_for(path, scope.get("query_string") or b"")

    async def _forward(self, scope: Scope, receive: Receive, send: Send) -> None:
        body_done = asyncio.Event()

        async def request_body() -> AsyncIterator[bytes]:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise _ClientGone
                if chunk := message.get("body", b""):
                    yield chunk
                if not message.get("more_body", False):
                    body_done.set()
                    return

        headers = [(k, v) for k, v in end_to_end(list(scope.get("headers") or [])) if k.lower() != b"host"]
        if self._api_key is not None:
            headers = self.with_credential(headers, scope.get("path", ""))
        request = self.client.build_request(
            scope.get("method", "GET"), self._url(scope), headers=headers, content=request_body()
        )
        try:
            response = await self.client.send(request, stream=True)
        except _ClientGone:
            return
        except httpx.TimeoutException as e:
            logger.warning("upstream %s timed out: %s", redact(str(request.url)), redact(repr(e)))
            message = f"The upstream {self.upstream} did not answer in time ({type(e).__name__})."
            await _respond(send, 504, error_body(message, "upstream_timeout"), own=True)
            return
        except httpx.HTTPError as e:
            logger.warning("upstream %s failed: %s", redact(str(request.url)), redact(repr(e)))
            message = f"The upstream {self.upstream} could not be reached: {e or type(e).__name__}."
            await _respond(send, 502, error_body(message, "upstream_unreachable"), own=True)
            return
        try:
            if response.status_code in MISSING and await self._gone(scope, response, send):
                return
            await self._relay(response, receive, send, body_done)
        finally:
            await response.aclose()

    async def _gone(self, scope: Scope, response: httpx.Response, send: Send) -> bool:
        """A POST to an API route answered 404 / 405: when the route itself is gone (an empty
        request is refused so too), the client is told what would serve it; True when it was."""
        api = self.routes.api_at(scope.get("path", "")) if self.routes is not None else None
        if api is None or self.routes is None or scope.get("method") != "POST":
            return False
        if not await self.routes.recheck(self.client, self.url_for, api, self.timeout.connect or 10.0):
            return False
        message = self.routes.missing_message(api, str(self.upstream))
        logger.warning("toolcall-middleware: %s", message)
        await _respond(send, response.status_code, error_body(message, "route_not_served"), own=True)
        return True

    async def _relay(self, response: httpx.Response, receive: Receive, send: Send, body_done: asyncio.Event) -> None:
        """Stream the upstream response to the client; a client disconnect stops it."""
        headers = end_to_end(list(response.headers.raw))
        await send({"type": "http.response.start", "status": response.status_code, "headers": headers})

        async def pump() -> None:
            try:
                async for chunk in response.aiter_raw():
                    if chunk:
                        await send({"type": "http.response.body", "body": chunk, "more_body": True})
            except httpx.HTTPError as e:
                # The head is sent: the failure must not pass for a normal end (a cut-off answer
                # would read as finished). Raised to the middleware, which ends the client's
                # answer in its API's error shape; without it, the server cuts the connection.
                raise self._failure(response, e) from e
            await send({"type": "http.response.body", "body": b""})

        if not body_done.is_set():  # the upstream answered before reading the whole request
            await pump()
            return
        pumping = asyncio.ensure_future(pump())
        watching = asyncio.ensure_future(_disconnected(receive))
        try:
            await asyncio.wait((pumping, watching), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (pumping, watching):
                task.cancel()
            for task in (pumping, watching):
                with contextlib.suppress(asyncio.CancelledError):
                    await task  # re-raises what the pump raised (a send to a closed connection)

    def _failure(self, response: httpx.Response, error: httpx.HTTPError) -> UpstreamFailure:
        """The upstream failed after its head: logged with its cause, said to the client."""
        if isinstance(error, httpx.TimeoutException):
            logger.warning("upstream %s went silent mid-answer: %s", redact(str(response.url)), redact(repr(error)))
            waited = self.timeout.read
            return UpstreamFailure(
                f"The upstream {self.upstream} sent nothing for {waited} s in the middle of its answer.",
                status=504,
                code="upstream_timeout",
            )
        logger.warning("upstream %s broke off mid-answer: %s", redact(str(response.url)), redact(repr(error)))
        return UpstreamFailure(
            f"The upstream {self.upstream} broke off in the middle of its answer ({type(error).__name__}).",
            status=502,
            code="upstream_broke_off",
        )


class Guarded:
    """An app over the proxy (the middleware over `ProxyApp`), as `serve` runs it. An
    `UpstreamFailure` the middleware did not answer (a route it passes through, the head already
    out) ends the request here: the server then cuts the connection, which is what the client
    must see, without logging again, as a traceback, what the proxy logged in one line."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        except UpstreamFailure:
            pass


class _ClientGone(Exception):
    """The client disconnected while its request body was being forwarded."""


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _respond(send: Send, status: int, body: bytes, *, own: bool = False) -> None:
    """A JSON answer of the proxy's own; `own` marks an error of the proxy's (not the upstream's),
    which the middleware writes in the client API's error shape (`PROXY_ERROR`). Any URL in it
    (the upstream's, a probe's, one in an error's text) is redacted: these need no credential."""
    body = redact(body.decode()).encode()
    headers = json_head(body)
    if own:
        headers.append((PROXY_ERROR, b"1"))
    await respond(send, status, headers, body)


__all__ = ["HOP_BY_HOP", "Guarded", "ProxyApp", "end_to_end", "error_body"]
