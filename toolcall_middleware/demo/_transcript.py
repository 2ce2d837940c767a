"""The conversation as a raw-text model sees it: a system text and the turns after it.

Both request shapes are read: Chat Completions `messages` and the Responses API's
`instructions` + `input`. After the middleware's request rewriting, tool calls and tool results in
the history are plain text in the dialect's own markup, so a turn is just a role and a text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..core.request._rewrite import content_text


@dataclass(frozen=True)
class Turn:
    role: str
    text: str


@dataclass(frozen=True)
class Transcript:
    system: str
    turns: tuple[Turn, ...]


def _text(content: Any) -> str:
    try:
        return content_text(content, "content")
    except ValueError:
        return str(content)


def read_transcript(body: Mapping[str, Any]) -> Transcript:
    """The system text (system/developer messages and `instructions`) and the other turns, in order."""
    system: list[str] = []
    turns: list[Turn] = []
    if isinstance(body.get("instructions"), str):
        system.append(body["instructions"])
    items: list[Any] = []
    if isinstance(body.get("messages"), list):
        items = body["messages"]
    elif isinstance(body.get("input"), str):
        items = [{"role": "user", "content": body["input"]}]
    elif isinstance(body.get("input"), list):
        items = body["input"]
    for item in items:
        if not isinstance(item, Mapping):
            continue
        role = item.get("role")
        if not isinstance(role, str):  # an item the rewriting left as it was: show its JSON
            turns.append(Turn("user", str(dict(item))))
            continue
        text = _text(item.get("content"))
        if role in ("system", "developer"):
            system.append(text)
        else:
            turns.append(Turn(role, text))
    return Transcript(system="\n\n".join(system), turns=tuple(turns))


__all__ = ["Transcript", "Turn", "read_transcript"]
