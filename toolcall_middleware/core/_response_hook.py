"""What the Responses state tells a Responses answer of ours, and what the answer tells it back.

The state (`toolcall_middleware.store`) serves `POST /v1/responses` in front of the stateless
middleware: it gives the response our id and the state's fields, stores it before its last bytes
go out, and keeps its events for `?stream=true` replay. It used to read all of that back out of
the answer's bytes, decoding the SSE and JSON the answer had just encoded. Instead it gives the
exchange a `ResponseHook`, beside the body in the ASGI scope (where no client can put one):

- `fields`: what every response object of the answer says of the state (our id, `store`,
  `previous_response_id`, `conversation`, `background`), written in by the Responses emitter as
  it makes each one;
- the answer tells it each event it encodes (`encode`, `wrote`: its bytes, and the response object
  of those that carry one), and a whole answer's response object (`answered`).

The state then knows what it is sending by its bytes alone (`take`): the events that begin a piece
of the stream are the ones the answer wrote, in order. Bytes it cannot match (a keep-alive ping,
the host's own bytes passed through) are not the answer's, and the state reads those as before.

```python
hook = ResponseHook({"id": "resp_…", "store": True, "previous_response_id": None, "background": False})
data = hook.encode(emitter.finish())     # the events as SSE, each one noted
hook.answered(response)                  # a whole answer's response object
taken, end = hook.take(body)             # the state: the events of ours that `body[:end]` holds
```
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from .framing.sse import encode_event

# The Responses stream events that carry the whole response object, and those that end the stream.
RESPONSE_EVENTS = frozenset(
    {
        "response.created",
        "response.in_progress",
        "response.completed",
        "response.incomplete",
        "response.failed",
        "response.queued",
        "response.cancelled",
    }
)
TERMINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed", "response.cancelled"})


class Written(NamedTuple):
    """One event the answer encoded: its exact bytes, the event itself when it carries the
    response object (None for the rest: deltas, items), and whether it ends the stream."""

    raw: bytes
    event: Mapping[str, Any] | None = None
    terminal: bool = False

    @property
    def response(self) -> dict[str, Any] | None:
        return None if self.event is None else self.event["response"]


class ResponseHook:
    """One Responses answer's hook (see the module doc); per request, never shared."""

    __slots__ = ("_pending", "fields", "response")

    def __init__(self, fields: Mapping[str, Any]) -> None:
        self.fields = fields
        self.response: dict[str, Any] | None = None  # a whole answer's response object, once made
        self._pending: deque[Written] = deque()  # events encoded, not yet seen going out

    # -- the answer's side ----------------------------------------------------------------------

    def encode(self, events: Iterable[Mapping[str, Any]]) -> bytes:
        """`events` as SSE (`encode_event`), each one noted."""
        out: list[bytes] = []
        for event in events:
            raw = encode_event(event)
            kind = event["type"]
            if kind in RESPONSE_EVENTS and type(event.get("response")) is dict:
                self._pending.append(Written(raw, event, kind in TERMINAL_EVENTS))
            else:
                self._pending.append(Written(raw))
            out.append(raw)
        return b"".join(out)

    def wrote(self, raw: bytes) -> None:
        """One event encoded elsewhere (a text delta written into its template): no response in it."""
        self._pending.append(Written(raw))

    def answered(self, response: dict[str, Any]) -> None:
        self.response = response

    def forget(self) -> None:
        """What was noted will not go out: the exchange passes the host's bytes on instead (a bug
        of ours), so the state reads what does."""
        self.response = None
        self._pending.clear()

    # -- the state's side -----------------------------------------------------------------------

    def take(self, body: bytes) -> tuple[list[Written], int]:
        """The events of the answer's, in the order it encoded them, that `body` begins with, and
        where they end in it (0: `body` begins with none of them)."""
        pending = self._pending
        taken: list[Written] = []
        end = 0
        while pending and body.startswith(pending[0].raw, end):
            event = pending.popleft()
            taken.append(event)
            end += len(event.raw)
        return taken, end


__all__ = ["RESPONSE_EVENTS", "TERMINAL_EVENTS", "ResponseHook", "Written"]
