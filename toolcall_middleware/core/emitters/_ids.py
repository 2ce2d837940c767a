"""Identifiers in the OpenAI styles: `call_` + 24 alphanumerics, `fc_…`, `msg_…`, `rs_…`, `resp_…`."""

from __future__ import annotations

import secrets
import string
from typing import Literal

CallIds = Literal["model", "openai"]
"""Whose tool call ids go out: `model` keeps the model's own where its format writes one (Kimi's
`functions.get_weather:0`, Mistral's 9-character ids, an `id` in a Hermes call) and mints the rest;
`openai` always mints `call_` + 24 alphanumerics, unique across a conversation."""

_ALPHABET = string.ascii_letters + string.digits


# Random bytes to alphanumerics in one C call: each byte below 248 (4 x 62, so no letter is more
# likely than another) names a character, the rest are dropped.
_TO_ALPHABET = bytes(_ALPHABET[b % len(_ALPHABET)].encode()[0] for b in range(248)) + bytes(8)
_UNEVEN = bytes(range(248, 256))


def random_id(prefix: str, size: int = 24) -> str:
    """`prefix` + `size` alphanumerics from the system's secure source (one read, as a rule)."""
    chars = b""
    while len(chars) < size:
        chars += secrets.token_bytes(size + 8).translate(_TO_ALPHABET, _UNEVEN)
    return prefix + chars[:size].decode()


def call_id() -> str:
    return random_id("call_")


def tool_call_id(model_id: str | None, style: CallIds = "model") -> str:
    """The id a call goes out with: the model's own when `style` keeps it and there is one."""
    return model_id if model_id and style == "model" else call_id()


def chat_completion_id() -> str:
    return random_id("chatcmpl-")


__all__ = [
    "CallIds",
    "call_id",
    "chat_completion_id",
    "random_id",
    "tool_call_id",
]
