"""How deep a JSON value nests, measured without recursion.

The rewrite, the bridges, the tool rules and the readers of a host's answer read JSON
recursively; a small body nested a thousand deep (2 KB of brackets) would raise `RecursionError`
in them, or already in JSON's own decoder. So a request body deeper than `Limits.max_depth` is
refused with a 400 that names where it goes too deep (`core.request._errors.check_depth`), and a
host answer deeper than `MAX_DEPTH` is not read. The walk goes level by level, without recursion,
so it is safe at any depth; an agent's tools (the same every turn, shared: `core._memo`) have their
depth measured once.

```python
too_deep_member(body, 128)   # ("messages", "[0].content[0]…") when body nests deeper than 128 levels
```
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ._memo import remembered

MAX_DEPTH = 128
"""The default depth limit (`Limits.max_depth`): of a request body, and of a host answer we read."""

# The members measured once for every request that sends them: an agent's tools, the same (shared)
# object on every turn, often most of the body.
_SHARED_MEMBERS = frozenset({"tools"})
_SHOWN = 8  # the steps of the path the error shows: enough to find the field, not the whole way down


def _container(value: Any) -> bool:
    return type(value) is dict or type(value) is list


def _below(level: list[Any]) -> list[Any]:
    """The arrays and objects directly inside those of `level`."""
    below: list[Any] = []
    append = below.append
    for item in level:
        for child in item.values() if type(item) is dict else item:  # (loops, not calls: every request walks)
            kind = type(child)
            if kind is dict or kind is list:
                append(child)
    return below


def depth(value: Any) -> int:
    """How many arrays and objects deep `value` nests (a scalar: 0, `[]`: 1, `[[1]]`: 2)."""
    level, found = ([value] if _container(value) else []), 0
    while level:
        found, level = found + 1, _below(level)
    return found


def deeper(value: Any, limit: int) -> bool:
    """`depth(value) > limit`, stopping at the first level past `limit`."""
    level, found = ([value] if _container(value) else []), 0
    while level:
        found += 1
        if found > limit:
            return True
        level = _below(level)
    return False


def too_deep_member(body: dict[str, Any], limit: int) -> tuple[str, str] | None:
    """The first member of `body` that nests deeper than `limit` levels (the body itself is the
    first), with the path below it where it does; `None` when none does."""
    for key, value in body.items():
        if not _container(value):
            continue
        if key in _SHARED_MEMBERS:
            too_deep = remembered("depth", value, partial(depth, value)) >= limit
        else:
            too_deep = deeper(value, limit - 1)
        if too_deep:
            return key, _path_past(value, limit - 1)
    return None


def _path_past(value: Any, limit: int) -> str:
    """The path below `value` (`[0].content[0]`) of the first array or object `limit` levels down:
    one walk level by level that keeps each container's parent, so its path can be read back."""
    # Each level: (container, index of its parent in the level above, its key there).
    levels: list[list[tuple[Any, int, Any]]] = [[(value, -1, None)]]
    while len(levels) <= limit:
        below = [
            (child, n, key)
            for n, (item, _, _) in enumerate(levels[-1])
            for key, child in (item.items() if type(item) is dict else enumerate(item))
            if _container(child)
        ]
        if not below:
            return ""
        levels.append(below)
    keys: list[Any] = []
    n = 0
    for level in reversed(levels[1:]):
        _, n, key = level[n]
        keys.append(key)
    keys.reverse()
    shown = "".join(f"[{key}]" if type(key) is int else f".{key}" for key in keys[:_SHOWN])
    return shown + ("…" if len(keys) > _SHOWN else "")


__all__ = ["MAX_DEPTH", "deeper", "depth", "too_deep_member"]
