"""Request-side rewrites: pure `dict -> dict`, for backends that cannot take `tools`.

- `normalize_tools(body)`: the request's tools (both shapes and legacy `functions`),
  `tool_choice` and `parallel_tool_calls`, normalized; non-function tools dropped and reported.
- `rewrite_chat_request(body, dialect=…)` / `rewrite_responses_request(body, dialect=…)`: the tool
  manifest injected into the system prompt / `instructions`, tool history flattened into the
  dialect's own raw text, tool fields removed.
- `render_calls`, `render_assistant`, `render_tool_results`, `render_manifest`: the dialect texts.
- `BadRequest`: a malformed body, with the OpenAI error body naming the field.
"""

from __future__ import annotations

from ..dialects.rendering import ToolChoice, ToolResult, ToolSpec
from .chat import rewrite_chat_request
from .errors import BadRequest
from .render import (
    NO_TOOLS,
    native_call_id,
    render_assistant,
    render_calls,
    render_manifest,
    render_tool_result,
    render_tool_results,
    rendered_dialects,
)
from .responses import rewrite_responses_request
from .rewrite import RewriteResult
from .tools import ToolSet, normalize_tools

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
    "rewrite_chat_request",
    "rewrite_responses_request",
]
