"""The response side of one exchange, once the host's answer is known to be ours: the host's
objects in (its API's reader), the client's wire bytes out (its API's emitter).

```
host objects -> reader -> raw text (+ a host's own calls) -> StreamParser -> PolicyFilter -> emitter -> bytes
```

`Answer.feed` takes a streamed answer one SSE event at a time (`feed_event`: the one fast path,
for a whole event shaped like the last plain-text chunk), `finish` / `abort` end it, `whole`
rewrites a whole JSON answer. Chat answers with several choices (`n > 1`) get one `Answer` per
choice, each on its own `index`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._answer_parts import (
    NATIVE_INDEX,
    Prepared,
    host_reader_for,
    parser_for,
    policy_for,
    record_answer,
    record_usage,
    stopped_by_model,
)
from ._api import Api, Output, Whole, spec_for
from ._events import Event, TextDelta, TruncatedCall
from ._exchange_data import AnswerSetup, Report
from ._logprobs import LogprobQueue
from .apis.messages._reader import NativeCalls
from .emitters._meta import Upstream
from .framing._utf8 import json_bytes
from .framing.sse import SSEEvent
from .inbound import RawText, Unrecognized, UpstreamDone, UpstreamError, UpstreamMeta
from .inbound._base import NOT_DECODED
from .inbound._events import UpstreamCall
from .policy import PolicyError
from .policy._errors import FAILED_ANSWER_STATUS


class Verdict:
    """How one answer ended, shared by its choices: `done`, and `failed` (the rule one broke)."""

    __slots__ = ("done", "failed")

    def __init__(self) -> None:
        self.done = False
        self.failed: PolicyError | None = None


class Answer:
    """The response side of one exchange once the host's answer is known to be ours; see the module doc."""

    def __init__(
        self,
        setup: AnswerSetup,
        record: Report,
        *,
        stream: bool,
        kind: Api,
        choice: int = 0,
        verdict: Verdict | None = None,
        prepared: Prepared | None = None,
    ) -> None:
        # The exchange gives its answer its setup to read and its record to fill in (the calls,
        # the notes, a broken rule); it reads back what the answer returns, its `verdict` and its
        # `status`. Nothing leads back to the exchange.
        self.setup = setup
        self.record = record
        self.stream = stream
        self.kind = kind
        config, request = setup.config, setup.request
        self.streaming = config.arguments_streaming if stream else "whole"  # a whole body has no fragments
        if prepared is not None and prepared.stream == stream:
            self.parser, self.policy = prepared.parser, prepared.policy
            self.reader = prepared.reader if prepared.kind == kind else host_reader_for(setup, kind, stream)
        else:
            self.parser = parser_for(setup, self.streaming)
            self.policy = policy_for(setup, self.streaming)
            self.reader = host_reader_for(setup, kind, stream)
        self._template = self.reader.template
        # A host's own calls (`tool_use` blocks, `tool_calls` deltas): made at the first one.
        self.native: NativeCalls | None = None
        self.native_seen: set[int] = set()
        self.legacy = "functions" in request and "tools" not in request
        self.status: int | None = None  # a whole answer's new status (502: it broke the rules)
        self.spec = spec_for(setup.api)  # the client's API: its output is `out`, once the answer opens
        self.out: Output | None = None
        self._text_sse: Callable[[str], bytes | None] | None = None  # the output's `text_sse`, if any
        self.meta: UpstreamMeta | None = None
        self.events: list[Event] = []
        # How the answer ended, shared by all its choices: one choice that breaks the rules fails
        # the whole response, and the end of the first is the end of every one.
        self.verdict = verdict if verdict is not None else Verdict()
        self.parser_truncated = False
        self._logprobs: LogprobQueue | None = None  # the host's, for text not out yet (`_logprobs_text`)
        # Several choices (Chat, `n > 1`): this stream is choice 0 and owns the reader; every other
        # choice gets a stream of its own (parser, rules, emitter on its `index`) in `others`.
        n = request.get("n")
        self.several = self.spec.choices and isinstance(n, int) and n > 1
        self.index = choice
        self.others: dict[int, Answer] = {}

    def _choice(self, index: int) -> Answer:
        sub = self.others.get(index)
        if sub is None:
            sub = self.others[index] = Answer(
                self.setup, self.record, stream=self.stream, kind=self.kind, choice=index, verdict=self.verdict
            )
            if self.stream:
                if self.out is None:
                    self._open(Upstream())
                assert self.out is not None
                sub._open(self.out.upstream)  # one id, model and time for every choice
        return sub

    def _choices(self) -> list[Answer]:
        others = self.others
        if not others:
            return [self]  # (one choice, as nearly always: no generator, no sort)
        return [self, *(others[k] for k in sorted(others))]

    @property
    def ended(self) -> bool:
        """The client's stream has had its terminal event (its end, or its error): nothing follows.
        (Read for every chunk: one property, no further calls.)"""
        verdict = self.verdict
        return verdict.done or verdict.failed is not None

    def _native_call(self, piece: UpstreamCall) -> list[Event]:
        """A call the host made itself (an Anthropic `tool_use` block, a Chat host's `tool_calls`):
        straight to the policy, past the parser. The parser is closed first so the text before
        the call goes out before it, whole; text after it goes to a new parser, which numbers its
        calls on from the old one's (the rules still know a call the old one left open)."""
        events: list[Event] = []
        if piece.index not in self.native_seen:
            self.native_seen.add(piece.index)
            events.extend(self.parser.close(drafts=False))  # the host calls: no drafts read
            next_index = self.parser.context.next_index
            self.parser = parser_for(self.setup, self.streaming)
            self.parser.context.next_index = next_index
        if self.native is None:
            self.native = NativeCalls(index_base=NATIVE_INDEX)
        return events + self.native.feed(piece)

    # -- streamed ------------------------------------------------------------------------------

    def feed(self, event: SSEEvent, decoded: object = NOT_DECODED) -> bytes:
        """The bytes out for one SSE event; `decoded`: its data already decoded (`decode_data`).
        An event the fast path takes (`feed_event`, on its bytes as they came) goes that way."""
        if decoded is NOT_DECODED:
            fast = self.feed_event(event.raw)
            if fast is not None:
                return fast
        items = self.reader.feed_data(event.data or "", decoded)
        if items is None:
            return event.raw
        if len(items) == 1:
            return self._item(items[0], event)
        return b"".join([self._item(item, event) for item in items])

    def feed_event(self, raw: bytes) -> bytes | None:
        """The one fast path: the bytes out for one whole SSE event as it came, when its chunk is
        shaped like the last plain text chunk (the reader's template); `None` for any other, with
        nothing changed: decode it and `feed` it (the general path).

        A matched chunk skips the SSE decoder and the reader. Its text, when it is this choice's
        content and the parser takes it as plain text (`StreamParser.take_plain`) with nothing
        waiting in the rules, goes straight into the emitter's text chunk (`text_sse`); any other
        text takes the parser, the rules and the emitter as `feed` would give it to them. (Every
        check is inline: this runs on every chunk.)"""
        reader = self.reader
        if reader.lesson is not None:
            reader.settle()  # (what the last chunk taught the template)
        template = self._template
        if template is None or reader.done:
            return None
        text = template.match_text(raw)
        if text is None:
            return None
        learned = template.learned
        assert learned is not None  # `match_text` matched the template it learned
        verdict = self.verdict  # (shared by every choice: another's failure counts too)
        text_sse = self._text_sse
        if (
            text_sse is not None
            and learned.channel == "content"
            and learned.choice == self.index
            and not verdict.done
            and verdict.failed is None
            and self.policy.passes_text
        ):
            kept = self.parser.take_plain(text)
            if kept is not None:
                if not kept:
                    return b""  # all held back (whitespace that may come before a call)
                out = text_sse(kept)
                return out if out is not None else self._emit([TextDelta(kept)])
        return self._text(RawText(text, learned.channel, learned.choice))

    def _text(self, item: RawText) -> bytes:
        if item.choice != self.index:
            if not self.several:
                return b""
            out = self._choice(item.choice)._text(item)
            if not out:
                return out
            below = [c.out.opening() for c in self._choices() if c.index < item.choice and c.out is not None]
            return b"".join(below) + out
        parsed = self.parser.feed_reasoning(item.text) if item.channel == "reasoning" else self.parser.feed(item.text)
        if item.logprobs is not None and self.spec.choices:
            return self._logprobs_text(parsed, item.text, item.logprobs)
        return self._emit(parsed)

    def _logprobs_text(self, parsed: list[Event], text: str, logprobs: list[Any]) -> bytes:
        """`_emit` for a host text that came with the log probabilities of its tokens: they go out
        on the client's chunk with the text they spell, when it goes out as it came (text held
        back waits with its tokens' entries). Where the text became a call, or came out changed,
        they no longer describe what the client reads, and are dropped."""
        queue = self._logprobs
        if queue is None:
            queue = self._logprobs = LogprobQueue()
        queue.add(text, logprobs)
        if not parsed:
            return b""  # held back: its tokens' entries wait with it
        if len(parsed) == 1 and type(parsed[0]) is TextDelta:
            return self._emit(parsed, queue.take(parsed[0].text))
        queue.drop()
        return self._emit(parsed)

    def _item(self, item: Any, event: SSEEvent) -> bytes:
        if isinstance(item, UpstreamMeta):
            self.meta = item
            return self._open(item.to_upstream())
        if isinstance(item, RawText):
            return self._text(item)
        if isinstance(item, UpstreamCall):
            if item.choice != self.index and not self.several:
                return b""
            owner = self if item.choice == self.index else self._choice(item.choice)
            return owner._emit(owner._native_call(item))
        if isinstance(item, UpstreamDone):
            return self.finish(item)
        ours = self.setup.upstream != self.setup.api or not self.spec.passes_host_errors
        if isinstance(item, UpstreamError) and ours:
            # The host's error in its own API's shape means nothing to this client: ours instead.
            # So too where the API's stream is all ours (`passes_host_errors`: Responses).
            if self.verdict.done or self.verdict.failed is not None:
                return b""
            head = b""
            if self.out is None:
                head = self._open(self.meta.to_upstream() if self.meta is not None else Upstream())
            return head + self._fail(PolicyError(item.message, item.code or "upstream_error", item.param))
        if isinstance(item, (UpstreamError, Unrecognized)):
            return event.raw if self.setup.upstream == self.setup.api else b""
        return b""

    def _open(self, upstream: Upstream) -> bytes:
        assert self.spec.output is not None  # (an API without one passes its answers through)
        self.out = self.spec.output(upstream, self.setup, self.index, self.legacy)
        self._text_sse = self.out.text_sse
        return self.out.start()

    def _emit(self, parsed: list[Event], logprobs: list[Any] | None = None) -> bytes:
        """The client's bytes for parser events; `logprobs`: those of a text that goes out as it
        came (see `_logprobs_text`)."""
        if not parsed or self.ended:
            return b""
        if not self.parser_truncated:
            for event in parsed:  # (a loop, not `any(...)`: no generator per piece)
                if type(event) is TruncatedCall:
                    self.parser_truncated = True
                    break
        judged = self.policy.feed(parsed)
        first = judged[0] if len(judged) == 1 else None
        if isinstance(first, TextDelta):
            if logprobs is not None and self.out is not None:
                carried = self.out.logprobs_sse(first.text, logprobs)
                if carried is not None:
                    return carried
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
        out = self.out
        if out is None:  # text before the upstream's metadata: defaults stand in
            head = self._open(Upstream())
            assert self.out is not None
            return head + self.out.feed(events)
        return out.feed(events)

    def _fail(self, error: PolicyError) -> bytes:
        self.verdict.failed = error  # (one choice broke the rules: the whole response fails)
        self.record.policy_error = error.message
        assert self.out is not None
        return self.out.fail(error)

    def _settle(self, reason: str | None = None) -> bytes:
        """The output ended (`reason`: the host's finish reason for it): what the parser and the
        rules still hold, out."""
        out = self._emit(self.parser.close(drafts=self.native is None, stopped=stopped_by_model(reason)))
        tail: list[Any] = []
        if not self.ended:
            for item in self.policy.close():
                if isinstance(item, PolicyError):
                    # What the rules let go before the error goes out before it: after it, the
                    # client's stream is over (the error is its terminal event).
                    return out + self._encode(tail) + self._fail(item)
                tail.append(item)
        return out + self._encode(tail)

    def finish(self, done: UpstreamDone) -> bytes:
        if self.verdict.done:
            return b""
        out = b""
        for choice in self._choices():
            out += choice._settle(done.finish_reasons.get(choice.index, done.finish_reason))
            if self.verdict.failed is not None:
                break
        self.verdict.done = True
        self._report()
        record_usage(self.record, done.usage)
        if self.verdict.failed is not None:
            return out
        if self.out is None:
            out += self._open(Upstream())
        outputs = [choice.out for choice in self._choices() if choice.out is not None]
        assert self.out is not None
        return out + self.out.finish(done, outputs)

    def abort(self, message: str) -> bytes:
        if self.verdict.done or self.verdict.failed is not None:
            return b""  # the client's stream already ended
        out = b""
        for choice in self._choices():
            out += choice._emit(choice.parser.close(drafts=False))  # (cut short: no drafts read)
            if self.verdict.failed is None:
                # The calls the model finished go out; the rules' verdict on the whole answer (a
                # required call missing) is moot: the answer is incomplete, and the error says why.
                out += choice._encode([e for e in choice.policy.close() if not isinstance(e, PolicyError)])
        self.verdict.done = True
        self._report()
        if self.verdict.failed is not None:
            return out
        if self.out is None:
            # Nothing went out yet: the request's model stands in for the host's.
            meta = self.meta
            upstream = meta.to_upstream() if meta is not None else Upstream(model=self.record.model or "unknown")
            out += self._open(upstream)
        assert self.out is not None
        return out + self.out.cut(message)

    # -- whole ---------------------------------------------------------------------------------

    def whole(self, obj: Any) -> bytes | None:
        parsed: dict[int, list[Event]] = {0: []}
        done: UpstreamDone | None = None
        logprobs: dict[int, tuple[str, list[Any]]] = {}  # by choice: the content and its log probabilities
        for item in self.reader.feed(obj) + self.reader.flush():
            if isinstance(item, UpstreamMeta):
                self.meta = item
            elif isinstance(item, RawText) and (item.choice == 0 or self.several):
                if item.logprobs is not None:
                    logprobs[item.choice] = (item.text, item.logprobs)
                parser = (self if item.choice == 0 else self._choice(item.choice)).parser
                feed = parser.feed_reasoning if item.channel == "reasoning" else parser.feed
                parsed.setdefault(item.choice, []).extend(feed(item.text))
            elif isinstance(item, UpstreamCall) and (item.choice == 0 or self.several):
                owner = self if item.choice == 0 else self._choice(item.choice)
                parsed.setdefault(item.choice, []).extend(owner._native_call(item))
            elif isinstance(item, UpstreamDone):
                done = item
            elif isinstance(item, UpstreamError):
                return None
        kept_by: dict[int, list[Event]] = {}
        for choice in self._choices():
            reason = done.finish_reasons.get(choice.index, done.finish_reason) if done is not None else None
            closing = choice.parser.close(drafts=choice.native is None, stopped=stopped_by_model(reason))
            events = parsed.get(choice.index, []) + closing
            choice.parser_truncated = any(isinstance(e, TruncatedCall) for e in events)
            kept = kept_by[choice.index] = []
            for judged in [*choice.policy.feed(events), *choice.policy.close()]:
                if isinstance(judged, PolicyError):
                    self.verdict.failed = judged
                    self.record.policy_error = judged.message
                    break
                kept.append(judged)
            if self.verdict.failed is not None:
                break
        kept = kept_by[0]
        self.verdict.done = True
        self._report()
        record_usage(self.record, done.usage if done is not None else None)
        upstream = self.meta.to_upstream(done) if self.meta is not None else Upstream()
        if self.verdict.failed is not None:
            # The model's answer broke the request's tool rules: the upstream worked, the answer
            # cannot be delivered as asked (see `FAILED_ANSWER_STATUS`), with a typed error.
            self.status = FAILED_ANSWER_STATUS
            failed = self.verdict.failed
            return self.spec.error_body(failed.message, self.status, code=failed.code, param=failed.param)
        assert self.spec.whole is not None  # (an API without one passes its answers through)
        return json_bytes(self.spec.whole(Whole(self.setup, upstream, kept_by, done, logprobs, self.legacy)))

    def _report(self) -> None:
        """The answer is over: its calls, notes and cut-offs go to the record."""
        record_answer(
            self.record, [(c.policy.report, c.parser_truncated, c.parser.dialect_found) for c in self._choices()]
        )


__all__ = ["Answer", "Verdict"]
