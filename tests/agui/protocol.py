"""What the AG-UI tests share: the protocol's event and message types (`ag_ui.core.Event`, to
parse every event we send, and `Message`) and a run's input offering the weather tool."""

from __future__ import annotations

from typing import Any

from ag_ui.core import Event as AGUIEvent
from ag_ui.core import Message as AGUIMessage
from pydantic import TypeAdapter

EVENT = TypeAdapter[Any](AGUIEvent)
EVENT_MESSAGE = TypeAdapter[Any](AGUIMessage)  # (one message, as a MESSAGES_SNAPSHOT holds it)
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = {"name": "get_weather", "description": "The weather in a city", "parameters": SCHEMA}


def run_input(**fields: Any) -> dict[str, Any]:
    """A `RunAgentInput` asking about the weather with the tool offered, `fields` over it."""
    base = {
        "threadId": "thread-1",
        "runId": "run-2",
        "parentRunId": "run-1",
        "messages": [{"id": "u1", "role": "user", "content": "What is the weather in Paris?"}],
        "tools": [WEATHER],
        "context": [],
        "forwardedProps": {},
    }
    return {**base, **fields}
