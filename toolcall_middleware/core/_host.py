"""The request as the host gets it: translated to the host's API (a bridge), then rewritten for a
raw-output model (manifest, rules, flattened history) in the dialect's own text.

```python
host_body, rules, dropped = for_host("responses", "chat", body)   # rules: the tool rules, OpenAI-shaped
result = spec_for("chat").rewrite(host_body, dialect=request_dialect(dialect), forward_tools=False)
```
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._api import spec_for
from .apis.responses._checks import RESPONSES_FIELDS
from .request._bridge import responses_to_chat
from .request._bridge_messages import chat_to_messages, messages_to_chat
from .request._fields import check_fields


def request_dialect(dialect: str) -> str:
    """The format the request asks the model to write. `auto` is a way of reading, not a format:
    a model no pattern knows is shown the hermes manifest (`<tool_call>{…}</tool_call>`, the
    format most open models are trained on), which `auto` reads back like any other it detects."""
    return "hermes" if dialect == "auto" else dialect


def for_host(api: str, upstream: str, body: dict[str, Any]) -> tuple[dict[str, Any], Mapping[str, Any], Any]:
    """The body in the host's API's shape, the tool rules in an OpenAI shape (for the parser and
    the policy), and the tool types the translation dropped (`None`: no translation). The body's
    fields are checked to its API's types first, the same on a bridged route as on a native one
    (a Responses request's input items, on its own route, by its rewrite: it checks them as it
    reads them, and a long chain's input is thousands of items, checked once). An API no host
    serves (AG-UI) is translated to its host API first, and goes on from there."""
    spec = spec_for(api)
    if spec.to_host is not None and spec.host_api is not None:
        translated = spec.to_host(body)  # (checks the request itself)
        return for_host(spec.host_api, upstream, translated.body)
    if api == upstream == "responses":
        check_fields(RESPONSES_FIELDS, body)
    else:
        spec.check_request(body)
    if api == "messages":
        as_chat = messages_to_chat(body)  # Anthropic tools, read in Chat's shape
        return (as_chat.body if upstream == "chat" else body), as_chat.body, as_chat.dropped_tools
    if api == upstream:
        return body, body, None
    dropped: tuple[str, ...] = ()
    host = body
    if api == "responses":
        as_chat = responses_to_chat(body)
        host, dropped = as_chat.body, as_chat.dropped_tools
    if upstream == "messages":
        as_messages = chat_to_messages(host)
        host, dropped = as_messages.body, dropped + as_messages.dropped_tools
    return host, body, dropped


__all__ = ["for_host", "request_dialect"]
