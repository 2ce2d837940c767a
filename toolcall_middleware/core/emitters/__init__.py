"""Emitters: parser events -> wire objects (Chat Completions, Responses, legacy functions, Anthropic
Messages; AG-UI's, `AGUIEmitter`, lives with the rest of that API in `core.apis.agui`)."""

from __future__ import annotations

from .anthropic import MessagesBuilder, MessagesStreamEmitter
from .chat import ChatMessageBuilder, ChatStreamEmitter
from .meta import Upstream
from .responses import ResponsesBuilder, ResponsesStreamEmitter

__all__ = [
    "ChatMessageBuilder",
    "ChatStreamEmitter",
    "MessagesBuilder",
    "MessagesStreamEmitter",
    "ResponsesBuilder",
    "ResponsesStreamEmitter",
    "Upstream",
]
