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


def random_id(prefix: str, size: int = 24) -> str:
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(size))


def call_id() -> str:
    return random_id("call_")


def tool_call_id(model_id: str | None, style: CallIds = "model") -> str:
    """The id a call goes out with: the model's own when `style` keeps it and there is one."""
    return model_id if model_id and style == "model" else call_id()


def chat_completion_id() -> str:
    return random_id("chatcmpl-")
