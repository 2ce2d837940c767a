"""The request id over ASGI and WSGI: kept or made (`core.request_id`), on the request the app sees and
on the answer the client gets.

The middleware gives each exchange of its own an id (its record, log line and span carry it);
`serve` puts `RequestIds` in front of everything it serves, so every request the proxy forwards
(`GET /v1/models` too) takes its id upstream and brings it back. The id lives in the scope
(`SCOPE_KEY`): a layer that finds it there already adds nothing.
"""

from __future__ import annotations

from typing import Any

from .core.request_id import HEADER, answer_headers, request_headers, request_id
from .inprocess import ASGIApp, Message, Receive, Scope
from .inprocess import Sink as Send
from .wsgi_io import Environ, ExcInfo, StartResponse, Write, WSGIHeaders, to_bytes, to_str

SCOPE_KEY = "toolcall.request_id"


def with_request_id(scope: Scope, send: Send) -> tuple[Send, str]:
    """The request's id, written into `scope` (its `x-request-id` header, and `SCOPE_KEY`), and
    the `send` that puts it on the answer's head. A scope that has one already keeps it and its
    `send` (an outer layer does the answer)."""
    found = scope.get(SCOPE_KEY)
    if isinstance(found, str):
        return send, found
    headers = list(scope.get("headers") or [])
    given = next((value for key, value in headers if key.lower() == HEADER), None)
    rid = request_id(given)
    if given != rid.encode():
        scope["headers"] = request_headers(headers, rid)
    scope[SCOPE_KEY] = rid

    def send_with_id(message: Message) -> Any:
        if message["type"] == "http.response.start":
            message = {**message, "headers": answer_headers(list(message.get("headers") or []), rid)}
        return send(message)

    return send_with_id, rid


def wsgi_request_id(environ: Environ, start_response: StartResponse) -> tuple[Environ, StartResponse, str]:
    """`with_request_id` for WSGI: the environ the app gets (its `HTTP_X_REQUEST_ID`), the
    `start_response` that puts the id on the answer's head, and the id."""
    rid = request_id(environ.get("HTTP_X_REQUEST_ID"))

    def start(status: str, headers: WSGIHeaders, exc_info: ExcInfo | None = None, /) -> Write:
        return start_response(status, to_str(answer_headers(to_bytes(headers), rid)), exc_info)

    return {**environ, "HTTP_X_REQUEST_ID": rid}, start, rid


class RequestIds:
    """ASGI middleware: every HTTP request with an id, and its answer with the same (see the module doc)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            send, _ = with_request_id(scope, send)
        await self.app(scope, receive, send)


__all__ = ["SCOPE_KEY", "RequestIds", "with_request_id", "wsgi_request_id"]
