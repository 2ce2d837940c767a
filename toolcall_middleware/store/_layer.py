"""`ResponsesState`: the stateful Responses API in front of the stateless middleware.

An ASGI layer on the client-facing side. It never looks inside an exchange: it sees the client's
request and the answer the stateless pipeline made, which works the same for a native Responses
host and for a Chat host behind the bridge.

- `POST /v1/responses`: `previous_response_id`, `conversation` and `item_reference` are expanded
  into plain input items (`state.expand`) before the request goes on; the answer goes back through
  a `Tee`, which gives it our id and the state's fields and stores it (unless `store: false`) and
  appends its items to its conversation before its last bytes go out, so a client that has the
  answer can continue from it at once. A store that fails then turns the answer into a 503 (or
  the stream's `error` event), never a silent loss. `background: true` runs it as a task
  (`background.py`) and answers at once.
- The read endpoints (`api.py`), `GET /v1/responses/{id}?stream=true` (replay, and following a
  background response) and `POST /v1/responses/{id}/cancel`.

Every other request passes through untouched.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from .._inprocess import CREDENTIAL, RESPONSE_HOOK, STORED_INPUT
from ..config import MAX_CHAIN, MAX_REFERENCES, Limits, ToolCallConfig
from ..core._depth import MAX_DEPTH
from ..core._http import json_head
from ..core._schema import JSON_OBJECT
from ..core._stored_input import StoredInput
from ..core.framing._utf8 import json_bytes
from ..core.request._errors import BadRequest
from . import _api as api
from ._admission import Admission, Refused
from ._asgi_io import (
    ANSWERED,
    ASGIApp,
    Disconnected,
    Receive,
    Scope,
    Send,
    answer,
    query_of,
    read_body,
    replay,
    respond,
    with_body,
)
from ._background import BackgroundRuns, Stop
from ._base import Store, StoreError, StoreLimits
from ._chain import Context, ContextCache, stored_records
from ._observed import OnOperation, observed
from ._state import (
    SECRET_KEY,
    TERMINAL_STATUSES,
    Echo,
    expand,
    forward_bytes,
    item_records,
    items_json,
    joined_json,
    mint_id,
    new_secret,
    queued_response,
    response_key,
    scope_of,
    wanted_state,
)
from ._tee import Tee, Turn, unavailable

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
        max_depth: int = MAX_DEPTH,
        max_chain: int = MAX_CHAIN,
        max_references: int = MAX_REFERENCES,
        admission: Admission | None = None,
        lease_seconds: float = 10.0,
    ) -> None:
        self.app = app
        self.store = store
        self.responses_paths = frozenset(p.rstrip("/") for p in responses_paths)
        self.conversations_paths = frozenset(
            p[: -len("responses")] + "conversations" for p in self.responses_paths if p.endswith("responses")
        )
        admission = admission or admission_for(Limits())
        self.background = BackgroundRuns(store, admission, lease_seconds=lease_seconds)
        self._secret = secret or os.environ.get(SECRET_ENV) or None
        self._secret_made: asyncio.Future[Any] | None = None
        self._max_request_bytes = max_request_bytes
        self.max_depth = max_depth  # an answer nested deeper is not stored (`Tee`)
        self.max_chain = max_chain  # responses a `previous_response_id` may reach back
        self.max_references = max_references  # `item_reference`s per request
        self.contexts = ContextCache()  # recent chains' contexts: a continuation here needs no rebuild

    def observe_store(self, on_operation: OnOperation) -> None:
        """Tell each store operation from now on to `on_operation` (`ObservedStore`), the
        background runs' included."""
        self.store = self.background.store = observed(self.store, on_operation)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(scope, receive, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.background.ensure_upkeep()  # (a server without a lifespan starts it here)
        handled = self._handler(scope.get("method", ""), scope.get("path", "").rstrip("/"))
        if handled is None:
            await self.app(scope, receive, send)
            return
        try:
            await handled(scope, receive, send)
        except Disconnected:
            return  # the client left before its request was whole: nothing to answer
        except BadRequest as error:  # (StateError is one: it carries its status)
            status = getattr(error, "status", 400)
            # Not found, malformed, too large: the same again. A full queue (429), an unreachable
            # store (503) may not be: the SDK's retry stays.
            await answer(send, status, error.body(), final=status < 500 and status != 429)
        except StoreError as error:
            logger.error("toolcall-middleware: store: %s", error)
            await answer(send, 503, unavailable(error).body())

    async def _lifespan(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The app's lifespan, with the background leases' upkeep from start-up to shut-down (so a
        dead owner's jobs are ended even before this process serves a request)."""
        self.background.ensure_upkeep()

        async def sent(message: Any) -> None:
            if message.get("type") == "lifespan.shutdown.complete":
                await self.background.stop()
            await send(message)

        await self.app(scope, receive, sent)

    # -- routing -----------------------------------------------------------------------------

    def _handler(self, method: str, path: str) -> Handler | None:
        if path in self.responses_paths:
            return self._create if method == "POST" else None
        if path in self.conversations_paths:
            if method != "POST":
                return None
            return self._endpoint(lambda store, sc, body, _: api.create_conversation(store, sc, body))
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
        ident, rest = parts[0], parts[1:]
        if not rest and method == "GET":
            return self._retrieve(ident)
        if not rest and method == "DELETE":
            return self._endpoint(lambda store, scope, _, q: self._delete(scope, ident))
        if rest == ["input_items"] and method == "GET":
            return self._endpoint(
                lambda store, scope, _, q: api.list_input_items(store, scope, ident, q, self.contexts)
            )
        if rest == ["cancel"] and method == "POST":
            return self._endpoint(lambda store, scope, _, q: self._cancel(scope, ident))
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
            loop = asyncio.get_running_loop()
            if self._secret_made is None or self._secret_made.get_loop() is not loop:
                # (one read-modify-write per process: a burst of first requests would contend)
                made = new_secret()
                update = self.store.update(SECRET_KEY, lambda old: old or made, expires=False)
                self._secret_made = asyncio.ensure_future(update)
            try:
                self._secret = await asyncio.shield(self._secret_made)
            except StoreError:
                self._secret_made = None  # (the next request tries again)
                raise
        return scope_of(scope.get("headers") or [], str(self._secret), scope.get(CREDENTIAL))

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
        wanted = wanted_state(request, self.max_references)
        loaded = await api.load_turn(self.store, credential, wanted, self.contexts, max_chain=self.max_chain)
        forward, whole, own = expand(request, loaded.history, loaded.found)
        stored = request.get("store") is not False
        background = request.get("background") is True
        if background and not stored:
            raise BadRequest("Background responses require 'store' to be true.", "background", code="invalid_value")
        echo = Echo(mint_id("resp"), stored, wanted.previous_response_id, wanted.conversation, background)
        if background:
            forward = {**forward, "stream": True}  # (streamed: its progress is visible)
        new_body, stored_input = body, None  # (nothing expanded: the client's own bytes go on)
        if forward != request:
            new_body, span = forward_bytes(forward, len(loaded.history), loaded.history_json)
            if span is not None:  # (the middleware below reads the body less the context)
                stored_input = StoredInput(new_body, *span, loaded.history, loaded.folded)
        turn = Turn(credential, echo, whole, own, loaded.link, len(new_body), loaded.history_json, stored_input)
        if background:
            await self._start_background(scope, request, new_body, turn, receive, send)
            return
        tee = Tee(
            turn, send, self.finish, max_kept_bytes=self.store.limits.max_record_bytes // 2, max_depth=self.max_depth
        )
        scope = {
            **with_body(scope, new_body),
            ANSWERED: lambda: tee.answered,
            STORED_INPUT: stored_input,
            RESPONSE_HOOK: tee.hook,
        }
        await self.app(scope, replay([new_body], receive), tee.send)

    async def finish(self, turn: Turn, response: dict[str, Any], events: list[str] | None) -> None:
        """Store a finished response and add its items to its conversation (raises StoreError)."""
        output = [dict(item) for item in response.get("output") or () if isinstance(item, JSON_OBJECT)]
        echo = turn.echo
        if echo.store:
            records = stored_records(turn.credential, echo.id, turn.link, response, turn.own, events)
            items = item_records(turn.credential, [*turn.own, *output])
            if echo.background:  # (cancelled meanwhile: its stream then ends in an error, and the cancel stands)
                key = response_key(turn.credential, echo.id)
                finished = records.pop(key)
                await self.store.update(key, lambda old: old if _has_ended(old) else finished)
            await self.store.put({**records, **items}, lifetime=self._lifetime(turn))
            encoded = None if turn.history_json is None else joined_json(turn.history_json, items_json(turn.own))
            folded = {} if turn.stored is None else turn.stored.after
            # (the flattened context's text is about as large again as the context's own)
            size = turn.size + sum(len(f.emitted_json) for f in folded.values())
            self.contexts.put(turn.credential, echo.id, Context(turn.link.chain, turn.whole, size, encoded, folded))
        if echo.conversation is not None and response.get("status") in ("completed", "incomplete"):
            await api.append_to_conversation(self.store, turn.credential, echo.conversation, [*turn.own, *output])

    # -- background responses ------------------------------------------------------------------

    async def _start_background(
        self,
        scope: Scope,
        request: Mapping[str, Any],
        body: bytes,
        turn: Turn,
        receive: Receive,
        send: Send,
    ) -> None:
        """Queue the response (stored as `queued`; its task starts when admitted) and answer: the
        queued response, or (for `stream: true`) its events as the task makes them; a 429 with
        `retry-after` when the queue is full."""
        key = response_key(turn.credential, turn.echo.id)
        queued = queued_response(request, turn.echo, int(time.time()))
        records = stored_records(turn.credential, turn.echo.id, turn.link, queued, turn.own, [])
        try:
            await self.background.submit(
                turn.credential,
                key,
                records,
                lambda: self._run_background(key, {**with_body(scope, body), STORED_INPUT: turn.stored}, body, turn),
                lifetime=self._lifetime(turn),
            )
        except Refused as refused:
            error = {"message": str(refused), "type": "requests", "param": None, "code": "rate_limit_exceeded"}
            data = json_bytes({"error": error})
            retry = (b"retry-after", str(refused.retry_after).encode())
            await respond(send, 429, [*json_head(data), retry], data)
            return
        if request.get("stream") is True:
            await self.background.follow(key, -1, send, receive)
        else:
            await answer(send, 200, queued)

    async def _run_background(self, key: str, scope: Scope, body: bytes, turn: Turn) -> None:
        last = [0.0]

        async def progress(tee: Tee) -> None:
            await self.background.progress(key, tee.latest, tee.events, last)

        async def nowhere(message: Any) -> None:
            return None

        limit = self.store.limits.max_record_bytes // 2
        tee = Tee(turn, nowhere, self.finish, max_kept_bytes=limit, progress=progress, max_depth=self.max_depth)
        try:
            await self.app({**scope, RESPONSE_HOOK: tee.hook}, replay([body], None), tee.send)
        except (asyncio.CancelledError, Stop):
            await asyncio.shield(self.background.end(key, "cancelled"))
            return
        except Exception as error:  # (the host failed: the response says so; the server logs it)
            logger.exception("toolcall-middleware: background response %s failed", turn.echo.id)
            await self.background.end(key, "failed", {"code": "server_error", "message": str(error)})
            return
        if not tee.ended:
            detail = b"".join(tee.held)[:2000].decode("utf-8", "replace")
            message = (
                f"The host answered {tee.status}: {detail}" if tee.status != 200 else "The host's answer ended early."
            )
            await self.background.end(key, "failed", {"code": "server_error", "message": message})

    def _lifetime(self, turn: Turn) -> float | None:
        return turn.link.lifetime(self.store.limits.ttl, time.time())

    async def _delete(self, credential: str, ident: str) -> api.Answer:
        self.contexts.drop(credential, ident)
        return await api.delete_response(self.store, credential, ident)

    async def _cancel(self, credential: str, ident: str) -> api.Answer:
        return 200, await self.background.cancel(response_key(credential, ident), ident)

    # -- GET /v1/responses/{id} ------------------------------------------------------------------

    def _retrieve(self, ident: str) -> Handler:
        async def run(scope: Scope, receive: Receive, send: Send) -> None:
            query = query_of(scope)
            credential = await self.scope_of(scope)
            record = await api.stored_response(self.store, credential, ident)
            if query.get("stream") not in ("true", "1"):
                await answer(send, 200, record["response"])
                return
            if record.get("events") is None:
                raise BadRequest("This response was not streamed; retrieve it without 'stream'.", "stream")
            try:
                after = int(query.get("starting_after", "-1"))
            except ValueError:
                raise BadRequest("Invalid 'starting_after': expected an integer.", "starting_after") from None
            await self.background.follow(response_key(credential, ident), after, send, receive)

        return run


def admission_for(limits: Limits) -> Admission:
    """The bounds on background responses that `limits` set."""
    return Admission(
        limits.max_background_jobs,
        limits.max_background_jobs_per_credential,
        limits.max_background_queued,
        limits.max_background_queued_per_credential,
    )


def _has_ended(record: Any) -> bool:
    return record is not None and record["response"].get("status") in TERMINAL_STATUSES


def with_state(app: ASGIApp, config: ToolCallConfig) -> ASGIApp:
    """`app` behind the Responses state when the config names a store (and the host keeps none)."""
    if config.store in (None, "none") or config.stateful_host:
        return app
    from . import open_store

    limits = StoreLimits(
        ttl=config.store_ttl, max_records=config.store_max_records, max_record_bytes=config.store_max_bytes
    )
    paths = tuple(prefix + route for prefix in config.route_prefixes for route in config.responses_routes)
    bounds = config.limits
    return ResponsesState(
        app,
        open_store(str(config.store), limits),
        responses_paths=paths,
        secret=config.store_secret,
        max_request_bytes=bounds.max_request_bytes,
        max_depth=bounds.max_depth,
        max_chain=bounds.max_chain_responses,
        max_references=bounds.max_item_references,
        admission=admission_for(bounds),
        lease_seconds=config.background_lease,
    )


__all__ = [
    "SECRET_ENV",
    "Endpoint",
    "Handler",
    "ResponsesState",
    "admission_for",
    "with_state",
]
