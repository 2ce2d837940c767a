"""What the AG-UI tests share: the protocol's event type (`ag_ui.core.Event`, to parse every
event we send) and a run's input offering the weather tool."""

from __future__ import annotations

from typing import Any

from ag_ui.core import Event as AGUIEvent
from pydantic import TypeAdapter

EVENT = TypeAdapter[Any](AGUIEvent)
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
