"""The pure logic of the Responses state: ids, scopes, keys, request expansion, pagination.

Synchronous and free of I/O (the layer in `layer.py` does the reading and writing), so each rule
is a plain function with unit and property tests, and other modules (WebSocket mode, compaction)
can use the same expansion:

```python
wanted = wanted_state(body)                     # what the request refers to
history = history_of(stored_record)             # a stored response -> the items it leaves behind
body, items = expand(body, history, found)      # the body the stateless pipeline takes
```
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..config import MAX_REFERENCES
from ..core._schema import JSON_OBJECT
from ..core.framing._utf8 import COMPACT, items_json, joined_json, json_bytes, json_bytes_from
from ..core.request._errors import BadRequest, invalid

SECRET_KEY = "scope-secret"  # the store's own key of the shared scoping secret (unscoped)
STATEFUL_FIELDS = ("previous_response_id", "conversation")
ID_BYTES = 24  # 192 random bits per id: unguessable


class StateError(BadRequest):
    """A request the state cannot serve, with its HTTP status (404: not found, 503: the store)."""

    def __init__(self, status: int, message: str, param: str | None = None, *, code: str | None = None) -> None:
        super().__init__(message, param, code=code)
        self.status = status

    def body(self) -> dict[str, Any]:
        out = super().body()
        if self.status >= 500:
            out["error"]["type"] = "server_error"
        return out


def not_found(what: str, ident: str, param: str | None = None) -> StateError:
    return StateError(404, f"{what} with id '{ident}' not found.", param, code="not_found")


def mint_id(prefix: str) -> str:
    """A fresh unguessable id: `resp_`, `msg_`, `conv_` … and 48 hex digits from `secrets`."""
    return f"{prefix}_{secrets.token_hex(ID_BYTES)}"


def new_secret() -> str:
    return secrets.token_hex(32)


def scope_of(headers: Iterable[tuple[bytes, bytes]], secret: str, key: bytes | None = None) -> str:
    """The scope of a request: HMAC-SHA256 of its credential under the deployment's secret, so the
    store never holds a key. The credential is `key`, the one the proxy's own key check let the
    request in with (`api_keys`), whichever header carried it; else its `Authorization`, else its
    `x-api-key`. Requests with no credential share one scope."""
    if key is not None:
        return hmac.new(secret.encode(), b"key:" + key, hashlib.sha256).hexdigest()[:32]
    found: dict[bytes, bytes] = {}
    for name, value in headers:
        lowered = name.lower()
        if lowered in (b"authorization", b"x-api-key") and lowered not in found:
            found[lowered] = value
    credential = found.get(b"authorization") or found.get(b"x-api-key") or b""
    return hmac.new(secret.encode(), credential, hashlib.sha256).hexdigest()[:32]


def response_key(scope: str, ident: str) -> str:
    return f"{scope}:response:{ident}"


def turn_key(scope: str, ident: str) -> str:
    """The items a response added and its link to the one before (`chain.py`)."""
    return f"{scope}:turn:{ident}"


def item_key(scope: str, ident: str) -> str:
    return f"{scope}:item:{ident}"


def conversation_key(scope: str, ident: str) -> str:
    return f"{scope}:conversation:{ident}"


# -- items ---------------------------------------------------------------------------------------

ID_PREFIXES = {"message": "msg", "function_call": "fc", "function_call_output": "fco", "reasoning": "rs"}


def as_item(item: Any, where: str) -> dict[str, Any]:
    """An input item as the API stores and lists it: a `message` with typed content parts and a
    status, and an `id` (minted when the client gave none). `item_reference`s stay as they are."""
    if not isinstance(item, JSON_OBJECT):
        raise invalid(where, "expected an input item object")
    out = dict(item)
    kind = out.get("type") or ("message" if "role" in out else None)
    if kind == "item_reference":
        return out
    if kind == "message":
        out["type"] = "message"
        content = out.get("content")
        part = "output_text" if out.get("role") == "assistant" else "input_text"
        if isinstance(content, str):
            text: dict[str, Any] = {"type": part, "text": content}
            if part == "output_text":
                text["annotations"] = []
            out["content"] = [text]
        out.setdefault("status", "completed")
    if not isinstance(out.get("id"), str) or not out["id"]:
        out["id"] = mint_id(ID_PREFIXES.get(str(kind), "item"))
    return out


def input_items(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The request's `input` as items (a string is one user message)."""
    given = body.get("input")
    if given is None:
        return []
    if isinstance(given, str):
        return [as_item({"type": "message", "role": "user", "content": given}, "input")]
    if not isinstance(given, list):
        raise invalid("input", "expected a string or an array of input items")
    return [as_item(item, f"input[{i}]") for i, item in enumerate(given)]


@dataclass(frozen=True)
class Wanted:
    """What a request asks of the state: the response it continues, its conversation, and the
    ids of the items it refers to."""

    previous_response_id: str | None
    conversation: str | None
    references: tuple[str, ...]


