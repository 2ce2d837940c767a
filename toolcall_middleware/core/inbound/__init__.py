"""Inbound readers: what the host app sends back -> raw text deltas (by channel and choice) + metadata.

The SSE framing is decoded before (`core.framing.sse.SSEDecoder`); a reader takes each event's
decoded JSON (or the `[DONE]` data string), or a whole JSON body:

```python
kind = detect(body, route="/v1/chat/completions")  # core.detect; None: not ours, pass it through
reader = reader_for(kind, stream=False)             # core.detect
for event in reader.feed(body) + reader.flush():
    ...  # UpstreamMeta, RawText (-> StreamParser.feed / feed_reasoning), UpstreamDone,
         # UpstreamCall (an Anthropic upstream's own tool_use blocks -> NativeCalls -> PolicyFilter)
```
"""

from __future__ import annotations

from .anthropic import MessagesReader, NativeCalls
from .base import DONE, Reader
from .chat import ChatReader
from .completions import CompletionsReader
from .events import (
    Channel,
    InboundEvent,
    RawText,
    Unrecognized,
    UpstreamCall,
    UpstreamDone,
    UpstreamError,
    UpstreamMeta,
)
from .responses import ResponsesReader

__all__ = [
    "DONE",
    "Channel",
    "ChatReader",
    "CompletionsReader",
    "InboundEvent",
    "MessagesReader",
    "NativeCalls",
    "RawText",
    "Reader",
    "ResponsesReader",
    "Unrecognized",
    "UpstreamCall",
    "UpstreamDone",
    "UpstreamError",
    "UpstreamMeta",
]
