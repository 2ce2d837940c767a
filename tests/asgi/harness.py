"""A raw ASGI harness: a scope builder, a scripted `receive`, a recording `send` and tiny raw apps.

Chunk-level and disconnect behaviour cannot be seen through `httpx.ASGITransport` (it joins the
body) or a real server (the kernel re-chunks), so these tests drive `ToolCallMiddleware` with
hand-written messages, the way Starlette tests its GZip middleware on pathsend.

```python
receive = Receive([request(b'{"a": 1}')])
send = Recorder()
run(middleware(scripted([start(200), body(b"..")])), scope(), receive, send)
assert send.body == b".."
```
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Coroutine, Iterable, MutableMapping
from typing import Any

Message = MutableMapping[str, Any]
Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]]
RawHeaders = list[tuple[bytes, bytes]]

CHAT = "/v1/chat/completions"
RESPONSES = "/v1/responses"
TIMEOUT = 10.0  # every harness run is bounded: a hang is a failure, never a stuck test session


def scope(
    path: str = CHAT,
    *,
    method: str = "POST",
    headers: RawHeaders | None = None,
    spec_version: str = "2.3",
    extensions: dict[str, Any] | None = None,
) -> Scope:
    """An HTTP scope as uvicorn builds it (spec 2.3: Starlette listens for the disconnect)."""
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": spec_version},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"testserver"), (b"content-type", b"application/json")] if headers is None else headers,
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
        "extensions": extensions if extensions is not None else {},
        "state": {},
    }


def request(body: bytes, more: bool = False) -> Message:
    return {"type": "http.request", "body": body, "more_body": more}


def start(status: int = 200, headers: RawHeaders | None = None, **extra: Any) -> Message:
    return {"type": "http.response.start", "status": status, "headers": list(headers or []), **extra}


def body(data: bytes, more: bool = False) -> Message:
    return {"type": "http.response.body", "body": data, "more_body": more}


def json_headers(data: bytes, *, ctype: bytes = b"application/json") -> RawHeaders:
    return [(b"content-type", ctype), (b"content-length", str(len(data)).encode())]


SSE_HEADERS: RawHeaders = [(b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-cache")]


class Receive:
    """A scripted `receive`: the messages in order, then (like a real server) it blocks until
    `disconnect()` is called and answers `http.disconnect` from then on."""

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self.messages = list(messages)
        self.calls = 0
        self.gone = asyncio.Event()

    def disconnect(self) -> None:
        self.gone.set()

    async def __call__(self) -> Message:
        self.calls += 1
        if self.messages:
            return self.messages.pop(0)
        await self.gone.wait()
        return {"type": "http.disconnect"}


class Recorder:
    """A recording `send`. `on_send` runs after each message is recorded (e.g. to disconnect)."""

    def __init__(self, on_send: Callable[[Recorder, Message], None] | None = None) -> None:
        self.messages: list[Message] = []
        self.on_send = on_send

    async def __call__(self, message: Message) -> None:
        self.messages.append(dict(message))
        if self.on_send is not None:
            self.on_send(self, message)
        await asyncio.sleep(0)  # a real server's send yields to the loop

    @property
    def types(self) -> list[str]:
        return [m["type"] for m in self.messages]

    @property
    def start(self) -> Message:
        starts = [m for m in self.messages if m["type"] == "http.response.start"]
        assert len(starts) == 1, f"expected one http.response.start, got {self.types}"
        return starts[0]

    @property
    def status(self) -> int:
        return int(self.start["status"])

    @property
    def headers(self) -> RawHeaders:
        return [(bytes(k), bytes(v)) for k, v in self.start.get("headers") or []]

    def header(self, name: bytes) -> list[bytes]:
        """Every value of a header, by case-insensitive name."""
        return [v for k, v in self.headers if k.lower() == name.lower()]

    @property
    def bodies(self) -> list[Message]:
        return [m for m in self.messages if m["type"] == "http.response.body"]

    @property
    def body(self) -> bytes:
        """The response body; asserts the body messages are well formed (only the last one ends)."""
        parts = self.bodies
        assert parts, f"no body in {self.types}"
        assert all(m.get("more_body", False) for m in parts[:-1]), "a body message after the final one"
        assert not parts[-1].get("more_body", False), "the response never ended"
        return b"".join(bytes(m.get("body", b"")) for m in parts)

    def json(self) -> Any:
        return json.loads(self.body)


def scripted(messages: Iterable[Message], *, seen: list[bytes] | None = None) -> ASGIApp:
    """A raw app that reads the whole request body (appending it to `seen`), then sends `messages`."""
    script = list(messages)

    async def app(
        scope: Scope, receive: Callable[[], Awaitable[Message]], send: Callable[[Message], Awaitable[None]]
    ) -> None:
        data = b""
        while True:
            message = await receive()
            assert message["type"] == "http.request", message
            data += message.get("body", b"")
            if not message.get("more_body", False):
                break
        if seen is not None:
            seen.append(data)
        for message in script:
            await send(dict(message))

    return app


def split_every_byte(data: bytes) -> list[Message]:
    """`data` as one `http.response.body` per byte, then an empty final one (Starlette style)."""
    return [body(data[i : i + 1], more=True) for i in range(len(data))] + [body(b"")]


def run(coro: Coroutine[Any, Any, Any], timeout: float = TIMEOUT) -> Any:
    async def bounded() -> Any:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


def call(app: ASGIApp, scope_: Scope, receive: Receive, send: Recorder) -> None:
    """Run one request through `app` to completion, bounded by `TIMEOUT`."""
    run(app(scope_, receive, send))  # type: ignore[arg-type]


# -- upstream answers in the raw-output model's shape ---------------------------------------------

RAW_CALL = 'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


def chat_request(*, stream: bool = False, tools: Any = TOOLS, **extra: Any) -> bytes:
    payload: dict[str, Any] = {"model": "qwen3", "messages": [{"role": "user", "content": "Weather in Paris?"}]}
    if tools is not None:
        payload["tools"] = tools
    if stream:
        payload["stream"] = True
    return json.dumps({**payload, **extra}).encode()


def chat_answer(text: str = RAW_CALL) -> bytes:
    """A whole Chat Completions answer whose content is the model's raw text."""
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "qwen3",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
        }
    ).encode()


