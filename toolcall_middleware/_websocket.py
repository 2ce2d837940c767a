"""WebSocket mode on the Responses routes, as OpenAI serves it on `wss://…/v1/responses`.

The client sends `response.create` messages (a Responses create body plus `"type"`) on one
socket and receives, for each, the events the HTTP stream gives, one JSON text message each.
Each turn is a streamed `POST` of that body into the middleware itself (`inprocess.post`), whose
SSE is decoded and relayed: every format, bridge and policy works as over HTTP.

- Turns run one after another, in the order they came (OpenAI runs a lane's turns FIFO); a
  `stream_id` is echoed in the turn's events.
- `previous_response_id` naming a response completed on this socket (the last one of its lane)
  continues from it even with `store: false`: its input and output items come before the new
  input (`instructions` are not inherited, as over HTTP). Another id is the HTTP path's to resolve,
  unless `store` is false: then nothing can hold it, and the turn fails with
  `previous_response_not_found`.
- A continuation whose `function_call_output` answers no call of the conversation fails; a failed
  turn (an error, `response.failed`) forgets the response it continued from, so a client cannot
  go on from state the failure may have left stale.
- `background` and `generate: false` (a warm-up) are refused. Faults are `error` events with
  the HTTP status they would have had (`{"type": "error", "status": 400, "error": {"type",
  "code", "message", "param"}}`); the socket stays open.
- The client leaving cancels the running turn (and so the host's work) and drops queued ones;
  nothing more is written to it, and one line says so.
- Memory is bounded: each lane's last response is kept as JSON, and the responses one socket keeps
  count against `limits.max_websocket_bytes` (past it, the longest idle lane's is forgotten: a
  continuation of it is the HTTP path's, or `previous_response_not_found` with `store: false`), as
  do the turns waiting; `limits.max_websockets` sockets are open at once, and an upgrade past them
  is refused with a 503 (`refuse`).

WSGI has no WebSockets: this is the ASGI middleware's and `serve`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from dataclasses import dataclass
from typing import Any

from ._inprocess import ASGIApp, Message, Receive, Scope, Sink, post, refuse_handshake
from .config import Limits
from .core._http import header, json_head
from .core._replaced import openai_error
from .core.apis.responses._compaction import input_items
from .core.framing._utf8 import json_text
from .core.framing.sse import SSEDecoder

logger = logging.getLogger("toolcall_middleware")

TERMINAL = ("response.completed", "response.incomplete", "response.failed")
MAX_QUEUED = 64  # turns waiting behind the running one; past these, a turn is refused
MAX_LANES = 64  # lanes whose last response a socket keeps; past these, the longest idle is forgotten
# Fields of HTTP streaming that a `response.create` does not carry to the HTTP path.
_TRANSPORT_FIELDS = ("type", "stream", "stream_options", "stream_id")


@dataclass(frozen=True)
class Completed:
    """A response completed on this socket: what a continuation of it starts from."""

    id: str
    items: bytes  # its input items, then its output items: a JSON array, as it counts against the bound

    def conversation(self) -> list[Any]:
        items: list[Any] = json.loads(self.items)
        return items


class TurnError(Exception):
    """A turn refused or failed: sent as an `error` event."""

    def __init__(self, status: int, code: str, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.event = {
            "type": "error",
            "status": status,
            "error": {"type": _error_type(status), "code": code, "message": message, "param": param},
        }


class ResponsesSocket:
    """One client's WebSocket on a Responses route; `app` is the middleware its turns go through."""

    def __init__(self, app: ASGIApp, scope: Scope, receive: Receive, send: Sink, *, limits: Limits) -> None:
        self.app = app
        self.scope = scope
        self.receive = receive
        self.send = send
        self.path = str(scope.get("path", ""))
        self.max_message_bytes = limits.max_request_bytes
        self.max_bytes = limits.max_websocket_bytes
        self.completed: dict[str | None, Completed] = {}  # the last response of each lane (stream_id)
        self.turns: asyncio.Queue[bytes | TurnError] = asyncio.Queue(MAX_QUEUED)
        self.queued_bytes = 0  # of the turns waiting
        self.running = False  # a turn is under way
        self.gone = False  # the client left: nothing more is written to it
        self.worker: asyncio.Task[None] | None = None
        self.sending = asyncio.Lock()  # one message at a time, the reader's refusals and the turns'

    async def run(self) -> None:
        if (await self.receive())["type"] != "websocket.connect":
            return
        await self.send({"type": "websocket.accept"})
        worker = self.worker = asyncio.create_task(self._work())
        try:
            while not worker.done():
                message = await self.receive()
                if message["type"] == "websocket.disconnect":
                    self._left()
                    break
                if message["type"] == "websocket.receive":
                    await self._queue(message)
        finally:
            worker.cancel()  # the client left: the running turn stops, and with it the host's work
            with contextlib.suppress(asyncio.CancelledError):
                await worker

    def _left(self) -> None:
        """The client is gone: the running turn stops, and one line says what it left undone."""
        if self.gone:
            return
        self.gone = True
        if self.running or not self.turns.empty():
            undone = ("its running turn stopped, " if self.running else "") + f"{self.turns.qsize()} queued dropped"
            logger.info("toolcall-middleware: a WebSocket client left %s mid-turn: %s", self.path, undone)
        if self.worker is not None:
            self.worker.cancel()

    async def _queue(self, message: Message) -> None:
        """A message received: queued as the next turn, or refused (too many turns, or too many bytes, waiting)."""
        text = message.get("text")
        raw = text.encode() if text is not None else bytes(message.get("bytes") or b"")
        if len(raw) > self.max_message_bytes and not self.turns.full():
            # Not kept: its refusal waits its turn, so that it follows the events of the turns before it.
            message_bytes = self.max_message_bytes
            self.turns.put_nowait(TurnError(400, "request_too_large", f"The message is over {message_bytes} bytes."))
            return
        if self.turns.full():
            refused = TurnError(429, "too_many_requests", f"Over {MAX_QUEUED} turns queued.")
        elif self.queued_bytes + len(raw) > self.max_bytes:
            refused = TurnError(429, "too_many_requests", f"Over {self.max_bytes} bytes of turns queued.")
        else:
            self.queued_bytes += len(raw)
            self.turns.put_nowait(raw)
            return
        await self.send_event(refused.event)

    async def _work(self) -> None:
        while True:
            raw = await self.turns.get()
            self.running = True
            try:
                if isinstance(raw, TurnError):
                    raise raw
                self.queued_bytes -= len(raw)
                await self._turn(raw)
            except TurnError as error:
                await self.send_event(error.event)
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug of ours: said, and the socket closed, rather than hang
                logger.exception("toolcall-middleware: a WebSocket turn failed")
                with contextlib.suppress(Exception):
                    await self.send_event(TurnError(500, "server_error", "The turn failed.").event)
                    await self.send({"type": "websocket.close", "code": 1011})
                return
            finally:
                self.running = False

    async def send_event(self, event: dict[str, Any] | str) -> None:
        """One message to the client; none once it has left (the running turn is then cancelled)."""
        text = event if isinstance(event, str) else json_text(event)
        async with self.sending:
            # A turn's events can come faster than the event loop turns over: without this, a
            # client gone mid-turn is written to until the server hears of it, and each write
            # after the first is a `socket.send() raised exception` warning of asyncio's.
            await asyncio.sleep(0)
            if self.gone:
                return
            try:
                await self.send({"type": "websocket.send", "text": text})
            except OSError:  # the server's word that the client left (uvicorn's ClientDisconnected)
                self._left()

    # -- one turn --------------------------------------------------------------------------------

    async def _turn(self, raw: bytes) -> None:
        try:
            event = json.loads(raw)
        except ValueError:
            raise TurnError(400, "invalid_json", "The message is not valid JSON.") from None
        if not isinstance(event, dict):
            raise TurnError(400, "invalid_body", "A message must be a JSON object.")
        if event.get("type") != "response.create":
            what = f"{event.get('type')!r}" if "type" in event else "a message without 'type'"
            raise TurnError(400, "invalid_type", f"Unsupported event type {what}: send 'response.create'.", "type")
        if event.get("background"):
            message = "'background' is not supported in WebSocket mode."
            raise TurnError(400, "unsupported_parameter", message, "background")
        if event.get("generate") is False:
            message = "'generate: false' (a warm-up without an answer) is not supported here."
            raise TurnError(400, "unsupported_parameter", message, "generate")
        lane = event.get("stream_id") if isinstance(event.get("stream_id"), str) else None
        body = {k: v for k, v in event.items() if k not in _TRANSPORT_FIELDS and k != "background"}
        continued = self._continue(body)
        body["stream"] = True
        await _Relay(self, body, lane, continued).run()

    def _continue(self, body: dict[str, Any]) -> Completed | None:
        """Put the response `previous_response_id` names before the new input, where this socket
        completed it; the response continued from (None: not one of ours)."""
        previous = body.get("previous_response_id")
        if previous is None:
            return None
        found = next((c for c in self.completed.values() if c.id == previous), None)
        if found is None:
            if body.get("store") is False:
                message = f"Previous response with id '{previous}' not found."
                raise TurnError(400, "previous_response_not_found", message, "previous_response_id")
            return None  # the HTTP path's (a store, a stateful host) to resolve
        try:
            new = input_items(body.get("input"))
        except ValueError:
            raise TurnError(400, "invalid_value", "Invalid 'input': expected a string or an array.", "input") from None
        items = [*found.conversation(), *new]
        answered = {i.get("call_id") for i in items if isinstance(i, dict) and str(i.get("type")).endswith("_call")}
        for i, item in enumerate(new):
            if isinstance(item, dict) and str(item.get("type")).endswith("_call_output"):
                if item.get("call_id") not in answered:
                    self.forget(found.id)
                    message = f"No tool call found for function call output with call_id {item.get('call_id')}."
                    raise TurnError(400, "invalid_value", message, f"input[{i}].call_id")
        del body["previous_response_id"]
        body["input"] = items
        return found

    def forget(self, response_id: str) -> None:
        self.completed = {k: v for k, v in self.completed.items() if v.id != response_id}


