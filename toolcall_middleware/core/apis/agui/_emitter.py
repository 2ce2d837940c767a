"""AG-UI: the agent-to-UI event stream (`RUN_STARTED`, `TEXT_MESSAGE_*`, `TOOL_CALL_*`,
`REASONING_*`, `MESSAGES_SNAPSHOT`, `RUN_FINISHED`), for agent front ends that speak it.

Keys are camelCase, optional fields are left out, every `*_CONTENT`/`*_ARGS` sits between its
`*_START` and `*_END`, and `RUN_FINISHED` comes when nothing is open (`reference/wire.md` §5.2).
Framing is `data: <json>\\n\\n` (`framing.sse.encode_data`).

Given the run's input `messages`, a finished run ends with a `MESSAGES_SNAPSHOT` just before
`RUN_FINISHED`, as the protocol's reference servers send it once a run's messages are complete:
the input messages as the run gave them, then the messages the run's events made
(`transcript.Transcript`). Without them there is no snapshot: one holding only the new messages
would tell the client to drop its earlier ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..._events import Event, ReasoningDelta, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart
from ...emitters._ids import call_id, random_id
from ._transcript import Transcript


class AGUIEmitter:
    """Events in, AG-UI event objects out: `start()`, `feed(events)`, `finish()`."""

    def __init__(
        self,
        *,
        thread_id: str | None = None,
        run_id: str | None = None,
        parent_run_id: str | None = None,
        reasoning: bool = True,
        messages: list[Any] | None = None,
    ) -> None:
        self.thread_id = thread_id or random_id("thread_")
        self.run_id = run_id or random_id("run_")
        self.parent_run_id = parent_run_id  # the run this one follows from, said in RUN_STARTED
        self.reasoning = reasoning  # False: reasoning is dropped
        self.messages = messages  # the run's input messages, for the snapshot (None: no snapshot)
        self._transcript = Transcript()
        self._open: str | None = None  # "text" | "reasoning" | "tool"
        self._id = ""
        self._message_id = ""  # the text message a call belongs to
        self._started = False
        self._finished = False

    def start(self) -> list[dict[str, Any]]:
        if self._started:
            return []
        self._started = True
        started = {"type": "RUN_STARTED", "threadId": self.thread_id, "runId": self.run_id}
        if self.parent_run_id:
            started["parentRunId"] = self.parent_run_id
        return [started]

    def feed(self, events: Iterable[Event]) -> list[dict[str, Any]]:
        out = self.start()
        for event in events:
            if isinstance(event, TextDelta) and event.text:
                if self._open != "text":
                    self._close(out)
                    self._open, self._id = "text", random_id("msg_")
                    self._message_id = self._id
                    out.append({"type": "TEXT_MESSAGE_START", "messageId": self._id, "role": "assistant"})
                out.append({"type": "TEXT_MESSAGE_CONTENT", "messageId": self._id, "delta": event.text})
            elif isinstance(event, ReasoningDelta) and event.text and self.reasoning:
                if self._open != "reasoning":
                    self._close(out)
                    self._open, self._id = "reasoning", random_id("rs_")
                    out.append({"type": "REASONING_START", "messageId": self._id})
                    out.append({"type": "REASONING_MESSAGE_START", "messageId": self._id, "role": "reasoning"})
                out.append({"type": "REASONING_MESSAGE_CONTENT", "messageId": self._id, "delta": event.text})
            elif isinstance(event, ToolCallStart):
                self._close(out)
                self._open, self._id = "tool", event.id or call_id()
                # (calls with no text before them share an assistant message of their own, as one
                # turn's calls do: the client makes it from the first call's `parentMessageId`)
                self._message_id = self._message_id or random_id("msg_")
                out.append(
                    {
                        "type": "TOOL_CALL_START",
                        "toolCallId": self._id,
                        "toolCallName": event.name,
                        "parentMessageId": self._message_id,
                    }
                )
            elif isinstance(event, ToolCallDelta) and event.arguments and self._open == "tool":
                out.append({"type": "TOOL_CALL_ARGS", "toolCallId": self._id, "delta": event.arguments})
            elif isinstance(event, ToolCallEnd):
                self._close(out)
        self._transcript.apply(out)
        return out

    def _close(self, out: list[dict[str, Any]]) -> None:
        kind, self._open = self._open, None
        if kind == "text":
            out.append({"type": "TEXT_MESSAGE_END", "messageId": self._id})
        elif kind == "reasoning":
            out.append({"type": "REASONING_MESSAGE_END", "messageId": self._id})
            out.append({"type": "REASONING_END", "messageId": self._id})
        elif kind == "tool":
            out.append({"type": "TOOL_CALL_END", "toolCallId": self._id})

    def finish(self) -> list[dict[str, Any]]:
        if self._finished:
            return []
        out = self.start()
        self._finished = True
        self._close(out)
        self._transcript.apply(out)
        if self.messages is not None:
            out.append({"type": "MESSAGES_SNAPSHOT", "messages": [*self.messages, *self._transcript.messages]})
        out.append({"type": "RUN_FINISHED", "threadId": self.thread_id, "runId": self.run_id})
        return out

    def error(self, message: str, *, code: str | None = None) -> list[dict[str, Any]]:
        out = self.start()
        self._finished = True
        event: dict[str, Any] = {"type": "RUN_ERROR", "message": message}
        if code:
            event["code"] = code
        out.append(event)
        return out


__all__ = [
    "AGUIEmitter",
]
