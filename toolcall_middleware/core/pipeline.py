"""One exchange, sans-IO: the request body rewritten, then the response bytes rewritten.

```
request JSON -> core.forwarded -> host app
response bytes -> content decoding -> SSE events / whole JSON -> inbound reader -> raw text
  -> StreamParser -> PolicyFilter -> emitter (the API the client called) -> bytes
```

A bridged exchange has two APIs: the client's (`api`: the request shape accepted, the emitter
written) and the host's (`upstream`: the request shape the host gets, the reader of its answer).
The request is translated first, then rewritten for the host's API (`core.host`); the
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
from .detect import detect, kind_of
from .exchange_data import AnswerSetup, ExchangeConfig, Report
from .exchange_state import (
    BUFFER,
    DONE,
    ENDED,
    GIVEN_UP,
    HEAD,
    NO_HEAD,
    PASS,
    REQUEST,
    STREAM,
    HostHead,
    State,
    Trigger,
    buffered_trigger,
    head_final,
    head_trigger,
    next_state,
    unread_event_trigger,
    whole_trigger,
)
from .forwarded import StoredInput, forward_request
from .framing.sse import SSEDecoder, SSEEvent, SSETooLarge
from .framing.utf8 import json_bytes
from .http import Body, ContentDecoder, Headers, answerable, classify, header, without
from .inbound import UpstreamDone
from .inbound.base import decode_data
from .policy.errors import REGENERABLE
from .replaced import estimate_tokens, host_error, openai_error
from .request import BadRequest

PROXY_ERROR = b"x-toolcall-proxy-error"  # the reverse proxy marks its own errors so (proxy.py)


class Exchange:
    """One request and its response.

    ```python
    ex = Exchange("chat", config)                       # Exchange("responses", c, upstream="chat"): bridged
    body = ex.rewrite_request(raw_request_bytes)        # may raise BadRequest (-> 400, `error_body`)
    status, headers = ex.start("POST", 200, upstream_headers)
    out = ex.feed(chunk) ... + ex.close()
    ```
    """

    def __init__(
        self, api: Api, config: ExchangeConfig, *, upstream: Api | None = None, count_tokens: bool = False,
        remote_host: bool = False,
    ) -> None:
        """`config`: the configuration, read where it stands (`ToolCallConfig`); `remote_host`: the
        host is another process (the reverse proxy's upstream), see `_answer_required`."""
        self.api = api
        self.upstream: Api = upstream or api
        self.spec = spec_for(api)  # what differs by the client's API
        # A bridged client does not speak the host's API: nothing of the host's goes to it as it came.
        self.bridged = self.upstream != api
        # An answer that is not the API's is the client's error, not passed on: a bridged client
        # would not read the host's API, and a host in another process (`remote_host`) that sends
        # a page of HTML is broken, not the user's own code speaking.
        self._answer_required = self.bridged or remote_host
        self.count_tokens = count_tokens
        self._counted: Mapping[str, Any] | None = None  # a count request's body as the host gets it
        self.config = config
        self.request: dict[str, Any] = {}
        self.rules: Mapping[str, Any] = {}  # tools, tool_choice, parallel_tool_calls (an OpenAI shape)
        self.record = Report(api=api, dialect="")
        if self.upstream != api:
            self.record.notes.append(f"bridged: the host answers as {self.upstream}")
        self._max_event = config.limits.max_sse_event_bytes
        self._response()
        # Where the exchange is (`core.exchange_state`): it moves only through `_move`.
        self.state = REQUEST

    def _response(self) -> None:
        """What the exchange knows of the host's response: nothing yet (a new one, or the next
        generation's, `again`)."""
        self.head = NO_HEAD  # the host's head as read (`HostHead`): what the guards decide by
        # Decodes the body's content-coding; None when there is none to undo (or the body passes).
        self._decoder: ContentDecoder | None = None
        self._sse: SSEDecoder | None = None
        self._held = bytearray()  # decoded bytes the SSE decoder holds: given back raw if we give up
        self._buffer: list[bytes] = []
        self._buffered = 0
        self._stream: Answer | None = None
        self._prepared: Prepared | None = None  # made at `start`, taken by the answer
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

    def rewrite_request(self, raw: bytes, *, stored: StoredInput | None = None) -> bytes | None:
        """The rewritten request body, or `None` to forward it unchanged (nothing to rewrite).

        A bridged request always comes back translated: its host does not serve the client's API,
        so a body the bridge cannot read is a `BadRequest` here rather than the host's 404.
        """
        forwarded = forward_request(
            raw,
            api=self.api,
            upstream=self.upstream,
            config=self.config,
            record=self.record,
            count_tokens=self.count_tokens,
            stored=stored,  # (a body the Responses state wrote: what it says of its context)
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

    def start(self, method: str, status: int, headers: Headers) -> Headers:
        """Decide from the response head (`exchange_state.head_trigger`); return the headers to
        send (on the first body). The answer's parts are made by `prepare`, which the shell calls
        once the head is handed over (after sending it, when it was final: `head_final`)."""
        self.record.status = status
        coding = header(headers, b"content-encoding")
        replaced = self._replacement(status, header(headers, PROXY_ERROR) is not None) if self.record.dialect else None
        if replaced is not None:
            self.head = HostHead(Body.JSON, identity=coding is None, replaced=replaced)
            self._move(head_trigger(self.head, readable=True))
            self._decoder = ContentDecoder(coding)
            kept = without(
                headers, b"content-length", b"transfer-encoding", b"content-encoding", b"content-type", PROXY_ERROR
            )
            return [*kept, (b"content-type", b"application/json")]
        body = classify(method, status, headers)
        sniffed = self._answer_required and body is Body.PASS and answerable(method, status, headers)
        if sniffed and not self.count_tokens and self.spec.output is not None:
            # A 2xx of a content type no answer has: read as JSON, so an answer is still taken and
            # anything else becomes the client's 502 (`_whole`), never its bytes.
            body = Body.JSON
            self.record.notes.append(f"the host answered {header(headers, b'content-type')!r}: read as JSON")
            headers = [*without(headers, b"content-type"), (b"content-type", b"application/json")]
        decoder = ContentDecoder(coding)
        self.head = HostHead(body, sized=header(headers, b"content-length") is not None, identity=decoder.identity)
        readable = not self.count_tokens and bool(self.record.dialect) and self.spec.output is not None
        if self._move(head_trigger(self.head, readable=readable)) is PASS:
            if self.spec.output is None and body is not Body.PASS and not self.count_tokens:
                # An API with no way to carry a tool call (legacy completions), whose client writes
                # its own prompt: its answer reaches it as the host wrote it (`choices[].text`).
                self.record.passthrough_reason = f"the {self.api} API carries no tool calls: passed through"
            else:
                self.record.passthrough_reason = f"status {status} / {header(headers, b'content-type')!r}"
            return headers
        self._decoder = None if decoder.identity else decoder
        new = without(headers, b"content-length", b"transfer-encoding", b"etag", b"content-md5", b"digest")
        if not decoder.identity:
            new = without(new, b"content-encoding")
        if body is Body.SSE:
            self._sse = SSEDecoder(max_event_bytes=self.config.limits.max_sse_event_bytes)
        return new

    def _replacement(self, status: int, ours: bool = False) -> Literal["error", "estimate"] | None:
        """The body of ours that replaces a host answer with `status` (see the module doc), if any;
        `ours`: the error is the reverse proxy's own (`PROXY_ERROR`), not the host's."""
        self._host_status = status
        if self.count_tokens and status in (404, 405, 501) and self._counted is not None:
            self.status = 200
            return "estimate"
        if status >= 400 and (self.bridged or (ours and self.spec.error_body is not openai_error)):
            return "error"
        return None

    def prepare(self) -> None:
        """The answer's parts that the host's answer does not change, made now (see `Prepared`).
        Only a head start: should making them fail, the answer makes them with its first body,
        where a failure is handled as any other there. Nothing once the answer is made, or for
        a body passed through."""
        if self.passthrough or self._stream is not None or self._prepared is not None:
            return
        try:  # (the host's answer has the kind its API names, nearly always)
            self._prepared = Prepared(self._setup(), stream=self.state is STREAM, kind=self.upstream)
        except Exception:
            self._prepared = None

    def _answer(self, *, stream: bool, kind: Api) -> Answer:
        prepared, self._prepared = self._prepared, None
        return Answer(self._setup(), self.record, stream=stream, kind=kind, prepared=prepared)

    def _setup(self) -> AnswerSetup:
        """What the answer is given of this exchange (the request is read by now)."""
        record = self.record
        return AnswerSetup(
            self.api, self.upstream, self.config, self.request, self.rules, record.dialect, record.model
        )

    @property
    def head_final(self) -> bool:
        """The headers `start` returned are the ones the client gets whatever the body holds
        (`exchange_state.head_final`)."""
        return head_final(self.state, self.head)

    def feed(self, data: bytes) -> bytes:
        """The client's bytes for one piece of the host's body (see `State` for each state's)."""
        state = self.state
        if state is STREAM:
            # (the usual stream is not encoded: no call per chunk to pass it on)
            decoder = self._decoder
            out = self._feed_sse(data if decoder is None else decoder.feed(data))
            stream = self._stream
            if stream is not None and self.state is STREAM:
                verdict = stream.verdict  # (`stream.ended`, inline: this runs on every chunk)
                if verdict.done or verdict.failed is not None:
                    # The client's stream is over: nothing follows (the guard, read inline: see
                    # `core.exchange_state`).
                    self._move(Trigger.TERMINAL)
            return out
        if state is BUFFER:
            self._buffer.append(data if self._decoder is None else self._decoder.feed(data))
            self._buffered += len(data)
            over = buffered_trigger(self._buffered, self.config.limits.max_response_bytes)
            if over is not None:
                # Over the cap: stop holding it; the caller sends the original bytes from here on.
                self.record.passthrough_reason = "the upstream body is over max_response_bytes"
                self._buffer = []
                self._move(over)
            return b""
        if state is ENDED or state is DONE:
            return b""  # the client's stream is over: the rest of the host's is read and dropped
        # Passed through: a stream given up midway still decodes (its Content-Encoding is dropped).
        return data if self._decoder is None else self._decoder.feed(data)

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
        return (stream is not None and stream.ended) or self.state is ENDED

    def close(self) -> bytes:
        """The host's body ended: the last bytes for the client. The exchange is `DONE` then, or
        `PASS` when a whole body turned out not to be ours (the caller sends the original)."""
        state = self.state
        if state is STREAM:
            out = self._close_stream()
            self._move(Trigger.END)
        elif state is BUFFER:
            out, trigger = self._close_whole()
            self._move(trigger)
        elif state is GIVEN_UP:
            out = b"" if self._decoder is None else self._decoder.flush()
            self._move(Trigger.END)
        elif state is PASS:
            # (a body passed from its head, or given back: the shell ends it)
            return b"" if self._decoder is None else self._decoder.flush()
        elif state is ENDED:
            out = b""
            self._move(Trigger.END)
        else:
            return b""
        if self.status is not None:
            self.record.status = self.status  # the record says what the client got
        return out

    def _close_whole(self) -> tuple[bytes, Trigger]:
        tail = b"" if self._decoder is None else self._decoder.flush()
        self._buffer.append(tail)
        body, trigger = self._whole(b"".join(self._buffer))
        if self.status is not None:
            self.record.status = self.status  # the client's, ours (the record had the host's)
        return body, trigger

    def _close_stream(self) -> bytes:
        tail = b"" if self._decoder is None else self._decoder.flush()
        out = self._feed_sse(tail) if tail else b""
        assert self._sse is not None
        if not self.passthrough:
            # The stream ended inside an event: an SSE client drops such a tail, and so do we,
            # unless it is a whole event lacking only its blank line (its data reads). Only on a
            # native route with nothing of ours sent yet does it go as it came (a pass-through).
            unterminated = self._sse.flush()
            depth = self.config.limits.max_depth
            held = [e for e in unterminated if e.data is not None and decode_data(e.data, depth) is not None]
            if self._stream is None and not self._answer_required and not held:
                held = unterminated
            elif len(held) < len(unterminated):
                self.record.notes.append("the host's stream ended inside an event: its unterminated tail was dropped")
            self._held = bytearray(b"".join(e.raw for e in held))
            if held:
                out += self._sse_events(held)
        if self._stream is None and self.state is STREAM and self._answer_required:
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
        if self.state is not STREAM:
            return None
        if self._stream is None:
            self._stream = self._answer(stream=True, kind=self.upstream)
        if not self._stream.verdict.done:
            self.record.notes.append(f"the host app failed mid-stream: {message}")
        out = self._stream.abort(message)
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
            obj = decode_data(event.data, self.config.limits.max_depth)
            kind = self._answer_kind(obj)
            if kind is None:
                done = event.data.strip() == "[DONE]"
                trigger = unread_event_trigger(done=done, answer_required=self._answer_required, bridged=self.bridged)
                if trigger is None:
                    # A bridged client does not speak the host's API, and a remote host's stream
                    # that is not its API's is broken: the client's stream ends in its error.
                    self.record.unreadable = f"text/event-stream: {event.raw[:200]!r}"
                    self.record.notes.append(f"the host's stream is not a {self.upstream} answer")
                    self._stream = self._answer(stream=True, kind=self.upstream)
                    said = "ended before any" if done else "could not be read as a"
                    return self._stream.abort(f"The host's stream {said} {self.upstream} answer.")
                if trigger is Trigger.GIVE_UP:
                    self.record.passthrough_reason = "the upstream stream is not an OpenAI-style answer"
                self._move(trigger)  # (TERMINAL: its first event was its end, no answer)
                return event.raw
            self._stream = self._answer(stream=True, kind=kind)
            return self._stream.feed(event, obj)
        return self._stream.feed(event)

    def _whole(self, raw: bytes) -> tuple[bytes, Trigger]:
        """The client's body for a whole host body, and the move it makes (`whole_trigger`)."""
        replaced = self.head.replaced
        if replaced == "estimate" and self._counted is not None:
            self.record.notes.append("the host does not count tokens: estimated")
            return json_bytes({"input_tokens": estimate_tokens(self._counted)}), Trigger.END
        if replaced == "error":
            return host_error(raw, self._host_status, self.api), Trigger.END
        within = self._buffered <= self.config.limits.max_response_bytes
        obj = decode_data(raw.decode("utf-8", errors="replace"), self.config.limits.max_depth) if within else None
        kind = self._answer_kind(obj)
        required = self._answer_required
        if kind is None:
            if required:
                # A bridged client does not speak the host's API, and a remote host's body that is
                # not its API's is broken (a proxy's error page): the host's bytes would mean nothing.
                self.record.notes.append(f"the host's answer is not a {self.upstream} answer")
                self.record.unreadable = repr(raw[:200])
                self.status = 502
                body = self.spec.error_body(f"The host's answer could not be read as a {self.upstream} answer.", 502)
            else:
                self.record.passthrough_reason = "the upstream body is not an OpenAI-style answer"
                body = raw  # the caller sends the original bytes and headers
            return body, whole_trigger(read=False, answer_required=required, again=False)
        stream = self._answer(stream=False, kind=kind)
        written = stream.whole(obj)
        failed = stream.verdict.failed
        record = self.record
        again = failed is not None and failed.code in REGENERABLE and record.generations <= self.config.regenerate
        if again:
            # Another generation may keep the rule this one broke: nothing of it goes out.
            assert failed is not None
            record.notes.append(f"generation {record.generations} failed ({failed.code}): the host is asked again")
            return b"", whole_trigger(read=True, answer_required=required, again=True)
        if failed is not None:
            self.no_retry = True
        if stream.status is not None:
            self.status = stream.status
        trigger = whole_trigger(read=written is not None, answer_required=False, again=False)
        return (raw if written is None else written), trigger

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


__all__ = ["Exchange", "Report"]
