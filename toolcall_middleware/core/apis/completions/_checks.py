"""A legacy completions request's fields checked to the API's types (`check_completions`, the
spec's `check_request`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...request._fields import INTEGER, SAMPLING, STOP, STRING, Check, check_fields

COMPLETIONS_FIELDS: dict[str, Check] = {**SAMPLING, "max_tokens": INTEGER, "n": INTEGER, "stop": STOP, "user": STRING}



def check_completions(body: Mapping[str, Any]) -> None:
    """A legacy completions request's fields."""
    check_fields(COMPLETIONS_FIELDS, body)


__all__ = ["COMPLETIONS_FIELDS", "check_completions"]
