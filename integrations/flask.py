"""Flask: `init_app(app, **config)` puts `ToolCallWSGIMiddleware` around `app.wsgi_app`.

```python
app = Flask(__name__)
init_app(app, dialect="hermes")

app.config["TOOLCALL_MIDDLEWARE"] = {"dialect": "hermes", "strict": True}   # or from the app's config
init_app(app)
```

The options are `ToolCallConfig` fields: `app.config["TOOLCALL_MIDDLEWARE"]` (a dict, as Django
reads `settings.TOOLCALL_MIDDLEWARE`), with keyword options over it; a `config` object stands alone.

Wrapping `wsgi_app` rather than the app keeps the app object (and its test client) intact, as
Flask's docs recommend for WSGI middleware. Streaming views (generators, `stream_with_context`)
stream through unchanged in timing; the iterable's `close()` still ends the request context.
"""

from __future__ import annotations

from typing import Any

from toolcall_middleware import ToolCallConfig, ToolCallWSGIMiddleware

from ._extras import require


def init_app(app: Any, config: ToolCallConfig | None = None, **options: Any) -> ToolCallWSGIMiddleware:
    """Wrap `app.wsgi_app`; the options are `app.config["TOOLCALL_MIDDLEWARE"]` with keyword
    options over it (see the module doc). Returns the middleware."""
    flask = require("flask", "flask")
    if not isinstance(app, flask.Flask):
        raise TypeError(f"init_app expects a Flask application, got {type(app).__name__}")
    if config is None:
        configured = app.config.get("TOOLCALL_MIDDLEWARE") or {}
        if not isinstance(configured, dict):
            raise TypeError('app.config["TOOLCALL_MIDDLEWARE"] must be a dict of ToolCallConfig options')
        options = {**configured, **options}
    middleware = ToolCallWSGIMiddleware(app.wsgi_app, config, **options)
    app.wsgi_app = middleware
    return middleware


__all__ = ["init_app"]
