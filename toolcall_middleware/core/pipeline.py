"""One exchange, sans-IO: the request body rewritten, then the response bytes rewritten.

```
request JSON -> core.request.forwarded -> host app
response bytes -> content decoding -> SSE events / whole JSON -> inbound reader -> raw text
  -> StreamParser -> PolicyFilter -> emitter (the API the client called) -> bytes
```

A bridged exchange has two APIs: the client's (`api`: the request shape accepted, the emitter
written) and the host's (`upstream`: the request shape the host gets, the reader of its answer).
The request is translated first, then rewritten for the host's API (`core.request.host`); the
answer, once it is known to be ours, is `core.answer.Answer`'s.

Two answers are the middleware's own rather than the host's (`core.replaced`): a bridged host's
error, and the reverse proxy's own 502 / 504 (marked with `PROXY_ERROR`), are written in the client
API's error shape, and an Anthropic `/count_tokens` request
(`count_tokens=True`: the Messages body rewritten as for `/v1/messages`, then forwarded to the
same path) that the host does not serve (404, 405, 501) is answered with an estimate.

The exchange is always in one `State` and moves only by the table of `core.exchange_state`,
firing its triggers itself as its methods learn what happened (`_move`): the shells read `state`
and only move bytes in and out. Anything the exchange cannot read (another content type, a body
that is not an upstream answer, an upstream error, a host that already returns real tool calls)
goes through untouched, byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from .answer import Answer
from .answer_parts import Prepared
from .api import Api, spec_for
from .exchange_data import AnswerSetup, Report, Settings
from .exchange_state import (
    AGAIN,
    BUFFER,
    DONE,
    ENDED,
    GIVEN_UP,
    HEAD,
    PASS,
    REQUEST,
    STREAM,
    State,
    Trigger,
    next_state,
)
from .framing.sse import SSEDecoder, SSEEvent, SSETooLarge
from .framing.utf8 import json_bytes
from .http import Body, ContentDecoder, Headers, answerable, classify, header, without
from .inbound import UpstreamDone, detect, kind_of
from .inbound.base import decode_data
from .policy.errors import REGENERABLE
from .replaced import estimate_tokens, host_error, openai_error
from .request import BadRequest
from .request.forwarded import forward_request

PROXY_ERROR = b"x-toolcall-proxy-error"  # the reverse proxy marks its own errors so (proxy.py)

class Exchange:
    """One request and its response.

    ```python
    ex = Exchange("chat", settings)                     # Exchange("responses", s, upstream="chat"): bridged
    body = ex.rewrite_request(raw_request_bytes)        # may raise BadRequest (-> 400, `error_body`)
    status, headers = ex.start("POST", 200, upstream_headers)
    out = ex.feed(chunk) ... + ex.close()
    ```
    """

    def __init__(
        self, api: Api, settings: Settings, *, upstream: Api | None = None, count_tokens: bool = False
    ) -> None:
        self.api = api
        self.upstream: Api = upstream or api
        self.spec = spec_for(api)  # what differs by the client's API
        # A bridged client does not speak the host's API: nothing of the host's goes to it as it came.
        self.bridged = self.upstream != api
        # An answer that is not the API's is the client's error, not passed on: a bridged client
        # would not read the host's API, and a host in another process (`remote_host`) that sends
        # a page of HTML is broken, not the user's own code speaking.
        self._answer_required = self.bridged or settings.remote_host
        self.count_tokens = count_tokens
        self._counted: Mapping[str, Any] | None = None  # a count request's body as the host gets it
        self.settings = settings
        self.request: dict[str, Any] = {}
        self.rules: Mapping[str, Any] = {}  # tools, tool_choice, parallel_tool_calls (an OpenAI shape)
        self.record = Report(api=api, dialect="")
        if self.upstream != api:
            self.record.notes.append(f"bridged: the host answers as {self.upstream}")
        self._max_event = settings.max_sse_event_bytes
        self._response()
        # Where the exchange is (`core.exchange_state`): it moves only through `_move`.
        self.state = REQUEST

    def _response(self) -> None:
        """What the exchange knows of the host's response: nothing yet (a new one, or the next
        generation's, `again`)."""
        self._mode = Body.PASS
        self._decoder: ContentDecoder | None = None
        self._identity = True  # the body is not content-encoded (read on every piece of a stream)
        self._sse: SSEDecoder | None = None
        self._held = bytearray()  # decoded bytes the SSE decoder holds: given back raw if we give up
        self._buffer: list[bytes] = []
        self._buffered = 0
        self._stream: Answer | None = None
        self._prepared: Prepared | None = None  # made at `start`, taken by the answer
        self._sized = False  # the host's head gave the body's length
        self._ended_first = False  # the stream's first data was its end (`[DONE]`), no answer
        self._replacing: Literal["error", "estimate"] | None = None  # the body we answer instead
        self._host_status = 0
        self.status: int | None = None  # a new status for a buffered body, decided at close()
        # The body is an error of ours that the same request would meet again (`x-should-retry`).
        self.no_retry = False

    def _move(self, trigger: Trigger) -> State:
        """Take `trigger` by the table (`IllegalTransition` for a move it does not declare)."""
        self.state = next_state(self.state, trigger)
        return self.state

    @property
    def passthrough(self) -> bool:
        """Not ours: the host's bytes go as they came (decided at `start`, or later: a JSON body
        that is not an answer or over the cap, whose original the caller sends; a stream given
        up, which `feed` returns decoded). Before `start`, nothing is ours yet."""
        state = self.state
        return state is PASS or state is GIVEN_UP or state is HEAD or state is REQUEST

    # -- request -------------------------------------------------------------------------------

    def rewrite_request(self, raw: bytes) -> bytes | None:
        """The rewritten request body, or `None` to forward it unchanged (nothing to rewrite).

        A bridged request always comes back translated: its host does not serve the client's API,
        so a body the bridge cannot read is a `BadRequest` here rather than the host's 404.
        """
        forwarded = forward_request(
            raw,
            api=self.api,
            upstream=self.upstream,
            settings=self.settings,
            record=self.record,
            count_tokens=self.count_tokens,
        )
        self.request, self.rules, self._counted = forwarded.request, forwarded.rules, forwarded.counted
        self._move(Trigger.READ)
        return forwarded.body

    def refuse(self) -> None:
        """The request is answered with our error (`error_body`): the host never sees it."""
        self._move(Trigger.REFUSE)

    def forward_unchanged(self) -> None:
        """The request goes to the host as it came, unread (over the size limit)."""
        self._move(Trigger.READ)

    def error_body(self, error: BadRequest) -> bytes:
        """The 400 (413) body for a request the exchange refused, in the client's API's error shape."""
        status = 413 if error.code == "request_too_large" else 400
        return self.spec.error_body(error.message, status, code=error.code, param=error.param)

    # -- response ------------------------------------------------------------------------------

    def start(self, method: str, status: int, headers: Headers, *, prepare: bool = True) -> Headers:
        """Decide from the response head; return the headers to send (on the first body).
        `prepare=False`: the answer's parts are not made here; the caller calls `prepare` once it
        has sent a head that was final (`head_final`), so that the head goes out first."""
        self.record.status = status
        if self.record.dialect and self._replace(status, header(headers, PROXY_ERROR) is not None):
            self._mode = Body.JSON
            self._move(Trigger.BUFFER)
            self._decoder = ContentDecoder(header(headers, b"content-encoding"))
            kept = without(
                headers, b"content-length", b"transfer-encoding", b"content-encoding", b"content-type", PROXY_ERROR
            )
            return [*kept, (b"content-type", b"application/json")]
        self._mode = classify(method, status, headers)
        sniffed = self._answer_required and self._mode is Body.PASS and answerable(method, status, headers)
        if sniffed and not self.count_tokens and self.spec.output is not None:
            # A 2xx of a content type no answer has: read as JSON, so an answer is still taken and
            # anything else becomes the client's 502 (`_whole`), never its bytes.
            self._mode = Body.JSON
            self.record.notes.append(f"the host answered {header(headers, b'content-type')!r}: read as JSON")
            headers = [*without(headers, b"content-type"), (b"content-type", b"application/json")]
        if self.count_tokens or self._mode is Body.PASS or not self.record.dialect:
            self._move(Trigger.PASS)
            self.record.passthrough_reason = f"status {status} / {header(headers, b'content-type')!r}"
            return headers
        if self.spec.output is None:
            # An API with no way to carry a tool call (legacy completions), whose client writes its
            # own prompt: its answer reaches it as the host wrote it (`choices[].text`).
            self._move(Trigger.PASS)
            self.record.passthrough_reason = f"the {self.api} API carries no tool calls: passed through"
            return headers
        self._move(Trigger.STREAM if self._mode is Body.SSE else Trigger.BUFFER)
        self._sized = header(headers, b"content-length") is not None
        self._decoder = ContentDecoder(header(headers, b"content-encoding"))
        self._identity = self._decoder.identity
        new = without(headers, b"content-length", b"transfer-encoding", b"etag", b"content-md5", b"digest")
        if not self._decoder.identity:
            new = without(new, b"content-encoding")
        if self._mode is Body.SSE:
            self._sse = SSEDecoder(max_event_bytes=self.settings.max_sse_event_bytes)
        if prepare:
            self.prepare()
        return new

    def _replace(self, status: int, ours: bool = False) -> bool:
        """Whether the body of a host answer with `status` is replaced by ours (see the module doc);
        `ours`: the error is the reverse proxy's own (`PROXY_ERROR`), not the host's."""
        self._host_status = status
        if self.count_tokens and status in (404, 405, 501) and self._counted is not None:
            self._replacing, self.status = "estimate", 200
        elif status >= 400 and (self.bridged or (ours and self.spec.error_body is not openai_error)):
            self._replacing = "error"
        return self._replacing is not None

    def prepare(self) -> None:
        """The answer's parts that the host's answer does not change, made now (see `Prepared`).
        Only a head start: should making them fail, the answer makes them with its first body,
        where a failure is handled as any other there. Nothing once the answer is made, or for
        a body passed through."""
        if self.passthrough or self._stream is not None or self._prepared is not None:
            return
        try:  # (the host's answer has the kind its API names, nearly always)
            self._prepared = Prepared(self._setup(), stream=self._mode is Body.SSE, kind=self.upstream)
        except Exception:
            self._prepared = None

    def _answer(self, *, stream: bool, kind: Api) -> Answer:
        prepared, self._prepared = self._prepared, None
        return Answer(self._setup(), self.record, stream=stream, kind=kind, prepared=prepared)

    def _setup(self) -> AnswerSetup:
        """What the answer is given of this exchange (the request is read by now)."""
        record = self.record
        return AnswerSetup(
            self.api, self.upstream, self.settings, self.request, self.rules, record.dialect, record.model
        )

    @property
    def head_final(self) -> bool:
        """The headers `start` returned are the ones the client gets whatever the body holds: a
        stream being made (no `Content-Length`: a body of known length is ready, and may live in
        a file, which wants the host's own head) whose bytes are not content-encoded (a stream
        given up goes out under them too)."""
        return (
            self._mode is Body.SSE
            and not self.passthrough
            and self._decoder is not None
            and self._decoder.identity
            and not self._sized
        )

    @property
    def buffered(self) -> bool:
        """A whole JSON body is held until it ends (its length is only known then)."""
        return self.state is BUFFER

    def feed(self, data: bytes) -> bytes:
        """The client's bytes for one piece of the host's body (see `State` for each state's)."""
        state = self.state
        if state is STREAM:
            # (the usual stream is not encoded: no call per chunk to pass it on)
            out = self._feed_sse(data if self._identity else self._decode(data))
            stream = self._stream
            if stream is not None and stream.ended and self.state is STREAM:
                self._move(Trigger.TERMINAL)  # the client's stream is over: nothing follows
            return out
        if state is BUFFER:
            self._buffer.append(self._decode(data))
            self._buffered += len(data)
            if self._buffered > self.settings.max_response_bytes:
                # Over the cap: stop holding it; the caller sends the original bytes from here on.
                self.record.passthrough_reason = "the upstream body is over max_response_bytes"
                self._buffer = []
                self._move(Trigger.PASS)
            return b""
        if state is ENDED or state is DONE:
            return b""  # the client's stream is over: the rest of the host's is read and dropped
        # Passed through: a stream given up midway still decodes (its Content-Encoding is dropped).
        return data if self._decoder is None else self._decoder.feed(data)

    def _decode(self, data: bytes) -> bytes:
        assert self._decoder is not None
        return self._decoder.feed(data)

    @property
    def ended(self) -> bool:
        """The client's stream has had its terminal event (Chat `[DONE]`, Responses
        `response.completed` / `failed` / `incomplete`, Anthropic `message_stop` / `error`), ours
        or, as its first event, the host's, before the host's body ended (`State.ENDED`):
        whatever the host sends after it is dropped (`feed` and `close` give nothing), and the
        shell ends the response."""
        return self.state is ENDED

    def _over(self) -> bool:
        """The client's stream has had its terminal event (`ended`, while the exchange's state
        is still to move there)."""
        stream = self._stream
        return (stream is not None and stream.ended) or self._ended_first

    def close(self) -> bytes:
        """The host's body ended: the last bytes for the client. The exchange is `DONE` then, or
        `PASS` when a whole body turned out not to be ours (the caller sends the original)."""
        state = self.state
        if state is STREAM or state is BUFFER:
            out = self._close()
        elif state is GIVEN_UP or state is PASS:
            out = b"" if self._decoder is None else self._decoder.flush()
            if state is PASS:
                return out  # (a body passed from its head, or given back: the shell ends it)
        elif state is ENDED:
            out = b""
        else:
            return b""
        if self.state is not PASS and self.state is not AGAIN:
            self._move(Trigger.END)
        if self.status is not None:
            self.record.status = self.status  # the record says what the client got
        return out

    def _close(self) -> bytes:
        assert self._decoder is not None
        tail = self._decoder.flush()
        if self._mode is Body.JSON:
            self._buffer.append(tail)
            body = self._whole(b"".join(self._buffer))
            if self.status is not None:
                self.record.status = self.status  # the client's, ours (the record had the host's)
            return body
        out = self._feed_sse(tail) if tail else b""
        assert self._sse is not None
        if not self.passthrough:
            # The stream ended inside an event: an SSE client drops such a tail, and so do we,
            # unless it is a whole event lacking only its blank line (its data reads). Only on a
            # native route with nothing of ours sent yet does it go as it came (a pass-through).
            unterminated = self._sse.flush()
            depth = self.settings.max_depth
            held = [e for e in unterminated if e.data is not None and decode_data(e.data, depth) is not None]
            if self._stream is None and not self._answer_required and not held:
                held = unterminated
            elif len(held) < len(unterminated):
                self.record.notes.append("the host's stream ended inside an event: its unterminated tail was dropped")
            self._held = bytearray(b"".join(e.raw for e in held))
            if held:
                out += self._sse_events(held)
        if self._stream is None and not self.passthrough and self._answer_required and not self._ended_first:
            # A bridged client (or a remote host's) whose stream ended before any answer: its API's error.
            self.record.unreadable = self.record.unreadable or "text/event-stream with no answer"
            self._stream = self._answer(stream=True, kind=self.upstream)
            return out + (self._stream.abort(f"The host's stream ended before any {self.upstream} answer.") or b"")
        if self._stream is not None and not self.passthrough and not self._stream.verdict.done:
            out += self._stream.finish(UpstreamDone(complete=False))  # the stream ended without its end
        return out

    def abort(self, message: str) -> bytes | None:
        """The host app failed in the middle of a stream being rewritten: the last bytes of the
        client's stream, ending it with what can be saved. Text the parser held back goes out as
        text, a call the model had not finished is dropped (as at any cut-off), and the stream ends
        in an error (a Chat chunk with `error` and `finish_reason: "error"`, then `[DONE]`;
        `response.failed`), which the openai SDK raises; empty when our stream had already ended.
        A stream whose head went out but no answer yet ends the same way, in the error alone.
        `None` when there is no stream of ours (what was sent is the app's, so is the failure),
        and after an end or an event that was not ours."""
        if self.passthrough or self._mode is not Body.SSE:
            return None
        if self._stream is None:
            if self._ended_first:
                return None  # the stream had ended
            self._stream = self._answer(stream=True, kind=self.upstream)
        if not self._stream.verdict.done:
            self.record.notes.append(f"the host app failed mid-stream: {message}")
        out = self._stream.abort(message)
        if self.state is STREAM:
            self._move(Trigger.FAIL)
        return out

    def _feed_sse(self, data: bytes) -> bytes:
        assert self._sse is not None
        stream = self._stream
        if stream is not None and self._sse.idle and len(data) <= self._max_event:
            out = stream.feed_event(data)  # the fast path: one whole event, read without SSE decoding
            if out is not None:
                return out
        self._held += data
        try:
            events = self._sse.feed(data)
        except SSETooLarge:
            self.record.notes.append("an upstream SSE event exceeded the cap: the rest passes through")
            return self._give_up()
        return self._sse_events(events)

    def _sse_events(self, events: list[SSEEvent]) -> bytes:
        out: list[bytes] = []
        for event in events:
            del self._held[: len(event.raw)]  # the events' bytes are exactly what was fed, in order
            if self._over():
                continue  # the events after the client's stream ended, in the same piece: dropped
            out.append(event.raw if self.passthrough else self._sse_event(event))
        if self.passthrough:
            out.append(self._give_up())
        return b"".join(out)

    def _give_up(self) -> bytes:
        """Stop rewriting mid-stream. What the SSE decoder holds (a partial event, or whole events
        lost with the error) goes out as it came, so no byte is lost; `feed` passes the rest."""
        if self.state is STREAM:
            self._move(Trigger.GIVE_UP)
        held, self._held = bytes(self._held), bytearray()
        return held

    def _sse_event(self, event: SSEEvent) -> bytes:
        if event.data is None:
            if self._answer_required and not event.raw.startswith(b":"):
                # A field of the host's API that a bridged client does not speak; before any
                # answer from a remote host, a line that is no SSE (its stream's error ends it).
                return b""
            return event.raw  # comments (keep-alives) and empty events go through as they came
        if self._stream is None:
            obj = decode_data(event.data, self.settings.max_depth)
            kind = self._answer_kind(obj)
            if kind is None:
                if self._answer_required and not (event.data.strip() == "[DONE]" and not self.bridged):
                    # A bridged client does not speak the host's API, and a remote host's stream
                    # that is not its API's is broken: the client's stream ends in its error.
                    self.record.unreadable = f"text/event-stream: {event.raw[:200]!r}"
                    self.record.notes.append(f"the host's stream is not a {self.upstream} answer")
                    self._stream = self._answer(stream=True, kind=self.upstream)
                    ended = event.data.strip() == "[DONE]"
                    said = "ended before any" if ended else "could not be read as a"
                    return self._stream.abort(f"The host's stream {said} {self.upstream} answer.")
                if event.data.strip() != "[DONE]":
                    self.record.passthrough_reason = "the upstream stream is not an OpenAI-style answer"
                    self._move(Trigger.GIVE_UP)
                else:
                    self._ended_first = True
                    self._move(Trigger.TERMINAL)
                return event.raw
            self._stream = self._answer(stream=True, kind=kind)
            return self._stream.feed(event, obj)
        return self._stream.feed(event)

    def _whole(self, raw: bytes) -> bytes:
        if self._replacing == "estimate" and self._counted is not None:
            self.record.notes.append("the host does not count tokens: estimated")
            return json_bytes({"input_tokens": estimate_tokens(self._counted)})
        if self._replacing == "error":
            return host_error(raw, self._host_status, self.api)
        within = self._buffered <= self.settings.max_response_bytes
        obj = decode_data(raw.decode("utf-8", errors="replace"), self.settings.max_depth) if within else None
        kind = self._answer_kind(obj)
        if kind is None and self._answer_required:
            # A bridged client does not speak the host's API, and a remote host's body that is not
            # its API's is broken (a proxy's error page): the host's bytes would mean nothing.
            self.record.notes.append(f"the host's answer is not a {self.upstream} answer")
            self.record.unreadable = repr(raw[:200])
            self.status = 502
            return self.spec.error_body(f"The host's answer could not be read as a {self.upstream} answer.", 502)
        if kind is None:
            self.record.passthrough_reason = "the upstream body is not an OpenAI-style answer"
            self._move(Trigger.PASS)  # the caller sends the original bytes and headers
            return raw
        stream = self._answer(stream=False, kind=kind)
        body = stream.whole(obj)
        failed = stream.verdict.failed
        if failed is not None:
            record = self.record
            if failed.code in REGENERABLE and record.generations <= self.settings.regenerate:
                # Another generation may keep the rule this one broke: nothing of it goes out.
                record.notes.append(f"generation {record.generations} failed ({failed.code}): the host is asked again")
                self._move(Trigger.AGAIN)
                return b""
            self.no_retry = True
        if stream.status is not None:
            self.status = stream.status
        if body is None:
            self._move(Trigger.PASS)
        return raw if body is None else body


    def _answer_kind(self, obj: Any) -> Api | None:
        """The reader for the host's first object: its own API's, or None (not ours). A host may
        answer in another shape its API's spec allows (`answered_as`: a chat route answered in
        the legacy completions shape, as some in-house servers do), which is read as such."""
        if obj is None:
            return None
        kind = detect(obj, route=spec_for(self.upstream).path)
        if kind is None:
            other = kind_of(obj)
            if other is not None and other in spec_for(self.upstream).answered_as:
                self.record.notes.append(f"the host answered the {self.upstream} route in the {other} shape")
                return other
        return kind


__all__ = ["Exchange", "Report", "Settings"]
