"""The wire APIs the library speaks, on either side of the middleware.

`Api` names one: OpenAI Chat Completions (`chat`), the Responses API (`responses`), legacy
`/v1/completions` (`completions`), Anthropic Messages (`messages`). A request's client API and
the host's API (the upstream, another one when bridged) are both an `Api`; `API_PATHS` is each
one's standard path.
"""

from __future__ import annotations

from typing import Literal, get_args

Api = Literal["chat", "responses", "completions", "messages"]

APIS: tuple[Api, ...] = get_args(Api)

API_PATHS: dict[Api, str] = {
    "chat": "/v1/chat/completions",
    "responses": "/v1/responses",
    "completions": "/v1/completions",
    "messages": "/v1/messages",
}

__all__ = ["APIS", "API_PATHS", "Api"]
