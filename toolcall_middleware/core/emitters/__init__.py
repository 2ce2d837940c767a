"""Emitters: parser events -> wire objects (Chat Completions, Responses, legacy functions, Anthropic Messages)."""

from __future__ import annotations

from .agui import AGUIEmitter
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
