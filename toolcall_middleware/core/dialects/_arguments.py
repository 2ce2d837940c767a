"""A call's arguments as JSON: written out (`dump_arguments`) and read back from a model's text.

Every dialect that carries a JSON body reads it here (`load_object`, `arguments_object`), so the
one opt-in repair pass applies to all of them alike (`repairing`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any

from ..framing._utf8 import json_loads, json_text


def dump_arguments(value: Mapping[str, Any]) -> str:
    """Arguments as compact JSON text; non-ASCII kept as is, like the OpenAI API writes it."""
    return json_text(value, separators=(", ", ": "))


# The repair pass a parser may make before a broken JSON body falls back to text. It is set for
# the duration of a `StreamParser` call (`repairing`), so every dialect's `load_object` uses it
# without threading it through each block; it is off unless the caller asks for it.
REPAIR: ContextVar[Callable[[str], str | None] | None] = ContextVar("toolcall_repair", default=None)


class _Repairing:
    """The context of `repairing` (a class, not a generator: it wraps every parser call)."""

    __slots__ = ("_repair", "_token")

    def __init__(self, repair: Callable[[str], str | None] | None) -> None:
        self._repair = repair

    def __enter__(self) -> None:
        self._token = REPAIR.set(self._repair)

    def __exit__(self, *exc: object) -> None:
        REPAIR.reset(self._token)


def repairing(repair: Callable[[str], str | None] | None) -> _Repairing:
    """Let `load_object` try `repair` on text that is not a JSON object, within the block."""
    return _Repairing(repair)


def load_object(text: str) -> dict[str, Any] | None:
    """Parse text that must be one JSON object; `None` when it is not (after the repair pass, if on)."""
    try:
        value = json_loads(text)
    except (ValueError, RecursionError):
        repair = REPAIR.get()
        fixed = repair(text) if repair is not None else None
        if fixed is None:
            return None
        try:
            value = json_loads(fixed)
        except (ValueError, RecursionError):
            return None
    return value if isinstance(value, dict) else None


def arguments_object(args: Any) -> dict[str, Any] | None:
    """A call's `arguments` value as an object; `None` when it cannot be one.

    The object may also come as a JSON string holding it (the sentinel form Responses proxies ask
    for); a string that holds no object reads as no arguments, and so does a JSON `null`.
    """
    if isinstance(args, str):
        args = load_object(args) if args.strip() else {}
    if args is None:
        return {}
    return args if isinstance(args, dict) else None


__all__ = ["REPAIR", "arguments_object", "dump_arguments", "load_object", "repairing"]
