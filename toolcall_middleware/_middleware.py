"""`ToolCallMiddleware`: the ASGI middleware as users add it.

```python
app.add_middleware(ToolCallMiddleware, dialect="qwen3_coder")   # Starlette / FastAPI
app = ToolCallMiddleware(app, dialect="kimi_k2")                 # any ASGI app
```

The stateless middleware (`asgi.StatelessMiddleware`: the requests that are ours, each one's
exchange) with the Responses state (`store.layer.ResponsesState`) in front of it when the
configuration names a store and the host keeps none. The state layer lives here, outside the
stateless shell, which imports nothing of `store/`. WebSocket mode and compaction post their
turns back into this object, so they go through the state too.
"""

from __future__ import annotations

from typing import Any

from ._asgi import StatelessMiddleware
from ._inprocess import ASGIApp, Receive, Scope
from ._inprocess import Sink as Send
from .config import ToolCallConfig
from .store._base import Store
from .store._layer import ResponsesState, with_state


class ToolCallMiddleware(StatelessMiddleware):
    """Pure ASGI middleware; keyword options are `ToolCallConfig` fields, validated once (see
    `StatelessMiddleware` for how a bad option is reported)."""

    def __init__(self, app: ASGIApp, config: ToolCallConfig | None = None, **options: Any) -> None:
        super().__init__(app, config, **options)
        # The Responses state, with a store, in front of the stateless middleware.
        self._entry: ASGIApp = with_state(super().__call__, self.config)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._entry(scope, receive, send)

    @property
    def store(self) -> Store | None:
        """The Responses state's store (None: no store, or a host that keeps state itself)."""
        found = getattr(self._entry, "store", None)
        return found if isinstance(found, Store) else None

    @property
    def state(self) -> ResponsesState | None:
        """The Responses state in front of the stateless middleware (None: no store)."""
        return self._entry if isinstance(self._entry, ResponsesState) else None


__all__ = ["ToolCallMiddleware"]
