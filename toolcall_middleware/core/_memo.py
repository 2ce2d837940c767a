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

Making the key is itself a walk over the value, as long as reading a few tools, and a request's
tools are asked for by three parts (the request's rewrite, the rules, the parser's schemas). So a
request's tools are made *shared* first (`shared`, `shared_json`): every request that sends the
same tools gets the one object the first of them sent, remembered under its key (its JSON text as
it came, when the body is read from its bytes: then it is not even decoded again). A key of a
value that holds a shared object is made from that object's key, not from its contents. A shared
object is read-only, as every result here is: the request bodies that hold it are never changed
in place (the rewrites build new ones).
"""

from __future__ import annotations

import itertools
import marshal
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

MAX_ENTRIES = 128  # per process; a deployment serves a few sets of tools, an agent one
_MEMO: dict[tuple[str, bytes], Any] = {}
_MISSING = object()
# The shared objects, by identity: id -> (the object, its stand-in in keys: a number no other
# shared object ever had). An entry holds its object, so the id is never another object's while
# the entry stands; it goes when the memo is cleared (and with it every key that named it).
_SHARED: dict[int, tuple[Any, tuple[str, int]]] = {}
_serials = itertools.count()


def remembered(kind: str, value: Any, make: Callable[[], T]) -> T:
    """`make()` for `value` (of `kind`: what is made from it), made once while remembered."""
    try:
        key = (kind, marshal.dumps(_stand_in(value) if _SHARED else value, 2))
    except ValueError:  # not marshal's to write: not remembered
        return make()
    found = _MEMO.get(key, _MISSING)
    if found is not _MISSING:
        return found  # type: ignore[no-any-return]
    made = make()
    _keep(key, made)
    return made


def shared(value: Any) -> Any:
    """The one object for every value equal to `value` as JSON (see the module doc): the first
    one seen. Only a list or a dict is shared (another value's identity tells nothing), and
    not one marshal cannot write."""
    if type(value) is not list and type(value) is not dict:
        return value
    try:
        key = ("shared value", marshal.dumps(value, 2))
    except ValueError:
        return value
    found = _MEMO.get(key, _MISSING)
    if found is not _MISSING:
        return found
    return _share(key, value)


def shared_json(text: bytes, decode: Callable[[bytes], Any]) -> Any:
    """`decode(text)` for the JSON text `text`, one object for every request that sends the same
    text: decoded once, shared (see the module doc), when it is a list or a dict (another value
    is decoded every time). Raises what `decode` raises."""
    key = ("shared text", text)
    found = _MEMO.get(key, _MISSING)
    if found is not _MISSING:
        return found
    value = decode(text)
    if type(value) is not list and type(value) is not dict:
        return value
    return _share(key, value)


def _share(key: tuple[str, bytes], value: Any) -> Any:
    """Remember `value` as the shared object of `key`, with a stand-in no other ever had."""
    _keep(key, value)
    _SHARED[id(value)] = (value, ("shared", next(_serials)))
    return value


def _stand_in(value: Any) -> Any:
    """`value` for its key, shared objects written as their stand-ins (a value from JSON holds
    no tuples, so a stand-in, a tuple, is never read as one). The values keyed here are JSON
    values and tuples of them."""
    if type(value) is tuple:
        return tuple([_stand_in(item) for item in value])
    entry = _SHARED.get(id(value))
    return entry[1] if entry is not None and entry[0] is value else value


def _keep(key: tuple[str, bytes], value: Any) -> None:
    if len(_MEMO) >= MAX_ENTRIES:
        # (bounded and simple: reached only by a server offered many tool sets)
        _MEMO.clear()
        _SHARED.clear()
    _MEMO[key] = value


def forget() -> None:
    """Remember nothing (tests; a process that wants its memory back)."""
    _MEMO.clear()
    _SHARED.clear()


__all__ = ["MAX_ENTRIES", "forget", "remembered", "shared", "shared_json"]
