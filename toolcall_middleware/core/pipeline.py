"""One exchange, sans-IO: the request body rewritten, then the response bytes rewritten.

```
request JSON -> rewrite_*_request -> host app
response bytes -> content decoding -> SSE events / whole JSON -> inbound reader -> raw text
  -> StreamParser -> PolicyFilter -> emitter (the API the client called) -> bytes
```

A bridged exchange has two APIs: the client's (`api`: the request shape accepted, the emitter
written) and the host's (`upstream`: the request shape the host gets, the reader of its answer).
The request is translated first (`core.request.bridge`), then rewritten for the host's API.

The ASGI and WSGI layers only move bytes in and out of `Exchange`. Anything the exchange cannot
read (another content type, a body that is not an upstream answer, an upstream error, a host that
already returns real tool calls) goes through untouched, byte for byte.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .emitters import ChatMessageBuilder, ChatStreamEmitter, ResponsesBuilder, ResponsesStreamEmitter
from .emitters.anthropic import MessagesBuilder, MessagesStreamEmitter, error_object
from .emitters.meta import Upstream
from .events import Event, TextDelta, TruncatedCall
from .framing.sse import DONE, SSEDecoder, SSEEvent, SSETooLarge, encode_data, encode_event
from .http import Body, ContentDecoder, Headers, classify, header, without
from .inbound import (
    RawText,
    Unrecognized,
    UpstreamDone,
    UpstreamError,
    UpstreamMeta,
    detect,
    kind_of,
    reader_for,
)
from .inbound.anthropic import NativeCalls
from .inbound.events import Kind, UpstreamCall
from .parser import StreamParser
from .policy import PolicyError, PolicyFilter, PolicyLimits
from .request import BadRequest, RewriteResult, rewrite_chat_request, rewrite_responses_request
from .request.anthropic import rewrite_messages_request
from .request.bridge import responses_to_chat
from .request.bridge_messages import chat_to_messages, messages_to_chat
from .result import merge_events

Api = Literal["chat", "responses", "completions", "messages"]


@dataclass(frozen=True)
class Settings:
    """What an exchange needs of the configuration (the middleware builds it from `ToolCallConfig`)."""

    dialect_for: Callable[[str | None], str]
    generation_prompt: str | None = None
    thinking: bool | None = None
    forward_tools: bool = False
    strict: bool = False
    repair: bool = True
    arguments_streaming: Literal["whole", "incremental"] = "whole"
    reasoning_field: Literal["reasoning_content", "reasoning", "both", "none"] = "reasoning_content"
    responses_reasoning: bool = True
    profiles: frozenset[str] = frozenset()
    max_response_bytes: int = 64 * 1024 * 1024
    max_sse_event_bytes: int = 8 * 1024 * 1024
    max_calls: int = 128
    max_call_bytes: int = 4 * 1024 * 1024
    call_ids: Literal["openai", "model"] = "openai"


@dataclass
class Report:
    """Telemetry of one exchange (DESIGN: dialect, calls found, failures, repairs, echoes)."""

    api: str
    dialect: str
    model: str | None = None
    stream: bool = False
    rewritten_request: bool = False
    rewritten_response: bool = False
    passthrough_reason: str | None = None
    calls_found: int = 0
    calls_emitted: int = 0
    truncated: bool = False
    notes: list[str] = field(default_factory=list)
    policy_error: str | None = None
    echoed_function_calls: int = 0
    dropped_tool_types: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    def as_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "started"}
        out["seconds"] = round(time.monotonic() - self.started, 6)
        return out


class Exchange:
    """One request and its response.

    ```python
    ex = Exchange("chat", settings)                     # Exchange("responses", s, upstream="chat"): bridged
    body = ex.rewrite_request(raw_request_bytes)        # may raise BadRequest (-> 400, `error_body`)
    status, headers = ex.start("POST", 200, upstream_headers)
    out = ex.feed(chunk) ... + ex.close()
    ```
    """

    def __init__(self, api: Api, settings: Settings, *, upstream: Api | None = None) -> None:
        self.api = api
        self.upstream: Api = upstream or api
        self.settings = settings
        self.request: dict[str, Any] = {}
        self._rules: Mapping[str, Any] = {}  # tools, tool_choice, parallel_tool_calls (an OpenAI shape)
        self.report = Report(api=api, dialect="")
        if self.upstream != api:
            self.report.notes.append(f"bridged: the host answers as {self.upstream}")
        self._mode = Body.PASS
        self._decoder: ContentDecoder | None = None
        self._sse: SSEDecoder | None = None
        self._held = bytearray()  # decoded bytes the SSE decoder holds: given back raw if we give up
        # The whole-event lane: the stream's `feed_event` while the body is not content-encoded and
        # the SSE decoder holds nothing (an event fed whole needs no decoding), else `None`.
        self._direct: Callable[[bytes], bytes | None] | None = None
        self._max_event = settings.max_sse_event_bytes
        self._buffer: list[bytes] = []
        self._buffered = 0
        self._stream: _Stream | None = None
        self._passthrough = True
        self.status: int | None = None  # a new status for a buffered body, decided at close()

    # -- request -------------------------------------------------------------------------------

    def rewrite_request(self, raw: bytes) -> bytes | None:
        """The rewritten request body, or `None` to forward it unchanged (not JSON, not ours).

        A bridged request always comes back translated: its host does not serve the client's API,
        so a body the bridge cannot read is a `BadRequest` here rather than the host's 404.
        """
        bridged = self.upstream != self.api
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            if bridged:
                raise BadRequest("The request body is not valid JSON.", None, code="invalid_json") from None
            return None  # the host app owns the 400 for a body that is not JSON
        if not isinstance(body, dict):
            if bridged:
                raise BadRequest("The request body must be a JSON object.", None, code="invalid_body")
            return None
        self.request = body
        model = body.get("model") if isinstance(body.get("model"), str) else None
        dialect = self.settings.dialect_for(model)
        self.report.dialect, self.report.model = dialect, model
        self.report.stream = bool(body.get("stream"))
        body, self._rules, dropped = _translate(self.api, self.upstream, body)
        if self.upstream == "completions":
            return None
        rewrite = _REWRITES[self.upstream]
        result = rewrite(body, dialect=request_dialect(dialect), forward_tools=self.settings.forward_tools)
        self.report.dropped_tool_types = list(dropped if dropped is not None else result.tools.dropped)
        self.report.echoed_function_calls = result.calls_flattened
        if not result.changed and not bridged:
            return None
        self.report.rewritten_request = True
        return json.dumps(result.body, ensure_ascii=False).encode()

    def error_body(self, error: BadRequest) -> bytes:
        """The 400 body for a request the exchange refused, in the client's API's error shape."""
        if self.api == "messages":
            return json.dumps(error_object(error.message, "invalid_request_error"), ensure_ascii=False).encode()
        return bad_request_body(error)

    # -- response ------------------------------------------------------------------------------

    def start(self, method: str, status: int, headers: Headers) -> Headers:
        """Decide from the response head; return the headers to send (on the first body)."""
        self._mode = classify(method, status, headers)
        if self._mode is Body.PASS or not self.report.dialect:
            self._passthrough = True
            self.report.passthrough_reason = f"status {status} / {header(headers, b'content-type')!r}"
            return headers
        n = self.request.get("n")
        if isinstance(n, int) and n > 1 and self.api != "chat":
            # Chat parses each choice on its own (`_Stream.several`); legacy completions do not
            # yet, so every choice reaches the client as the host wrote it rather than being lost.
            self._passthrough = True
            self.report.passthrough_reason = "n > 1: choices are passed through unparsed"
            return headers
        self._passthrough = False
        self._decoder = ContentDecoder(header(headers, b"content-encoding"))
        new = without(headers, b"content-length", b"transfer-encoding", b"etag", b"content-md5", b"digest")
        if not self._decoder.identity:
            new = without(new, b"content-encoding")
        if self._mode is Body.SSE:
            self._sse = SSEDecoder(max_event_bytes=self.settings.max_sse_event_bytes)
        return new

    @property
    def passthrough(self) -> bool:
        """Not ours: decided at `start`, or later (a JSON body that is not an answer or over the
        cap: the caller sends the original bytes; a stream given up: `feed` returns it decoded)."""
        return self._passthrough

    @property
    def buffered(self) -> bool:
        """A whole JSON body is held until it ends (its length is only known then)."""
        return self._mode is Body.JSON and not self._passthrough

    def feed(self, data: bytes) -> bytes:
        direct = self._direct
        if direct is not None and not self._passthrough and len(data) <= self._max_event:
            out = direct(data)  # one whole text chunk, the usual piece of a stream: see `_Stream.feed_event`
            if out is not None:
                return out
        if self._passthrough:
            # A stream given up midway still decodes: its Content-Encoding is already dropped.
            return data if self._decoder is None else self._decoder.feed(data)
        assert self._decoder is not None
        data = self._decoder.feed(data)
        if self._mode is Body.JSON:
            self._buffer.append(data)
            self._buffered += len(data)
            if self._buffered > self.settings.max_response_bytes:
                # Over the cap: stop holding it; the caller sends the original bytes from here on.
                self.report.passthrough_reason = "the upstream body is over max_response_bytes"
                self._passthrough, self._buffer = True, []
            return b""
        return self._feed_sse(data)

    def close(self) -> bytes:
        if self._passthrough:
            return b"" if self._decoder is None else self._decoder.flush()
        assert self._decoder is not None
        tail = self._decoder.flush()
        if self._mode is Body.JSON:
            self._buffer.append(tail)
            return self._whole(b"".join(self._buffer))
        out = self._feed_sse(tail)
        assert self._sse is not None
        if not self._passthrough:
            out += self._sse_events(self._sse.flush())
        if self._stream is not None and not self._passthrough:
            out += self._stream.finish(UpstreamDone(complete=False))
        return out

    def abort(self, message: str) -> bytes | None:
        """The host app failed in the middle of a stream being rewritten: the last bytes of the
        client's stream, ending it with what can be saved. Text the parser held back goes out as
        text, a call the model had not finished is dropped (as at any cut-off), and the stream ends
        in an error (a Chat chunk with `error` and `finish_reason: "error"`, then `[DONE]`;
        `response.failed`), which the openai SDK raises; empty when our stream had already ended.
        `None` when there is no stream of ours: what was sent is the app's, so is the failure."""
        if self._passthrough or self._stream is None:
            return None
        if not self._stream.done:
            self.report.notes.append(f"the host app failed mid-stream: {message}")
        return self._stream.abort(message)

    def _feed_sse(self, data: bytes) -> bytes:
        assert self._sse is not None
        if self._stream is not None and self._sse.idle and len(data) <= self._sse.max_event_bytes:
            out = self._stream.feed_event(data)  # one whole text chunk: read without SSE decoding
            if out is not None:
                return out
        self._held += data
        try:
            events = self._sse.feed(data)
        except SSETooLarge:
            self.report.notes.append("an upstream SSE event exceeded the cap: the rest passes through")
            return self._give_up()
        out = self._sse_events(events)
        identity = self._decoder is not None and self._decoder.identity
        self._direct = self._stream.feed_event if self._stream is not None and identity and self._sse.idle else None
        return out

    def _sse_events(self, events: list[SSEEvent]) -> bytes:
        out: list[bytes] = []
        for event in events:
            del self._held[: len(event.raw)]  # the events' bytes are exactly what was fed, in order
            out.append(event.raw if self._passthrough else self._sse_event(event))
        if self._passthrough:
            out.append(self._give_up())
        return b"".join(out)

    def _give_up(self) -> bytes:
        """Stop rewriting mid-stream. What the SSE decoder holds (a partial event, or whole events
        lost with the error) goes out as it came, so no byte is lost; `feed` passes the rest."""
        self._passthrough = True
        held, self._held = bytes(self._held), bytearray()
        return held

    def _sse_event(self, event: SSEEvent) -> bytes:
        if event.data is None:
            return event.raw  # comments (keep-alives) and empty events go through as they came
        if self._stream is None:
            obj = _json(event.data)
            kind = self._answer_kind(obj)
            if kind is None:
                if event.data.strip() != "[DONE]":
                    self.report.notes.append("upstream stream is not an OpenAI-style answer: passed through")
                    self._passthrough = True
                return event.raw
            self._stream = _Stream(self, stream=True, kind=kind)
        return self._stream.feed(event)

    def _whole(self, raw: bytes) -> bytes:
        obj = (
            _json(raw.decode("utf-8", errors="replace")) if self._buffered <= self.settings.max_response_bytes else None
        )
        kind = self._answer_kind(obj)
        if kind is None:
            self.report.passthrough_reason = "the upstream body is not an OpenAI-style answer"
            self._passthrough = True  # the caller sends the original bytes and headers
            return raw
        stream = _Stream(self, stream=False, kind=kind)
        body = stream.whole(obj)
        if body is None:
            self._passthrough = True
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


