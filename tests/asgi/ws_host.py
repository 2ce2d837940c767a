"""A host app for the WebSocket and compaction tests: the demo model (hermes, no reasoning), which
records the body of each request it gets (what the host saw) and can hold a request until it is
cancelled (to see a client's leaving stop the work)."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from toolcall_middleware.demo import DemoApp

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "Current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


class RecordingHost:
    def __init__(self) -> None:
        self.demo = DemoApp("hermes", reasoning=False)
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.hold = False
        self.entered = threading.Event()
        self.cancelled = threading.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.demo(scope, receive, send)
            return
        raw, more = b"", True
        while more:
            message = await receive()
            raw += message.get("body", b"")
            more = message.get("more_body", False)
        self.paths.append(scope["path"])
        if raw:
            self.bodies.append(json.loads(raw))
        if self.hold:
            self.entered.set()
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
        given = False

        async def replay() -> Any:
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": raw, "more_body": False}
            return await receive()

        await self.demo(scope, replay, send)

    def last_text(self) -> str:
        """The last request the host got, as text (whatever its API's shape)."""
        return json.dumps(self.bodies[-1], ensure_ascii=False)
