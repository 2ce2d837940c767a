"""Request-side rewrites: pure `dict -> dict`, for backends that cannot take `tools`: what every
API's rewrite shares, and the bridges that translate one API into another.

- `normalize_tools(body)`: the request's tools (both shapes and legacy `functions`),
  `tool_choice` and `parallel_tool_calls`, normalized; non-function tools dropped and reported.
- Each API's rewrite is in its package: `core.apis.chat.rewrite_chat_request(body, dialect=…)`,
  `core.apis.responses.rewrite_responses_request`, `core.apis.messages.rewrite_messages_request`:
  the tool manifest injected into the system prompt / `instructions` / `system`, tool history
  flattened into the dialect's own raw text, tool fields removed.
- `render_calls`, `render_assistant`, `render_tool_results`, `render_manifest`: the dialect texts.
- `BadRequest`: a malformed body, with the OpenAI error body naming the field.
"""

from __future__ import annotations

from ..dialects._rendering import ToolChoice, ToolResult, ToolSpec
from ._errors import BadRequest
from ._render import (
    NO_TOOLS,
    native_call_id,
    render_assistant,
    render_calls,
    render_manifest,
    render_tool_result,
    render_tool_results,
    rendered_dialects,
)
from ._rewrite import RewriteResult
from ._tools import ToolSet, normalize_tools

__all__ = [
    "NO_TOOLS",
    "BadRequest",
    "RewriteResult",
    "ToolChoice",
    "ToolResult",
    "ToolSet",
    "ToolSpec",
    "native_call_id",
    "normalize_tools",
    "render_assistant",
    "render_calls",
    "render_manifest",
    "render_tool_result",
    "render_tool_results",
    "rendered_dialects",
]
