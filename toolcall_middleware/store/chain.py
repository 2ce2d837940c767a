"""Chains of responses: each item stored once, each context rebuilt from links.

A stored response keeps the items it added (its own input, with references resolved, and its
output) and a link to the response it continued, never the whole input again: a chain of N turns
stores N turns, not N²/2. The whole input of a response is rebuilt from its chain: the items of
every response before it, then its own.

Finding a chain's responses takes a fixed number of round trips, whatever its length. A response
at depth `d` (the number before it) keeps `line`, the ids from its anchor (the nearest depth below
`d` that is a multiple of `CHECKPOINT_EVERY`) up to its previous response; a response at such a
depth (a checkpoint) also keeps `anchors`, the ids of every checkpoint before it. So the rebuild
reads the response, its anchor, the anchor's checkpoints (one batched read; their lines cover the
rest) and then every response of the chain (one batched read). Each record holds at most
`CHECKPOINT_EVERY` ids in its line and one id per checkpoint: storage stays linear.

Expiry: a response expires with its chain. `renewed` is when the chain's responses were last all
given a full TTL; a response continuing it is stored to expire at `renewed + ttl`, and a
continuation made when more than `RENEW_FRACTION` of the TTL has passed restarts every response of
the chain (one batched refresh). So an earlier response never expires before a later one that
needs it, and a long chain is refreshed a few times per TTL, not on every turn.

A response stored by earlier versions, with its whole input (`input`), reads as a chain of one.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .base import Store
from .state import StateError, added_of, conversation_key, history_of, output_of, response_key

CHECKPOINT_EVERY = 16
MAX_CHAIN = 2048  # responses a continuation may reach back (the default of `limits.max_chain_responses`)
RENEW_FRACTION = 0.125  # of the TTL: how stale a chain's expiry may grow before a continuation renews it
CONTEXT_CACHE_BYTES = 64 * 1024 * 1024
CONTEXT_CACHE_ENTRIES = 1024


@dataclass(frozen=True)
class Link:
    """Where a new response sits: `chain`, the ids of the responses it continues (root first; the
    last is its `previous_response_id`); `renewed`, when they were last all kept alive for a full
    TTL; `conversation_items`, how many items of its conversation came before its own."""

    chain: tuple[str, ...] = ()
    renewed: float = 0.0
    conversation_items: int | None = None

    def fields(self) -> dict[str, Any]:
        """The link as a stored record keeps it."""
        depth = len(self.chain)
        anchor = CHECKPOINT_EVERY * ((depth - 1) // CHECKPOINT_EVERY) if depth else 0
        out: dict[str, Any] = {"depth": depth, "line": list(self.chain[anchor:]), "renewed": self.renewed}
        if depth % CHECKPOINT_EVERY == 0:
            out["anchors"] = list(self.chain[0:depth:CHECKPOINT_EVERY])
        return out

    def lifetime(self, ttl: float | None, now: float) -> float | None:
        """How long the response may live: as long as its chain (None: the store's TTL)."""
        if ttl is None or not self.chain:
            return None
        return self.renewed + ttl - now


def stored_record(link: Link, response: dict[str, Any], added: list[dict[str, Any]], events: Any) -> dict[str, Any]:
    """The record a response is stored as: its own items, its link, its events for replay."""
    record: dict[str, Any] = {"response": response, "added": added, "events": events, "chain": link.fields()}
    if link.conversation_items is not None:
        record["conversation_items"] = link.conversation_items
    return record


def tombstone(record: Mapping[str, Any]) -> dict[str, Any]:
    """A deleted response as its chain still needs it: the items it added and its output, and no
    more (every endpoint answers it as not found; the responses continuing it still continue)."""
    kept = {k: v for k, v in record.items() if k in ("chain", "added", "input", "conversation_items")}
    response = {"output": output_of(record), "conversation": record.get("response", {}).get("conversation")}
    return {**kept, "response": response, "deleted": True}


def needs_renewal(renewed: float, ttl: float | None, now: float) -> bool:
    return ttl is not None and now - renewed > ttl * RENEW_FRACTION


def broken(ident: str, missing: str, param: str | None) -> StateError:
    return StateError(
        404,
        f"Response with id '{ident}' cannot be continued: an earlier response of its chain ('{missing}') was "
        "deleted or has expired.",
        param,
        code="not_found",
    )


@dataclass(frozen=True)
class Context:
    """A stored response's whole input, rebuilt, and the ids of the responses before it; `size`:
    about the bytes it takes (0: not known, estimated when cached)."""

    ancestors: tuple[str, ...]
    whole: list[dict[str, Any]]
    size: int = 0


class ContextCache:
    """Recent contexts (a response's whole input) by scope and id, bounded in bytes and entries:
    the next turn of a chain served here needs no rebuild, only a check that the chain is whole."""

    def __init__(self, max_bytes: int = CONTEXT_CACHE_BYTES, max_entries: int = CONTEXT_CACHE_ENTRIES) -> None:
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[str, str], tuple[Context, int]] = OrderedDict()
        self._bytes = 0

    def get(self, scope: str, ident: str) -> Context | None:
        found = self._entries.get((scope, ident))
        if found is None:
            return None
        self._entries.move_to_end((scope, ident))
        return found[0]

    def put(self, scope: str, ident: str, context: Context) -> None:
        self.drop(scope, ident)
        size = context.size or _size(context.whole)
        if size > self.max_bytes // 4:
            return  # (one huge context would push out every other)
        self._entries[(scope, ident)] = (context, size)
        self._bytes += size
        while self._bytes > self.max_bytes or len(self._entries) > self.max_entries:
            _, (_, dropped) = self._entries.popitem(last=False)
            self._bytes -= dropped

    def drop(self, scope: str, ident: str) -> None:
        found = self._entries.pop((scope, ident), None)
        if found is not None:
            self._bytes -= found[1]


