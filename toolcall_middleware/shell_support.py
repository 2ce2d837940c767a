"""Options a shell cannot honour fail where the shell is built, never silently.

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

from .config import ToolCallConfig

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


__all__ = ["refuse_unsupported"]
