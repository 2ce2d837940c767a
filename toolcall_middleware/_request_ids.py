"""The request id over ASGI and WSGI: kept or made (`core._request_id`), on the request the app sees and
on the answer the client gets.

The middleware gives each exchange of its own an id (its record, log line and span carry it): the
client's, echoed on the answer, or one made for the record alone, since in process a request and
an answer that are not ours to change go as they came (a framework's request-id middleware outside
ours gives the id the app, the record and the client share). `serve` puts `RequestIds` in front of
everything it serves, which makes the id a client did not send: every request the proxy forwards
(`GET /v1/models` too) takes its id upstream and brings it back. The id lives in the scope
(`SCOPE_KEY`): a layer that finds it there already adds nothing.
"""

from __future__ import annotations

from typing import Any

from ._inprocess import ASGIApp, Message, Receive, Scope
from ._inprocess import Sink as Send
from ._wsgi_io import Environ, ExcInfo, StartResponse, Write, WSGIHeaders, to_bytes, to_str
from .core._request_id import HEADER, answer_headers, fresh_request_id, request_headers, valid_request_id

SCOPE_KEY = "toolcall.request_id"


def with_request_id(scope: Scope, send: Send, *, make: bool = False) -> tuple[Send, str]:
    """The request's id (also put in the scope as `SCOPE_KEY`) and the `send` that puts it on
    the answer's head. The client's own id is kept and echoed. Without one (or with one not safe
    to keep), a fresh id is made: `make` puts it in the request's `x-request-id` and on the answer
    (`serve`); otherwise it is the record's alone, and the request and its answer go as they came
    (the middleware in process). A scope that has an id already keeps it, and its `send`."""
    found = scope.get(SCOPE_KEY)
    if isinstance(found, str):
        return send, found
    headers = scope.get("headers") or []
    rid = valid_request_id(next((value for key, value in headers if key.lower() == HEADER), None))
    if rid is None:
        rid = fresh_request_id()
        scope[SCOPE_KEY] = rid
        if not make:
            return send, rid
        scope["headers"] = request_headers(list(headers), rid)
    scope[SCOPE_KEY] = rid

    def send_with_id(message: Message) -> Any:
        if message["type"] == "http.response.start":
            message = {**message, "headers": answer_headers(list(message.get("headers") or []), rid)}
        return send(message)

    return send_with_id, rid


def wsgi_request_id(environ: Environ, start_response: StartResponse) -> tuple[StartResponse, str]:
    """`with_request_id` for the WSGI middleware (in process): the `start_response` that echoes
    the client's id on the answer's head, and the id (a fresh one, the record's alone, when the
    client sent none that is safe to keep)."""
    rid = valid_request_id(environ.get("HTTP_X_REQUEST_ID"))
    if rid is None:
        return start_response, fresh_request_id()
    mine = rid

    def start(status: str, headers: WSGIHeaders, exc_info: ExcInfo | None = None, /) -> Write:
        return start_response(status, to_str(answer_headers(to_bytes(headers), mine)), exc_info)

    return start, rid


class RequestIds:
    """ASGI middleware: every HTTP request with an id, and its answer with the same (see the module doc)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            send, _ = with_request_id(scope, send, make=True)
        await self.app(scope, receive, send)


__all__ = ["SCOPE_KEY", "RequestIds", "with_request_id", "wsgi_request_id"]
