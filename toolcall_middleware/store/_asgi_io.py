"""The ASGI plumbing the state's endpoints share: read a body, replay it, answer JSON or events."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

from .._inprocess import ANSWERED, receive_body, replay, respond, with_body
from ..core._body_read import BodyRead
from ..core._http import json_head
from ..core.framing._utf8 import json_bytes
from ._state import StateError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SSE_HEAD = [(b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-cache")]


class Disconnected(Exception):
    """The client left before its request body was complete."""


async def read_body(receive: Receive, limit: int) -> bytes:
    """The whole request body; past `limit`, a 413."""
    read = BodyRead(limit)
    if not await receive_body(receive, read):
        raise Disconnected
    if read.over:
        raise StateError(413, f"The request body is larger than {limit} bytes.", None, code="request_too_large")
    return read.body


def query_of(scope: Scope) -> dict[str, str]:
    return dict(parse_qsl(bytes(scope.get("query_string", b"")).decode("latin-1")))


async def answer(send: Send, status: int, body: Any, *, final: bool = False) -> None:
    """`body` as JSON with `status`; `final`: an error a repeat would meet again (`json_head`)."""
    data = json_bytes(body)
    await respond(send, status, json_head(data, final=final), data)


__all__ = [
    "ANSWERED",
    "SSE_HEAD",
    "ASGIApp",
    "Disconnected",
    "Message",
    "Receive",
    "Scope",
    "Send",
    "answer",
    "query_of",
    "read_body",
    "replay",
    "respond",
    "with_body",
]