def wanted_state(body: Mapping[str, Any], max_references: int = MAX_REFERENCES) -> Wanted:
    """What `body` refers to; a 400 naming `input` past `max_references` item references (each
    is a store read, batched, but bounded all the same)."""
    previous = body.get("previous_response_id")
    if previous is not None and (not isinstance(previous, str) or not previous):
        raise invalid("previous_response_id", "expected a response id")
    conversation = conversation_id(body.get("conversation"))
    if previous is not None and conversation is not None:
        raise BadRequest(
            "Mutually exclusive parameters: Ensure you are only providing one of: 'previous_response_id' or "
            "'conversation'.",
            "conversation",
            code="mutually_exclusive_parameters",
        )
    references = []
    given = body.get("input")
    for i, item in enumerate(given if isinstance(given, list) else ()):
        if isinstance(item, JSON_OBJECT) and item.get("type") == "item_reference":
            ident = item.get("id")
            if not isinstance(ident, str) or not ident:
                raise invalid(f"input[{i}].id", "expected an item id")
            references.append(ident)
    if len(references) > max_references:
        raise BadRequest(
            f"Invalid 'input': {len(references)} item references, over the limit of {max_references} per request.",
            "input",
            code="too_many_item_references",
        )
    return Wanted(previous, conversation, tuple(references))


def conversation_id(value: Any) -> str | None:
    """The `conversation` parameter: an id, or an object with one."""
    if value is None:
        return None
    ident = value.get("id") if isinstance(value, JSON_OBJECT) else value
    if not isinstance(ident, str) or not ident:
        raise invalid("conversation", "expected a conversation id or an object with one")
    return ident


