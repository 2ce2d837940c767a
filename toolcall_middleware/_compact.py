"""`POST /v1/responses/compact` for a host without it (`compaction="emulate"`, the default).

The compact request becomes a Responses request for a summary (`core/apis/responses/_compaction.py`),
made in process through the middleware itself, so it reaches the host as any Responses request
does (rewritten, bridged); the answer becomes the `response.compaction` object. An error answer
(the host's, or ours: a 400 for a bad body) goes to the client as it came. With
`compaction="host"` the route is the host's: the request passes through untouched.

```python
responses_path = compact_route(config, "POST", "/v1/responses/compact")   # "/v1/responses", or None
await serve_compact(middleware, scope, receive, send, responses_path, config.limits)   # an ASGI request
status, headers, body = compact_wsgi(wsgi_middleware, environ, raw, responses_path, config.limits.max_depth)
```

The summary answer is read as the pipeline reads any host answer (`decode_data`): nested deeper
than `limits.max_depth`, it is no response, and the client gets a 502 on every Python (json's own
decoder gives up at a depth that depends on the version).
"""

from __future__ import annotations

import io
from typing import Any

from ._inprocess import ASGIApp, Receive, Scope, Sink, collect, receive_body, respond
from .config import Limits, ToolCallConfig
from .core._body_read import BodyRead
from .core._http import json_head
from .core.apis.responses._compaction import compact_path, compacted, summary_request
from .core.framing._utf8 import json_bytes
from .core.inbound._base import decode_data
from .core.request import BadRequest
from .core.request._body import read_request

Answer = tuple[int, list[tuple[bytes, bytes]], bytes]


def compact_route(config: ToolCallConfig, method: str, path: str) -> str | None:
    """The Responses route a compact request is summarized through, or None: not a compact
    route of ours (another path, another method, or the host compacts itself)."""
    if method != "POST" or config.compaction != "emulate":
        return None
    base = compact_path(path)
    if base is None:
        return None
    route = config.route(base)
    return base if route is not None and route.api == "responses" and not route.count_tokens else None


def summary_body(raw: bytes) -> tuple[Any, bytes]:
    """The compact request and the summary request's bytes; raises `BadRequest` as the API does."""
    try:
        body = read_request(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise BadRequest("The request body is not valid JSON.", None, code="invalid_json") from None
    return body, json_bytes(summary_request(body))


def answer(body: Any, status: int, headers: list[tuple[bytes, bytes]], raw: bytes, max_depth: int) -> Answer:
    """The client's answer from the host's answer to the summary request: an error as it came,
    a summary as the compaction object (none when it is nested deeper than `max_depth`)."""
    if status != 200:
        return status, headers, raw
    try:
        response = decode_data(raw.decode(), max_depth)
    except UnicodeDecodeError:  # (not a response)
        response = None
    if not isinstance(response, dict) or not isinstance(response.get("output"), list):
        error = {"message": "The host's answer to the summary request was not a response.", "type": "upstream_error"}
        return _json(502, {"error": {**error, "param": None, "code": "upstream_error"}})
    return _json(200, compacted(body, response))


def refused(error: BadRequest) -> Answer:
    return _json(400, error.body(), final=True)


async def serve_compact(
    app: ASGIApp, scope: Scope, receive: Receive, send: Sink, responses_path: str, limits: Limits
) -> None:
    """Answer one compact request (an ASGI HTTP request) with `compact_asgi`; a body over
    `limits.max_request_bytes` is a 413, a client that leaves before its body ends gets nothing."""
    limit = limits.max_request_bytes
    read = BodyRead(limit)
    if not await receive_body(receive, read):
        return
    if read.over:
        error = BadRequest(f"The request body is over {limit} bytes.", code="request_too_large")
        status, headers, data = _json(413, error.body(), final=True)
    else:
        status, headers, data = await compact_asgi(app, scope, read.body, responses_path, limits.max_depth)
    await respond(send, status, headers, data)


async def compact_asgi(app: ASGIApp, scope: Scope, raw: bytes, responses_path: str, max_depth: int) -> Answer:
    """The answer to a compact request whose body is `raw`, the summary asked of `app` in process
    (an answer nested deeper than `max_depth` is none)."""
    try:
        body, summary = summary_body(raw)
    except BadRequest as error:
        return refused(error)
    return answer(body, *await collect(app, scope, responses_path, summary), max_depth)


def compact_wsgi(app: Any, environ: dict[str, Any], raw: bytes, responses_path: str, max_depth: int) -> Answer:
    """`compact_asgi` for a WSGI middleware `app`: the summary asked of it in the same thread."""
    try:
        body, summary = summary_body(raw)
    except BadRequest as error:
        return refused(error)
    script = environ.get("SCRIPT_NAME", "")
    inner = {
        **environ,
        "REQUEST_METHOD": "POST",
        "PATH_INFO": responses_path[len(script) :] if script and responses_path.startswith(script) else responses_path,
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(summary)),
        "HTTP_ACCEPT": "application/json",
        "wsgi.input": io.BytesIO(summary),
    }
    for name in ("HTTP_CONTENT_ENCODING", "HTTP_TRANSFER_ENCODING"):
        inner.pop(name, None)
    head: list[Any] = [500, []]

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        head[:] = [int(status.split()[0]), [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]]
        return lambda data: chunks.append(data)

    chunks: list[bytes] = []
    result = app(inner, start_response)
    try:
        chunks.extend(result)
    finally:
        close = getattr(result, "close", None)
        if close is not None:
            close()
    return answer(body, head[0], head[1], b"".join(chunks), max_depth)


def _json(status: int, obj: Any, *, final: bool = False) -> Answer:
    """`obj` as a JSON answer; `final`: a refusal the same request would meet again (`json_head`)."""
    data = json_bytes(obj)
    return status, json_head(data, final=final), data


__all__ = ["compact_asgi", "compact_route", "compact_wsgi", "serve_compact"]
