"""Inbound reading: what the host app sends back -> raw text deltas (by channel and choice) + metadata.

What every API's reader shares is here: `Reader` and the reader base (`base`), the events they
yield (`events`), the template that reads a plain-text chunk off its raw bytes (`template`). Each
API's own reader is in its package (`core.apis.chat.ChatReader`, `core.apis.responses`,
`core.apis.messages`, `core.apis.completions`).

The SSE framing is decoded before (`core.framing.sse.SSEDecoder`); a reader takes each event's
decoded JSON (or the `[DONE]` data string), or a whole JSON body:

```python
kind = detect(body, route="/v1/chat/completions")  # core._detect; None: not ours, pass it through
reader = reader_for(kind, stream=False)             # core._detect
for event in reader.feed(body) + reader.flush():
    ...  # UpstreamMeta, RawText (-> StreamParser.feed / feed_reasoning), UpstreamDone,
         # UpstreamCall (an Anthropic upstream's own tool_use blocks -> NativeCalls -> PolicyFilter)
```
"""

from __future__ import annotations

from ._base import DONE, Reader
from ._events import (
    Channel,
    InboundEvent,
    RawText,
    Unrecognized,
    UpstreamCall,
    UpstreamDone,
    UpstreamError,
    UpstreamMeta,
)

__all__ = [
    "DONE",
    "Channel",
    "InboundEvent",
    "RawText",
    "Reader",
    "Unrecognized",
    "UpstreamCall",
    "UpstreamDone",
    "UpstreamError",
    "UpstreamMeta",
]
