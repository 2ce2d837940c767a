"""Quart: `init_app(app, **config)` puts `ToolCallMiddleware` around `app.asgi_app`.

```python
app = Quart(__name__)
init_app(app, dialect="hermes")
```

Wrapping `asgi_app` rather than the app keeps the app object intact and puts the middleware in
every request path, the test client's included (Quart's docs on middleware).
"""

from __future__ import annotations

from typing import Any

from toolcall_middleware import ToolCallConfig, ToolCallMiddleware

from ._extras import require


def init_app(app: Any, config: ToolCallConfig | None = None, **options: Any) -> ToolCallMiddleware:
    """Wrap `app.asgi_app`; keyword options are `ToolCallConfig` fields. Returns the middleware."""
    quart = require("quart", "quart")
    if not isinstance(app, quart.Quart):
        raise TypeError(f"init_app expects a Quart application, got {type(app).__name__}")
    middleware = ToolCallMiddleware(app.asgi_app, config, **options)
    app.asgi_app = middleware
    return middleware


__all__ = ["init_app"]