def chat_stream(text: str = RAW_CALL, piece: int = 7) -> bytes:
    """A Chat Completions SSE stream of the model's raw text, `piece` characters per chunk."""
    meta = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "qwen3"}
    out = []
    for n, i in enumerate(range(0, len(text), piece)):
        delta = {"role": "assistant", "content": text[i : i + piece]} if n == 0 else {"content": text[i : i + piece]}
        out.append({**meta, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    out.append({**meta, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in out) + b"data: [DONE]\n\n"


def sse_events(data: bytes) -> list[Any]:
    """The JSON payloads of an SSE body (`[DONE]` kept as the string)."""
    out: list[Any] = []
    for block in data.replace(b"\r\n", b"\n").split(b"\n\n"):
        lines = [ln[5:].strip() for ln in block.split(b"\n") if ln.startswith(b"data:")]
        if lines:
            payload = b"\n".join(lines).decode()
            out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out


RESPONSE_BASE = {"id": "resp_1", "object": "response", "created_at": 1, "model": "qwen3"}


def responses_message(text: str) -> dict[str, Any]:
    """The message output item of a Responses answer whose output text is the model's raw text."""
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def responses_answer(text: str = RAW_CALL) -> bytes:
    """A whole Responses API answer of the model's raw text."""
    return json.dumps({**RESPONSE_BASE, "status": "completed", "output": [responses_message(text)]}).encode()


def responses_stream(text: str = RAW_CALL, piece: int = 7) -> bytes:
    """A Responses API SSE stream (typed events, no `[DONE]`) of the model's raw text."""
    base = RESPONSE_BASE
    message = responses_message(text)
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**base, "status": "in_progress", "output": []}}
    ]
    for i in range(0, len(text), piece):
        events.append(
            {
                "type": "response.output_text.delta",
                "item_id": "msg_1",
                "output_index": 0,
                "content_index": 0,
                "delta": text[i : i + piece],
            }
        )
    events.append({"type": "response.completed", "response": {**base, "status": "completed", "output": [message]}})
    return b"".join(
        b"event: " + e["type"].encode() + b"\ndata: " + json.dumps({**e, "sequence_number": n}).encode() + b"\n\n"
        for n, e in enumerate(events)
    )


def responses_request(*, stream: bool = False) -> bytes:
    tools = [{"type": "function", **TOOLS[0]["function"]}]
    return json.dumps({"model": "qwen3", "input": "Weather in Paris?", "tools": tools, "stream": stream}).encode()
