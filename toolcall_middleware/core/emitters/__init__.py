"""Emitters: parser events -> wire objects (Chat Completions, Responses, legacy functions, Anthropic
Messages; AG-UI's, `AGUIEmitter`, lives with the rest of that API in `core.apis.agui` and is offered
here too)."""

from __future__ import annotations

from ..apis.agui.emitter import AGUIEmitter
from .anthropic import MessagesBuilder, MessagesStreamEmitter
from .chat import ChatMessageBuilder, ChatStreamEmitter
from .meta import Upstream
from .responses import ResponsesBuilder, ResponsesStreamEmitter

__all__ = [
    "AGUIEmitter",
    "ChatMessageBuilder",
    "ChatStreamEmitter",
    "MessagesBuilder",
    "MessagesStreamEmitter",
    "ResponsesBuilder",
    "ResponsesStreamEmitter",
    "Upstream",
]
