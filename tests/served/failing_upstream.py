"""An upstream that fails after its head, for the proxy's tests: a raw HTTP/1.1 server on loopback.

ASGI servers cannot be told to cut a connection in a given way, so this one is written on asyncio
streams with h11 reading the requests. The request's `model` says how the answer fails, its path
which API it speaks (`/v1/chat/completions`, `/v1/responses`, `/v1/messages`); a stream when the
request asks for one, else a JSON body with its full `Content-Length` declared:

- `break-off`: part of the answer (text, then half a tool call), then the connection closed (FIN)
  with the body unfinished;
- `reset`: the same, then a TCP reset (`SO_LINGER` 0);
- `silent`: the same, then nothing for 60 s (the proxy's read timeout fires first);
- `two-calls`: two whole tool calls (one past `--max-calls 1`), then text every 20 ms until the
  client goes;
- `html`: a whole `200 text/html` page (a proxy's error page), streamed or not;
- `html-as-sse`: the same page under `content-type: text/event-stream` (a stream that is no SSE).

`GET /stats` tells how many `two-calls` answers started and how many saw their connection close.

    python -m tests.served.failing_upstream PORT
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import sys
from typing import Any

import h11

from tests.asgi.test_after_the_end import CALL, opening, text_event

STATS = {"two_calls_started": 0, "two_calls_closed": 0}
HALF_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"ci'
WEATHER_CALL = CALL.replace('"f"', '"get_weather"')


def api_of(path: str) -> str:
    return "responses" if path.endswith("/responses") else "messages" if path.endswith("/messages") else "chat"


def whole_answer(api: str, text: str) -> bytes:
    if api == "responses":
        content = [{"type": "output_text", "text": text, "annotations": []}]
        item = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed", "content": content}
        response = {"id": "resp_1", "object": "response", "created_at": 1, "model": "m", "output": [item]}
        return json.dumps(response).encode()
    if api == "messages":
        usage = {"input_tokens": 1, "output_tokens": 1}
        message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "stop_reason": "end_turn"}
        return json.dumps({**message, "content": [{"type": "text", "text": text}], "usage": usage}).encode()
    choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
    completion = {"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": [choice]}
    return json.dumps(completion).encode()


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


async def read_request(reader: asyncio.StreamReader, conn: h11.Connection) -> tuple[h11.Request, bytes] | None:
    head: h11.Request | None = None
    body = b""
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            data = await reader.read(65536)
            if not data:
                return None
            conn.receive_data(data)
        elif isinstance(event, h11.Request):
            head = event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            assert head is not None
            return head, body
        else:
            return None


async def fail(writer: asyncio.StreamWriter, how: str) -> None:
    if how == "silent":
        await asyncio.sleep(60)
    elif how == "reset":
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()
        return
    writer.close()


PAGE = b"<html><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>\n"


async def answer(writer: asyncio.StreamWriter, path: str, payload: dict[str, Any]) -> None:
    api, how = api_of(path), str(payload.get("model"))
    if how in ("html", "html-as-sse"):
        ctype = b"text/html" if how == "html" else b"text/event-stream"
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: %s\r\ncontent-length: %d\r\n\r\n" % (ctype, len(PAGE)))
        writer.write(PAGE)
        await writer.drain()
        writer.close()
        return
    if not payload.get("stream"):
        whole = whole_answer(api, "Let me check. " + WEATHER_CALL)
        head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(whole)
        writer.write(head + whole[: len(whole) // 2])
        await writer.drain()
        await fail(writer, how)
        return
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
    for event in opening(api):
        writer.write(chunk(event))
    if how == "two-calls":
        STATS["two_calls_started"] += 1
        for text in ("Checking. ", WEATHER_CALL, WEATHER_CALL):
            writer.write(chunk(text_event(api, text)))
        try:
            while True:
                writer.write(chunk(text_event(api, "more ")))
                await writer.drain()
                await asyncio.sleep(0.02)
        except (ConnectionError, OSError):
            STATS["two_calls_closed"] += 1
        return
    for text in ("Let me check. ", HALF_CALL):
        writer.write(chunk(text_event(api, text)))
    await writer.drain()
    await asyncio.sleep(0.1)  # the proxy has sent the head and the text on before the failure
    await fail(writer, how)


async def serve_one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    conn = h11.Connection(h11.SERVER)
    try:
        request = await read_request(reader, conn)
        if request is None:
            return
        head, body = request
        path = head.target.decode()
        if head.method == b"GET":
            data = json.dumps(STATS if path == "/stats" else {"status": "ok"}).encode()
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n" % len(data))
            writer.write(b"connection: close\r\n\r\n" + data)
            await writer.drain()
            writer.close()
            return
        await answer(writer, path, json.loads(body))
    except (ConnectionError, OSError):
        pass


async def main(port: int) -> None:
    server = await asyncio.start_server(serve_one, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
