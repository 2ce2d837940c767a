"""Which requests are the middleware's: `route_request`, for every shell (ASGI, WSGI, Django).

A POST to one of the configured routes (`ToolCallConfig.route`: the client's API, the host's,
the path the host gets), its body not content-encoded, is ours; anything else goes to the app
untouched. A POST to a path that looks like an API route but matches none is warned of, once
(`surprises`): a route under a prefix the configuration does not name is the usual cause.

```python
route = route_request(config, "POST", "/v1/chat/completions", None)   # None: not ours
exchange = Exchange(config, route)
```
"""

from __future__ import annotations

from ._surprises import SURPRISES, looks_like_api
from .config import RouteMatch, ToolCallConfig


def route_request(
    config: ToolCallConfig, method: str, path: str, content_encoding: bytes | str | None
) -> RouteMatch | None:
    """Where a request the middleware rewrites goes, or None to leave it alone (another method
    or path, or a compressed request body)."""
    if method.upper() != "POST":
        return None
    if content_encoding is not None:
        coding = content_encoding.decode("latin-1") if isinstance(content_encoding, bytes) else content_encoding
        if coding.strip().lower() not in ("", "identity"):
            return None
    found = config.route(path)
    if found is None and looks_like_api(path):
        SURPRISES.warn(
            f"route:{path}",
            f"POST {path} looks like an API route, but no configured route matches it: it passes through "
            "untouched (under a prefix? route_prefixes=('/api',); another path? chat_routes=...)",
        )
    return found


__all__ = ["route_request"]
