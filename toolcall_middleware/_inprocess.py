"""A request of our own into an ASGI app, in process: how WebSocket mode and the compaction
endpoint reuse the stateless HTTP path (the middleware's own `__call__`), so every format, bridge
and policy applies to them unchanged.

```python
status, headers, body = await collect(middleware, scope, "/v1/responses", body)
await post(middleware, scope, "/v1/responses", body, send)    # each ASGI message to `send`
```

The request carries the client's own headers (its credentials reach the host as on any
request), minus those of its transport; its body is given whole. The app's `receive` then waits:
when the client leaves, the caller cancels the call, which stops the app's work.

`receive_body`, `replay`, `with_body`, `respond` and `refuse_handshake` are the other way round,
for a shell: a client's body read (by the rules of `core._body_read`) and given to the app again
(under a scope that says its new length), a whole answer sent, a WebSocket upgrade refused.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from .core._body_read import BodyRead
from .core._http import without

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Sink = Callable[[Message], Awaitable[None]]
Receive = Callable[[], Awaitable[Message]]
ASGIApp = Callable[[Scope, Receive, Sink], Awaitable[None]]
# The scope entry where a layer that checked the client's key (`api_keys.ApiKeys`) leaves the key
# it accepted: the store's tenant scope follows it, whichever header carried it (`scope_of`).
CREDENTIAL = "toolcall_middleware.credential"
# The scope key under which a layer in front of the stateless middleware (the Responses state)
# gives the exchange below it a callable that says the status the client got, where the layer
# answered in its stead (a store that failed as the answer was stored: 503), else None: the
# exchange's record then says what the client got.
ANSWERED = "toolcall.answered"
# The scope key under which the Responses state gives the exchange below it what it knows of the
# body it wrote (`core._stored_input.StoredInput`: the stored context its input begins with).
STORED_INPUT = "toolcall.stored_input"
# The scope key under which the Responses state gives the exchange below it its hook on the answer
# (`core._response_hook.ResponseHook`: the fields each response object says of the state; the
# events and the response the answer makes are noted on it, so the state never decodes them).
RESPONSE_HOOK = "toolcall.response_hook"

# Headers of the client's own request that do not describe the body we send.
_TRANSPORT = frozenset(
    {
        b"content-length",
        b"content-type",
        b"content-encoding",
        b"transfer-encoding",
        b"connection",
        b"upgrade",
        b"accept",
        b"accept-encoding",
        b"sec-websocket-key",
        b"sec-websocket-version",
        b"sec-websocket-extensions",
        b"sec-websocket-protocol",
    }
)


def post_scope(scope: Scope, path: str, length: int, *, stream: bool) -> dict[str, Any]:
    """An HTTP `POST path` scope made from the client's scope (HTTP or WebSocket)."""
    headers = [(k, v) for k, v in scope.get("headers") or [] if k.lower() not in _TRANSPORT]
    accept = b"text/event-stream" if stream else b"application/json"
    headers += [(b"content-type", b"application/json"), (b"accept", accept), (b"content-length", str(length).encode())]
    scheme = {"ws": "http", "wss": "https"}.get(scope.get("scheme", "http"), scope.get("scheme", "http"))
    out: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": scheme,
        "path": path,
        "raw_path": path.encode(),
        "root_path": scope.get("root_path", ""),
        "query_string": scope.get("query_string", b""),
        "headers": headers,
        "client": scope.get("client"),
        "server": scope.get("server"),
    }
    for kept in ("state", CREDENTIAL):  # the lifespan's state, as the server gives every request; the key
        if kept in scope:
            out[kept] = scope[kept]
    return out


async def post(app: ASGIApp, scope: Scope, path: str, body: bytes, send: Sink, *, stream: bool = True) -> None:
    """`POST path` with `body` into `app`; each message the app sends goes to `send`. No client
    leaves: the caller cancels the call to stop it."""
    await app(post_scope(scope, path, len(body), stream=stream), replay([body], None), send)


async def receive_body(receive: Receive, read: BodyRead) -> bool:
    """Read a request body through `receive` for as long as `read` wants it (see `BodyRead`);
    False when the client left first."""
    while read.reading:
        message = await receive()
        if message["type"] == "http.disconnect":
            return False
        read.feed(bytes(message.get("body", b"")), more=bool(message.get("more_body", False)))
    return True


async def respond(send: Sink, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    """A whole response: its head, then its one body."""
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def refuse_handshake(
    scope: Scope, receive: Receive, send: Sink, status: int, headers: list[tuple[bytes, bytes]], body: bytes, why: str
) -> None:
    """A WebSocket upgrade refused with an HTTP answer, where the server can give one (ASGI's
    `websocket.http.response` extension, as uvicorn's); else a close before the accept, saying
    `why`, which servers answer with a 403 (its code: 1013, "try again later", for a 5xx, else
    1008, "policy violation")."""
    if (await receive())["type"] != "websocket.connect":
        return
    if "websocket.http.response" not in (scope.get("extensions") or {}):
        await send({"type": "websocket.close", "code": 1013 if status >= 500 else 1008, "reason": why[:120]})
        return
    await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
    await send({"type": "websocket.http.response.body", "body": body})


def replay(chunks: list[bytes], receive: Receive | None, *, more: bool = False) -> Receive:
    """`receive` that gives the body first, then the server's own messages (the disconnect, or
    with `more` the rest of a body read only in part); with no server (a background response),
    nothing more until the work is cancelled."""
    pending = list(chunks) or [b""]

    async def next_message() -> Message:
        if pending:
            return {"type": "http.request", "body": pending.pop(0), "more_body": bool(pending) or more}
        if receive is None:
            await asyncio.Event().wait()  # (until cancelled: no client will leave)
        assert receive is not None
        return await receive()

    return next_message


async def collect(app: ASGIApp, scope: Scope, path: str, body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """`POST path` with `body` into `app`, its whole answer: status, headers, body."""
    head: Message = {"status": 500, "headers": []}
    chunks: list[bytes] = []

    async def send(message: Message) -> None:
        nonlocal head
        if message["type"] == "http.response.start":
            head = message
        elif message["type"] == "http.response.body":
            chunks.append(bytes(message.get("body", b"")))

    await post(app, scope, path, body, send, stream=False)
    return int(head["status"]), list(head.get("headers") or []), b"".join(chunks)


def with_body(scope: Scope, body: bytes) -> Scope:
    """The scope of a request whose body is now `body` (its length said, no chunked coding)."""
    headers = without(scope.get("headers") or [], b"content-length", b"transfer-encoding")
    return {**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}


__all__ = [
    "ANSWERED",
    "CREDENTIAL",
    "RESPONSE_HOOK",
    "STORED_INPUT",
    "collect",
    "post",
    "post_scope",
    "receive_body",
    "refuse_handshake",
    "replay",
    "respond",
    "with_body",
]