def request_dialect(dialect: str) -> str:
    """The format the request asks the model to write. `auto` is a way of reading, not a format:
    a model no pattern knows is shown the hermes manifest (`<tool_call>{…}</tool_call>`, the
    format most open models are trained on), which `auto` reads back like any other it detects."""
    return "hermes" if dialect == "auto" else dialect


_ROUTES = {
    "chat": "/v1/chat/completions",
    "responses": "/v1/responses",
    "completions": "/v1/completions",
    "messages": "/v1/messages",
}
NATIVE_INDEX = 1 << 20  # the indexes of a host's own calls, apart from the parser's (the policy renumbers)


_REWRITES: dict[str, Callable[..., RewriteResult]] = {
    "chat": rewrite_chat_request,
    "responses": rewrite_responses_request,
    "messages": rewrite_messages_request,
}


def _translate(api: Api, upstream: Api, body: dict[str, Any]) -> tuple[dict[str, Any], Mapping[str, Any], Any]:
    """The body in the host's API's shape, the tool rules in an OpenAI shape (for the parser and
    the policy), and the tool types the translation dropped (`None`: no translation)."""
    if api == "messages":
        as_chat = messages_to_chat(body)  # Anthropic tools, read in Chat's shape
        return (as_chat.body if upstream == "chat" else body), as_chat.body, as_chat.dropped_tools
    if api == upstream:
        return body, body, None
    dropped: tuple[str, ...] = ()
    host = body
    if api == "responses":
        as_chat = responses_to_chat(body)
        host, dropped = as_chat.body, as_chat.dropped_tools
    if upstream == "messages":
        as_messages = chat_to_messages(host)
        host, dropped = as_messages.body, dropped + as_messages.dropped_tools
    return host, body, dropped


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text if text.strip() == "[DONE]" else None


