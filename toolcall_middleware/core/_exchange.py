"""One exchange, sans-IO: one request and its response, the one object every shell drives.

```python
route = route_request(config, "POST", "/v1/chat/completions", None)  # None: not ours (routing.py)
ex = Exchange(config, route)          # Exchange(c, RouteMatch("responses", "chat")): bridged; ex.state: REQUEST
forward = ex.forward(raw)             # forward.refusal (status, headers, body): send it; else forward.body
ex.path                               # where the request goes (another route when bridged)
headers = ex.start("POST", 200, upstream_headers)    # ex.state: STREAM, BUFFER or PASS
out = ex.feed(chunk) ... ex.end()     # the client's bytes; None: a bug of ours, the rest passes
failure = ex.failed(error, head_sent=True)           # the app raised: what to send
ex.again()                            # state AGAIN: the host is asked the request again (`regenerate`)
ex.report()                           # the record, once, to the configuration (`ExchangeConfig.report`)
```

The request goes through `core._forwarded`, the response head through `core._exchange_head`, a
stream through `core._stream_body` and a whole body through `core._whole_body`, each to the
answer (`core._answer`); docs/layout.md walks one request and one chunk. A bridged exchange has
two APIs: the client's (`api`) and the host's (`upstream`). The exchange is always in one
`State` and moves only by the table of `core._exchange_state`, firing its triggers itself
(`move`) as its verbs learn what happened: the shells read `state` and only move bytes. What
the configuration adds outside the core comes through the configuration itself
(`ExchangeConfig`): an extra's request checks, the record at the end, a failure logged.
"""

from __future__ import annotations

from collections.abc import Mapping
from time import perf_counter
from typing import Any, Generic, TypeVar

from ._answer import Answer
from ._answer_parts import Prepared
from ._api import Api, spec_for
from ._exchange_data import AnswerSetup, ExchangeConfig, Report, RouteMatch
from ._exchange_head import read_head
from ._exchange_state import (
    BUFFER,
    DONE,
    ENDED,
    GIVEN_UP,
    HEAD,
    NO_HEAD,
    PASS,
    REQUEST,
    STREAM,
    State,
    Trigger,
    buffered_trigger,
    next_state,
)
from ._failure import Failure, UpstreamFailure, failure_message
from ._forwarded import Forward, forward_request, refusal
from ._http import ContentDecoder, Headers, json_head
from ._response_hook import ResponseHook
from ._stored_input import StoredInput
from ._stream_body import StreamBody
from ._whole_body import whole_answer
from .request import BadRequest

C = TypeVar("C", bound=ExchangeConfig)


