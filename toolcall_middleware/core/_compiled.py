"""The compiled helper, where the package was built with it: pure functions on bytes.

`_scan.c` is compiled by `hatch_build.py` where a C compiler answers, against Python's limited C
API. It keeps no state and touches no Python object's attributes: each function takes bytes and
gives back plain values (`member_span(raw, name)`: where a JSON object's top-level member lies,
used by `core.request._body`). Where it is missing, or `TOOLCALL_MIDDLEWARE_PURE_PYTHON` is set
when the package is imported, `native` is `None` and the callers take their Python path.

```python
from toolcall_middleware.core._compiled import native
span = native.member_span(raw, b"tools") if native is not None else None
```
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType


def _load() -> ModuleType | None:
    if os.environ.get("TOOLCALL_MIDDLEWARE_PURE_PYTHON"):
        return None
    try:
        return importlib.import_module("._scan", __package__)
    except ImportError:
        return None


native = _load()

__all__ = ["native"]
