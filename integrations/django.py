"""Django: a `MIDDLEWARE` entry, or a wrapper around the project's WSGI or ASGI application.

```python
# settings.py: one line in MIDDLEWARE (after GZipMiddleware, so gzip wraps the rewritten body)
MIDDLEWARE = [..., "toolcall_middleware.integrations.django.ToolCallDjangoMiddleware"]
TOOLCALL_MIDDLEWARE = {"dialect": "hermes"}          # ToolCallConfig fields

# or, instead, around the whole project (wsgi.py / asgi.py)
application = wrap_wsgi(get_wsgi_application(), dialect="hermes")
application = wrap_asgi(get_asgi_application(), dialect="hermes")
```

The middleware works sync and async. It rewrites the request body where Django keeps it (the
cached `request.body` and the stream views read), so `request.body`, `request.read()` and
`json.loads(request.body)` all see the rewritten request. A JSON response is rewritten whole; a
streaming response stays streaming and keeps its kind (`is_async`): an async iterator is wrapped
by an async generator, a sync one by a sync generator, so Django never falls back to consuming
the stream into a list.
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Iterator
from typing import Any

from toolcall_middleware import ToolCallConfig, ToolCallMiddleware, ToolCallWSGIMiddleware
from toolcall_middleware.shell_support import (
    AGAIN,
    BUFFER,
    PASS,
    STREAM,
    BodyRead,
    Exchange,
    Head,
    Headers,
    HeldResponse,
    Writes,
    refuse_unsupported,
    route_request,
)

from ._extras import require


def wrap_wsgi(application: Any, config: ToolCallConfig | None = None, **options: Any) -> ToolCallWSGIMiddleware:
    """The project's WSGI application (`get_wsgi_application()`) behind the WSGI middleware."""
    return ToolCallWSGIMiddleware(application, config, **options)


def wrap_asgi(application: Any, config: ToolCallConfig | None = None, **options: Any) -> ToolCallMiddleware:
    """The project's ASGI application (`get_asgi_application()`) behind the ASGI middleware."""
    return ToolCallMiddleware(application, config, **options)