class _Relay:
    """One turn's streamed POST: its SSE events out as text messages; what it completed kept."""

    def __init__(self, socket: ResponsesSocket, body: dict[str, Any], lane: str | None, continued: Completed | None):
        self.socket = socket
        self.body = body
        self.lane = lane
        self.continued = continued
        self.status = 0
        self.streamed = False
        self.decoder = SSEDecoder()
        self.rest: list[bytes] = []  # a body that is no stream (an error), gathered
        self.ended = False  # a terminal event (or an error) went out

    async def run(self) -> None:
        raw = json_text(self.body).encode()
        try:
            await post(self.socket.app, self.socket.scope, self.socket.path, raw, self._receive)
        except Exception:
            # The host failed (the middleware ended the stream in the API's error, if it had
            # begun, and let the failure go on to the server, which would log it): this turn's.
            logger.warning("toolcall-middleware: the host failed during a WebSocket turn", exc_info=True)
            if not self.ended:
                self._failed()
                raise TurnError(502, "upstream_error", "The host failed before the response ended.") from None
            return
        if self.streamed:
            for event in self.decoder.flush():
                await self._event(event.event, event.data)
        else:
            self._failed()
            raise _as_error(self.status, b"".join(self.rest))
        if not self.ended:
            self._failed()
            raise TurnError(502, "upstream_error", "The response ended before its final event.")

    async def _receive(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            self.status = int(message["status"])
            content_type = header(list(message.get("headers") or []), b"content-type") or b""
            self.streamed = self.status == 200 and content_type.startswith(b"text/event-stream")
        elif kind == "http.response.body":
            data = bytes(message.get("body", b""))
            if not self.streamed:
                self.rest.append(data)
                return
            for event in self.decoder.feed(data):
                await self._event(event.event, event.data)

    async def _event(self, name: str | None, data: str | None) -> None:
        if data is None or data == "[DONE]" or self.ended:
            return
        obj: Any = None
        if name is None or name in TERMINAL or name == "error" or self.lane is not None or self.continued is not None:
            obj = json.loads(data)
            name = obj.get("type") if isinstance(obj, dict) else None
            if self.lane is not None:
                obj["stream_id"] = self.lane
            response = obj.get("response") if isinstance(obj, dict) else None
            if self.continued is not None and isinstance(response, dict):
                response["previous_response_id"] = self.continued.id  # as the client asked
        await self.socket.send_event(data if obj is None else obj)
        if name == "response.completed" or name == "response.incomplete":
            self.ended = True
            self._keep(obj["response"])
        elif name in ("response.failed", "error"):
            self.ended = True
            self._failed()

    def _keep(self, response: dict[str, Any]) -> None:
        output = response.get("output")
        output = output if isinstance(output, list) else []
        items = json_text([*input_items(self.body.get("input")), *output]).encode()
        completed = self.socket.completed
        completed.pop(self.lane, None)  # (re-inserted last: the dict's order is the lanes' use)
        completed[self.lane] = Completed(str(response.get("id")), items)
        held = sum(len(c.items) for c in completed.values())
        while completed and (len(completed) > MAX_LANES or held > self.socket.max_bytes):
            held -= len(completed.pop(next(iter(completed))).items)  # the longest idle lane's (this one's last)

    def _failed(self) -> None:
        if self.continued is not None:
            self.socket.forget(self.continued.id)


async def refuse(scope: Scope, receive: Receive, send: Sink, message: str) -> None:
    """A WebSocket upgrade refused (too many sockets open): a 503 with the API's error body and
    `retry-after` (`refuse_handshake`)."""
    body = openai_error(message, 503, code="too_many_websockets")
    await refuse_handshake(scope, receive, send, 503, [*json_head(body), (b"retry-after", b"1")], body, message)


def _as_error(status: int, body: bytes) -> TurnError:
    """An HTTP error answer as the turn's `error` event (the API's error object, when it is one)."""
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        error = None
    if not isinstance(error, dict):
        error = {"message": body.decode("utf-8", "replace")[:500] or f"The host answered {status}."}
    if status == 200:  # a whole answer where a stream was asked for: nothing to relay as events
        status, error = 502, {"message": "The host did not stream its answer.", "code": "upstream_error"}
    code = error.get("code") or error.get("type") or _error_type(status)
    return TurnError(status, str(code), str(error.get("message") or ""), error.get("param"))


def _error_type(status: int) -> str:
    return "invalid_request_error" if 400 <= status < 500 else "server_error"


__all__ = ["ResponsesSocket", "TurnError", "refuse"]