def output_of(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    return list(record.get("response", {}).get("output") or ())


def history_of(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The items a response record of earlier versions leaves for the next turn: its whole input,
    then its output. (Responses are now stored as links; `load_state` rebuilds their history.)"""
    return [*record.get("input", ()), *output_of(record)]


def expand(
    body: Mapping[str, Any], history: Sequence[dict[str, Any]], found: Mapping[str, Mapping[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """The stateless body, the whole input as stored items, and the request's own new items.

    The body has `history`, then the request's own input as the client wrote it, with every
    `item_reference` replaced by its item; no stateful fields; `instructions` as the request gives
    them, never inherited. With nothing to expand, its `input` is the client's, unchanged.

    The history's items are put in both lists as they are, not copied: a long chain's context is
    thousands of items, which neither list changes (the body is encoded for the host, the whole
    input stored and cached), and a copy of each on every turn made the turn grow with the chain."""
    given = body.get("input")
    references = isinstance(given, list) and any(
        isinstance(item, JSON_OBJECT) and item.get("type") == "item_reference" for item in given
    )
    known = {item.get("id"): item for item in history} if references else {}  # (made only when asked for)
    own: list[dict[str, Any]] = []  # as stored: ids minted, content typed
    sent: list[Any] = []  # as the host gets them: the client's own items, references resolved
    for i, item in enumerate(input_items(body)):
        if item.get("type") == "item_reference":
            ident = item["id"]
            target = known.get(ident) or found.get(ident)
            if target is None:
                raise not_found("Item", ident, f"input[{i}]")
            item = dict(target)
        own.append(item)
        sent.append(given[i] if isinstance(given, list) and given[i].get("type") != "item_reference" else item)
    out = {k: v for k, v in body.items() if k not in STATEFUL_FIELDS and k != "background"}
    if history or references:
        out["input"] = [*history, *sent]
    return out, [*history, *own], own


def forward_bytes(
    forward: Mapping[str, Any], history: int, history_json: str | None
) -> tuple[bytes, tuple[int, int] | None]:
    """`json_bytes(forward)`, the first `history` items of its `input` (the chain's context, as
    `expand` puts them) written from their JSON text `history_json` (`items_json`) rather than
    encoded again: the same bytes, while a long chain's turn encodes only its own items. With the
    bytes, where the history's text lies in them (with the `, ` after it when more items follow),
    for the middleware below to read only the rest (`core._stored_input`); None when not written so."""
    given = forward.get("input")
    if history_json is None or not history or not isinstance(given, list):
        return json_bytes(forward), None
    own = items_json(given[history:])
    body, places = json_bytes_from(forward, {"input": f"[{joined_json(history_json, own)}]"})
    if "input" not in places:
        return body, None  # (a lone surrogate: written by `json_bytes`, every non-ASCII character escaped)
    start, end = places["input"]
    return body, (start + 1, end - 1 - len(own.encode()))  # (the own items' text: short, the history's long)


def item_records(scope: str, items: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The per-item records that let a later `item_reference` find an item by its id."""
    return {item_key(scope, item["id"]): item for item in items if isinstance(item.get("id"), str)}


# -- lists ---------------------------------------------------------------------------------------

DEFAULT_LIMIT = 20
MAX_LIMIT = 100


def page(items: Sequence[Mapping[str, Any]], *, after: str | None, limit: Any, order: Any) -> dict[str, Any]:
    """One page of a list endpoint (`input_items`, conversation items), OpenAI's cursor shape:
    `order` `desc` (the default) lists the newest first; `after` is the id the last page ended
    on; `limit` 1-100 (default 20)."""
    if order is None:
        order = "desc"
    if order not in ("asc", "desc"):
        raise invalid("order", "expected 'asc' or 'desc'")
    try:
        count = DEFAULT_LIMIT if limit is None else int(limit)
    except (TypeError, ValueError):
        raise invalid("limit", "expected an integer") from None
    if not 1 <= count <= MAX_LIMIT:
        raise invalid("limit", f"expected an integer from 1 to {MAX_LIMIT}")
    ordered = list(items) if order == "asc" else list(reversed(items))
    start = 0
    if after is not None:
        ids = [item.get("id") for item in ordered]
        if after not in ids:
            raise not_found("Item", after, "after")
        start = ids.index(after) + 1
    data = [dict(item) for item in ordered[start : start + count]]
    return {
        "object": "list",
        "data": data,
        "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None,
        "has_more": start + count < len(ordered),
    }


# -- the response object ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Echo:
    """What the response object says of the state: its id (ours: unguessable), `store`, and the
    stateful fields the stateless pipeline never saw."""

    id: str
    store: bool
    previous_response_id: str | None
    conversation: str | None
    background: bool = False

    def fields(self) -> dict[str, Any]:
        """The response object's fields that say the state (the Responses emitter writes them in:
        `core._response_hook`)."""
        out: dict[str, Any] = {
            "id": self.id,
            "store": self.store,
            "previous_response_id": self.previous_response_id,
            "background": self.background,
        }
        if self.conversation is not None:
            out["conversation"] = {"id": self.conversation}
        return out

    def apply(self, response: Mapping[str, Any]) -> dict[str, Any]:
        """`response` (one the host wrote) with the state's fields."""
        return {**response, **self.fields()}


def conversation_object(ident: str, created_at: int, metadata: Any) -> dict[str, Any]:
    return {"id": ident, "object": "conversation", "created_at": created_at, "metadata": metadata or {}}


TERMINAL_STATUSES = frozenset({"completed", "incomplete", "failed", "cancelled"})


def queued_response(request: Mapping[str, Any], echo: Echo, created_at: int) -> dict[str, Any]:
    """A background response before the host has said anything: `queued`, the request's settings
    echoed (the host's own `response.created` replaces it as soon as it comes)."""
    tools = request.get("tools")
    return echo.apply(
        {
            "object": "response",
            "created_at": created_at,
            "status": "queued",
            "error": None,
            "incomplete_details": None,
            "instructions": request.get("instructions"),
            "max_output_tokens": request.get("max_output_tokens"),
            "model": request.get("model"),
            "output": [],
            "parallel_tool_calls": request.get("parallel_tool_calls", True),
            "temperature": request.get("temperature", 1.0),
            "tool_choice": request.get("tool_choice", "auto"),
            "tools": tools if isinstance(tools, list) else [],
            "top_p": request.get("top_p", 1.0),
            "metadata": request.get("metadata") or {},
            "usage": None,
        }
    )


def ended(record: Mapping[str, Any], status: str, error: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A stored response record, ended with `status` (and `error`), unless it had already ended.
    Its kept events end with the terminal event (`response.failed`, `response.cancelled`), so a
    follower's stream ends the way a client expects, not by a silent close."""
    response = dict(record["response"])
    if response.get("status") in TERMINAL_STATUSES:
        return dict(record)
    response["status"] = status
    if error is not None:
        response["error"] = dict(error)
    out = {**record, "response": response}
    events = record.get("events")
    if isinstance(events, list):
        last = json.loads(events[-1]).get("sequence_number", len(events) - 1) if events else -1
        terminal = {"type": f"response.{status}", "sequence_number": int(last) + 1, "response": response}
        out["events"] = [*events, json_bytes(terminal, separators=COMPACT).decode()]
    return out


__all__ = [
    "DEFAULT_LIMIT",
    "ID_BYTES",
    "ID_PREFIXES",
    "MAX_LIMIT",
    "SECRET_KEY",
    "STATEFUL_FIELDS",
    "TERMINAL_STATUSES",
    "Echo",
    "StateError",
    "Wanted",
    "as_item",
    "conversation_id",
    "conversation_key",
    "conversation_object",
    "ended",
    "expand",
    "forward_bytes",
    "history_of",
    "input_items",
    "item_key",
    "item_records",
    "items_json",
    "joined_json",
    "mint_id",
    "new_secret",
    "not_found",
    "output_of",
    "page",
    "queued_response",
    "response_key",
    "scope_of",
    "turn_key",
    "wanted_state",
]
