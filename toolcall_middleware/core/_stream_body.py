"""A host's SSE stream rewritten as it comes: decoded into events, read by the answer, re-encoded
in the client's API.

```
piece (content-decoded) -> [one whole event shaped like the last plain-text one: Answer.feed_event]
                        -> SSEDecoder -> events -> the first read for its kind (`answer_kind`),
                           the answer made for it -> Answer.feed -> the client's bytes
```

Nothing is lost: the bytes the SSE decoder holds are kept as they came (`_held`), so a stream
given up midway (an event over its cap, a first event that is no answer) goes on as the host
wrote it from the last event out, and an event the client's API has no use for is dropped only
when it could not be passed on (a bridged client, a remote host's). Once the client's stream
had its terminal event, the events after it in the same piece are dropped.

`StreamBody` holds the stream's own data (the decoder, the bytes it holds, the answer), never
the exchange: each method is given it (`Answering`), reads its state and moves it by the table.
"""

from __future__ import annotations

from ._answer import Answer
from ._answering import Answering, answer_kind
from ._exchange_state import ENDED, GIVEN_UP, PASS, STREAM, Trigger, unread_event_trigger
from .framing.sse import SSEDecoder, SSEEvent, SSETooLarge
from .inbound import UpstreamDone
from .inbound._base import decode_data


class StreamBody:
    """One host stream being rewritten (per response: a generation asked again gets another)."""

    __slots__ = ("_held", "_max_event", "_sse", "answer")

    def __init__(self, max_event_bytes: int) -> None:
        self._max_event = max_event_bytes
        self._sse = SSEDecoder(max_event_bytes=max_event_bytes)
        self._held = bytearray()  # decoded bytes the SSE decoder holds: given back raw if we give up
        self.answer: Answer | None = None  # made for the host's first event that is an answer

    def feed(self, ex: Answering, data: bytes) -> bytes:
        """The client's bytes for one (content-decoded) piece of the host's stream."""
        answer = self.answer
        if answer is not None and self._sse.idle and len(data) <= self._max_event:
            out = answer.feed_event(data)  # the fast path: one whole event, read without SSE decoding
            if out is not None:
                return out
        self._held += data
        try:
            events = self._sse.feed(data)
        except SSETooLarge:
            ex.record.notes.append("an upstream SSE event exceeded the cap: the rest passes through")
            return self.give_up(ex)
        return self._events(ex, events)

    def close(self, ex: Answering, tail: bytes) -> bytes:
        """The host's stream ended (`tail`: the content decoder's last bytes): the client's last."""
        out = self.feed(ex, tail) if tail else b""
        if not _passing(ex):
            # The stream ended inside an event: an SSE client drops such a tail, and so do we,
            # unless it is a whole event lacking only its blank line (its data reads). Only on a
            # native route with nothing of ours sent yet does it go as it came (a pass-through).
            unterminated = self._sse.flush()
            depth = ex.config.limits.max_depth
            held = [e for e in unterminated if e.data is not None and decode_data(e.data, depth) is not None]
            if self.answer is None and not ex.answer_required and not held:
                held = unterminated
            elif len(held) < len(unterminated):
                ex.record.notes.append("the host's stream ended inside an event: its unterminated tail was dropped")
            self._held = bytearray(b"".join(e.raw for e in held))
            if held:
                out += self._events(ex, held)
        if self.answer is None and ex.state is STREAM and ex.answer_required:
            # A bridged client (or a remote host's) whose stream ended before any answer: its API's error.
            ex.record.unreadable = ex.record.unreadable or "text/event-stream with no answer"
            self.answer = ex.new_answer(stream=True, kind=ex.upstream)
            return out + self.answer.abort(f"The host's stream ended before any {ex.upstream} answer.")
        if self.answer is not None and not _passing(ex) and not self.answer.verdict.done:
            out += self.answer.finish(UpstreamDone(complete=False))  # the stream ended without its end
        return out

    def abort(self, ex: Answering, message: str) -> bytes:
        """The host app failed mid-stream: the bytes that end the client's stream (held text, then
        the client API's error; the error alone when no answer had begun)."""
        if self.answer is None:
            self.answer = ex.new_answer(stream=True, kind=ex.upstream)
        if not self.answer.verdict.done:
            ex.record.notes.append(f"the host app failed mid-stream: {message}")
        return self.answer.abort(message)

    def give_up(self, ex: Answering) -> bytes:
        """Stop rewriting mid-stream. What the SSE decoder holds (a partial event, or whole events
        lost with the error) goes out as it came, so no byte is lost; the exchange passes the rest."""
        if ex.state is STREAM:
            ex.move(Trigger.GIVE_UP)
        held, self._held = bytes(self._held), bytearray()
        return held

    def _over(self, ex: Answering) -> bool:
        """The client's stream has had its terminal event (`State.ENDED`, or the answer's own end
        while the exchange is still to move there)."""
        answer = self.answer
        return (answer is not None and answer.ended) or ex.state is ENDED

    def _events(self, ex: Answering, events: list[SSEEvent]) -> bytes:
        out: list[bytes] = []
        for event in events:
            del self._held[: len(event.raw)]  # the events' bytes are exactly what was fed, in order
            if self._over(ex):
                continue  # the events after the client's stream ended, in the same piece: dropped
            out.append(event.raw if _passing(ex) else self._event(ex, event))
        if _passing(ex):
            out.append(self.give_up(ex))
        return b"".join(out)

    def _event(self, ex: Answering, event: SSEEvent) -> bytes:
        if event.data is None:
            if ex.answer_required and not event.raw.startswith(b":"):
                # A field of the host's API that a bridged client does not speak; before any
                # answer from a remote host, a line that is no SSE (its stream's error ends it).
                return b""
            return event.raw  # comments (keep-alives) and empty events go through as they came
        if self.answer is not None:
            return self.answer.feed(event)
        obj = decode_data(event.data, ex.config.limits.max_depth)
        kind = answer_kind(obj, ex.upstream, ex.record)
        if kind is not None:
            self.answer = ex.new_answer(stream=True, kind=kind)
            return self.answer.feed(event, obj)
        done = event.data.strip() == "[DONE]"
        trigger = unread_event_trigger(done=done, answer_required=ex.answer_required, bridged=ex.bridged)
        if trigger is None:
            # A bridged client does not speak the host's API, and a remote host's stream that is
            # not its API's is broken: the client's stream ends in its error.
            ex.record.unreadable = f"text/event-stream: {event.raw[:200]!r}"
            ex.record.notes.append(f"the host's stream is not a {ex.upstream} answer")
            self.answer = ex.new_answer(stream=True, kind=ex.upstream)
            said = "ended before any" if done else "could not be read as a"
            return self.answer.abort(f"The host's stream {said} {ex.upstream} answer.")
        if trigger is Trigger.GIVE_UP:
            ex.record.passthrough_reason = "the upstream stream is not an OpenAI-style answer"
        ex.move(trigger)  # (TERMINAL: its first event was its end, no answer)
        return event.raw


def _passing(ex: Answering) -> bool:
    """The stream is no longer ours: the host's bytes go on as they came."""
    state = ex.state
    return state is GIVEN_UP or state is PASS


__all__ = ["StreamBody"]
