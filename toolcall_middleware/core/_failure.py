"""A host app's failure, and what the client of an exchange gets for it.

`UpstreamFailure` is what a host app raises when the server behind it failed after the
response's head (the reverse proxy raises it: `proxy.py`); any other exception is the app's own.
The exchange answers either with a `Failure` (`Exchange.failed`): a whole error answer when
nothing went out yet, the bytes that end a stream of ours, or nothing (the server answers, as
without the middleware).
"""

from __future__ import annotations

from dataclasses import dataclass

from ._http import Headers
from ._redact import redact


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
    """What to do about a host app's failure (`Exchange.failed`): send `answer` (a whole
    response: status, headers, body) or `last` (the bytes that end the stream), then raise the
    failure again unless it is `handled`."""

    handled: bool
    answer: tuple[int, Headers, bytes] | None = None
    last: bytes | None = None


def failure_message(error: Exception) -> str:
    """What the client is told of a host's failure: an `UpstreamFailure`'s own message, else
    only the exception's type (an app's exception text is not the client's to read)."""
    if isinstance(error, UpstreamFailure):
        return error.message
    return f"The upstream failed mid-stream ({type(error).__name__})."


__all__ = ["Failure", "ServerStopped", "UpstreamFailure", "failure_message"]
