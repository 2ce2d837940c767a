"""Whether a store can serve requests now: what `/readyz` asks and `serve` checks at start.

```python
problem = writable_folder(Path("~/.local/share/toolcall-middleware"))   # None, or why not
problem = await store_problem(store)                                    # None, or why not
```

A store answers a read of a key no record has (`get`): Redis and SQLite then reach their
backend. A SQLite store also needs its folder writable (its file, and the WAL beside it): a
folder that cannot be written fails every stored response, though reads may still work.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ._base import Store
from ._observed import ObservedStore
from ._sqlite import SQLiteStore

PROBE_KEY = "toolcall:readyz"


def writable_folder(folder: Path) -> str | None:
    """Why `folder` cannot hold the store's files (made if missing), or None when it can."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".toolcall-write-test-"):
            pass
    except OSError as e:
        return f"the data directory {folder} cannot be written: {e.strerror or e}"
    return None


async def store_problem(store: Store) -> str | None:
    """Why `store` cannot serve requests now (unreachable, its folder not writable), or None."""
    if isinstance(store, ObservedStore):
        store = store.inner  # (a probe is not an operation of the deployment's: not counted)
    if isinstance(store, SQLiteStore) and store.path != ":memory:":
        folder = Path(store.path).parent
        problem = writable_folder(folder)
        if problem is None and os.path.exists(store.path) and not os.access(store.path, os.W_OK):
            problem = f"the store file {store.path} cannot be written"
        if problem is not None:
            return problem
    try:
        await store.get(PROBE_KEY)
    except Exception as e:  # (StoreUnavailable, or whatever a backend raised)
        return f"the store cannot be reached: {e}"
    return None


__all__ = ["store_problem", "writable_folder"]
