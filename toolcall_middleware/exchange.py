"""`ToolCallExchange`: one request and its response under a `ToolCallConfig`, sans-IO.

The one exchange object of a request: the sans-IO exchange (`core.pipeline.Exchange`: the
request rewritten, the response rewritten, the states it moves through, `core.exchange_state`)
with what the configuration adds: which requests are ours, the request's size limit, the record
reported (log line, `on_report`, span), what a failing app's client gets. The ASGI and WSGI
middlewares and Django's middleware drive it, so they cannot drift apart; it moves no bytes.

```python
route = ToolCallExchange.route(config, "POST", "/v1/chat/completions", None)   # None: not ours
ex = ToolCallExchange(config, route)      # ex.state: REQUEST
body = ex.rewrite_request(raw)            # None: forward unchanged; raises BadRequest -> ex.error_response
forward = ex.forward(raw)                 # the same in one step: forward.refusal, or forward.body
ex.path                                   # where the request goes (another route when bridged)
headers = ex.start("POST", 200, headers)  # ex.state: STREAM, BUFFER or PASS
out = ex.transform(chunk) ... ex.transform(b"", end=True)   # None: send the host's bytes as they came
failure = ex.failed(error, head_sent=True)                  # the app raised: what to send
ex.again_wanted                           # a whole answer to ask for again (`regenerate`): ex.again()
ex.report()
```
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from time import perf_counter

from .config import RouteMatch, ToolCallConfig
from .core.exchange_state import AGAIN, BUFFER, DONE, ENDED, HEAD, STREAM, Trigger
from .core.http import Headers, json_head
from .core.pipeline import Exchange
from .core.request import BadRequest
from .core.stored_input import StoredInput
from .logs import RECORD
from .records import record_json, record_line
from .redact import redact
from .surprises import SURPRISES, looks_like_api
from .tracing import trace_exchange

logger = logging.getLogger("toolcall_middleware")


class UpstreamFailure(Exception):
    """What a host app raises when the server behind it failed after the response's head (the
    proxy's upstream broke off, reset the connection, or went silent): the middleware ends the
    client's answer in its API's error shape with this message, which is meant for the client,
    or answers `status` (502, 504) when nothing was sent yet. Whoever raises it has logged its
    cause, so the middleware does not raise it again. A URL in the message is redacted: the
    client (and the record, and a span) must not read the upstream's credentials."""

    def __init__(self, message: str, *, status: int = 502, code: str = "upstream_error") -> None:
        message = redact(message)
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code


class ServerStopped(UpstreamFailure):
    """The server cancelled the request before its answer ended: uvicorn does so when the grace
    of its shutdown runs out (`serve --shutdown-timeout`). The answer ends as at an upstream's
    failure: a stream of ours in its API's error, a whole answer not yet sent as a 503 (another
    instance may serve it: the SDK's retry stays)."""

    def __init__(self) -> None:
        super().__init__("The server shut down before the response ended.", status=503, code="server_shutting_down")


@dataclass(frozen=True)
class Failure:
    """What to do about a host app's failure (`ToolCallExchange.failed`): send `answer` (a whole
    response: status, headers, body) or `last` (the bytes that end the stream), then raise the
    failure again unless it is `handled`."""

    handled: bool
    answer: tuple[int, Headers, bytes] | None = None
    last: bytes | None = None


@dataclass(frozen=True)
class Forward:
    """What becomes of a request of ours (`ToolCallExchange.forward`): `refusal`, our answer
    (status, headers, body), goes to the client instead and the host never sees the request;
    else the host gets `body` (None: the body as it came)."""

    body: bytes | None = None
    refusal: tuple[int, Headers, bytes] | None = None


