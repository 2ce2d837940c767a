"""Answers the middleware writes in place of the host's: a bridged host's error in the client's
API's shape, and a token count the host could not give.

- `host_error(raw, status, api)`: a host's error body, whatever its shape (OpenAI's `{"error":
  {"message": …}}`, Anthropic's, FastAPI's `{"detail": …}`, plain text), as the error body of
  client API `api`, keeping its message. The Anthropic SDK reads the `type` to pick its exception
  and the message to show; the openai SDK the `message`. `openai_error` makes such a body for a
  message of ours (a bridged host's answer that cannot be read is a 502); an API's spec names its
  own (Anthropic's is `core.apis.messages`' `anthropic_error`).
- `estimate_tokens(body)`: the input tokens of an Anthropic Messages body (the rewritten one, so
  the injected manifest counts): the characters of every text it holds (system, message text,
  tool results, tool definitions left in it) divided by four, rounded up, plus 1,600 per image or
  document (Anthropic's figure for a full-size image). A rough figure, as `/count_tokens` is
  meant to be: budgeting, never billing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ._api import spec_for
from ._schema import JSON_OBJECT
from .framing._utf8 import json_bytes

CHARS_PER_TOKEN = 4
MEDIA_TOKENS = 1600
MAX_MESSAGE = 2000  # of a host's error text that is not JSON


def error_message(raw: bytes) -> str:
    """The message of a host's error body, whatever its shape."""
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        obj = json.loads(text)
    except ValueError:
        return text[:MAX_MESSAGE] or "the host answered with an error"
    if isinstance(obj, JSON_OBJECT):
        inner = obj.get("error")
        if isinstance(inner, JSON_OBJECT) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        for key in ("error", "detail", "message"):
            if isinstance(obj.get(key), str):
                return str(obj[key])
    return text[:MAX_MESSAGE]


def host_error(raw: bytes, status: int, api: str) -> bytes:
    """A bridged host's error body (`raw`, with `status`) as client API `api`'s error body; one
    already in OpenAI's shape goes to an OpenAI client as it is (its `code` and `param` kept)."""
    shape = spec_for(api).error_body
    if shape is openai_error and _openai_error(raw):
        return raw
    return shape(error_message(raw), status)


def _openai_error(raw: bytes) -> bool:
    try:
        obj = json.loads(raw)
    except ValueError:
        return False
    inner = obj.get("error") if isinstance(obj, JSON_OBJECT) else None
    return isinstance(inner, JSON_OBJECT) and isinstance(inner.get("message"), str) and obj.get("type") != "error"


def openai_error(
    message: str, status: int, *, code: str | None = None, param: str | None = None, kind: str | None = None
) -> bytes:
    """An OpenAI error body (`{"error": {message, type, param, code}}`); its `type` is `kind`, or
    `invalid_request_error` for a 4xx and `server_error` for a 5xx."""
    kind = kind or ("invalid_request_error" if status < 500 else "server_error")
    return json_bytes({"error": {"message": message, "type": kind, "param": param, "code": code}})


def estimate_tokens(body: Mapping[str, Any]) -> int:
    """The estimated input tokens of a Messages body (see the module doc)."""
    chars = 0
    media = 0
    stack: list[Any] = [body.get("system"), body.get("messages"), body.get("tools")]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            chars += len(value)
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, JSON_OBJECT):
            if value.get("type") in ("image", "document") and isinstance(value.get("source"), JSON_OBJECT):
                source = value["source"]
                if source.get("type") not in ("text", "content"):
                    media += 1
                    continue
            # The values a model reads; `type`, ids and cache marks are not in its prompt.
            stack.extend(v for k, v in value.items() if k not in ("type", "id", "tool_use_id", "cache_control"))
    return -(-chars // CHARS_PER_TOKEN) + media * MEDIA_TOKENS


__all__ = ["error_message", "estimate_tokens", "host_error", "openai_error"]
