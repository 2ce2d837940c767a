"""A PEP 3333 server side in a few lines, and tiny raw WSGI apps, to drive `ToolCallWSGIMiddleware`
chunk by chunk. Every app under test runs inside `wsgiref.validate.validator` on both sides of the
middleware: the outer one checks the middleware as an application, the inner one checks it as a
server to the app (how it calls start_response, reads wsgi.input, closes the iterable).

```python
server = Server().run(wrapped(app), environ(body))
server.status, server.headers, server.chunks, server.body
```
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from wsgiref.util import setup_testing_defaults
from wsgiref.validate import validator

from toolcall_middleware import ToolCallWSGIMiddleware

Environ = dict[str, Any]
App = Callable[[Environ, Any], Iterable[bytes]]

CHAT = "/v1/chat/completions"
RESPONSES = "/v1/responses"


def environ(
    body: bytes = b"", *, path: str = CHAT, method: str = "POST", chunked: bool = False, **extra: str
) -> Environ:
    """A request as a server builds it; `chunked`: no CONTENT_LENGTH, `wsgi.input_terminated` set."""
    env: Environ = {"REQUEST_METHOD": method, "SCRIPT_NAME": "", "PATH_INFO": path, "QUERY_STRING": ""}
    env["CONTENT_TYPE"] = "application/json"
    setup_testing_defaults(env)
    env["wsgi.input"] = io.BytesIO(body)
    if chunked:
        env["wsgi.input_terminated"] = True
    else:
        env["CONTENT_LENGTH"] = str(len(body))
    env.update(extra)
    return env


class Server:
    """The server side: headers count as sent at the first non-empty chunk (PEP 3333), `exc_info`
    re-raises once they were, the iterable is closed whatever happens. `stop_after` plays a client
    that leaves after that many chunks."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.status: str | None = None
        self.headers: list[tuple[str, str]] = []
        self.sent = False
        self.chunks: list[bytes] = []
        self.stop_after = stop_after

    def start_response(self, status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        if exc_info is not None:
            try:
                if self.sent:
                    raise exc_info[1].with_traceback(exc_info[2])
            finally:
                exc_info = None
        elif self.status is not None:
            raise AssertionError("start_response called twice without exc_info")
        self.status, self.headers = status, list(headers)
        return self.write

    def write(self, data: bytes) -> None:
        assert self.status is not None, "write() before start_response"
        self.sent = self.sent or bool(data)
        self.chunks.append(data)

    def run(self, app: App, env: Environ) -> Server:
        result = app(env, self.start_response)
        try:
            for chunk in result:
                assert self.status is not None, "a chunk before start_response"
                self.write(chunk)
                if self.stop_after is not None and len(self.chunks) >= self.stop_after:
                    break
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        return self

    @property
    def code(self) -> int:
        assert self.status is not None
        return int(self.status.split()[0])

    def header(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k.lower() == name.lower()]

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)

    def json(self) -> Any:
        return json.loads(self.body)


def wrapped(app: App, **options: Any) -> App:
    """`app` behind the middleware, validated on both sides."""
    options.setdefault("dialect", "hermes")
    return validator(ToolCallWSGIMiddleware(validator(app), **options))  # type: ignore[arg-type]


class Closing:
    """An app's iterable that counts its `close()` calls."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self.chunks = list(chunks)
        self.closed = 0

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.chunks)

    def close(self) -> None:
        self.closed += 1


def scripted(
    status: str,
    headers: list[tuple[str, str]],
    chunks: Iterable[bytes],
    *,
    seen: list[Environ] | None = None,
    lazy: bool = False,
    returned: list[Closing] | None = None,
) -> App:
    """A raw app that reads its whole body (recorded in `seen`, with the environ, as `_body`), then
    answers `chunks`; `lazy`: start_response is called inside the first iteration."""
    parts = list(chunks)

    def app(env: Environ, start_response: Any) -> Iterable[bytes]:
        length = env.get("CONTENT_LENGTH") or ""
        stream = env["wsgi.input"]
        data = stream.read(int(length)) if length else (stream.read(-1) if env.get("wsgi.input_terminated") else b"")
        if seen is not None:
            seen.append({**env, "_body": data})
        if lazy:

            def generate() -> Iterator[bytes]:
                start_response(status, headers)
                yield from parts

            return generate()
        start_response(status, headers)
        result = Closing(parts)
        if returned is not None:
            returned.append(result)
        return result

    return app


def sse_headers() -> list[tuple[str, str]]:
    return [("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-cache")]


def json_headers(data: bytes) -> list[tuple[str, str]]:
    return [("Content-Type", "application/json"), ("Content-Length", str(len(data)))]


def exc_info() -> Any:
    return sys.exc_info()
