"""`ApiKeys`: the proxy's own keys (`serve --api-key`), checked before anything else.

A request without one of the keys is refused with a 401 in its API's error shape, before its
body is read: `Authorization: Bearer KEY` on the OpenAI routes (Chat Completions, Responses,
completions); `x-api-key: KEY` or the same Bearer on the Messages routes, as Anthropic's clients
send either; either header on any other path the proxy passes on (`/v1/models`, …). A WebSocket
upgrade (WebSocket mode on the Responses routes) is refused the same way. `GET /healthz` and
`GET /readyz` stay open (a load balancer's probes carry no key); `/metrics` is answered before
this layer, by `MetricsRoute`.

Keys are compared in constant time, as SHA-256 digests (so neither a key's content nor its length
shows in the time a refusal takes). The key a request was let in with goes on in its scope
(`inprocess.CREDENTIAL`), and the store's tenant scope follows it, whichever header carried it.
No key is ever written in an answer, a log line or a record.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Iterable

from ._inprocess import CREDENTIAL, ASGIApp, Receive, Scope, Sink, refuse_handshake, respond
from .core._api import Api, spec_for
from .core._http import json_head

OPEN_PATHS = frozenset({"/healthz", "/readyz"})
BEARER = b"bearer "
MISSING = "No API key was given: send it as {how}."
HOW = {False: "`Authorization: Bearer KEY`", True: "`x-api-key: KEY` or `Authorization: Bearer KEY`"}
WRONG = "The API key given is not one this server accepts."


class ApiKeys:
    """`app` behind `keys` (see the module doc); `route_kind` says which API a path is
    (`ToolCallConfig.route_kind`), which decides the headers read and the error's shape."""

    def __init__(self, app: ASGIApp, keys: Iterable[str], route_kind: Callable[[str], Api | None]) -> None:
        self.app = app
        self._digests = [_digest(key.encode()) for key in keys]
        if not self._digests:
            raise ValueError("ApiKeys needs at least one key")
        self.route_kind = route_kind

    async def __call__(self, scope: Scope, receive: Receive, send: Sink) -> None:
        kind = scope["type"]
        path = scope.get("path", "")
        if kind not in ("http", "websocket") or (scope.get("method") in ("GET", "HEAD") and path in OPEN_PATHS):
            await self.app(scope, receive, send)
            return
        api = self.route_kind(path)
        # (on no API route, either header: the client may be either SDK's)
        x_api_key = api is None or spec_for(api).x_api_key
        given = _presented(scope.get("headers") or [], x_api_key=x_api_key)
        accepted = next((key for key in given if self.accepts(key)), None)
        if accepted is not None:
            await self.app({**scope, CREDENTIAL: accepted}, receive, send)
            return
        message = WRONG if given else MISSING.format(how=HOW[x_api_key])
        shape = spec_for(api or ("messages" if _anthropic(scope) else "chat")).error_body
        body = shape(message, 401, code="invalid_api_key")
        headers = [*json_head(body, final=True), (b"www-authenticate", b"Bearer")]
        if kind == "websocket":
            await refuse_handshake(scope, receive, send, 401, headers, body, message)
        else:
            await respond(send, 401, headers, body)

    def accepts(self, key: bytes) -> bool:
        """Whether `key` is one of the keys, in a time that depends on neither."""
        digest = _digest(key)
        found = False
        for known in self._digests:  # (every key compared: no early exit)
            found |= hmac.compare_digest(digest, known)
        return found


def _digest(key: bytes) -> bytes:
    return hashlib.sha256(key).digest()


def _presented(headers: Iterable[tuple[bytes, bytes]], *, x_api_key: bool) -> list[bytes]:
    """The keys a request presents: its Bearer token, and where `x_api_key`, its `x-api-key`."""
    found = []
    for name, value in headers:
        lowered = name.lower()
        if lowered == b"authorization" and value[: len(BEARER)].lower() == BEARER:
            found.append(value[len(BEARER) :].strip())
        elif lowered == b"x-api-key" and x_api_key:
            found.append(value.strip())
    return [key for key in found if key]


def _anthropic(scope: Scope) -> bool:
    """A request on no API route that an Anthropic client sent (it always names the version)."""
    return any(name.lower() == b"anthropic-version" for name, _ in scope.get("headers") or [])


__all__ = ["OPEN_PATHS", "ApiKeys"]