class ToolCallExchange(Exchange):
    """One request and its response under a configuration; per request, never shared between
    requests. The sans-IO exchange (`core.pipeline.Exchange`: its states, the rewriting) with
    what the configuration adds: the route, the request's size limit, the record reported."""

    def __init__(self, config: ToolCallConfig, route: RouteMatch, *, remote_host: bool = False) -> None:
        """`remote_host`: the app is a proxy to another process (`ProxyApp.remote_host`)."""
        super().__init__(
            route.api, config, upstream=route.upstream, count_tokens=route.count_tokens, remote_host=remote_host
        )
        self.config: ToolCallConfig = config
        self._route = route
        self.record.path = route.asked
        self._reported = False
        self._asked: float | None = None  # when the host was handed the request (`host_asked`)

    @staticmethod
    def route(
        config: ToolCallConfig, method: str, path: str, content_encoding: bytes | str | None
    ) -> RouteMatch | None:
        """Where a request the middleware rewrites goes (client API, host API, host path), or None
        to leave the request alone (another method or path, or a compressed request body)."""
        if method.upper() != "POST":
            return None
        if content_encoding is not None:
            coding = content_encoding.decode("latin-1") if isinstance(content_encoding, bytes) else content_encoding
            if coding.strip().lower() not in ("", "identity"):
                return None
        found = config.route(path)
        if found is None and looks_like_api(path):
            SURPRISES.warn(
                f"route:{path}",
                f"POST {path} looks like an API route, but no configured route matches it: it passes through "
                "untouched (under a prefix? route_prefixes=('/api',); another path? chat_routes=...)",
            )
        return found

    @property
    def path(self) -> str:
        """The path the host gets: the request's own, or the host API's route when bridged."""
        return self._route.path

    def path_info(self, script_name: str) -> str:
        """`path` under an application mounted at `script_name` (WSGI's `PATH_INFO`, Django's
        `path_info`): a bridged request goes to the host API's route at the same mount point."""
        target = self._route.path
        return target[len(script_name) :] if script_name and target.startswith(script_name) else target

    # -- request -------------------------------------------------------------------------------

    def rewrite_request(self, raw: bytes, *, complete: bool = True, stored: StoredInput | None = None) -> bytes | None:
        """The body to forward instead of `raw`, or None to forward `raw` unchanged.

        `complete` is False when the body was not read to its end (over the size limit, or cut
        short): it is never rewritten. `stored`: what the Responses state says of a body it wrote
        (`core.stored_input`). Raises `BadRequest` for a malformed request of ours.
        """
        # A body that ended in the read that crossed the limit is whole, but still over it.
        limit = self.config.limits.max_request_bytes
        if complete and len(raw) <= limit:
            new = super().rewrite_request(raw, stored=stored)
            dropped = self.record.dropped_tool_types
            if dropped:
                logger.info("toolcall-middleware: tools of type %s are not offered to the host", ", ".join(dropped))
            return new
        if self.bridged:
            # A bridged request cannot go untranslated: its host does not serve the client's API.
            raise BadRequest(f"The request body is over {limit} bytes.", None, code="request_too_large")
        self.record.notes.append("request body over the limit: forwarded unchanged")
        self.forward_unchanged()
        return None

    def forward(self, raw: bytes, *, complete: bool = True, stored: StoredInput | None = None) -> Forward:
        """`rewrite_request` and, for a request it refuses, `error_response`: in one step."""
        try:
            return Forward(self.rewrite_request(raw, complete=complete, stored=stored))
        except BadRequest as error:
            return Forward(refusal=self.error_response(error))

    def error_response(self, error: BadRequest) -> tuple[int, Headers, bytes]:
        """The answer to a request refused before the host saw it, in the client API's error shape:
        400 for a malformed request, 413 for a bridged one too large to translate, marked so that
        SDKs do not send it again unchanged (`x-should-retry: false`). The exchange ends here: its
        record is reported."""
        body = self.error_body(error)
        status = 413 if error.code == "request_too_large" else 400
        self.refuse()
        report = self.record
        report.refused, report.status = error.code or "invalid_request", status
        report.response_bytes = len(body)  # (the shell sends it after the record is made)
        self.report()
        return status, json_head(body, final=True), body

    # -- response ------------------------------------------------------------------------------

    @property
    def again_wanted(self) -> bool:
        """The host's whole answer broke a rule another generation may keep (`regenerate`, state
        `AGAIN`): once its response is over, the shell sends the host the request again (`again`)."""
        return self.state is AGAIN

    def again(self) -> None:
        """The host gets the request again: the exchange forgets the last generation's answer
        (its record keeps the count and the notes) and waits for the new response's head."""
        self._response()
        record = self.record
        record.generations += 1
        record.status = record.policy_error = record.passthrough_reason = None
        record.unknown_tools = []
        self._move(Trigger.READ)

    def pass_through(self, reason: str | None = None) -> None:
        """The host's answer goes as it came from here (a shell found it cannot be rewritten:
        a JSON body sent as a stream, a body that lives in a file, an error response replacing
        the one being gathered); `reason`, if any, goes to the record."""
        if reason is not None:
            self.record.notes.append(reason)
        self._move(Trigger.FALL_BACK)  # (the table says what it does where the answer is over)

    def transform(self, data: bytes, *, end: bool = False) -> bytes | None:
        """The bytes for the client for one piece of the body (`end`: the last one).

        `None` means rewriting failed on a bug of ours: it is logged, and the caller passes the
        rest through (a buffered body: the original head and bytes) rather than fail the answer.
        The time it takes is the exchange's own work (decoding, parsing, the rules, writing the
        client's bytes), added to the record's `parse_seconds`; the host's time is never in it.
        """
        began = perf_counter()
        if self.record.first_byte_seconds is None:
            self.host_first_byte(began)  # (the first body of ours: its time is the host's)
        try:
            if not end:
                return self.feed(data)
            return self.feed(data) + self.close()
        except Exception:
            logger.exception("toolcall-middleware: rewriting failed; passing the response through")
            self._move(Trigger.FALL_BACK)  # the rest goes as it came (a buffered body: its original)
            return None
        finally:
            self.record.parse_seconds += perf_counter() - began

    # -- the host's timings (the record's `first_byte_seconds` and `upstream_seconds`) ----------

    def host_asked(self) -> None:
        """The request goes to the host now (its first time: a generation asked again counts in)."""
        if self._asked is None:
            self._asked = perf_counter()

    def host_first_byte(self, now: float | None = None) -> None:
        """The host's answer sent its first body message (once the shell, or `transform`, has
        told us; `now`: the time it came, when the caller has read the clock)."""
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

    @staticmethod
    def failure_message(error: Exception) -> str:
        """What the client is told of a host's failure: an `UpstreamFailure`'s own message, else
        only the exception's type (an app's exception text is not the client's to read)."""
        if isinstance(error, UpstreamFailure):
            return error.message
        return f"The upstream failed mid-stream ({type(error).__name__})."

    def failure_response(self, error: UpstreamFailure) -> tuple[int, Headers, bytes]:
        """The answer to a host failure that came before anything was sent (a whole answer being
        gathered): its status, with the client API's error body."""
        body = self.spec.error_body(error.message, error.status, code=error.code, kind="upstream_error")
        return error.status, json_head(body), body

    def abort(self, message: str) -> bytes | None:
        """The app failed mid-stream: the bytes that end the client's stream (held text, then the
        client API's error), or None when nothing can be said (logged like `transform`)."""
        began = perf_counter()
        try:
            return super().abort(message)
        except Exception:
            logger.exception("toolcall-middleware: ending the stream after the app failed went wrong")
            return None
        finally:
            self.record.parse_seconds += perf_counter() - began

    def failed(self, error: Exception, *, head_sent: bool) -> Failure:
        """What the shell does when the host app raised `error` (`head_sent`: the response's head
        went to the client). A stream of ours under way ends cleanly, held text out and an error
        event last, rather than cut where the parser was holding text back (`Failure.last`); a
        host's `UpstreamFailure` before anything went out is answered with its status in the
        client API's error shape (`Failure.answer`), and one after a complete answer is moot.
        Anything else (a head still held, a pass-through) is the server's to answer, as without
        the middleware: `handled` is False and the shell raises the error again."""
        upstream = isinstance(error, UpstreamFailure)
        state = self.state
        if upstream and (state is ENDED or state is DONE):
            return Failure(handled=True)  # the client's answer was complete before the failure
        if isinstance(error, UpstreamFailure) and (state is HEAD or state is BUFFER):
            self._move(Trigger.FAIL)  # nothing had gone out (a buffered body's head is held)
            self.record.status = error.status
            return Failure(handled=True, answer=self.failure_response(error))
        if state is STREAM and head_sent:
            out = self.abort(self.failure_message(error))
            if out is not None:
                return Failure(handled=upstream, last=out)
        return Failure(handled=False)

    def report(self) -> None:
        """Log the exchange's telemetry and hand it to `on_report`, once; warn of what would
        surprise an operator (`surprises`)."""
        if self._reported or not self.record.dialect:
            return  # no JSON request object of ours: no exchange to report
        self._reported = True
        self._warn_surprises()
        if self.record.unreadable is not None:
            logger.warning(
                "toolcall-middleware: the host's answer to %s is not a %s answer: the client got the API's error; "
                "it sent %s",
                self.record.path,
                self.upstream,
                self.record.unreadable,
            )
        callback = self.config.on_report
        logged = logger.isEnabledFor(logging.INFO)
        tracing = self.config.tracing
        if not logged and callback is None and not tracing:
            return  # nobody to tell: no record built
        record = self.record.as_dict()
        if logged:
            line = record_json(record) if self.config.log_format == "json" else record_line(record)
            logger.info("toolcall-middleware exchange %s", line, extra={RECORD: record})
        if tracing:
            trace_exchange(record)
        if callback is not None:
            try:
                callback(record)
            except Exception:  # telemetry must never break a response
                logger.exception("toolcall-middleware: on_report callback failed")

    def _warn_surprises(self) -> None:
        report, api = self.record, self.api
        status = report.status if report.status is not None else 0
        reason = report.passthrough_reason
        if report.rewritten_request and not report.rewritten_response and reason and 200 <= status < 300:
            SURPRISES.warn(
                f"passthrough:{api}:{reason}",
                f"the answer to a rewritten {api} request passed through untouched ({reason}), so the client "
                "sees the host's raw text: a host answers JSON (application/json) or SSE (text/event-stream) "
                "in its API's shape",
            )
        for name in report.unknown_tools:
            SURPRISES.warn(
                f"unknown_tool:{name}",
                f"the model called {name!r}, a tool the request did not offer: it went to the client as text "
                "(strict=True makes it an error)",
            )
        if report.dialect_found is not None:
            read = self.config.dialect_mismatch == "read"
            SURPRISES.warn(
                f"mismatch:{report.model}:{report.dialect_found}",
                f"the model {report.model!r} is read as dialect {report.dialect!r} but wrote a call in "
                f"{report.dialect_found!r} markup: "
                + ("it was read as such" if read else "it went to the client as text")
                + f"; pin it with model_dialects={{{report.model!r}: {report.dialect_found!r}}} (serve: "
                f"--model-dialects {report.model}={report.dialect_found}), or dialect_mismatch='off' stops looking",
            )
        if report.dialect == "auto" and self.config.dialect is None and report.model:
            SURPRISES.warn(
                f"auto:{report.model}",
                f"no dialect matches the model {report.model!r}: its output is read as 'auto' (each format by its "
                f"markers); set dialect= or model_dialects={{{report.model!r}: ...}}",
            )


__all__ = [
    "BadRequest",
    "Failure",
    "Forward",
    "ServerStopped",
    "ToolCallExchange",
    "UpstreamFailure",
]
