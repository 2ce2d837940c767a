"""The demo model served bare, saying in its answer's `x-seen-request-id` header which
`x-request-id` it was sent (none: the header is absent), so a test can tell what reached it."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from toolcall_middleware.demo import DemoApp

Message = MutableMapping[str, Any]
model = DemoApp(os.environ.get("DEMO_DIALECT", "hermes"))


async def app(
    scope: Message, receive: Callable[[], Awaitable[Message]], send: Callable[[Message], Awaitable[None]]
) -> None:
    seen = [value for key, value in scope.get("headers") or [] if key.lower() == b"x-request-id"]

    async def saying(message: Message) -> None:
        if message["type"] == "http.response.start" and seen:
            message = {**message, "headers": [*message.get("headers", []), (b"x-seen-request-id", b",".join(seen))]}
        await send(message)

    await model(scope, receive, saying)
