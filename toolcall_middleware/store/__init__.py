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

from ..config import check_store_url
from ._api import load_state
from ._base import Store, StoreError, StoreFull, StoreLimits, StoreUnavailable
from ._memory import MemoryStore
from ._sqlite import SQLiteStore
from ._state import Wanted, expand, history_of, wanted_state


def open_store(spec: str, limits: StoreLimits | None = None) -> Store:
    """The backend a store URL names: `memory`, `sqlite:///path` (`sqlite:////abs/path` or
    `sqlite:///relative`), `redis://…` / `rediss://…` / `unix://…`."""
    check_store_url(spec)
    if spec == "memory":
        return MemoryStore(limits)
    if spec.startswith("sqlite://"):
        return SQLiteStore(Path(spec.removeprefix("sqlite://").removeprefix("/")).expanduser(), limits)
    from ._redis import RedisStore

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
    "expand",
    "history_of",
    "load_state",
    "open_store",
    "wanted_state",
]
