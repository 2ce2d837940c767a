"""`Tee`: the `send` of one `POST /v1/responses` behind the state layer.

The stateless pipeline below makes the answer with the state's fields in every response object
(`Echo`: our id, `store`, `previous_response_id`, `conversation`, `background`), which the state
hands it in the scope with the tee's `ResponseHook` (`core._response_hook`); the pipeline notes
on the hook each event it encodes and a whole answer's response object. The tee passes the
bytes on, keeps each event's JSON text for replay while they fit in `max_kept_bytes`, and hands
the finished response to `finish` (which stores it) before the last bytes go out. A whole JSON
answer is held (the pipeline held it anyway) until then.

What the pipeline did not write (the host's own answer passed through, its bytes after a failure
of ours, a keep-alive ping) the tee reads itself, as the answer's bytes were once read: a stream
event by event with the core's SSE decoder, a JSON answer whole, the state's fields applied to
each response object found and that object re-encoded. JSON nested deeper than `max_depth` is read
there as the pipeline reads it: as no response (`decode_data`), passed on and not stored.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core._depth import MAX_DEPTH
from ..core._http import Body, headers_named, without
from ..core._response_hook import RESPONSE_EVENTS, TERMINAL_EVENTS, ResponseHook, Written
from ..core._schema import JSON_OBJECT
from ..core._stored_input import StoredInput
from ..core.apis.responses._emitter import error_event
from ..core.framing._utf8 import json_bytes
from ..core.framing.sse import SSEDecoder, encode_event, event_data
from ..core.inbound._base import decode_data
from ._asgi_io import Message, Send, answer
from ._base import StoreError
from ._chain import Link
from ._state import Echo, StateError

logger = logging.getLogger("toolcall_middleware")


@dataclass(frozen=True)
class Turn:
    """One response being made: whose it is, what it says of the state, and its input items
    (`whole`: everything the host got, in about `size` bytes; `own`: the request's new items, the
    only ones it stores; `link`: the responses it continues; `history_json`: the JSON text of
    the items of `whole` before `own`, `state.items_json`, None when not made; `stored`: what
    the middleware was told of those items, and where it left their flattening, `after`)."""

    credential: str
    echo: Echo
    whole: list[dict[str, Any]]
    own: list[dict[str, Any]]
    link: Link = field(default_factory=Link)
    size: int = 0
    history_json: str | None = None
    stored: StoredInput | None = None


Finish = Callable[[Turn, dict[str, Any], "list[str] | None"], Awaitable[None]]
Progress = Callable[["Tee"], Awaitable[None]]


def unavailable(error: StoreError) -> StateError:
    return StateError(503, f"The response store is unavailable: {error}", None, code="store_unavailable")


class Tee:
    def __init__(
        self,
        turn: Turn,
        send: Send,
        finish: Finish,
        *,
        max_kept_bytes: int,
        progress: Progress | None = None,
        max_depth: int = MAX_DEPTH,
    ) -> None:
        self.turn = turn
        self.downstream = send
        self.finish = finish
        self.progress = progress  # called after each event of a stream (a background response)
        self.max_kept_bytes = max_kept_bytes
        self.max_depth = max_depth
        self.hook = ResponseHook(turn.echo.fields())  # given to the pipeline below, in the scope
        self.body = Body.PASS  # what the answer's body is to the tee: PASS until its head says more
        self.status = 0
        self.start: Message | None = None
        self.held: list[bytes] = []  # a JSON answer, or the body of one that passes (for its error)
        self.decoder: SSEDecoder | None = None  # for a stream's bytes the pipeline did not write
        self.events: list[str] | None = []  # for replay, as JSON texts; None once too large to keep
        self.kept_bytes = 0
        self.latest: dict[str, Any] | None = None  # the last response object seen
        self.ended = False  # the response reached its end (and was handed to `finish`)
        self.answered: int | None = None  # our status instead of the pipeline's (a store failure: 503)

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            return await self._start(message)
        if kind != "http.response.body":
            return await self.downstream(message)
        body, more = bytes(message.get("body", b"")), bool(message.get("more_body"))
        if self.body is Body.SSE:
            return await self._stream(body, more)
        if self.body is Body.JSON:
            self.held.append(body)
            if not more:
                await self._json_end()
            return None
        if self.progress is not None and len(self.held) < 64:  # (a background run reports the host's error)
            self.held.append(body)
        return await self.downstream(message)

    async def _start(self, message: Message) -> None:
        headers = message.get("headers") or []
        self.status = int(message.get("status", 0))
        content_type, coding = headers_named(headers, b"content-type", b"content-encoding")
        if self.status == 200 and coding in (None, b"identity") and content_type is not None:
            if content_type.startswith(b"text/event-stream"):
                self.body = Body.SSE
                return await self.downstream({**message, "headers": without(headers, b"content-length")})
            if b"json" in content_type:
                self.body = Body.JSON
                self.start = message
                return None
        return await self.downstream(message)

    async def _json_end(self) -> None:
        body = b"".join(self.held)
        assert self.start is not None
        response = self.hook.response  # the pipeline's own answer: the state's fields are in it
        if response is None:
            response = self._read_whole(body)  # (an answer it did not write: read here)
            if response is not None:
                body = json_bytes(response)
        if response is not None:
            self.latest, self.ended = response, True
            try:
                await self.finish(self.turn, response, None)
            except StoreError as error:
                logger.error("toolcall-middleware: store: %s", error)
                self.answered = 503
                return await answer(self.downstream, 503, unavailable(error).body())
        headers = without(self.start.get("headers") or [], b"content-length")
        await self.downstream({**self.start, "headers": [*headers, (b"content-length", str(len(body)).encode())]})
        await self.downstream({"type": "http.response.body", "body": body})

    def _read_whole(self, body: bytes) -> dict[str, Any] | None:
        """The response object of a JSON answer the pipeline did not write, with the state's fields."""
        try:
            response = decode_data(body.decode(), self.max_depth)
        except UnicodeDecodeError:  # (not an answer: passed on as it came)
            return None
        if isinstance(response, JSON_OBJECT) and response.get("object") == "response":
            return self.turn.echo.apply(response)
        return None

    async def _stream(self, data: bytes, more: bool) -> None:
        taken, end = self.hook.take(data)  # the events the pipeline wrote, that `data` begins with
        out = data if end == len(data) else data[:end]
        at = 0
        for written in taken:
            failure = await self._written(written)
            if failure is not None:  # (the terminal event: the last of the pipeline's)
                out = out[:at] + failure + out[at + len(written.raw) :]
            at += len(written.raw)
        if end < len(data) or (not more and self.decoder is not None):
            out += await self._passed(data[end:], more)
        if out or not more:
            await self.downstream({"type": "http.response.body", "body": out, "more_body": more})

    async def _written(self, written: Written) -> bytes | None:
        """Keep an event the pipeline wrote; at the end, store the response. The bytes of the
        stream's `error` event when the store failed, to go in its place; else None."""
        if self.ended:
            return None
        self._keep(written.raw)
        if written.event is None:
            await self._progress()
            return None
        self.latest = written.response
        if written.terminal:
            return await self._end(written.event)
        await self._progress()
        return None

    async def _passed(self, data: bytes, more: bool) -> bytes:
        """Bytes of the stream the pipeline did not write, read event by event."""
        if self.decoder is None:
            self.decoder = SSEDecoder()
        out: list[bytes] = []
        for event in [*self.decoder.feed(data), *(self.decoder.flush() if not more else ())]:
            out.append(await self._event(event.raw, event.event, event.data))
        return b"".join(out)

    async def _event(self, raw: bytes, name: str | None, data: str | None) -> bytes:
        if self.ended or data is None:
            return raw
        if name is not None and name not in RESPONSE_EVENTS:
            # A delta, an item, an error: passed on as it came, kept as its JSON text (only
            # events that carry a response object are decoded, here and for replay).
            self._keep(raw, data)
            await self._progress()
            return raw
        event = decode_data(data, self.max_depth)
        if not isinstance(event, JSON_OBJECT):
            return raw
        kind = event.get("type")
        carries = isinstance(event.get("response"), JSON_OBJECT)
        if kind in RESPONSE_EVENTS and carries:
            event = {**event, "response": self.turn.echo.apply(event["response"])}
            self.latest = event["response"]
            raw = encode_event(event)
            data = None  # (its text is that of the event as encoded now)
        self._keep(raw, data)
        if kind in TERMINAL_EVENTS and carries:
            failure = await self._end(event)
            return raw if failure is None else failure
        await self._progress()
        return raw

    async def _end(self, event: Mapping[str, Any]) -> bytes | None:
        """The response is over (`event`, its terminal event): stored. The `error` event that
        takes the terminal event's place when the store failed; else None."""
        self.ended = True
        try:
            await self.finish(self.turn, event["response"], self.events)
        except StoreError as error:
            logger.error("toolcall-middleware: store: %s", error)
            failure = unavailable(error)
            number = event.get("sequence_number", 0)
            return encode_event(error_event(failure.message, failure.code or "store_unavailable", number))
        return None

    async def _progress(self) -> None:
        if self.progress is None:
            return
        try:
            await self.progress(self)
        except BaseException:
            # Stopped (cancelled elsewhere) or failed: whatever the pipeline sends after this
            # (its own `response.failed`) must not overwrite the record.
            self.ended = True
            raise

    def _keep(self, raw: bytes, data: str | None = None) -> None:
        """Keep an event's JSON text (`data`, else read off `raw`, as `encode_event` wrote it) for
        `?stream=true` replay, while the record stays within its limit."""
        if self.events is None or not self.turn.echo.store:
            return
        self.kept_bytes += len(raw)
        if self.kept_bytes > self.max_kept_bytes:
            self.events = None  # the response is still stored; only its replay is given up
            return
        self.events.append(event_data(raw) if data is None else data)


__all__ = [
    "Finish",
    "Progress",
    "Tee",
    "Turn",
    "unavailable",
]
