"""Chains of responses: each item stored once, each context rebuilt from links.

A stored response is two records: the response (the object the API answers, and its events for
replay) and its turn (the items it added: its own input, with references resolved, and its
output; and a link to the response it continued), never the whole input again: a chain of N turns
stores N turns, not N²/2. The whole input of a response is rebuilt from its chain's turns (small:
no response objects, tools or events): the items of every turn before it, then its own. Deleting
a response deletes its response record; its turn stays for the responses that continue it (as
when each kept a copy of the items before it) until their chain expires.

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

A response stored by earlier versions, one record with its whole input (`input`) and no turn,
reads as a chain of one.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core._stored_input import FoldKey
from ..core.apis.responses._rewrite import Folded
from ._base import Store
from ._state import StateError, conversation_key, items_json, joined_json, output_of, response_key, turn_key

CHECKPOINT_EVERY = 16
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


def stored_records(
    scope: str, ident: str, link: Link, response: dict[str, Any], added: list[dict[str, Any]], events: Any
) -> dict[str, Any]:
    """The records a response is stored as, by key: the response with its events, and its turn."""
    turn: dict[str, Any] = {"added": added, "output": output_of({"response": response}), "chain": link.fields()}
    conversation = response.get("conversation")
    if link.conversation_items is not None and isinstance(conversation, Mapping):
        turn["conversation"] = {"id": conversation.get("id"), "items": link.conversation_items}
    return {response_key(scope, ident): {"response": response, "events": events}, turn_key(scope, ident): turn}


def turn_of(record: Mapping[str, Any]) -> dict[str, Any]:
    """The turn of a response stored by earlier versions (its whole input, as its own)."""
    return {"added": list(record.get("input", ())), "output": output_of(record), "chain": {}}


def turn_items(turn: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [*turn["added"], *turn["output"]]


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
    about the bytes it takes (0: not known, estimated when cached); `encoded`: the whole input's
    JSON text (`items_json`), from which the next turn's body is written (None: not made yet);
    `folded`: where the middleware's flattening of its first items stood, by dialect, which the
    next turn goes on from (`core._stored_input`; none for a context rebuilt)."""

    ancestors: tuple[str, ...]
    whole: list[dict[str, Any]]
    size: int = 0
    encoded: str | None = None
    folded: Mapping[FoldKey, Folded] = field(default_factory=dict)


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


async def read_turns(store: Store, scope: str, ids: Sequence[str], ident: str, param: str | None) -> list[Any]:
    """The turns of `ids`, in one batched read (and one more for responses of earlier versions,
    which have none); a 404 naming the one that is gone."""
    turns = await store.get_many([turn_key(scope, i) for i in ids])
    missing = [i for i, turn in zip(ids, turns, strict=True) if turn is None]
    if missing:
        older: dict[str, Any] = {}
        for i, record in zip(missing, await store.get_many([response_key(scope, i) for i in missing]), strict=True):
            if record is None or "input" not in record:
                raise broken(ident, i, param)
            older[i] = turn_of(record)
        turns = [turn if turn is not None else older[i] for i, turn in zip(ids, turns, strict=True)]
    return turns


async def ancestor_ids(store: Store, scope: str, ident: str, turn: Mapping[str, Any], param: str | None) -> list[str]:
    """The ids of the responses before a turn, root first: at most two batched reads."""
    link = turn.get("chain") or {}
    line, depth = list(link.get("line", ())), int(link.get("depth", 0))
    if depth <= len(line):
        return line
    (anchor,) = await read_turns(store, scope, line[:1], ident, param)
    checkpoints = list(anchor["chain"]["anchors"][1:])
    lines = [c["chain"]["line"] for c in await read_turns(store, scope, checkpoints, ident, param)]
    return [*(i for part in lines for i in part), *anchor["chain"]["line"], *line]


async def rebuild(store: Store, scope: str, ident: str, turn: Mapping[str, Any], param: str | None) -> Context:
    """A stored response's whole input from its chain's turns: what each added, then its own."""
    ids = await ancestor_ids(store, scope, ident, turn, param)
    turns = [*await read_turns(store, scope, ids, ident, param), turn]
    whole = await _conversation_prefix(store, scope, ident, turns[0], param)
    for earlier in turns[:-1]:
        whole += turn_items(earlier)
    whole += turn["added"]
    return Context(tuple(ids), whole)


async def _conversation_prefix(
    store: Store, scope: str, ident: str, root: Mapping[str, Any], param: str | None
) -> list[dict[str, Any]]:
    """The conversation items that came before a chain's first response (none outside one)."""
    conversation = root.get("conversation")
    if not isinstance(conversation, Mapping):
        return []
    found = await store.get(conversation_key(scope, conversation["id"]))
    if found is None:
        raise broken(ident, conversation["id"], param)
    return list(found["items"][: conversation["items"]])


async def read_turn(store: Store, scope: str, ident: str, what: str, param: str | None = None) -> tuple[Any, Any]:
    """A stored response and its turn, in one batched read; the 404 naming `what` when the
    response is not there (deleted, expired, or another scope's)."""
    record, turn = await store.get_many([response_key(scope, ident), turn_key(scope, ident)])
    if record is None:
        raise StateError(404, f"{what} with id '{ident}' not found.", param, code="not_found")
    if turn is None and "input" in record:
        turn = turn_of(record)
    if turn is None:
        raise broken(ident, ident, param)
    return record, turn


async def context_of(
    store: Store,
    scope: str,
    ident: str,
    turn: Mapping[str, Any],
    cache: ContextCache | None,
    param: str | None = None,
    *,
    renew: bool = False,
) -> Context:
    """A stored response's whole input: from the cache or rebuilt. (A cached chain needs no check:
    its turns expire with it, and a deleted response leaves its turn.) `renew`: every response of
    the chain, this one too, gets a full TTL, in one batched refresh."""
    context = cache.get(scope, ident) if cache is not None else None
    if context is None:
        context = await rebuild(store, scope, ident, turn, param)
        if cache is not None:
            cache.put(scope, ident, context)
    if renew:
        ids = (*context.ancestors, ident)
        await store.alive([*(turn_key(scope, i) for i in ids), *(response_key(scope, i) for i in ids)], refresh=True)
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
) -> tuple[list[dict[str, Any]], Link, str, Mapping[FoldKey, Folded]]:
    """The history a response continuing `ident` starts from, its link, the history's JSON text
    (`items_json`) and where the flattening of its first items stood (`Context.folded`); a 404
    naming `previous_response_id` when it is not there, a 400 past `max_chain`."""
    param = "previous_response_id"
    _, turn = await read_turn(store, scope, ident, "Previous response", param)
    link = turn.get("chain") or {}
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
    context = await context_of(store, scope, ident, turn, cache, param, renew=renew)
    renewed = now if renew else float(link.get("renewed", 0.0))
    encoded = context.encoded if context.encoded is not None else items_json(context.whole)  # (rebuilt)
    history_json = joined_json(encoded, items_json(turn["output"]))
    history = [*context.whole, *turn["output"]]
    return history, Link((*context.ancestors, ident), renewed), history_json, context.folded


__all__ = [
    "CHECKPOINT_EVERY",
    "CONTEXT_CACHE_BYTES",
    "RENEW_FRACTION",
    "Context",
    "ContextCache",
    "Link",
    "ancestor_ids",
    "context_of",
    "continue_from",
    "needs_renewal",
    "read_turn",
    "read_turns",
    "rebuild",
    "stored_records",
    "turn_items",
    "turn_of",
]
