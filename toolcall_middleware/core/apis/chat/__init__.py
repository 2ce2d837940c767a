"""OpenAI Chat Completions (`/v1/chat/completions`), as one package: everything the library knows
of the API.

- `spec`: its `ApiSpec` (`SPEC`) and its stream output (`ChatOutput`), whole answers with several
  choices, usage and log probabilities.
- `reader`: a host's Chat answer read into raw text and metadata (`ChatReader`).
- `emitter`: parser events as `chat.completion.chunk`s and `chat.completion`s
  (`ChatStreamEmitter`, `ChatMessageBuilder`).
- `rewrite`: a request rewritten for a raw-output host (`rewrite_chat_request`).
- `checks`: a request's fields checked to Chat's types (`check_chat`).

Its error body is OpenAI's (`core._replaced.openai_error`), which Responses and completions share.
"""

from ._checks import check_chat
from ._emitter import ChatMessageBuilder, ChatStreamEmitter
from ._reader import ChatReader
from ._rewrite import rewrite_chat_request
from ._spec import SPEC, ChatOutput, carry_logprobs, chat_usage, whole_choice

__all__ = [
    "SPEC",
    "ChatMessageBuilder",
    "ChatOutput",
    "ChatReader",
    "ChatStreamEmitter",
    "carry_logprobs",
    "chat_usage",
    "check_chat",
    "rewrite_chat_request",
    "whole_choice",
]