class ToolCallDjangoMiddleware:
    """A Django middleware; its options are the `TOOLCALL_MIDDLEWARE` setting (a dict of
    `ToolCallConfig` fields, or a `ToolCallConfig`)."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Any) -> None:
        require("django", "django")
        from asgiref.sync import iscoroutinefunction, markcoroutinefunction
        from django.conf import settings

        self.get_response = get_response
        options = getattr(settings, "TOOLCALL_MIDDLEWARE", None) or {}
        self.config = options if isinstance(options, ToolCallConfig) else ToolCallConfig(**options)
        refuse_unsupported(self.config, "ToolCallDjangoMiddleware", compaction=False)
        self.async_mode = iscoroutinefunction(get_response)
        if self.async_mode:
            markcoroutinefunction(self)

    def __call__(self, request: Any) -> Any:
        if self.async_mode:
            return self.__acall__(request)
        exchange, answer = self._request(request)
        if answer is not None:
            return answer
        if exchange is None:
            return self.get_response(request)
        exchange.host_asked()
        response = self.get_response(request)
        while (answer := self._response(exchange, request, response)) is _AGAIN:
            response = self.get_response(_again(exchange, request))
        return answer

    async def __acall__(self, request: Any) -> Any:
        exchange, answer = self._request(request)  # the body is already read whole under ASGI
        if answer is not None:
            return answer
        if exchange is None:
            return await self.get_response(request)
        exchange.host_asked()
        response = await self.get_response(request)
        while (answer := self._response(exchange, request, response)) is _AGAIN:
            response = await self.get_response(_again(exchange, request))
        return answer

    # -- request -------------------------------------------------------------------------------

    def _request(self, request: Any) -> tuple[Exchange[ToolCallConfig] | None, Any]:
        """The exchange for a request of ours (None: not ours), or a response that answers it now."""
        from django.core.exceptions import RequestDataTooBig
        from django.http import HttpResponse

        meta = request.META
        coding = meta.get("HTTP_CONTENT_ENCODING")
        route = route_request(self.config, request.method or "", request.path, coding)
        if route is None:
            return None, None
        exchange = Exchange(self.config, route)
        if BodyRead(self.config.limits.max_request_bytes, meta.get("CONTENT_LENGTH") or "0").skipped:
            forward = exchange.forward(b"", complete=False)  # too large to hold: left to the view
        else:
            try:
                raw = request.body
            except RequestDataTooBig:
                forward = exchange.forward(b"", complete=False)  # Django's own limit: the view answers it
            else:
                forward = exchange.forward(raw)
        if forward.refusal is not None:  # malformed, or a bridged request too large to translate
            status, head, body = forward.refusal
            refusal = HttpResponse(body, status=status, content_type="application/json")
            for name, value in head:
                refusal[name.decode("latin-1")] = value.decode("latin-1")  # (`x-should-retry` with them)
            return None, refusal
        new = forward.body
        if new is not None:
            # Where Django keeps a body once read: `request.body` is `_body`; `read()`, `readline()`
            # and the upload parsers read `_stream`; the length is checked against CONTENT_LENGTH.
            request._body = new
            request._stream = io.BytesIO(new)
            meta["CONTENT_LENGTH"] = str(len(new))
        if exchange.path != request.path:
            # URL resolution reads `path_info` after the middleware ran: the host API's view answers.
            request.path = exchange.path
            request.path_info = exchange.path_info(request.META.get("SCRIPT_NAME", ""))
        return exchange, None

    # -- response ------------------------------------------------------------------------------

    def _response(self, exchange: Exchange[ToolCallConfig], request: Any, response: Any) -> Any:
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.items()]
        # What the client gets, decided as for the ASGI and WSGI shells (a new length spelled as Django does).
        held: HeldResponse[bytes] = HeldResponse(exchange, length_name=b"Content-Length")
        held.head(request.method or "POST", response.status_code, headers)
        exchange.prepare()
        if exchange.state is BUFFER and response.streaming:
            # A JSON body sent as a stream: its head is out before its end.
            exchange.pass_through("a streamed JSON response: passed through")
        if exchange.state is not STREAM and exchange.state is not BUFFER:
            return _done(exchange, response)
        if exchange.state is BUFFER:
            writes = held.body(response.content, response.content, end=True)
            assert isinstance(writes, Writes)  # (a whole body's end: never a stream's bytes alone)
            if exchange.state is AGAIN:
                return _AGAIN  # the view is asked again (`regenerate`): nothing of this answer goes out
            if writes.body is None:
                return _done(exchange, response)  # not an answer, or our failure (logged): the app's own
            _set_head(response, headers, writes.head)
            response.content = writes.body
            return _done(exchange, response)
        _set_head(response, headers, held.release().head)
        if response.is_async:
            response.streaming_content = _stream_async(exchange, held, response.streaming_content)
        else:
            response.streaming_content = _stream_sync(exchange, held, response.streaming_content)
        return response


_AGAIN = object()  # `_response`'s word for: the view is asked the same request again


def _done(exchange: Exchange[ToolCallConfig], response: Any) -> Any:
    """`response`, whole, goes to the client: the exchange's record is complete (the upstream's
    time, the bytes sent) and reported."""
    exchange.host_done()
    if not response.streaming:
        exchange.sent(len(response.content))
    exchange.report()
    return response


def _again(exchange: Exchange[ToolCallConfig], request: Any) -> Any:
    """`request` as the view gets it again: its last whole answer broke a rule another generation
    may keep (`regenerate`). The body is read afresh from where Django keeps it."""
    exchange.again()
    request._stream = io.BytesIO(request.body)
    return request


def _set_head(response: Any, old: Headers, head: Head | None) -> None:
    """The exchange's head on Django's response: what the rewrite invalidates removed
    (Content-Length, ETag, Content-Encoding once decoded), a new length and status set."""
    assert head is not None and head.headers is not None
    kept = {k.lower() for k, _ in head.headers}
    for name in {k.decode("latin-1") for k, _ in old if k.lower() not in kept}:
        del response[name]
    for key, value in head.headers:
        if (key, value) not in old:
            response[key.decode("latin-1")] = value.decode("latin-1")
    if head.status is not None:
        response.status_code = head.status


def _joined(writes: bytes | Writes[bytes]) -> bytes:
    """The bytes of one piece of a stream (bytes: ours, a piece of it under way; the view's own,
    after a failure of ours or once it passes; b"" while text is held back, or after the client's
    stream ended)."""
    if isinstance(writes, bytes):
        return writes
    return b"".join(writes.messages) + (writes.body or b"")


def _stream_sync(
    exchange: Exchange[ToolCallConfig], held: HeldResponse[bytes], content: Iterator[bytes]
) -> Iterator[bytes]:
    try:
        for chunk in content:
            out = _joined(held.body(chunk, chunk, end=False))
            exchange.sent(len(out))
            yield out  # b"" while held back: the server's block boundary
        if exchange.state is not PASS:
            tail = _joined(held.end())
            exchange.sent(len(tail))
            yield tail
    finally:
        exchange.host_done()
        exchange.report()


async def _stream_async(
    exchange: Exchange[ToolCallConfig], held: HeldResponse[bytes], content: AsyncIterator[bytes]
) -> AsyncIterator[bytes]:
    try:
        async for chunk in content:
            out = _joined(held.body(chunk, chunk, end=False))
            if out:
                exchange.sent(len(out))
                yield out
        tail = _joined(held.end())
        if tail:
            exchange.sent(len(tail))
            yield tail
    finally:
        exchange.host_done()
        exchange.report()


__all__ = ["ToolCallDjangoMiddleware", "wrap_asgi", "wrap_wsgi"]
