"""One exchange, sans-IO: the request body rewritten, then the response bytes rewritten.

```
request JSON -> rewrite_*_request -> host app
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

The ASGI and WSGI layers only move bytes in and out of `Exchange`. Anything the exchange cannot
read (another content type, a body that is not an upstream answer, an upstream error, a host that
already returns real tool calls) goes through untouched, byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from .answer import Answer
from .answer_parts import Prepared
from .api import API_PATHS as _ROUTES
from .api import Api
from .api import Api as Kind
from .emitters.anthropic import error_object
from .exchange_data import Report, Settings
from .framing.sse import SSEDecoder, SSEEvent, SSETooLarge
from .framing.utf8 import json_bytes, json_bytes_with
from .http import Body, ContentDecoder, Headers, classify, header, without
from .inbound import UpstreamDone, detect, kind_of
from .inbound.base import decode_data
from .replaced import error_body, error_type, estimate_tokens, host_error
from .request import BadRequest
from .request.body import read_request
from .request.compaction import expand_compactions
from .request.depth import check_depth, too_deep_error
from .request.fields import check_fields
from .request.host import REWRITES, for_host, request_dialect
from .request.render import manifest_token

PROXY_ERROR = b"x-toolcall-proxy-error"  # the reverse proxy marks its own errors so (proxy.py)

SPLICED_MANIFEST = 2048  # a manifest this long is written from its JSON made once (shorter: as it comes)


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
        # A bridged client does not speak the host's API: nothing of the host's goes to it as it came.
        self.bridged = self.upstream != api
        self.count_tokens = count_tokens
        self._counted: Mapping[str, Any] | None = None  # a count request's body as the host gets it
        self._replacing: Literal["error", "estimate"] | None = None  # the body we answer instead
        self._host_status = 0
        self.settings = settings
        self.request: dict[str, Any] = {}
        self.rules: Mapping[str, Any] = {}  # tools, tool_choice, parallel_tool_calls (an OpenAI shape)
        self.report = Report(api=api, dialect="")
        if self.upstream != api:
            self.report.notes.append(f"bridged: the host answers as {self.upstream}")
        self._mode = Body.PASS
        self._decoder: ContentDecoder | None = None
        self._sse: SSEDecoder | None = None
        self._held = bytearray()  # decoded bytes the SSE decoder holds: given back raw if we give up
        self._max_event = settings.max_sse_event_bytes
        self._buffer: list[bytes] = []
        self._buffered = 0
        self._stream: Answer | None = None
        self._prepared: Prepared | None = None  # made at `start`, taken by the answer
        self._sized = False  # the host's head gave the body's length
        self._ended_first = False  # the stream's first data was its end (`[DONE]`), no answer
        # Not ours: decided at `start`, or later (a JSON body that is not an answer or over the
        # cap: the caller sends the original bytes; a stream given up: `feed` returns it decoded).
        self.passthrough = True
        self.status: int | None = None  # a new status for a buffered body, decided at close()

    # -- request -------------------------------------------------------------------------------

    def rewrite_request(self, raw: bytes) -> bytes | None:
        """The rewritten request body, or `None` to forward it unchanged (not JSON, not ours).

        A bridged request always comes back translated: its host does not serve the client's API,
        so a body the bridge cannot read is a `BadRequest` here rather than the host's 404.
        """
        self.report.request_bytes = len(raw)
        try:
            body = read_request(raw)
        except RecursionError:
            # Too deep for JSON's own decoder: refused on every route, as any body over `max_depth`
            # (the host's decoder may well fail the same way, as a 500).
            raise too_deep_error(self.settings.max_depth) from None
        except (ValueError, UnicodeDecodeError):
            if self.bridged:
                raise BadRequest("The request body is not valid JSON.", None, code="invalid_json") from None
            return None  # the host app owns the 400 for a body that is not JSON
        if not isinstance(body, dict):
            if self.bridged:
                raise BadRequest("The request body must be a JSON object.", None, code="invalid_body")
            return None
        check_depth(body, self.settings.max_depth)  # before anything below walks it
        self.request = body
        model = body.get("model") if isinstance(body.get("model"), str) else None
        dialect = self.settings.dialect_for(model)
        self.report.dialect, self.report.model = dialect, model
        self.report.stream = bool(body.get("stream"))
        if self.count_tokens:
            return self._count_request(body)
        expanded = False
        if self.api == "responses" and self.settings.expand_compactions:
            compacted = expand_compactions(body)  # (before the fields are checked: it is no item they know)
            expanded, body = compacted is not body, compacted
        body, self.rules, dropped = for_host(self.api, self.upstream, body)
        if self.upstream == "completions":
            return None
        rewrite = REWRITES[self.upstream]
        settings = self.settings
        result = rewrite(
            body,
            dialect=request_dialect(dialect),
            forward_tools=settings.forward_tools,
            inject_manifest=settings.inject_manifest,
        )
        self.report.dropped_tool_types = list(dropped if dropped is not None else result.tools.dropped)
        self.report.echoed_function_calls = result.calls_flattened
        if not result.changed and not self.bridged and not expanded:
            return None
        self.report.rewritten_request = True
        manifest = result.manifest
        if manifest is not None and result.manifest_at is not None and len(manifest) >= SPLICED_MANIFEST:
            # An agent's manifest runs to many KB, the same every turn: its JSON is made once.
            return json_bytes_with(result.body, result.manifest_at, lambda text: manifest_token(text, manifest))
        return json_bytes(result.body)

    def _count_request(self, body: dict[str, Any]) -> bytes | None:
        """A `/count_tokens` body rewritten as its message would be, so the host counts the
        manifest and the flattened history; kept for the estimate should the host not count."""
        settings = self.settings
        check_fields("messages", body)
        result = REWRITES["messages"](
            body,
            dialect=request_dialect(self.report.dialect),
            forward_tools=settings.forward_tools,
            inject_manifest=settings.inject_manifest,
        )
        self._counted = result.body
        if not result.changed:
            return None
        self.report.rewritten_request = True
        return json_bytes(result.body)

    def error_body(self, error: BadRequest) -> bytes:
        """The 400 (413) body for a request the exchange refused, in the client's API's error shape."""
        if self.api == "messages":
            status = 413 if error.code == "request_too_large" else 400
            return json_bytes(error_object(error.message, error_type(status)))
        return bad_request_body(error)

    # -- response ------------------------------------------------------------------------------

    def start(self, method: str, status: int, headers: Headers, *, prepare: bool = True) -> Headers:
        """Decide from the response head; return the headers to send (on the first body).
        `prepare=False`: the answer's parts are not made here; the caller calls `prepare` once it
        has sent a head that was final (`head_final`), so that the head goes out first."""
        self.report.status = status
        if self.report.dialect and self._replace(status, header(headers, PROXY_ERROR) is not None):
            self._mode, self.passthrough = Body.JSON, False
            self._decoder = ContentDecoder(header(headers, b"content-encoding"))
            kept = without(
                headers, b"content-length", b"transfer-encoding", b"content-encoding", b"content-type", PROXY_ERROR
            )
            return [*kept, (b"content-type", b"application/json")]
        self._mode = classify(method, status, headers)
        if self.count_tokens or self._mode is Body.PASS or not self.report.dialect:
            self.passthrough = True
            self.report.passthrough_reason = f"status {status} / {header(headers, b'content-type')!r}"
            return headers
        if self.api == "completions":
            # The legacy completions API has no way to carry a tool call, and its client writes its
            # own prompt: its answer reaches it as the host wrote it (`choices[].text`).
            self.passthrough = True
            self.report.passthrough_reason = "the completions API carries no tool calls: passed through"
            return headers
        self.passthrough = False
        self._sized = header(headers, b"content-length") is not None
        self._decoder = ContentDecoder(header(headers, b"content-encoding"))
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
        elif status >= 400 and (self.bridged or (ours and self.api == "messages")):
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
            self._prepared = Prepared(self, stream=self._mode is Body.SSE, kind=self.upstream)
        except Exception:
            self._prepared = None

    def _answer(self, *, stream: bool, kind: Kind) -> Answer:
        prepared, self._prepared = self._prepared, None
        return Answer(self, stream=stream, kind=kind, prepared=prepared)

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
        return self._mode is Body.JSON and not self.passthrough

    def feed(self, data: bytes) -> bytes:
        if self.ended:
            return b""  # the client's stream is over: the rest of the host's is read and dropped
        if self.passthrough:
            # A stream given up midway still decodes: its Content-Encoding is already dropped.
            return data if self._decoder is None else self._decoder.feed(data)
        decoder = self._decoder
        assert decoder is not None
        if not decoder.identity:  # (the usual stream is not encoded: no call per chunk to pass it on)
            data = decoder.feed(data)
        if self._mode is Body.JSON:
            self._buffer.append(data)
            self._buffered += len(data)
            if self._buffered > self.settings.max_response_bytes:
                # Over the cap: stop holding it; the caller sends the original bytes from here on.
                self.report.passthrough_reason = "the upstream body is over max_response_bytes"
                self.passthrough, self._buffer = True, []
            return b""
        return self._feed_sse(data)

    @property
    def ended(self) -> bool:
        """The client's stream has had its terminal event (Chat `[DONE]`, Responses
        `response.completed` / `failed` / `incomplete`, Anthropic `message_stop` / `error`), ours
        or, as its first event, the host's: whatever the host sends after it is dropped (`feed`
        and `close` give nothing), and the shell ends the response."""
        stream = self._stream
        return (stream is not None and not self.passthrough and stream.ended) or self._ended_first

    def close(self) -> bytes:
        if self.ended:
            return b""
        if self.passthrough:
            return b"" if self._decoder is None else self._decoder.flush()
        assert self._decoder is not None
        tail = self._decoder.flush()
        if self._mode is Body.JSON:
            self._buffer.append(tail)
            return self._whole(b"".join(self._buffer))
        out = self._feed_sse(tail) if tail else b""
        assert self._sse is not None
        if not self.passthrough:
            # The stream ended inside an event: an SSE client drops such a tail, and so do we,
            # unless it is a whole event lacking only its blank line (its data reads). Only on a
            # native route with nothing of ours sent yet does it go as it came (a pass-through).
            unterminated = self._sse.flush()
            depth = self.settings.max_depth
            held = [e for e in unterminated if e.data is not None and decode_data(e.data, depth) is not None]
            if self._stream is None and not self.bridged and not held:
                held = unterminated
            elif len(held) < len(unterminated):
                self.report.notes.append("the host's stream ended inside an event: its unterminated tail was dropped")
            self._held = bytearray(b"".join(e.raw for e in held))
            if held:
                out += self._sse_events(held)
        if self._stream is None and not self.passthrough and self.bridged and not self._ended_first:
            # A bridged client whose host's stream ended before any answer: its API's error.
            self._stream = self._answer(stream=True, kind=self.upstream)
            return out + (self._stream.abort(f"The host's stream ended before any {self.upstream} answer.") or b"")
        if self._stream is not None and not self.passthrough and not self._stream.done:
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
        if not self._stream.done:
            self.report.notes.append(f"the host app failed mid-stream: {message}")
        return self._stream.abort(message)

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
            self.report.notes.append("an upstream SSE event exceeded the cap: the rest passes through")
            return self._give_up()
        return self._sse_events(events)

    def _sse_events(self, events: list[SSEEvent]) -> bytes:
        out: list[bytes] = []
        for event in events:
            del self._held[: len(event.raw)]  # the events' bytes are exactly what was fed, in order
            if self.ended:
                continue  # the events after the client's stream ended, in the same piece: dropped
            out.append(event.raw if self.passthrough else self._sse_event(event))
        if self.passthrough:
            out.append(self._give_up())
        return b"".join(out)

    def _give_up(self) -> bytes:
        """Stop rewriting mid-stream. What the SSE decoder holds (a partial event, or whole events
        lost with the error) goes out as it came, so no byte is lost; `feed` passes the rest."""
        self.passthrough = True
        held, self._held = bytes(self._held), bytearray()
        return held

    def _sse_event(self, event: SSEEvent) -> bytes:
        if event.data is None:
            if self.bridged and not event.raw.startswith(b":"):
                return b""  # a field of the host's API that a bridged client does not speak
            return event.raw  # comments (keep-alives) and empty events go through as they came
        if self._stream is None:
            obj = decode_data(event.data, self.settings.max_depth)
            kind = self._answer_kind(obj)
            if kind is None:
                if self.bridged:
                    # A bridged client does not speak the host's API: its stream ends in its error.
                    self.report.notes.append(f"the host's stream is not a {self.upstream} answer")
                    self._stream = self._answer(stream=True, kind=self.upstream)
                    ended = event.data.strip() == "[DONE]"
                    said = "ended before any" if ended else "could not be read as a"
                    return self._stream.abort(f"The host's stream {said} {self.upstream} answer.")
                if event.data.strip() != "[DONE]":
                    self.report.passthrough_reason = "the upstream stream is not an OpenAI-style answer"
                    self.passthrough = True
                else:
                    self._ended_first = True
                return event.raw
            self._stream = self._answer(stream=True, kind=kind)
            return self._stream.feed(event, obj)
        return self._stream.feed(event)

    def _whole(self, raw: bytes) -> bytes:
        if self._replacing == "estimate" and self._counted is not None:
            self.report.notes.append("the host does not count tokens: estimated")
            return json_bytes({"input_tokens": estimate_tokens(self._counted)})
        if self._replacing == "error":
            return host_error(raw, self._host_status, self.api)
        within = self._buffered <= self.settings.max_response_bytes
        obj = decode_data(raw.decode("utf-8", errors="replace"), self.settings.max_depth) if within else None
        kind = self._answer_kind(obj)
        if kind is None and self.bridged:
            # A bridged client does not speak the host's API: the host's bytes would mean nothing.
            self.report.notes.append(f"the host's answer is not a {self.upstream} answer")
            self.status = 502
            return error_body(f"The host's answer could not be read as a {self.upstream} answer.", 502, self.api)
        if kind is None:
            self.report.passthrough_reason = "the upstream body is not an OpenAI-style answer"
            self.passthrough = True  # the caller sends the original bytes and headers
            return raw
        stream = self._answer(stream=False, kind=kind)
        body = stream.whole(obj)
        if body is None:
            self.passthrough = True
        return raw if body is None else body


    def _answer_kind(self, obj: Any) -> Kind | None:
        """The reader for the host's first object: its own API's, or None (not ours). A chat route
        answered in the legacy completions shape (`text_completion`, raw text in `choices[].text`,
        as some in-house servers do) is read as such: the client still gets Chat."""
        if obj is None:
            return None
        kind = detect(obj, route=_ROUTES[self.upstream])
        if kind is None and self.upstream == "chat" and kind_of(obj) == "completions":
            self.report.notes.append("the host answered the chat route in the completions shape")
            return "completions"
        return kind


def bad_request_body(error: BadRequest) -> bytes:
    return json_bytes(error.body())


__all__ = ["Exchange", "Report", "Settings", "bad_request_body"]
