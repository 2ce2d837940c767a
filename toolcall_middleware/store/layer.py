"""`ResponsesState`: the stateful Responses API in front of the stateless middleware.

An ASGI layer on the client-facing side. It never looks inside an exchange: it sees the client's
request and the answer the stateless pipeline made, which works the same for a native Responses
host and for a Chat host behind the bridge.

- `POST /v1/responses`: `previous_response_id`, `conversation` and `item_reference` are expanded
  into plain input items (`state.expand`) before the request goes on. The answer is teed: a JSON
  body is held (the pipeline held it anyway) and a stream passes event by event, the response
  object in `response.created` … `response.completed` given our id and the stateful fields. When
  the response ends it is stored (unless `store: false`) and its items appended to its
  conversation before the final bytes go out, so a client that sees the answer can continue from
  it at once; a store that fails then turns the answer into a 503 (or the stream's `error`
  event), never a silent loss.
- The read endpoints (`api.py`) and `GET /v1/responses/{id}?stream=true` replay.

Every other request passes through untouched.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

from ..config import ToolCallConfig
from ..core.framing.sse import SSEDecoder, encode_event
from ..core.http import headers_named, without
from ..core.request.errors import BadRequest
from ..core.schema import JSON_OBJECT
from . import api
from .base import Store, StoreError, StoreLimits
from .state import (
    RESPONSE_EVENTS,
    SECRET_KEY,
    TERMINAL_EVENTS,
    Echo,
    StateError,
    conversation_key,
    expand,
    history_of,
    item_key,
    item_records,
    mint_id,
    new_secret,
    not_found,
    response_key,
    scope_of,
    wanted_state,
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Handler = Callable[[Scope, Receive, Send], Awaitable[None]]
Endpoint = Callable[[Store, str, Any, dict[str, str]], Awaitable[api.Answer]]

logger = logging.getLogger("toolcall_middleware")
SECRET_ENV = "TOOLCALL_STORE_SECRET"


class ResponsesState:
    """`app` is the stateless middleware (or anything that answers Responses requests)."""

    def __init__(
        self,
        app: ASGIApp,
        store: Store,
        *,
        responses_paths: tuple[str, ...],
        secret: str | None = None,
        max_request_bytes: int = 16 * 1024 * 1024,
    ) -> None:
        self.app = app
        self.store = store
        self.responses_paths = frozenset(p.rstrip("/") for p in responses_paths)
        self.conversations_paths = frozenset(
            p[: -len("responses")] + "conversations" for p in self.responses_paths if p.endswith("responses")
        )
        self._secret = secret or os.environ.get(SECRET_ENV) or None
        self._max_request_bytes = max_request_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "").rstrip("/")
        method = scope.get("method", "")
        handled = self._handler(method, path)
        if handled is None:
            await self.app(scope, receive, send)
            return
        try:
            await handled(scope, receive, send)
        except BadRequest as error:  # (StateError is one: it carries its status)
            await answer(send, getattr(error, "status", 400), error.body())
        except StoreError as error:
            logger.error("toolcall-middleware: store: %s", error)
            await answer(send, 503, unavailable(error).body())

    # -- routing -----------------------------------------------------------------------------

    def _handler(self, method: str, path: str) -> Handler | None:
        if path in self.responses_paths:
            return self._create if method == "POST" else None
        if path in self.conversations_paths:
            return (
                self._endpoint(lambda store, sc, body, _: api.create_conversation(store, sc, body))
                if method == "POST"
                else None
            )
        for base in self.responses_paths | self.conversations_paths:
            if path.startswith(base + "/"):
                parts = path[len(base) + 1 :].split("/")
                if not all(parts) or len(parts) > 3:
                    return None
                if base in self.responses_paths:
                    return self._response_route(method, parts)
                return self._conversation_route(method, parts)
        return None

    def _response_route(self, method: str, parts: list[str]) -> Handler | None:
        ident = parts[0]
        if len(parts) == 1 and method == "GET":
            return self._retrieve(ident)
        if len(parts) == 1 and method == "DELETE":
            return self._endpoint(lambda store, scope, _, q: api.delete_response(store, scope, ident))
        if parts[1:] == ["input_items"] and method == "GET":
            return self._endpoint(lambda store, scope, _, q: api.list_input_items(store, scope, ident, q))
        return None

    def _conversation_route(self, method: str, parts: list[str]) -> Handler | None:
        ident, rest = parts[0], parts[1:]
        table: dict[tuple[str, int], Endpoint] = {
            ("GET", 0): lambda store, scope, _, q: api.retrieve_conversation(store, scope, ident),
            ("POST", 0): lambda store, scope, body, q: api.update_conversation(store, scope, ident, body),
            ("DELETE", 0): lambda store, scope, _, q: api.delete_conversation(store, scope, ident),
        }
        if rest and rest[0] == "items":
            item = rest[1] if len(rest) == 2 else ""
            table = {
                ("GET", 1): lambda store, scope, _, q: api.list_conversation_items(store, scope, ident, q),
                ("POST", 1): lambda store, scope, body, q: api.add_conversation_items(store, scope, ident, body),
                ("GET", 2): lambda store, scope, _, q: api.retrieve_conversation_item(store, scope, ident, item),
                ("DELETE", 2): lambda store, scope, _, q: api.delete_conversation_item(store, scope, ident, item),
            }
        elif rest:
            return None
        found = table.get((method, len(rest)))
        return None if found is None else self._endpoint(found)

    def _endpoint(self, handler: Endpoint) -> Handler:
        """An endpoint of `(store, scope, body, query)` as an ASGI call."""

        async def run(scope: Scope, receive: Receive, send: Send) -> None:
            body = await read_body(receive, self._max_request_bytes)
            parsed = None
            if body:
                try:
                    parsed = json.loads(body)
                except ValueError:
                    raise BadRequest("The request body is not valid JSON.", None, code="invalid_json") from None
            credential = await self.scope_of(scope)
            status, out = await handler(self.store, credential, parsed, query_of(scope))
            await answer(send, status, out)

        return run

    async def scope_of(self, scope: Scope) -> str:
        """The credential scope of a request, under the shared secret (made once, in the store, when
        neither the config nor the environment gives one)."""
        if self._secret is None:
            made = new_secret()
            self._secret = await self.store.update(SECRET_KEY, lambda old: old or made)
        return scope_of(scope.get("headers") or [], str(self._secret))

    # -- POST /v1/responses --------------------------------------------------------------------

    async def _create(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive, self._max_request_bytes)
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        if not isinstance(request, JSON_OBJECT):
            await self.app(scope, replay([body], receive), send)  # the pipeline answers it as before
            return
        credential = await self.scope_of(scope)
        wanted = wanted_state(request)
        history: list[dict[str, Any]] = []
        if wanted.previous_response_id is not None:
            record = await self.store.get(response_key(credential, wanted.previous_response_id))
            if record is None:
                raise not_found("Previous response", wanted.previous_response_id, "previous_response_id")
            history = history_of(record)
        elif wanted.conversation is not None:
            conversation = await self.store.get(conversation_key(credential, wanted.conversation))
            if conversation is None:
                raise not_found("Conversation", wanted.conversation, "conversation")
            history = list(conversation["items"])
        found: dict[str, Any] = {}
        for ident in wanted.references:
            item = await self.store.get(item_key(credential, ident))
            if item is not None:
                found[ident] = item
        forward, whole, own = expand(request, history, found)
        echo = Echo(
            mint_id("resp"), request.get("store") is not False, wanted.previous_response_id, wanted.conversation
        )
        new_body = json.dumps(forward).encode()
        headers = without(scope.get("headers") or [], b"content-length", b"transfer-encoding")
        inner = {**scope, "headers": [*headers, (b"content-length", str(len(new_body)).encode())]}
        tee = Tee(self, send, credential, echo, whole, own)
        await self.app(inner, replay([new_body], receive), tee.send)

    async def finish(self, tee: Tee, response: dict[str, Any], events: list[dict[str, Any]] | None) -> None:
        """Store a finished response and add its items to its conversation (raises StoreError)."""
        output = [dict(item) for item in response.get("output") or () if isinstance(item, JSON_OBJECT)]
        echo = tee.echo
        if echo.store:
            record = {"response": response, "input": tee.whole, "events": events}
            await self.store.put(
                {response_key(tee.credential, echo.id): record, **item_records(tee.credential, [*tee.own, *output])}
            )
        if echo.conversation is not None and response.get("status") in ("completed", "incomplete"):
            await api.append_to_conversation(self.store, tee.credential, echo.conversation, [*tee.own, *output])

    # -- GET /v1/responses/{id} ------------------------------------------------------------------

    def _retrieve(self, ident: str) -> Handler:
        async def run(scope: Scope, receive: Receive, send: Send) -> None:
            query = query_of(scope)
            credential = await self.scope_of(scope)
            if query.get("stream") not in ("true", "1"):
                status, out = await api.retrieve_response(self.store, credential, ident)
                await answer(send, status, out)
                return
            record = await api.stored_response(self.store, credential, ident)
            events = record.get("events")
            if events is None:
                raise BadRequest("This response was not streamed; retrieve it without 'stream'.", "stream")
            try:
                after = int(query.get("starting_after", "-1"))
            except ValueError:
                raise BadRequest("Invalid 'starting_after': expected an integer.", "starting_after") from None
            chunks = [encode_event(e) for e in events if int(e.get("sequence_number", 0)) > after]
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"text/event-stream; charset=utf-8"),
                        (b"cache-control", b"no-cache"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": b"".join(chunks)})

        return run


class Tee:
    """The `send` of one `POST /v1/responses`: passes the answer on, with the stateful fields in its
    response objects, and stores the response when it ends."""

    def __init__(
        self, layer: ResponsesState, send: Send, credential: str, echo: Echo, whole: list[Any], own: list[Any]
    ) -> None:
        self.layer = layer
        self.downstream = send
        self.credential = credential
        self.echo = echo
        self.whole = whole
        self.own = own
        self.mode = "head"  # head -> json | stream | pass
        self.start: Message | None = None
        self.held: list[bytes] = []
        self.decoder: SSEDecoder | None = None
        self.events: list[dict[str, Any]] | None = []  # for replay; None once too large to keep
        self.kept_bytes = 0
        self.ended = False

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            return await self._start(message)
        if kind != "http.response.body" or self.mode == "pass":
            return await self.downstream(message)
        more = bool(message.get("more_body"))
        if self.mode == "json":
            self.held.append(bytes(message.get("body", b"")))
            if not more:
                await self._json_end()
            return None
        return await self._stream(bytes(message.get("body", b"")), more)

    async def _start(self, message: Message) -> None:
        headers = message.get("headers") or []
        content_type, coding = headers_named(headers, b"content-type", b"content-encoding")
        if message.get("status") != 200 or coding not in (None, b"identity"):
            self.mode = "pass"
        elif content_type is not None and content_type.startswith(b"text/event-stream"):
            self.mode = "stream"
            self.decoder = SSEDecoder()
            message = {**message, "headers": without(headers, b"content-length")}
            return await self.downstream(message)
        elif content_type is not None and b"json" in content_type:
            self.mode = "json"
            self.start = message
            return None
        else:
            self.mode = "pass"
        return await self.downstream(message)

    async def _json_end(self) -> None:
        body = b"".join(self.held)
        assert self.start is not None
        try:
            response = json.loads(body)
        except ValueError:
            response = None
        if isinstance(response, JSON_OBJECT) and response.get("object") == "response":
            response = self.echo.apply(response)
            try:
                await self.layer.finish(self, response, None)
            except StoreError as error:
                logger.error("toolcall-middleware: store: %s", error)
                return await answer(self.downstream, 503, unavailable(error).body())
            body = json.dumps(response, ensure_ascii=False).encode()
        headers = [
            *without(self.start.get("headers") or [], b"content-length"),
            (b"content-length", str(len(body)).encode()),
        ]
        await self.downstream({**self.start, "headers": headers})
        await self.downstream({"type": "http.response.body", "body": body})

    async def _stream(self, data: bytes, more: bool) -> None:
        assert self.decoder is not None
        out: list[bytes] = []
        for event in [*self.decoder.feed(data), *(self.decoder.flush() if not more else ())]:
            out.append(await self._event(event.raw, event.event, event.data))
        if out or not more:
            await self.downstream({"type": "http.response.body", "body": b"".join(out), "more_body": more})

    async def _event(self, raw: bytes, name: str | None, data: str | None) -> bytes:
        if self.ended or data is None or (name is not None and not name.startswith("response.")):
            return raw
        try:
            event = json.loads(data)
        except ValueError:
            return raw
        if not isinstance(event, JSON_OBJECT):
            return raw
        kind = event.get("type")
        if kind in RESPONSE_EVENTS and isinstance(event.get("response"), JSON_OBJECT):
            event = {**event, "response": self.echo.apply(event["response"])}
            raw = encode_event(event)
        self._keep(event, len(raw))
        if kind in TERMINAL_EVENTS and isinstance(event.get("response"), JSON_OBJECT):
            self.ended = True
            try:
                await self.layer.finish(self, event["response"], self.events)
            except StoreError as error:
                logger.error("toolcall-middleware: store: %s", error)
                failure = unavailable(error).body()["error"]
                return encode_event({"type": "error", "sequence_number": event.get("sequence_number", 0), **failure})
        return raw

    def _keep(self, event: dict[str, Any], size: int) -> None:
        """Keep the event for `?stream=true` replay, while the record stays within its limit."""
        if self.events is None or not self.echo.store:
            return
        self.kept_bytes += size
        if self.kept_bytes > self.layer.store.limits.max_record_bytes // 2:
            self.events = None  # the response is still stored; only its replay is given up
            return
        self.events.append(event)


# -- plumbing --------------------------------------------------------------------------------------


def unavailable(error: StoreError) -> StateError:
    return StateError(503, f"The response store is unavailable: {error}", None, code="store_unavailable")


async def read_body(receive: Receive, limit: int) -> bytes:
    """The whole request body; past `limit`, a 413."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise BadRequest("The client disconnected.", None)
        chunk = bytes(message.get("body", b""))
        size += len(chunk)
        if size > limit:
            raise StateError(413, f"The request body is larger than {limit} bytes.", None, code="request_too_large")
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


