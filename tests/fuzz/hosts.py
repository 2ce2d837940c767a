"""The host apps the fuzz suite puts behind the middleware: one raw-output model that answers every
route in that route's own shape (Chat, Responses, Anthropic Messages, legacy completions), whole
or streamed as the request asks, as ASGI and as WSGI.

A host never fails and always answers 200, whatever it is sent (a body it cannot read counts as
a request for a whole answer), so any other status a client gets is the middleware's own.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from tests.asgi.harness import RAW_CALL, chat_answer, chat_stream, responses_answer, responses_stream
from tests.hosts import anthropic_events

Message = MutableMapping[str, Any]

MODEL_TEXT = "<think>Paris, so the weather tool.</think>\n" + RAW_CALL
HOST_HEADER = (b"x-fuzz-host", b"1")


def messages_answer(text: str = MODEL_TEXT) -> bytes:
    """A whole Anthropic Messages answer whose one text block is the model's raw text."""
    message = {
        "id": "msg_host",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 5},
    }
    return json.dumps(message).encode()


def messages_stream(text: str = MODEL_TEXT) -> bytes:
    """An Anthropic Messages SSE stream of the model's raw text."""
    events = anthropic_events([{"type": "text", "text": text}], "end_turn", "m")
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def completions_answer(text: str = MODEL_TEXT) -> bytes:
    """A whole legacy completions answer (`choices[0].text`)."""
    choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": "stop"}
    answer = {"id": "cmpl-1", "object": "text_completion", "created": 1, "model": "m", "choices": [choice]}
    return json.dumps(answer).encode()


def completions_stream(text: str = MODEL_TEXT, piece: int = 6) -> bytes:
    """A legacy completions SSE stream, `piece` characters per chunk, then `[DONE]`."""
    out = []
    for i in range(0, len(text), piece):
        choice = {"index": 0, "text": text[i : i + piece], "logprobs": None, "finish_reason": None}
        out.append({"id": "cmpl-1", "object": "text_completion", "created": 1, "model": "m", "choices": [choice]})
    last = {"index": 0, "text": "", "logprobs": None, "finish_reason": "stop"}
    out.append({"id": "cmpl-1", "object": "text_completion", "created": 1, "model": "m", "choices": [last]})
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in out) + b"data: [DONE]\n\n"


ANSWERS: dict[str, tuple[Callable[[], bytes], Callable[[], bytes]]] = {
    "chat": (lambda: chat_answer(MODEL_TEXT), lambda: chat_stream(MODEL_TEXT)),
    "responses": (lambda: responses_answer(MODEL_TEXT), lambda: responses_stream(MODEL_TEXT)),
    "messages": (messages_answer, messages_stream),
    "completions": (completions_answer, completions_stream),
}


def api_of(path: str) -> str:
    for suffix, api in (("/chat/completions", "chat"), ("/responses", "responses"), ("/messages", "messages")):
        if path.endswith(suffix):
            return api
    return "completions"


def answer(path: str, body: bytes) -> tuple[bytes, bytes, list[tuple[bytes, bytes]]]:
    """(content type, body, headers that say what the host was sent) of the host's answer to a
    request at `path`: `x-fuzz-sent` is the sha256 of the body it got (its first 16 digits),
    `x-fuzz-object` `1` when that body is a JSON object."""
    try:
        sent = json.loads(body)
    except Exception:  # any body the host cannot read: a whole answer
        sent = None
    said = [(b"x-fuzz-sent", sha(body).encode()), (b"x-fuzz-object", b"1" if isinstance(sent, dict) else b"0")]
    whole, stream = ANSWERS[api_of(path)]
    if isinstance(sent, dict) and sent.get("stream") is True:
        return b"text/event-stream", stream(), said
    return b"application/json", whole(), said


def sha(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:16]


async def asgi_host(
    scope: Message, receive: Callable[[], Awaitable[Message]], send: Callable[[Message], Awaitable[None]]
) -> None:
    """The host as a raw ASGI app."""
    data = b""
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return
        data += message.get("body", b"")
        if not message.get("more_body", False):
            break
    ctype, out, said = answer(scope["path"], data)
    headers = [(b"content-type", ctype), (b"content-length", str(len(out)).encode()), HOST_HEADER, *said]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": out})


def wsgi_host(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """The host as a WSGI app."""
    length = environ.get("CONTENT_LENGTH")
    data = environ["wsgi.input"].read(int(length)) if length else environ["wsgi.input"].read()
    ctype, out, said = answer(environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", ""), data)
    headers = [("Content-Type", ctype.decode()), ("Content-Length", str(len(out))), ("X-Fuzz-Host", "1")]
    headers += [(k.decode(), v.decode()) for k, v in said]
    start_response("200 OK", headers)
    return [out]