class Exchange(Generic[C]):
    """One request and its response under a configuration (see the module doc); per request,
    never shared between requests. `ToolCallExchange` (the package's top level) is this class.
    `C`: the configuration's own type (`ToolCallConfig`), for the shells that read more of it."""

    def __init__(self, config: C, route: RouteMatch, *, remote_host: bool = False) -> None:
        """`config`: read where it stands (`ToolCallConfig`); `route`: where the request goes
        (`routing.route_request`); `remote_host`: the host is another process (the
        reverse proxy's upstream, `ProxyApp.remote_host`)."""
        self.config = config
        self.route = route
        self.api: Api = route.api
        self.upstream: Api = route.upstream
        self.spec = spec_for(route.api)  # what differs by the client's API
        # A bridged client does not speak the host's API: nothing of the host's goes to it as it came.
        self.bridged = route.upstream != route.api
        # An answer that is not the API's is the client's error, not passed on: a bridged client
        # would not read the host's API, and a host in another process that sends a page of
        # HTML is broken, not the user's own code speaking.
        self.answer_required = self.bridged or remote_host
        self.counted: Mapping[str, Any] | None = None  # a count request's body as the host gets it
        self.request: dict[str, Any] = {}
        self.rules: Mapping[str, Any] = {}  # tools, tool_choice, parallel_tool_calls (an OpenAI shape)
        self.record = Report(api=route.api, dialect="", path=route.asked)
        if self.bridged:
            self.record.notes.append(f"bridged: the host answers as {self.upstream}")
        self._reported = False
        # The Responses state's hook on the answer, where it serves the request (`core._response_hook`).
        self.response_hook: ResponseHook | None = None
        self._asked: float | None = None  # when the host was handed the request (`host_asked`)
        self._response()
        self.state = REQUEST  # (`core._exchange_state`): it moves only through `move`

    def _response(self) -> None:
        """What the exchange knows of the host's response: nothing yet (a new one, or the next
        generation's, `again`)."""
        self.head = NO_HEAD  # the host's head as read (`HostHead`): what the guards decide by
        self.host_status = 0
        self._decoder: ContentDecoder | None = None  # the body's content-coding, when there is one to undo
        self._stream: StreamBody | None = None  # a stream being rewritten
        self._buffer: list[bytes] = []  # a whole body being gathered (decoded)
        self._buffered = 0  # (its bytes as the host sent them)
        self._prepared: Prepared | None = None  # made by `prepare`, taken by the answer
        self.status: int | None = None  # a new status for a buffered body, decided at its end
        # The body is an error of ours that the same request would meet again (`x-should-retry`).
        self.no_retry = False

    def move(self, trigger: Trigger) -> State:
        """Take `trigger` by the table (`IllegalTransition` for a move it does not declare)."""
        self.state = next_state(self.state, trigger)
        return self.state

    @property
    def path(self) -> str:
        """The path the host gets: the request's own, or the host API's route when bridged."""
        return self.route.path

    def path_info(self, script_name: str) -> str:
        """`path` under an application mounted at `script_name` (WSGI's `PATH_INFO`, Django's
        `path_info`): a bridged request goes to the host API's route at the same mount point."""
        target = self.route.path
        return target[len(script_name) :] if script_name and target.startswith(script_name) else target

    # -- the request ---------------------------------------------------------------------------

    def forward(self, raw: bytes, *, complete: bool = True, stored: StoredInput | None = None) -> Forward:
        """What becomes of the request body `raw`: the body the host gets (None: `raw` as it
        came), or our refusal (the host never sees the request; the record is reported).
        `complete` is False when the body was not read to its end (over the size limit, or cut
        short): it is never rewritten, and a bridged one cannot be translated (413). `stored`: what
        the Responses state says of a body it wrote (`core._stored_input`)."""
        limit = self.config.limits.max_request_bytes
        try:
            # A body that ended in the read that crossed the limit is whole, but still over it.
            if complete and len(raw) <= limit:
                forwarded = forward_request(
                    raw, api=self.api, upstream=self.upstream, config=self.config, record=self.record,
                    count_tokens=self.route.count_tokens, stored=stored,
                )  # fmt: skip
                self.request, self.rules, self.counted = forwarded.request, forwarded.rules, forwarded.counted
                self.move(Trigger.READ)
                return Forward(forwarded.body)
            if self.bridged:
                # A bridged request cannot go untranslated: its host does not serve the client's API.
                raise BadRequest(f"The request body is over {limit} bytes.", None, code="request_too_large")
        except BadRequest as error:
            self.move(Trigger.REFUSE)
            answer = refusal(self.spec, error, self.record)
            self.report()
            return Forward(refusal=answer)
        self.record.notes.append("request body over the limit: forwarded unchanged")
        self.move(Trigger.READ)
        return Forward(None)

    # -- the response --------------------------------------------------------------------------

    def start(self, method: str, status: int, headers: Headers) -> Headers:
        """Decide from the response head (`core._exchange_head`, `exchange_state.head_trigger`);
        return the headers to send. The answer's parts are made by `prepare`, which the shell
        calls once the head is handed over (after sending it, when it was final:
        `exchange_state.head_final`)."""
        read = read_head(self, method, status, headers)
        self.head, self.host_status = read.head, status
        if read.status is not None:
            self.status = read.status
        if self.move(read.trigger) is PASS:
            return read.headers
        self._decoder = None if read.decoder.identity else read.decoder
        if self.state is STREAM:
            self._stream = StreamBody(self.config.limits.max_sse_event_bytes)
        return read.headers

    def prepare(self) -> None:
        """The answer's parts that the host's answer does not change, made now (see `Prepared`),
        while the host computes its first token. Only a head start: should making them fail,
        the answer makes them with its first body, where a failure is handled as any other."""
        if (self.state is not STREAM and self.state is not BUFFER) or self._prepared is not None:
            return
        try:  # (the host's answer has the kind its API names, nearly always)
            self._prepared = Prepared(self._setup(), stream=self.state is STREAM, kind=self.upstream)
        except Exception:
            self._prepared = None

    def new_answer(self, *, stream: bool, kind: Api) -> Answer:
        """The answer that reads the host's (`kind`: the API it is in) and writes the client's."""
        prepared, self._prepared = self._prepared, None
        return Answer(self._setup(), self.record, stream=stream, kind=kind, prepared=prepared)

    def _setup(self) -> AnswerSetup:
        """What the answer is given of this exchange (the request is read by now)."""
        record, hook = self.record, self.response_hook
        return AnswerSetup(
            self.api, self.upstream, self.config, self.request, self.rules, record.dialect, record.model, hook
        )

    def feed(self, data: bytes) -> bytes | None:
        """The client's bytes for one piece of the host's body (see `State` for each state's).
        `None`: rewriting failed on a bug of ours: it is logged (`ExchangeConfig.caught`), and
        the rest passes through (`FALL_BACK`; a buffered body: its original head and bytes).
        Its time is the exchange's own work, added to the record's `parse_seconds`."""
        began = perf_counter()
        record = self.record
        if record.first_byte_seconds is None:
            self.host_first_byte(began)  # (the first body of ours: its time is the host's)
        try:
            if self.state is STREAM:
                # (the usual piece: a stream, not content-encoded; nothing called but the stream's)
                stream = self._stream
                assert stream is not None
                decoder = self._decoder
                out = stream.feed(self, data if decoder is None else decoder.feed(data))
                answer = stream.answer
                if answer is not None and self.state is STREAM:
                    verdict = answer.verdict  # (`answer.ended`, inline: this runs on every chunk)
                    if verdict.done or verdict.failed is not None:
                        self.move(Trigger.TERMINAL)  # the client's stream is over: nothing follows
                return out
            return self._piece(data)
        except Exception as error:
            self._caught(error)
            return None
        finally:
            record.parse_seconds += perf_counter() - began

    def _piece(self, data: bytes) -> bytes:
        """A piece of a body that is not a stream being rewritten."""
        state = self.state
        if state is BUFFER:
            self._buffer.append(data if self._decoder is None else self._decoder.feed(data))
            self._buffered += len(data)
            over = buffered_trigger(self._buffered, self.config.limits.max_response_bytes)
            if over is not None:
                # Over the cap: stop holding it; the caller sends the original bytes from here on.
                self.record.passthrough_reason = "the upstream body is over max_response_bytes"
                self._buffer = []
                self.move(over)
            return b""
        if state is ENDED or state is DONE:
            return b""  # the client's stream is over: the rest of the host's is read and dropped
        # Passed through: a stream given up midway still decodes (its Content-Encoding is dropped).
        return data if self._decoder is None else self._decoder.feed(data)

    def end(self, data: bytes = b"") -> bytes | None:
        """The host's body ended (`data`: its last piece): the client's last bytes. The exchange
        is `DONE` then, `PASS` when a whole body turned out not to be ours (the caller sends the
        original), or `AGAIN`. `None`, as for `feed`: a bug of ours, the rest passes through."""
        out = self.feed(data) if data else b""
        if out is None:
            return None
        began = perf_counter()
        record = self.record
        if record.first_byte_seconds is None:
            self.host_first_byte(began)
        try:
            return out + self._close()
        except Exception as error:
            self._caught(error)
            return None
        finally:
            record.parse_seconds += perf_counter() - began

    def _close(self) -> bytes:
        state = self.state
        if state is not STREAM and state is not BUFFER and state is not GIVEN_UP and state is not PASS:
            if state is ENDED:
                self.move(Trigger.END)
            return b""  # (the client's stream had its end, or the body is over)
        tail = b"" if self._decoder is None else self._decoder.flush()
        if state is STREAM:
            assert self._stream is not None
            out = self._stream.close(self, tail)
            self.move(Trigger.END)
        elif state is BUFFER:
            self._buffer.append(tail)
            out, trigger = whole_answer(self, b"".join(self._buffer), self._buffered)
            self.move(trigger)
        elif state is GIVEN_UP:
            out = tail
            self.move(Trigger.END)
        else:
            return tail  # passed from its head, or given back: the shell ends it
        if self.status is not None:
            self.record.status = self.status  # the record says what the client got
        return out

    def _caught(self, error: Exception) -> None:
        self.config.caught(error, "rewriting failed; passing the response through")
        if self.response_hook is not None:
            self.response_hook.forget()  # (what the answer noted is not what goes out)
        self.move(Trigger.FALL_BACK)  # the rest goes as it came (a buffered body: its original)

    def pass_through(self, reason: str | None = None) -> None:
        """The host's answer goes as it came from here (a shell found it cannot be rewritten:
        a JSON body sent as a stream, a body that lives in a file, an error response replacing
        the one being gathered); `reason`, if any, goes to the record."""
        if reason is not None:
            self.record.notes.append(reason)
        self.move(Trigger.FALL_BACK)  # (the table says what it does where the answer is over)

    def again(self) -> None:
        """The host gets the request again (state `AGAIN`: its whole answer broke a rule another
        generation may keep, `regenerate`): the exchange forgets the last generation's answer
        (its record keeps the count and the notes) and waits for the new response's head."""
        self._response()
        record = self.record
        record.generations += 1
        record.status = record.policy_error = record.passthrough_reason = None
        record.unknown_tools = []
        self.move(Trigger.READ)

    # -- the host app's failure ----------------------------------------------------------------

    def failed(self, error: Exception, *, head_sent: bool) -> Failure:
        """What the shell does when the host app raised `error` (`head_sent`: the response's head
        went to the client). A stream of ours under way ends cleanly, held text out and an error
        event last (`Failure.last`); a host's `UpstreamFailure` before anything went out is
        answered with its status in the client API's error shape (`Failure.answer`), and one
        after a complete answer is moot. Anything else is the server's to answer, as without the
        middleware: `handled` is False and the shell raises the error again."""
        upstream = isinstance(error, UpstreamFailure)
        state = self.state
        if upstream and (state is ENDED or state is DONE):
            return Failure(handled=True)  # the client's answer was complete before the failure
        if isinstance(error, UpstreamFailure) and (state is HEAD or state is BUFFER):
            self.move(Trigger.FAIL)  # nothing had gone out (a buffered body's head is held)
            self.record.status = error.status
            body = self.spec.error_body(error.message, error.status, code=error.code, kind="upstream_error")
            return Failure(handled=True, answer=(error.status, json_head(body), body))
        if state is STREAM and head_sent:
            out = self.abort(failure_message(error))
            if out is not None:
                return Failure(handled=upstream, last=out)
        return Failure(handled=False)

    def abort(self, message: str) -> bytes | None:
        """The host app failed in the middle of a stream being rewritten: the last bytes of the
        client's stream (text the parser held back, then the client API's error; a call the
        model had not finished is dropped, as at any cut-off). `None` when there is no stream
        of ours (what was sent is the app's, so is the failure), or on a bug of ours (logged)."""
        if self.state is not STREAM:
            return None
        began = perf_counter()
        try:
            assert self._stream is not None
            out = self._stream.abort(self, message)
            self.move(Trigger.FAIL)
            return out
        except Exception as error:
            self.config.caught(error, "ending the stream after the app failed went wrong")
            return None
        finally:
            self.record.parse_seconds += perf_counter() - began

    # -- the record ----------------------------------------------------------------------------

    def host_asked(self) -> None:
        """The request goes to the host now (its first time: a generation asked again counts in)."""
        if self._asked is None:
            self._asked = perf_counter()

    def host_first_byte(self, now: float | None = None) -> None:
        """The host's answer sent its first body message (`now`: when, if the caller read the clock)."""
        if self._asked is not None and self.record.first_byte_seconds is None:
            self.record.first_byte_seconds = (perf_counter() if now is None else now) - self._asked

    def host_done(self) -> None:
        """The host's answer ended (or failed): the upstream's whole time."""
        if self._asked is not None:
            self.record.upstream_seconds = perf_counter() - self._asked

    def sent(self, size: int) -> None:
        """`size` bytes of the response body went to the client (the record's `response_bytes`):
        the shells call it where they write a body, whoever made it (us, or the host as it came)."""
        self.record.response_bytes += size

    def report(self) -> None:
        """The record, once, to the configuration (`ExchangeConfig.report`); nothing when the
        request was no JSON request of ours."""
        if self._reported or not self.record.dialect:
            return
        self._reported = True
        self.config.report(self.record, self.upstream)


__all__ = ["Exchange", "Forward", "Report", "RouteMatch"]