def replay(chunks: list[bytes], receive: Receive) -> Receive:
    """`receive` that gives the body first, then the server's own messages (the disconnect)."""
    pending = list(chunks) or [b""]

    async def next_message() -> Message:
        if pending:
            return {"type": "http.request", "body": pending.pop(0), "more_body": bool(pending)}
        return await receive()

    return next_message


def query_of(scope: Scope) -> dict[str, str]:
    return dict(parse_qsl(bytes(scope.get("query_string", b"")).decode("latin-1")))


async def answer(send: Send, status: int, body: Any) -> None:
    data = json.dumps(body, ensure_ascii=False).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def with_state(app: ASGIApp, config: ToolCallConfig) -> ASGIApp:
    """`app` behind the Responses state when the config names a store (and the host keeps none)."""
    if config.store in (None, "none") or config.stateful_host:
        return app
    from . import open_store

    limits = StoreLimits(
        ttl=config.store_ttl, max_records=config.store_max_records, max_record_bytes=config.store_max_bytes
    )
    paths = tuple(prefix + route for prefix in config.route_prefixes for route in config.responses_routes)
    return ResponsesState(
        app,
        open_store(str(config.store), limits),
        responses_paths=paths,
        secret=config.store_secret,
        max_request_bytes=config.limits.max_request_bytes,
    )
