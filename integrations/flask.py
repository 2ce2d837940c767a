"""Flask: `init_app(app, **config)` puts `ToolCallWSGIMiddleware` around `app.wsgi_app`.

```python
app = Flask(__name__)
init_app(app, dialect="hermes")
```

Wrapping `wsgi_app` rather than the app keeps the app object (and its test client) intact, as
Flask's docs recommend for WSGI middleware. Streaming views (generators, `stream_with_context`)
stream through unchanged in timing; the iterable's `close()` still ends the request context.
"""

from __future__ import annotations

from typing import Any

from toolcall_middleware import ToolCallConfig, ToolCallWSGIMiddleware

from ._extras import require


def init_app(app: Any, config: ToolCallConfig | None = None, **options: Any) -> ToolCallWSGIMiddleware:
    """Wrap `app.wsgi_app`; keyword options are `ToolCallConfig` fields. Returns the middleware."""
    flask = require("flask", "flask")
    if not isinstance(app, flask.Flask):
        raise TypeError(f"init_app expects a Flask application, got {type(app).__name__}")
    middleware = ToolCallWSGIMiddleware(app.wsgi_app, config, **options)
    app.wsgi_app = middleware
    return middleware


__all__ = ["init_app"]