class _Stream:
    """The response side of one exchange once the upstream is known to be ours."""

    def __init__(
        self, exchange: Exchange, *, stream: bool, kind: Kind, choice: int = 0, parent: _Stream | None = None
    ) -> None:
        self.ex = exchange
        self.stream = stream
        self.kind = kind
        settings, request, rules = exchange.settings, exchange.request, exchange._rules
        self.reader = reader_for(kind, stream=stream)
        self._template = self.reader.template
        self.streaming = settings.arguments_streaming if stream else "whole"  # a whole body has no fragments
        self.parser = self._parser()
        self.native = NativeCalls(index_base=NATIVE_INDEX)  # a host's own calls (`tool_use` blocks)
        self.native_seen: set[int] = set()
        self.policy = PolicyFilter(
            rules.get("tools") or rules.get("functions"),
            rules.get("tool_choice", rules.get("function_call")),
            rules.get("parallel_tool_calls"),
            strict=settings.strict,
            repair=settings.repair,
            streaming=self.streaming,
            limits=PolicyLimits(max_calls=settings.max_calls, max_arguments_bytes=settings.max_call_bytes),
        )
        self.legacy = "functions" in request and "tools" not in request
        self.chat: ChatStreamEmitter | None = None
        self.responses: ResponsesStreamEmitter | None = None
        self.messages: MessagesStreamEmitter | None = None
        self._text_sse: Callable[[str], bytes | None] | None = None  # the emitter's `text_sse`, if any
        self.meta: UpstreamMeta | None = None
        self.events: list[Event] = []
        self.failed: PolicyError | None = None
        self.done = False
        self.parser_truncated = False
        # Several choices (Chat, `n > 1`): this stream is choice 0 and owns the reader; every other
        # choice gets a stream of its own (parser, rules, emitter on its `index`) in `others`.
        n = request.get("n")
        self.several = exchange.api == "chat" and isinstance(n, int) and n > 1
        self.index = choice
        self.parent = parent
        self.others: dict[int, _Stream] = {}

    def _choice(self, index: int) -> _Stream:
        sub = self.others.get(index)
        if sub is None:
            sub = self.others[index] = _Stream(self.ex, stream=self.stream, kind=self.kind, choice=index, parent=self)
            if self.stream:
                if self.chat is None:
                    self._open(Upstream())
                assert self.chat is not None
                sub._open(self.chat.upstream)  # one id, model and time for every choice
        return sub

    def _choices(self) -> list[_Stream]:
        return [self, *(self.others[k] for k in sorted(self.others))]

    @property
    def _ended(self) -> bool:
        head = self.parent if self.parent is not None else self
        return self.done or self.failed is not None or head.done or head.failed is not None

    def _parser(self) -> StreamParser:
        ex = self.ex
        return StreamParser(
            ex.report.dialect,
            model=ex.report.model,
            tools=ex._rules.get("tools") or ex._rules.get("functions"),
            generation_prompt=ex.settings.generation_prompt,
            thinking=ex.settings.thinking,
            repair=ex.settings.repair,
            arguments_streaming=self.streaming,
            # `call_ids="openai"`: the model's own ids stay behind and the emitters mint `call_…`
            # ones. Ids a host gives its calls in its protocol (`tool_use.id`) are kept either way.
            model_ids=ex.settings.call_ids == "model",
        )

    def _native_call(self, piece: UpstreamCall) -> list[Event]:
        """A call the host made itself (an Anthropic `tool_use` block): straight to the policy,
        past the parser. The parser is closed first so the text before the call goes out before
        it, whole; text after it goes to a new parser."""
        events: list[Event] = []
        if piece.index not in self.native_seen:
            self.native_seen.add(piece.index)
            events.extend(self.parser.close())
            self.parser = self._parser()
        return events + self.native.feed(piece)

    # -- streamed ------------------------------------------------------------------------------

    def feed(self, event: SSEEvent) -> bytes:
        items = self.reader.feed_data(event.data or "")
        if items is None:
            return event.raw
        if len(items) == 1:
            return self._item(items[0], event)
        return b"".join([self._item(item, event) for item in items])

    def feed_event(self, raw: bytes) -> bytes | None:
        """The bytes out for one whole SSE event as it came, when its chunk is shaped like the last
        plain text chunk (the reader's template); `None` for any other: decode it, `feed`.

        The usual chunk (content of this choice, plain text the parser holds nothing before, no
        call waiting in the rules) goes straight from the parser to the emitter's text template:
        what `_text` gives, without the events between them."""
        text = self.reader.event_text(raw)
        if text is None:
            return None
        learned = self._template.learned if self._template is not None else None
        assert learned is not None  # `event_text` matched the template it learned
        if (
            learned.channel == "content"
            and learned.choice == self.index
            and not self.done
            and self.failed is None
            and self.parent is None  # (one choice of several: the head's state counts too)
        ):
            kept = self.parser.feed_text(text)
            if kept is not None:
                if not kept:
                    return b""  # all held back (whitespace that may come before a call)
                if self.policy.passes_text and self._text_sse is not None:
                    out = self._text_sse(kept)
                    if out is not None:
                        return out
                return self._emit([TextDelta(kept)])
        return self._text(RawText(text, learned.channel, learned.choice))

    def _text(self, item: RawText) -> bytes:
        if item.choice != self.index:
            if not self.several:
                return b""
            out = self._choice(item.choice)._text(item)
            if not out:
                return out
            below = [c.chat.opening() for c in self._choices() if c.index < item.choice and c.chat is not None]
            return b"".join(encode_data(chunk) for chunks in below for chunk in chunks) + out
        parsed = self.parser.feed_reasoning(item.text) if item.channel == "reasoning" else self.parser.feed(item.text)
        return self._emit(parsed)

    def _item(self, item: Any, event: SSEEvent) -> bytes:
        if isinstance(item, UpstreamMeta):
            self.meta = item
            return self._open(item.to_upstream())
        if isinstance(item, RawText):
            return self._text(item)
        if isinstance(item, UpstreamCall):
            return self._emit(self._native_call(item))
        if isinstance(item, UpstreamDone):
            return self.finish(item)
        if isinstance(item, UpstreamError) and self.ex.upstream != self.ex.api:
            # The host's error in its own API's shape means nothing to this client: ours instead.
            if self.done or self.failed is not None:
                return b""
            head = b""
            if self.chat is None and self.responses is None and self.messages is None:
                head = self._open(self.meta.to_upstream() if self.meta is not None else Upstream())
            return head + self._fail(PolicyError(item.message, item.code or "upstream_error", item.param))
        if isinstance(item, (UpstreamError, Unrecognized)):
            return event.raw if self.ex.upstream == self.ex.api else b""
        return b""

    def _open(self, upstream: Upstream) -> bytes:
        settings = self.ex.settings
        if self.ex.api == "responses":
            self.responses = ResponsesStreamEmitter(
                upstream,
                request=self.ex.request,
                reasoning=settings.responses_reasoning,
                required_action="required_action" in settings.profiles,
            )
            self._text_sse = self.responses.text_sse
            return b"".join(encode_event(e) for e in self.responses.start())
        if self.ex.api == "messages":
            self.messages = MessagesStreamEmitter(upstream, reasoning=settings.reasoning_field != "none")
            return b"".join(encode_event(e) for e in self.messages.start())
        include_usage = bool((self.ex.request.get("stream_options") or {}).get("include_usage"))
        self.chat = ChatStreamEmitter(
            upstream,
            reasoning_field=settings.reasoning_field,
            include_usage=include_usage,
            legacy_functions=self.legacy,
            choice=self.index,
        )
        self._text_sse = self.chat.text_sse
        return b""

    def _emit(self, parsed: list[Event]) -> bytes:
        if self._ended:
            return b""
        if not parsed:
            return b""
        if not self.parser_truncated:
            self.parser_truncated = any(type(e) is TruncatedCall for e in parsed)
        judged = self.policy.feed(parsed)
        first = judged[0] if len(judged) == 1 else None
        if isinstance(first, TextDelta):
            return self._encode([first])  # the usual piece of text
        out: list[bytes] = []
        events: list[Event] = []
        for item in judged:
            if isinstance(item, PolicyError):
                out.append(self._encode(events))
                events = []
                out.append(self._fail(item))
                return b"".join(out)
            events.append(item)
        return b"".join(out) + self._encode(events)

    def _encode(self, events: list[Event]) -> bytes:
        if not events:
            return b""
        if self.responses is not None:
            return self.responses.feed_sse(events)
        if self.messages is not None:
            return b"".join(encode_event(e) for e in self.messages.feed(events))
        if self.chat is None:  # text before the upstream's metadata: defaults stand in
            self._open(Upstream())
        assert self.chat is not None
        return self.chat.feed_sse(events)

    def _fail(self, error: PolicyError) -> bytes:
        self.failed = error
        if self.parent is not None:
            self.parent.failed = error  # one choice broke the rules: the whole response fails
        self.ex.report.policy_error = error.message
        if self.responses is not None:
            return b"".join(encode_event(e) for e in self.responses.fail(error.message, code="server_error"))
        if self.messages is not None:
            return b"".join(encode_event(e) for e in self.messages.fail(error.message))
        assert self.chat is not None
        return (
            b"".join(encode_data(c) for c in self.chat.error(error.message, code=error.code, param=error.param)) + DONE
        )

    def _settle(self) -> bytes:
        """The output ended: what the parser and the rules still hold, out."""
        out = self._emit(self.parser.close())
        tail: list[Any] = []
        if not self._ended:
            for item in self.policy.close():
                if isinstance(item, PolicyError):
                    out += self._fail(item)
                    break
                tail.append(item)
        return out + self._encode(tail)

    def finish(self, done: UpstreamDone) -> bytes:
        if self.done:
            return b""
        out = b""
        for choice in self._choices():
            out += choice._settle()
            if self.failed is not None:
                break
        self.done = True
        self._report()
        if self.failed is not None:
            return out
        upstream_reason = done.finish_reason
        if self.responses is not None:
            self.responses._shell.upstream.finish_reason = upstream_reason
            return out + b"".join(encode_event(e) for e in self.responses.finish(usage=done.usage))
        if self.messages is not None:
            self.messages.upstream.finish_reason = upstream_reason
            return out + b"".join(encode_event(e) for e in self.messages.finish(usage=done.usage))
        if self.chat is None:
            self._open(Upstream())
        usage = chat_usage(done.usage)
        tail: list[dict[str, Any]] = []
        for choice in self._choices():
            assert choice.chat is not None
            reason = done.finish_reasons.get(choice.index) if self.others else upstream_reason
            choice.chat.upstream.finish_reason = reason
            closing, *tail = choice.chat.finish(usage=usage)  # the usage chunk, once, after every choice
            out += encode_data(closing)
        return out + b"".join(encode_data(c) for c in tail) + DONE

    def abort(self, message: str) -> bytes:
        if self.done or self.failed is not None:
            return b""  # the client's stream already ended
        out = b""
        for choice in self._choices():
            out += choice._emit(choice.parser.close())
            if self.failed is None:
                # The calls the model finished go out; the rules' verdict on the whole answer (a
                # required call missing) is moot: the answer is incomplete, and the error says why.
                out += choice._encode([e for e in choice.policy.close() if not isinstance(e, PolicyError)])
        self.done = True
        self._report()
        if self.failed is not None:
            return out
        if self.responses is not None:
            return out + b"".join(encode_event(e) for e in self.responses.fail(message, code="server_error"))
        if self.messages is not None:
            return out + b"".join(encode_event(e) for e in self.messages.fail(message))
        if self.chat is None:
            self._open(Upstream())
        assert self.chat is not None
        error = self.chat.error(message, code="upstream_error", kind="server_error")
        return out + b"".join(encode_data(c) for c in error) + DONE

    # -- whole ---------------------------------------------------------------------------------

    def whole(self, obj: Any) -> bytes | None:
        parsed: dict[int, list[Event]] = {0: []}
        done: UpstreamDone | None = None
        for item in self.reader.feed(obj) + self.reader.flush():
            if isinstance(item, UpstreamMeta):
                self.meta = item
            elif isinstance(item, RawText) and (item.choice == 0 or self.several):
                parser = (self if item.choice == 0 else self._choice(item.choice)).parser
                feed = parser.feed_reasoning if item.channel == "reasoning" else parser.feed
                parsed.setdefault(item.choice, []).extend(feed(item.text))
            elif isinstance(item, UpstreamCall):
                parsed[0].extend(self._native_call(item))
            elif isinstance(item, UpstreamDone):
                done = item
            elif isinstance(item, UpstreamError):
                return None
        kept_by: dict[int, list[Event]] = {}
        for choice in self._choices():
            events = parsed.get(choice.index, []) + choice.parser.close()
            choice.parser_truncated = any(isinstance(e, TruncatedCall) for e in events)
            kept = kept_by[choice.index] = []
            for judged in [*choice.policy.feed(events), *choice.policy.close()]:
                if isinstance(judged, PolicyError):
                    self.failed = judged
                    self.ex.report.policy_error = judged.message
                    break
                kept.append(judged)
            if self.failed is not None:
                break
        kept = kept_by[0]
        self.done = True
        self._report()
        upstream = self.meta.to_upstream(done) if self.meta is not None else Upstream()
        if self.failed is not None:
            # The model's answer broke the request's tool rules: the upstream worked, the answer
            # cannot be delivered as asked. 500 with a typed error, as a strict server would.
            self.ex.status = 500
            if self.ex.api == "messages":
                return json.dumps(error_object(self.failed.message), ensure_ascii=False).encode()
            error = {
                "message": self.failed.message,
                "type": "server_error",
                "param": self.failed.param,
                "code": self.failed.code,
            }
            return json.dumps({"error": error}, ensure_ascii=False).encode()
        result = merge_events(kept)
        if self.ex.api == "messages":
            messages = MessagesBuilder(upstream, reasoning=self.ex.settings.reasoning_field != "none")
            payload = messages.build(result, usage=done.usage if done else None)
        elif self.ex.api == "responses":
            body = ResponsesBuilder(
                upstream,
                request=self.ex.request,
                reasoning=self.ex.settings.responses_reasoning,
            )
            payload = body.build(result, usage=done.usage if done else None)
        else:
            builder = ChatMessageBuilder(
                upstream,
                reasoning_field=self.ex.settings.reasoning_field,
                legacy_functions=self.legacy,
                extensions="extensions" in self.ex.settings.profiles,
            )
            payload = builder.build(result, usage=chat_usage(done.usage if done else None))
            if self.others:
                payload["choices"] = [
                    self._whole_choice(builder, index, judged, done) if index else payload["choices"][0]
                    for index, judged in sorted(kept_by.items())
                ]
        return json.dumps(payload, ensure_ascii=False).encode()

    @staticmethod
    def _whole_choice(builder: ChatMessageBuilder, index: int, kept: list[Event], done: UpstreamDone | None) -> Any:
        """Choice `index` of a whole answer with several, with its own finish reason."""
        builder.upstream.finish_reason = done.finish_reasons.get(index) if done is not None else None
        choice = builder.build(merge_events(kept))["choices"][0]
        choice["index"] = index
        return choice

    def _report(self) -> None:
        report = self.ex.report
        choices = self._choices()
        policies = [c.policy.report for c in choices]
        report.rewritten_response = True
        report.calls_found = sum(p.calls_found for p in policies)
        report.calls_emitted = sum(p.calls_emitted for p in policies)
        report.truncated = any(c.parser_truncated for c in choices)
        report.notes.extend(str(n) for p in policies for n in p.notes)


def chat_usage(usage: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """An upstream's usage as Chat's: a bridged host counts in Responses or Anthropic terms."""
    if not usage:
        return None
    if "prompt_tokens" in usage or "input_tokens" not in usage:
        return dict(usage)
    cache_read = int(usage.get("cache_read_input_tokens") or 0)  # Anthropic counts cache apart
    prompt = int(usage.get("input_tokens") or 0) + cache_read + int(usage.get("cache_creation_input_tokens") or 0)
    completion = int(usage.get("output_tokens") or 0)
    cached = (usage.get("input_tokens_details") or {}).get("cached_tokens", cache_read)
    reasoning = (usage.get("output_tokens_details") or {}).get("reasoning_tokens", 0)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": int(cached or 0)},
        "completion_tokens_details": {"reasoning_tokens": int(reasoning or 0)},
    }


def bad_request_body(error: BadRequest) -> bytes:
    return json.dumps(error.body(), ensure_ascii=False).encode()


__all__ = ["Exchange", "Report", "Settings", "bad_request_body"]
