"""What requests that offer the same tools share: their tools read, checked and rendered once.

An agent sends the same tools with every turn. Reading them into their canonical form, checking
them and writing them into the model's prompt costs tens of microseconds per tool (for an agent
with thirty tools, more than the rest of the exchange), and gives the same result every time.
`remembered(kind, value, make)` is `make()`, made once for each `value` while it is remembered.

The key is `value` itself, exactly: marshal's bytes of it (format 2, which writes no references,
so one value always gives the same bytes, and keeps JSON's types apart: `1`, `1.0` and `true` are
different keys). A value marshal cannot write (a `Mapping` that is not a dict, anything that did
not come from JSON) is not remembered, nor is a `make()` that raises: both run every time. A
result is shared by every request that offers the same tools, so its users never change it
(frozen dataclasses, tuples, and the schemas as the request wrote them, which nothing writes to).

```python
rules = remembered("rules", (tools, tool_choice), lambda: ToolRules.read(tools, tool_choice))
```
"""

from __future__ import annotations

import marshal
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

MAX_ENTRIES = 128  # per process; a deployment serves a few sets of tools, an agent one
_MEMO: dict[tuple[str, bytes], Any] = {}
_MISSING = object()


def remembered(kind: str, value: Any, make: Callable[[], T]) -> T:
    """`make()` for `value` (of `kind`: what is made from it), made once while remembered."""
    try:
        key = (kind, marshal.dumps(value, 2))
    except ValueError:  # not marshal's to write: not remembered
        return make()
    found = _MEMO.get(key, _MISSING)
    if found is not _MISSING:
        return found  # type: ignore[no-any-return]
    made = make()
    if len(_MEMO) >= MAX_ENTRIES:
        _MEMO.clear()  # (bounded and simple: reached only by a server offered many tool sets)
    _MEMO[key] = made
    return made


def forget() -> None:
    """Remember nothing (tests; a process that wants its memory back)."""
    _MEMO.clear()


__all__ = ["MAX_ENTRIES", "forget", "remembered"]
