"""`/v1/responses/compact` for a host without it: the pure parts.

OpenAI's compaction endpoint takes a conversation (`model`, `input`, `instructions`,
`previous_response_id`) and answers a `response.compaction` object whose `output` is the window
to continue from: the user's messages as they were, then one `compaction` item whose
`encrypted_content` stands for everything else. Clients (Codex) replace their history with that
output and send it back as `input` later.

A host model that cannot compact is asked to summarize instead, through the same path as any
Responses request (`summary_request`); its answer becomes the compaction item (`compacted`). The
item's `encrypted_content` is that summary, marked as ours and base64-encoded (not secret: a
client may send the host any text anyway, and the host never sees the marker). When such an item
comes back in a later request's `input`, `expand_compactions` puts the summary in its place as a
message the host model reads. A compaction item we did not make (another server's encrypted
state) cannot be read by a host without compaction: it is a 400 naming the item.
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Mapping
from typing import Any

from ..._schema import JSON_OBJECT
from ...emitters._ids import random_id
from ...request._errors import BadRequest, invalid, invalid_body, missing
from ._emitter import responses_usage

COMPACT_SUFFIX = "/compact"
MARK = "tcm-summary-v1:"  # what starts an `encrypted_content` we made (then base64 of the UTF-8 summary)

SUMMARY_INSTRUCTIONS = (
    "You are compacting a long conversation so that it can continue in a fresh context window. "
    "Write a concise but complete summary of the conversation so far: the user's goals and "
    "constraints, decisions made, facts and values established (names, numbers, code words, file "
    "paths), tool calls made and what they returned, and what remains to be done. Write only the "
    "summary, as plain text; do not call tools and do not answer the last request yourself."
)
SUMMARY_REQUEST = "Summarize the conversation above for continuation, as instructed."
SUMMARY_HEADING = "Summary of the earlier conversation (compacted):"

# The fields of a compact request that carry over to the summary request.
CARRIED = ("model", "previous_response_id", "prompt_cache_key")


def compact_path(path: str) -> str | None:
    """The Responses route a `…/compact` path compacts for (`/v1/responses/compact` ->
    `/v1/responses`), or None when the path is no compact route."""
    trimmed = path.rstrip("/")
    if trimmed.endswith(COMPACT_SUFFIX):
        return trimmed[: -len(COMPACT_SUFFIX)]
    return None


def input_items(value: Any, param: str = "input") -> list[Any]:
    """A Responses `input` as a list of items (a string is one user message; none is empty)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    if isinstance(value, list):
        return list(value)
    raise invalid(param, "expected a string or an array of input items")


def summary_request(body: Any) -> dict[str, Any]:
    """The Responses request (not streamed, not stored) that asks the host's model for the summary
    of a compact request's conversation. Raises `BadRequest` as the API would (no `model`: 400)."""
    if not isinstance(body, JSON_OBJECT):
        raise invalid_body()
    model = body.get("model")
    if model is None:
        raise missing("model")
    if not isinstance(model, str) or not model:
        raise invalid("model", "expected a non-empty string")
    items = input_items(body.get("input"))
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise invalid("instructions", "expected a string")
    if instructions:
        # The client's own instructions are part of what the summary must keep.
        items.insert(0, {"type": "message", "role": "developer", "content": instructions})
    items.append({"type": "message", "role": "user", "content": SUMMARY_REQUEST})
    out = {k: body[k] for k in CARRIED if body.get(k) is not None}
    out.update(instructions=SUMMARY_INSTRUCTIONS, input=items, stream=False, store=False)
    return out


def answer_text(response: Mapping[str, Any]) -> str:
    """The text of a Responses answer's output messages."""
    texts = []
    for item in response.get("output") or ():
        if isinstance(item, JSON_OBJECT) and item.get("type") == "message":
            for part in item.get("content") or ():
                if isinstance(part, JSON_OBJECT) and part.get("type") == "output_text":
                    texts.append(str(part.get("text", "")))
    return "".join(texts).strip()


def compacted(body: Mapping[str, Any], response: Mapping[str, Any], *, now: float | None = None) -> dict[str, Any]:
    """The `response.compaction` object for a compact request `body` (already accepted by
    `summary_request`), from the host's answer to the summary request."""
    kept = [_as_output(item) for item in input_items(body.get("input")) if _user_message(item)]
    item = {"id": random_id("cmp_"), "type": "compaction", "encrypted_content": seal(answer_text(response))}
    return {
        "id": random_id("resp_"),
        "object": "response.compaction",
        "created_at": int(now if now is not None else time.time()),
        "output": [*kept, item],
        "usage": responses_usage(response.get("usage")),
    }


def seal(summary: str) -> str:
    """A summary as the `encrypted_content` of a compaction item of ours."""
    return MARK + base64.b64encode(summary.encode("utf-8")).decode("ascii")


def unseal(content: Any) -> str | None:
    """The summary in an `encrypted_content` of ours, or None for anything else."""
    if not isinstance(content, str) or not content.startswith(MARK):
        return None
    try:
        return base64.b64decode(content[len(MARK) :], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def expand_compactions(body: dict[str, Any]) -> dict[str, Any]:
    """`body` with each compaction item of ours in `input` replaced by its summary as a user
    message (the same object when there is none). A compaction item we did not make is a 400."""
    items = body.get("input")
    if not isinstance(items, list) or not any(_compaction(item) for item in items):
        return body
    out = []
    for i, item in enumerate(items):
        if not _compaction(item):
            out.append(item)
            continue
        summary = unseal(item.get("encrypted_content"))
        if summary is None:
            raise BadRequest(
                f"'input[{i}]' is a compaction item this endpoint did not make: its host cannot read another "
                "server's compacted state. Send the conversation itself, or compact it here (POST …/compact).",
                f"input[{i}]",
                code="invalid_value",
            )
        out.append({"type": "message", "role": "user", "content": f"{SUMMARY_HEADING}\n\n{summary}"})
    return {**body, "input": out}


def _compaction(item: Any) -> bool:
    return isinstance(item, JSON_OBJECT) and item.get("type") in ("compaction", "compaction_summary")


def _user_message(item: Any) -> bool:
    return isinstance(item, JSON_OBJECT) and item.get("type", "message") == "message" and item.get("role") == "user"


def _as_output(message: Mapping[str, Any]) -> dict[str, Any]:
    """A user input message as an output item (an id, a status, content parts), as the API lists it."""
    content = message.get("content")
    parts = content if isinstance(content, list) else [content] if content is not None else []
    parts = [{"type": "input_text", "text": p} if isinstance(p, str) else p for p in parts]
    item_id = message.get("id")
    return {
        "id": item_id if isinstance(item_id, str) and item_id else random_id("msg_"),
        "type": "message",
        "status": "completed",
        "role": "user",
        "content": parts,
    }


__all__ = [
    "COMPACT_SUFFIX",
    "compact_path",
    "compacted",
    "expand_compactions",
    "input_items",
    "seal",
    "summary_request",
    "unseal",
]
