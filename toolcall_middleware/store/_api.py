"""The read and housekeeping endpoints of the Responses state, in OpenAI's shapes.

`GET /v1/responses/{id}` (its replay is the layer's: it streams), `DELETE /v1/responses/{id}`,
`GET /v1/responses/{id}/input_items`, and the Conversations API: `/v1/conversations` create,
retrieve, update, delete, and its items list, create, retrieve, delete. Each handler takes the
store, the request's scope and what the path, query and body say, and returns `(status, body)`;
a record of another scope is not found, exactly as one that never existed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..config import MAX_CHAIN
from ..core._schema import JSON_OBJECT
from ..core._stored_input import FoldKey
from ..core.apis.responses._rewrite import Folded
from ..core.request._errors import BadRequest, invalid, invalid_body
from ._base import Store
from ._chain import ContextCache, Link, context_of, continue_from, read_turn
from ._state import (
    Wanted,
    as_item,
    conversation_key,
    conversation_object,
    item_key,
    item_records,
    mint_id,
    not_found,
    page,
    response_key,
)

Answer = tuple[int, Any]
MAX_ADDED_ITEMS = 20  # items per `items.create`, as OpenAI allows


async def fetch(store: Store, key: str, what: str, ident: str, param: str | None = None) -> dict[str, Any]:
    """The record under `key`, or the 404 that names `what` (`Response`, `Conversation`, …)."""
    record = await store.get(key)
    if record is None:
        raise not_found(what, ident, param)
    return dict(record)


async def stored_response(store: Store, scope: str, ident: str) -> dict[str, Any]:
    return await fetch(store, response_key(scope, ident), "Response", ident)


@dataclass(frozen=True)
class Loaded:
    """What a request's state gives its turn: the `history` it continues, the items it refers to
    by id (`found`), where the new response will sit (`link`), and the history's JSON text
    (`history_json`, `state.items_json`; None: not made, as for a conversation's), and where the
    middleware's flattening of its first items stood (`chain.Context.folded`)."""

    history: list[dict[str, Any]]
    found: dict[str, dict[str, Any]]
    link: Link
    history_json: str | None = None
    folded: Mapping[FoldKey, Folded] = field(default_factory=dict)


async def load_turn(
    store: Store, scope: str, wanted: Wanted, contexts: ContextCache | None = None, *, max_chain: int = MAX_CHAIN
) -> Loaded:
    """The reads a request's state needs: the chain it continues (rebuilt, or from `contexts`),
    or its conversation's items, and every item it refers to in one batched read."""
    now = time.time()
    history: list[dict[str, Any]] = []
    history_json: str | None = ""
    folded: Mapping[FoldKey, Folded] = {}
    link = Link(renewed=now)
    if wanted.previous_response_id is not None:
        history, link, history_json, folded = await continue_from(
            store, scope, wanted.previous_response_id, contexts, max_chain=max_chain
        )
    elif wanted.conversation is not None:
        ident = wanted.conversation
        history = list(
            (await fetch(store, conversation_key(scope, ident), "Conversation", ident, "conversation"))["items"]
        )
        link = Link(renewed=now, conversation_items=len(history))
        history_json = None
    unique = list(dict.fromkeys(wanted.references))
    items = await store.get_many([item_key(scope, ident) for ident in unique]) if unique else []
    found = {ident: item for ident, item in zip(unique, items, strict=True) if item is not None}
    return Loaded(history, found, link, history_json, folded)


async def load_state(
    store: Store, scope: str, wanted: Wanted
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """What `state.expand` needs for a request (`wanted_state(body)`): the history it continues
    (the previous response's whole input and output, or the conversation's items) and the items it
    refers to by id; a 404 naming the field for a response or conversation this scope lacks.

    ```python
    wanted = wanted_state(body)
    history, found = await load_state(store, scope, wanted)
    stateless_body, whole_input, new_items = expand(body, history, found)
    ```
    """
    loaded = await load_turn(store, scope, wanted)
    return loaded.history, loaded.found


async def delete(store: Store, key: str, what: str, ident: str, kind: str) -> Answer:
    """Delete a record; the API's `deleted` object of type `kind`, or the 404 naming `what`."""
    if not await store.delete(key):
        raise not_found(what, ident)
    return 200, {"id": ident, "object": kind, "deleted": True}


def page_of(items: list[Any], query: Mapping[str, str]) -> Answer:
    return 200, page(items, after=query.get("after"), limit=query.get("limit"), order=query.get("order"))


async def delete_response(store: Store, scope: str, ident: str) -> Answer:
    """Delete a response (its turn stays for the responses that continue it: `chain.py`)."""
    return await delete(store, response_key(scope, ident), "Response", ident, "response")


async def list_input_items(
    store: Store, scope: str, ident: str, query: Mapping[str, str], contexts: ContextCache | None = None
) -> Answer:
    _, turn = await read_turn(store, scope, ident, "Response")
    return page_of((await context_of(store, scope, ident, turn, contexts)).whole, query)


# -- conversations ---------------------------------------------------------------------------------


def _metadata(body: Mapping[str, Any]) -> dict[str, str]:
    metadata = body.get("metadata")
    if metadata is None:
        return {}
    if not isinstance(metadata, JSON_OBJECT) or not all(isinstance(v, str) for v in metadata.values()):
        raise invalid("metadata", "expected an object of string values")
    if len(metadata) > 16:
        raise invalid("metadata", "expected at most 16 keys")
    return dict(metadata)


def _new_items(body: Mapping[str, Any], key: str, *, required: bool) -> list[dict[str, Any]]:
    given = body.get(key)
    if given is None and not required:
        return []
    if not isinstance(given, list):
        raise invalid(key, "expected an array of items")
    if len(given) > MAX_ADDED_ITEMS:
        raise invalid(key, f"expected at most {MAX_ADDED_ITEMS} items")
    items = [as_item(item, f"{key}[{i}]") for i, item in enumerate(given)]
    for i, item in enumerate(items):
        if item.get("type") == "item_reference":
            raise invalid(f"{key}[{i}]", "an item_reference cannot be added to a conversation")
    return items


async def create_conversation(store: Store, scope: str, body: Any) -> Answer:
    if not isinstance(body, JSON_OBJECT):
        raise invalid_body()
    items = _new_items(body, "items", required=False)
    conversation = conversation_object(mint_id("conv"), int(time.time()), _metadata(body))
    record = {"conversation": conversation, "items": items}
    await store.put({conversation_key(scope, conversation["id"]): record, **item_records(scope, items)})
    return 200, conversation


async def _conversation(store: Store, scope: str, ident: str) -> dict[str, Any]:
    return await fetch(store, conversation_key(scope, ident), "Conversation", ident)


async def retrieve_conversation(store: Store, scope: str, ident: str) -> Answer:
    return 200, (await _conversation(store, scope, ident))["conversation"]


async def update_conversation(store: Store, scope: str, ident: str, body: Any) -> Answer:
    if not isinstance(body, JSON_OBJECT):
        raise invalid_body()
    metadata = _metadata(body)

    def change(record: Any) -> Any:
        if record is None:
            return None
        return {**record, "conversation": {**record["conversation"], "metadata": metadata}}

    updated = await store.update(conversation_key(scope, ident), change)
    if updated is None:
        raise not_found("Conversation", ident)
    return 200, updated["conversation"]


async def delete_conversation(store: Store, scope: str, ident: str) -> Answer:
    return await delete(store, conversation_key(scope, ident), "Conversation", ident, "conversation.deleted")


async def list_conversation_items(store: Store, scope: str, ident: str, query: Mapping[str, str]) -> Answer:
    return page_of((await _conversation(store, scope, ident))["items"], query)


async def append_to_conversation(store: Store, scope: str, ident: str, items: list[dict[str, Any]]) -> bool:
    """Add `items` at the end of a conversation, atomically; False when it does not exist."""

    def change(record: Any) -> Any:
        return None if record is None else {**record, "items": [*record["items"], *items]}

    if await store.update(conversation_key(scope, ident), change) is None:
        return False
    await store.put(item_records(scope, items))
    return True


async def add_conversation_items(store: Store, scope: str, ident: str, body: Any) -> Answer:
    if not isinstance(body, JSON_OBJECT):
        raise invalid_body()
    items = _new_items(body, "items", required=True)
    if not await append_to_conversation(store, scope, ident, items):
        raise not_found("Conversation", ident)
    ids = [item["id"] for item in items]
    return 200, {
        "object": "list",
        "data": items,
        "first_id": ids[0] if ids else None,
        "last_id": ids[-1] if ids else None,
        "has_more": False,
    }


async def retrieve_conversation_item(store: Store, scope: str, ident: str, item_id: str) -> Answer:
    record = await _conversation(store, scope, ident)
    for item in record["items"]:
        if item.get("id") == item_id:
            return 200, item
    raise not_found("Item", item_id)


async def delete_conversation_item(store: Store, scope: str, ident: str, item_id: str) -> Answer:
    missing: list[str] = []

    def change(record: Any) -> Any:
        missing.clear()
        if record is None:
            return None
        kept = [item for item in record["items"] if item.get("id") != item_id]
        if len(kept) == len(record["items"]):
            missing.append(item_id)
        return {**record, "items": kept}

    updated = await store.update(conversation_key(scope, ident), change)
    if updated is None:
        raise not_found("Conversation", ident)
    if missing:
        raise not_found("Item", item_id)
    return 200, updated["conversation"]


__all__ = ["Answer", "BadRequest", "Loaded", "load_state", "load_turn"]
