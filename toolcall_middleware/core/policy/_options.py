"""The policy stage's settings that are not the request's: limits, and how a refused call reads as text."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from .._schema import decode_json

OnExceed = Literal["error", "drop"]


@dataclass(frozen=True, slots=True)
class PolicyLimits:
    """Caps on one response's calls; `None` switches a cap off.

    `max_calls` counts the calls that go out; `max_arguments_bytes` is one call's arguments in
    UTF-8. A call over a cap fails the response with a `PolicyError` (`on_exceed="error"`) or is
    dropped and reported (`"drop"`); a call whose arguments were already streamed always fails,
    since what went out cannot be taken back. Either way the stage stops buffering that call. A
    call the parser let go while still open (`OversizedCall`, past its `max_call_chars`) always
    fails: nothing after it was read, so there is no answer to go on with.
    """

    max_calls: int | None = 128
    max_arguments_bytes: int | None = 4 * 1024 * 1024
    on_exceed: OnExceed = "error"

    def __post_init__(self) -> None:
        for name in ("max_calls", "max_arguments_bytes"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a positive integer or None, not {value!r}")
        if self.on_exceed not in ("error", "drop"):
            raise ValueError(f"on_exceed must be 'error' or 'drop', not {self.on_exceed!r}")


UNLIMITED = PolicyLimits(max_calls=None, max_arguments_bytes=None)


def render_call_text(name: str, arguments: str) -> str:
    """A call that may not go out, as ordinary text: `{"name": "f", "arguments": {"x": 1}}`.

    The events carry no raw text of the call, so this is a rendering, not the model's markup: the
    arguments appear as they are when they are a JSON object, else as a JSON string, so the text
    holds everything the call held and reads as JSON either way.
    """
    try:
        is_object = isinstance(decode_json(arguments), dict)
    except (ValueError, RecursionError):
        is_object = False
    body = arguments if is_object else json.dumps(arguments, ensure_ascii=False)
    return '{"name": ' + json.dumps(name, ensure_ascii=False) + ', "arguments": ' + body + "}"


__all__ = ["UNLIMITED", "OnExceed", "PolicyLimits", "render_call_text"]
