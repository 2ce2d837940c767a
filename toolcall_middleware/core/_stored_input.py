"""A Responses request whose input begins with a stored chain's context, read without that context.

The Responses state (`toolcall_middleware.store`) expands a `previous_response_id` into the
chain's whole context, thousands of items on a long chain, and hands the middleware below it the
body the host is to get. The middleware reads any request whole: it decodes it, checks how deep
it nests and each item's shape, and flattens its tool history into the dialect's text, which made
each turn of a long chain cost as much as the chain is long. The state knows more than the bytes
say: which items at the start of the input are the context (`StoredInput`, beside the body in the
ASGI scope, where no client can put one), the items themselves, already decoded, and where the
middleware's flattening of them stood when it last read them (`Folded`, by dialect), which it
kept with the context.

So the middleware reads only the rest: the body's bytes less the context's (its own items and
fields), the items after the flattening it goes on from, and writes the host's body from the
flattened context's JSON text and the turn's own. The same bytes as reading the body whole:
where anything differs from that case (a body that is not the one the state wrote, an error of
any kind, a compaction item), the body is read whole, as any other.

```python
body = stored.read(raw)                 # the body less the context's items; None: read it whole
stored.folded.get(key)                  # where the flattening stood after the context's first items
stored.after[key] = folded              # after the context's items: kept with the next turn's context
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._depth import deeper
from .apis.responses._rewrite import Folded
from .request._body import read_request

FoldKey = tuple[str, bool, int]  # (the dialect written, compactions expanded, the depth limit checked)


@dataclass(frozen=True)
class StoredInput:
    """The body the state wrote (`body`), the context's items that begin its input (`items`),
    where their JSON text lies in it (`start`, `end`: with the `, ` after it when more items
    follow), and, by `FoldKey`, where the flattening of the context's first items stood
    (`folded`) and where a later turn goes on from (`after`, filled by the middleware: after all
    of them for the dialect it read them in, as before for any other)."""

    body: bytes
    start: int
    end: int
    items: Sequence[Any]
    folded: Mapping[FoldKey, Folded] = field(default_factory=dict)
    after: dict[FoldKey, Folded] = field(default_factory=dict)

    def read(self, raw: bytes) -> dict[str, Any] | None:
        """The request `raw` less the context: decoded from its bytes less the context's, so its
        input holds only its own items; None when `raw` is not the body the state wrote, or the
        rest is no object with an input array."""
        if raw != self.body:
            return None
        try:
            body = read_request(raw[: self.start] + raw[self.end :])
        except (ValueError, UnicodeDecodeError, RecursionError):
            return None
        if type(body) is not dict or type(body.get("input")) is not list:
            return None
        return body

    def unchecked_depth(self, since: int, max_depth: int) -> bool:
        """Whether the context's items from `since` on (not yet checked) nest past `max_depth` as
        the body's input."""
        return since < len(self.items) and deeper(list(self.items[since:]), max_depth - 1)


__all__ = ["FoldKey", "StoredInput"]
