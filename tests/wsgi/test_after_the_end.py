"""Once the client's stream has had its terminal event, nothing more is sent, under WSGI too (see
tests/asgi/test_after_the_end.py): the iteration ends there, and `close()` reads the rest of the
app's body, drops it, and closes the app's iterable."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hypothesis import HealthCheck, given, settings

from tests.asgi.test_after_the_end import ROUTES, assert_ends_at_its_terminal_event, forced_ends, request_for

from .driver import Environ, Server, environ, sse_headers, wrapped


class Counted:
    """The app's iterable: counts the chunks taken from it and its `close()` calls."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.taken = 0
        self.closed = 0

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.chunks:
            self.taken += 1
            yield chunk

    def close(self) -> None:
        self.closed += 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forced_ends())
def test_nothing_follows_the_terminal_event_in_wsgi(case: tuple[str, str, str, list[bytes]]) -> None:
    api, host, streaming, pieces = case
    result = Counted(pieces)

    def app(env: Environ, start_response: Any) -> Counted:
        env["wsgi.input"].read(int(env["CONTENT_LENGTH"]))
        start_response("200 OK", sse_headers())
        return result

    bridge = {} if api == host else {"bridge": f"{api}-to-{host}"}
    options: dict[str, Any] = {"arguments_streaming": streaming, "limits": {"max_calls": 1}, **bridge}
    server = Server().run(wrapped(app, **options), environ(request_for(api), path=ROUTES[api]))
    assert_ends_at_its_terminal_event(api, server.body)
    assert (result.taken, result.closed) == (len(result.chunks), 1)  # read to its end, dropped, closed
