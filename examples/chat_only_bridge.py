"""Every client API in front of a host that serves Chat Completions only.

Codex CLI and the Agents SDK speak only the Responses API, Claude Code and the anthropic SDK only
Anthropic Messages; many raw model servers serve only `/v1/chat/completions`. The bridges take
`/v1/responses` and `/v1/messages` requests, send the host a chat request, and write its raw answer
back in the client's API with real tool calls.

    uvicorn examples.chat_only_bridge:app --port 8000
    OPENAI_BASE_URL=http://127.0.0.1:8000/v1 codex ...            # Responses
    ANTHROPIC_BASE_URL=http://127.0.0.1:8000 claude ...           # Anthropic Messages
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.routing import Route

from examples.fake_model import chat
from toolcall_middleware import ToolCallMiddleware

# A host that serves Chat Completions only (`/v1/responses` and `/v1/messages` are 404s here).
chat_only = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])

app = ToolCallMiddleware(chat_only, dialect="hermes", bridge={"responses-to-chat", "messages-to-chat"})
