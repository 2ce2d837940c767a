"""A request body read from its bytes, its tools shared by every request that sends the same.

An agent sends the same tools with every turn, often tens of them: more bytes than the rest of a
short request, decoded on every turn, then asked for by three parts (the rewrite, the rules, the
parser's schemas), each of which would make a memo key of them (`core._memo`: a walk over them as
long as reading them). `read_request` decodes a body so that its `tools` are the one shared
object every request with the same tools gets (`memo.shared`), whose key the three parts then
take as it is.

Where the package's C helper is built, the tools are found in the body's bytes first
(`member_span`: a scan of brackets and quotes, nothing decoded) and are decoded only the first
time those exact bytes come (as the body's UTF-8); the rest of the body is decoded with `null` in
their place, and the shared value put back. Anything the scan is not certain of (no helper, an
escaped top-level key, bytes that are no JSON object, tools that are no array or object), and
anything that then fails to decode, is decoded whole, as `json_loads(raw)` would: the same value,
or the same error.

```python
body = read_request(raw)   # == json_loads(raw); body["tools"] is memo.shared(...)
```
"""

from __future__ import annotations

from typing import Any

from .. import _compiled as compiled
from .._memo import shared, shared_json
from ..framing._utf8 import json_loads

_TOOLS = b"tools"
_CONTAINERS = b"[{"


def _utf8_json(text: bytes) -> Any:
    return json_loads(text.decode())


def read_request(raw: bytes) -> Any:
    """`json_loads(raw)`, with a list of `tools` shared (see the module doc). Raises what it raises."""
    native = compiled.native
    span = native.member_span(raw, _TOOLS) if native is not None and type(raw) is bytes else None
    # Only an array or an object is read apart: its bytes are decoded as the UTF-8 they are in
    # the body (alone, bytes would have their encoding guessed from their first bytes).
    if span is not None and raw[span[0]] in _CONTAINERS:
        start, end = span
        try:
            tools = shared_json(raw[start:end], _utf8_json)
            body = json_loads(raw[:start] + b"null" + raw[end:])
        except (ValueError, UnicodeDecodeError, RecursionError):
            body = None  # what is wrong is said by the whole body's decoding, below
        if type(body) is dict and body.get("tools", False) is None:
            body["tools"] = tools  # back in its place (the key kept its position)
            return body
    body = json_loads(raw)
    if type(body) is dict and type(body.get("tools")) is list:
        body["tools"] = shared(body["tools"])
    return body


__all__ = ["read_request"]
