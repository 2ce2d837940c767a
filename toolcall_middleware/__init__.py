"""toolcall-middleware: real OpenAI tool calling for LLM endpoints that speak raw model output.

```python
from toolcall_middleware import parse

r = parse('<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>', model="Qwen/Qwen3-8B")
r.tool_calls[0].name  # "get_weather"
```
"""

from __future__ import annotations

from ._middleware import ToolCallMiddleware
from ._wsgi import ToolCallWSGIMiddleware
from .config import ToolCallConfig
from .core._events import Event, ReasoningDelta, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart, TruncatedCall
from .core._exchange import Exchange as ToolCallExchange  # the one exchange object, by its public name
from .core._failure import ServerStopped, UpstreamFailure
from .core._parser import StreamParser, parse
from .core._result import ParseResult, ToolCall, merge_events
from .core.dialects import UnknownDialectError, dialect_for_model, get_dialect, list_dialects
from .core.request import BadRequest

__version__ = "0.1.0"

__all__ = [
    "BadRequest",
    "Event",
    "ParseResult",
    "ReasoningDelta",
    "ServerStopped",
    "StreamParser",
    "TextDelta",
    "ToolCall",
    "ToolCallConfig",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallExchange",
    "ToolCallMiddleware",
    "ToolCallStart",
    "ToolCallWSGIMiddleware",
    "TruncatedCall",
    "UnknownDialectError",
    "UpstreamFailure",
    "__version__",
    "dialect_for_model",
    "get_dialect",
    "list_dialects",
    "merge_events",
    "parse",
]
