"""Response and conversation state for the Responses API: one interface, three backends.

```python
from toolcall_middleware.store import open_store
store = open_store("sqlite:///var/lib/toolcall/state.db")   # or "memory", "redis://host:6379/0"
```

`Store` is the interface (`base.py`); `MemoryStore`, `SQLiteStore` and `RedisStore` implement it;
`state.py` holds the pure rules (expansion of `previous_response_id`, `conversation` and
`item_reference`, scoping, ids, pagination); `layer.py` is the ASGI layer that serves the
stateful endpoints in front of the stateless middleware. Code that takes Responses requests by
another way (a WebSocket) expands them the same way:

```python
wanted = wanted_state(body)
history, found = await load_state(store, scope, wanted)        # the reads (404s naming the field)
stateless_body, whole_input, new_items = expand(body, history, found)   # pure
```
"""

from __future__ import annotations

from pathlib import Path

from ..redact import redact
from .api import load_state
from .base import Store, StoreError, StoreFull, StoreLimits, StoreUnavailable
from .memory import MemoryStore
from .sqlite import SQLiteStore
from .state import Wanted, expand, history_of, wanted_state

SCHEMES = ("memory", "sqlite:///path/to/file.db", "redis://host:port/db", "rediss://…", "none")


def check_store_url(spec: str) -> None:
    """Raise a ValueError when `open_store` would refuse `spec` (without connecting to anything);
    its message shows the URL redacted."""
    shown = redact(spec)
    if spec == "memory" or spec.startswith(("sqlite://", "redis://", "rediss://", "unix://")):
        if spec.startswith("sqlite://") and not spec.removeprefix("sqlite://").removeprefix("/"):
            raise ValueError(f"store {shown!r}: name a file, as sqlite:///path/to/state.db")
        if not spec.startswith(("memory", "sqlite")):
            try:
                import redis.asyncio  # noqa: F401
            except ImportError:
                raise ValueError(
                    f"store {shown!r} needs the redis package: pip install 'toolcall-middleware[redis]'"
                ) from None
        return
    raise ValueError(f"store {shown!r}: expected one of {', '.join(SCHEMES)}")


def open_store(spec: str, limits: StoreLimits | None = None) -> Store:
    """The backend a store URL names: `memory`, `sqlite:///path` (`sqlite:////abs/path` or
    `sqlite:///relative`), `redis://…` / `rediss://…` / `unix://…`."""
    check_store_url(spec)
    if spec == "memory":
        return MemoryStore(limits)
    if spec.startswith("sqlite://"):
        return SQLiteStore(Path(spec.removeprefix("sqlite://").removeprefix("/")).expanduser(), limits)
    from .redis import RedisStore

    return RedisStore(spec, limits)


__all__ = [
    "MemoryStore",
    "SQLiteStore",
    "Store",
    "StoreError",
    "StoreFull",
    "StoreLimits",
    "StoreUnavailable",
    "Wanted",
    "check_store_url",
    "expand",
    "history_of",
    "load_state",
    "open_store",
    "wanted_state",
]