async def _read_all(store: Store, scope: str, ids: Sequence[str], ident: str, param: str | None) -> list[Any]:
    records = await store.get_many([response_key(scope, i) for i in ids])
    for i, record in zip(ids, records, strict=True):
        if record is None:
            raise broken(ident, i, param)
    return records


async def ancestor_ids(store: Store, scope: str, ident: str, record: Mapping[str, Any], param: str | None) -> list[str]:
    """The ids of the responses before a stored one, root first: at most two batched reads."""
    link = record.get("chain") or {}
    line, depth = list(link.get("line", ())), int(link.get("depth", 0))
    if depth <= len(line):
        return line
    (anchor,) = await _read_all(store, scope, line[:1], ident, param)
    checkpoints = list(anchor["chain"]["anchors"][1:])
    lines = [c["chain"]["line"] for c in await _read_all(store, scope, checkpoints, ident, param)]
    return [*(i for part in lines for i in part), *anchor["chain"]["line"], *line]


async def rebuild(store: Store, scope: str, ident: str, record: Mapping[str, Any], param: str | None) -> Context:
    """A stored response's whole input from the store: what its chain's responses added, then its own."""
    ids = await ancestor_ids(store, scope, ident, record, param)
    records = [*await _read_all(store, scope, ids, ident, param), record]
    whole = await _conversation_prefix(store, scope, ident, records[0], param)
    for earlier in records[:-1]:
        whole += history_of(earlier)
    whole += added_of(record)
    return Context(tuple(ids), whole)


async def _conversation_prefix(
    store: Store, scope: str, ident: str, root: Mapping[str, Any], param: str | None
) -> list[dict[str, Any]]:
    """The conversation items that came before a chain's first response (none outside one)."""
    count = root.get("conversation_items")
    conversation = (root.get("response") or {}).get("conversation") or {}
    if count is None or not isinstance(conversation.get("id"), str):
        return []
    found = await store.get(conversation_key(scope, conversation["id"]))
    if found is None:
        raise broken(ident, conversation["id"], param)
    return list(found["items"][:count])


async def context_of(
    store: Store,
    scope: str,
    ident: str,
    record: Mapping[str, Any],
    cache: ContextCache | None,
    param: str | None = None,
    *,
    renew: bool = False,
) -> Context:
    """A stored response's whole input: from the cache or rebuilt. (A cached chain needs no check:
    its responses expire with it, and a deleted one leaves its items to it.) `renew`: every
    response of the chain, this one too, gets a full TTL, in one batched refresh."""
    context = cache.get(scope, ident) if cache is not None else None
    if context is None:
        context = await rebuild(store, scope, ident, record, param)
        if cache is not None:
            cache.put(scope, ident, context)
    keys = [response_key(scope, i) for i in (*context.ancestors, ident)]
    if renew and await store.alive(keys, refresh=True) < len(keys):
        if cache is not None:
            cache.drop(scope, ident)
        return await rebuild(store, scope, ident, record, param)  # (names the response that is gone)
    return context


def _size(items: Iterable[Mapping[str, Any]]) -> int:
    """An estimate of the bytes items take (their text parts dominate), for a context rebuilt (a
    turn made here knows the size of the body it sent)."""
    total = 0
    for item in items:
        total += 200
        for part in item.get("content") or () if isinstance(item.get("content"), list) else ():
            total += len(str(part.get("text", ""))) if isinstance(part, Mapping) else 0
        total += len(str(item.get("arguments", ""))) + len(str(item.get("output", "")))
    return total


async def continue_from(
    store: Store, scope: str, ident: str, cache: ContextCache | None, *, max_chain: int
) -> tuple[list[dict[str, Any]], Link]:
    """The history a response continuing `ident` starts from, and its link (a 404 naming
    `previous_response_id` when it is not there; a 400 past `max_chain`)."""
    param = "previous_response_id"
    record = await store.get(response_key(scope, ident))
    if record is None or record.get("deleted"):
        raise StateError(404, f"Previous response with id '{ident}' not found.", param, code="not_found")
    link = record.get("chain") or {}
    depth = int(link.get("depth", 0)) + 1
    if depth > max_chain:
        raise StateError(
            400,
            f"Invalid 'previous_response_id': the response continues a chain of {depth} responses, over the "
            f"limit of {max_chain}; start a new one with the context it needs.",
            param,
            code="chain_too_long",
        )
    now = time.time()
    renew = needs_renewal(float(link.get("renewed", 0.0)), store.limits.ttl, now)
    context = await context_of(store, scope, ident, record, cache, param, renew=renew)
    renewed = now if renew else float(link.get("renewed", 0.0))
    return [*context.whole, *output_of(record)], Link((*context.ancestors, ident), renewed)


__all__ = [
    "CHECKPOINT_EVERY",
    "CONTEXT_CACHE_BYTES",
    "MAX_CHAIN",
    "RENEW_FRACTION",
    "Context",
    "ContextCache",
    "Link",
    "ancestor_ids",
    "context_of",
    "continue_from",
    "needs_renewal",
    "rebuild",
    "stored_record",
    "tombstone",
]
