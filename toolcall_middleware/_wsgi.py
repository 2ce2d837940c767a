"""`ToolCallWSGIMiddleware`: native WSGI (PEP 3333) middleware over the same exchange as the ASGI one.

```python
app.wsgi_app = ToolCallWSGIMiddleware(app.wsgi_app, dialect="hermes")    # Flask
application = ToolCallWSGIMiddleware(get_wsgi_application(), dialect=...)  # Django, any WSGI app
```

No bridge to ASGI: the server's worker thread drives the exchange (`core._exchange.Exchange`)
directly, chunk by chunk (`wsgi_request.WSGIRequest`, one per request of ours); every other
request goes to the app untouched.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._compact import compact_route, compact_wsgi
from ._request_ids import wsgi_request_id
from ._routing import route_request
from ._wsgi_io import Environ, StartResponse, WSGIApp, read_body, respond
from ._wsgi_request import WSGIRequest
from .config import ToolCallConfig
from .core._exchange import Exchange
from .core._http import json_head
from .core.framing._utf8 import json_bytes
from .core.request import BadRequest
from .shell_support import refuse_unsupported


class ToolCallWSGIMiddleware:
    """WSGI middleware; keyword options are `ToolCallConfig` fields, validated here, once. An
    option WSGI cannot honour (`store=`, `keepalive_interval=`) raises here (`shell_support`)."""

    def __init__(self, app: WSGIApp, config: ToolCallConfig | None = None, **options: Any) -> None:
        self.app = app
        self.config = config if config is not None else ToolCallConfig(**options)
        refuse_unsupported(self.config, "ToolCallWSGIMiddleware")

    def __call__(self, environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")
        method = environ.get("REQUEST_METHOD", "GET")
        route = route_request(self.config, method, path, environ.get("HTTP_CONTENT_ENCODING"))
        if route is None:
            compacted = compact_route(self.config, method, path)
            if compacted is not None:  # `compaction="emulate"`: the host's model summarizes
                return self._compact(environ, start_response, compacted)
            return self.app(environ, start_response)
        exchange = Exchange(self.config, route)
        start_response, exchange.record.request_id = wsgi_request_id(environ, start_response)
        return WSGIRequest(self.app, exchange, environ, start_response).run()

    def _compact(self, environ: Environ, start_response: StartResponse, responses_path: str) -> Iterable[bytes]:
        limit = self.config.limits.max_request_bytes
        raw, complete = read_body(environ, limit)
        if raw is None or not complete:
            error = BadRequest(f"The request body is over {limit} bytes.", code="request_too_large")
            body = json_bytes(error.body())
            status, headers = 413, json_head(body, final=True)
        else:
            status, headers, body = compact_wsgi(self, environ, raw, responses_path, self.config.limits.max_depth)
        return respond(start_response, status, headers, body)


__all__ = ["ToolCallWSGIMiddleware"]
