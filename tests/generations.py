"""A raw-output Chat host that counts its generations, for the tests of what one request costs.

The last user message says what each generation writes: `script=text,call` is plain text for the
first, a hermes call to `lookup` for the second (and for any after the last entry, the last one
again); `badargs` is a call whose arguments break `lookup`'s schema; `brokenoff`: `BROKEN_OFF`.
`nonce=…` keys the count, which `GET /generations?nonce=…` reads (a path the middleware passes
through). The same host is served over ASGI (`host`; with the middleware: `plain`,
`regenerating`, `bridged`, `incremental`) and WSGI (`wsgi_host`; `wsgi_plain`,
`wsgi_regenerating`), one process per server.

```
uvicorn tests.generations:regenerating      # regenerate=2
```
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import parse_qs

from toolcall_middleware import ToolCallMiddleware, ToolCallWSGIMiddleware

Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

COUNTS: Counter[str] = Counter()
CALL = '<tool_call>\n{"name": "lookup", "arguments": {"q": "paris"}}\n</tool_call>'
BAD_CALL = '<tool_call>\n{"name": "lookup", "arguments": {"q": 7}}\n</tool_call>'
# Two calls, the first broken off by a piece of reasoning in its middle (so its text is content),
# as pieces of a stream: with `max_calls=1` and incremental arguments the answer fails at its end,
# after the calls and text it still holds (`incremental`).
BROKEN_OFF = [
    ("content", 'hi <tool_call>\n{"name": "lookup'),
    ("reasoning_content", '", "argumen'),
    ("content", 'ts": {"q": "x"}}\n</tool_call><tool_call>\n{"name": "lookup", "a'),
    ("content", 'rguments": {"q": "y"}}\n</tool_call>plain\n' + CALL),
]
WRITES: dict[str, Any] = {"text": "I would rather not.", "call": CALL, "badargs": BAD_CALL, "brokenoff": BROKEN_OFF}
LOOKUP = {
    "name": "lookup",
    "description": "Look something up",
    "parameters": {
        "type": "object",
        "properties": {"q": {"type": "string"}},
        "required": ["q"],
        "additionalProperties": False,
    },
}


def generation(raw: bytes) -> tuple[bytes, str]:
    """The content type and body of the next generation for a request body `raw`."""
    text = raw.decode("utf-8", errors="replace")
    nonce = re.search(r"nonce=(\w+)", text)
    script = re.search(r"script=([a-z,]+)", text)
    key = nonce.group(1) if nonce else ""
    steps = script.group(1).split(",") if script else ["text"]
    COUNTS[key] += 1
    written = WRITES[steps[min(COUNTS[key], len(steps)) - 1]]
    stream = bool(json.loads(raw).get("stream"))
    meta = {"id": f"chatcmpl-{key}-{COUNTS[key]}", "created": 1, "model": "qwen3"}
    if not stream:
        content = written if isinstance(written, str) else "".join(t for f, t in written if f == "content")
        message = {"role": "assistant", "content": content}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        return b"application/json", json.dumps({**meta, "object": "chat.completion", "choices": [choice]}).encode()
    if isinstance(written, str):
        written = [("content", written[i : i + 9]) for i in range(0, len(written), 9)]
    chunks = [{field: text} for field, text in written]
    events = [
        {**meta, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": d, "finish_reason": None}]}
        for d in chunks
    ]
    last = {**meta, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    data = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in [*events, last])
    return b"text/event-stream", data + b"data: [DONE]\n\n"


def count(query: str) -> bytes:
    return json.dumps({"generations": COUNTS[parse_qs(query).get("nonce", [""])[0]]}).encode()


async def host(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    raw = b""
    while True:
        message = await receive()
        raw += message.get("body", b"")
        if not message.get("more_body"):
            break
    if scope["path"] == "/generations":
        ctype, body = b"application/json", count(scope["query_string"].decode())
    else:
        ctype, body = generation(raw)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", ctype)]})
    await send({"type": "http.response.body", "body": body})


def wsgi_host(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    if environ["PATH_INFO"] == "/generations":
        ctype, body = b"application/json", count(environ.get("QUERY_STRING", ""))
    else:
        size = int(environ.get("CONTENT_LENGTH") or 0)
        ctype, body = generation(environ["wsgi.input"].read(size))
    start_response("200 OK", [("Content-Type", ctype.decode())])
    return [body]


plain = ToolCallMiddleware(host, dialect="hermes")
regenerating = ToolCallMiddleware(host, dialect="hermes", regenerate=2)
bridged = ToolCallMiddleware(host, dialect="hermes", bridge="messages-to-chat")
incremental = ToolCallMiddleware(host, dialect="hermes", arguments_streaming="incremental", limits={"max_calls": 1})
wsgi_plain = ToolCallWSGIMiddleware(wsgi_host, dialect="hermes")
wsgi_regenerating = ToolCallWSGIMiddleware(wsgi_host, dialect="hermes", regenerate=2)
