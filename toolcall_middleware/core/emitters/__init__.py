"""What every API's emitter shares: `Upstream`, the host's answer's metadata an emitter writes
(`meta`), and the ids it mints (`ids`). Each API's emitters are in its package:
`core.apis.chat` (`ChatStreamEmitter`, `ChatMessageBuilder`), `core.apis.responses`
(`ResponsesStreamEmitter`, `ResponsesBuilder`), `core.apis.messages` (`MessagesStreamEmitter`,
`MessagesBuilder`), `core.apis.agui` (`AGUIEmitter`)."""

from __future__ import annotations

from ._meta import Upstream

__all__ = ["Upstream"]
