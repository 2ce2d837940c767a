"""What a framework's own shell is written against, and options a shell cannot honour refused.

A framework that is neither ASGI nor WSGI (Django's `MIDDLEWARE`, `integrations/django.py`) drives
the exchange itself with the verbs the ASGI and WSGI shells use, and imports them from here:
`route_request` (whether a request is ours, and its route), `Exchange` (the one exchange object),
`BodyRead` (the rules a request body is read by), `HeldResponse`, `Head` and `Writes` (what to
write of the app's response, and when: `HeldResponse.body` answers a piece of a stream under way
with the bytes alone, anything else with `Writes`), `Headers`, and the exchange's states it
reads (`AGAIN`, `BUFFER`, `PASS`, `STREAM`). Those live in the core's internal modules; this is
their public name.

Options a shell cannot honour fail where the shell is built, never silently.

The Responses store (`store=`) lives in the ASGI middleware's state layer; the keep-alive pings
need an event loop's timer; the emulated `/responses/compact` route is served by the ASGI and WSGI
middlewares, not by Django's `MIDDLEWARE` entry. A shell without one of them refuses an option that
asks for it, with a message that says where it works:

```python
refuse_unsupported(config, "ToolCallWSGIMiddleware")        # raises ValueError: store='memory' …
```

An option left at its default is never refused (the keep-alive's and compaction's defaults are on
everywhere): only one the caller set.
"""

from __future__ import annotations

from ._routing import route_request
from .config import ToolCallConfig
from .core._body_read import BodyRead
from .core._exchange import Exchange
from .core._exchange_state import AGAIN, BUFFER, PASS, STREAM
from .core._held_response import Head, HeldResponse, Writes
from .core._http import Headers

STORE_WORKS = (
    "the Responses store works on the ASGI middleware (ToolCallMiddleware; Django's wrap_asgi; Quart's "
    "init_app) and in `toolcall-middleware serve`, which can run in front of this app"
)
KEEPALIVE_WORKS = "keep-alive pings work on the ASGI middleware and in `toolcall-middleware serve`"
COMPACTION_WORKS = (
    "compaction='emulate' is served by ToolCallWSGIMiddleware (wrap_wsgi) and the ASGI middleware (wrap_asgi), "
    "not by the MIDDLEWARE entry"
)


def refuse_unsupported(config: ToolCallConfig, shell: str, *, compaction: bool = True) -> None:
    """Raise `ValueError` naming each option of `config` that `shell` cannot honour and where it
    works. `compaction`: whether the shell serves the emulated `/responses/compact` route."""
    problems = []
    if config.store not in (None, "none") and not config.stateful_host:
        problems.append(f"store={config.store!r}: {STORE_WORKS}")
    if "keepalive_interval" in config.model_fields_set and config.keepalive_interval:
        problems.append(f"keepalive_interval={config.keepalive_interval!r}: {KEEPALIVE_WORKS}")
    if not compaction and "compaction" in config.model_fields_set and config.compaction == "emulate":
        problems.append(COMPACTION_WORKS)
    if problems:
        raise ValueError(f"{shell} cannot honour " + "; ".join(problems))


__all__ = [
    "AGAIN",
    "BUFFER",
    "PASS",
    "STREAM",
    "BodyRead",
    "Exchange",
    "Head",
    "Headers",
    "HeldResponse",
    "Writes",
    "refuse_unsupported",
    "route_request",
]
