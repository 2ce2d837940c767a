"""The messages a run's events make, built as `@ag-ui/client` builds them, for the run's
`MESSAGES_SNAPSHOT`.

The protocol's snapshot is the conversation whole: the client keeps the messages the snapshot
names (in the snapshot's version), drops the others it has, and appends the new ones. So the
snapshot must hold exactly the messages the client made from the run's events, under the same
ids and in the same order, or the client would lose or double one. `Transcript` applies each
event sent as the client's reducer does (`apply/default.ts`): a text message is an assistant
message with its `content`; a reasoning message is a `reasoning` message; a call joins the
assistant message its `parentMessageId` names, or starts one of its own. Reasoning goes in too:
a snapshot that holds any reasoning message holds them all, and the run's input may hold some.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class Transcript:
    """The messages made by the events `apply` has seen, in the protocol's message shape."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self._by_id: dict[str, dict[str, Any]] = {}
        self._calls: dict[str, dict[str, Any]] = {}  # a call's `function` by its id

    def apply(self, events: Iterable[dict[str, Any]]) -> None:
        for event in events:
            kind = event["type"]
            if kind == "TEXT_MESSAGE_START":
                self._message(event["messageId"], event.get("role", "assistant")).setdefault("content", "")
            elif kind == "REASONING_MESSAGE_START":
                self._message(event["messageId"], "reasoning").setdefault("content", "")
            elif kind in ("TEXT_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT"):
                message = self._by_id[event["messageId"]]
                message["content"] = message.get("content", "") + event["delta"]
            elif kind == "TOOL_CALL_START":
                self._call(event["toolCallId"], event["toolCallName"], event.get("parentMessageId"))
            elif kind == "TOOL_CALL_ARGS":
                self._calls[event["toolCallId"]]["arguments"] += event["delta"]

    def _message(self, message_id: str, role: str) -> dict[str, Any]:
        if message_id not in self._by_id:
            self._by_id[message_id] = {"id": message_id, "role": role}
            self.messages.append(self._by_id[message_id])
        return self._by_id[message_id]

    def _call(self, call_id: str, name: str, parent_id: str | None) -> None:
        parent = self._by_id.get(parent_id) if parent_id else None
        if parent is None or parent["role"] != "assistant":
            # (as the client does: a new assistant message under the parent's id where no message
            # has it yet, or under the call's own where there is no parent or it is not assistant)
            own_id = parent_id if parent_id and parent is None else call_id
            parent = self._message(own_id, "assistant")
        function = {"name": name, "arguments": ""}
        parent.setdefault("toolCalls", []).append({"id": call_id, "type": "function", "function": function})
        self._calls[call_id] = function


__all__ = ["Transcript"]
