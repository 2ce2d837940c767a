"""What a shell writes of the app's response, and when: the head and messages it holds back.

Every shell (ASGI, WSGI) holds the response's head until the exchange knows what goes under it: a
stream's head until its first body (one that no body can change goes out at once, `release`), a
whole JSON body's until the body ends, for its new length. `HeldResponse` is told what the app
sent (its head, a piece of its body, another message) and answers with `Writes`: what the shell
writes, in order (the usual piece, one of a stream under way, with the bytes of ours alone). It
keeps what is held, in the order the app sent it, and asks the exchange (`core._exchange.Exchange`,
through `Rewriting`: `start`, `feed`, `end`) what to make of each body; it does no I/O and knows
no framework: a message (`M`) is whatever the shell's app sends (an ASGI message, a WSGI chunk),
and a head is `Head`, the headers and status the exchange chose, or the app's own.

The rules it keeps, the same for every shell:
- a buffered body that is not ours (not an answer, over the cap, a failure of ours) is given back
  exactly as the app sent it: its own head, then every message held, in order;
- ours replaces the body messages held; the other messages held (between the head and the final
  body) follow the head, in order, and the head gets the new length (none when trailers follow,
  as Starlette's GZip does) and the status the exchange chose;
- a body of a stream, or one passed through, goes after whatever is still held;
- a whole answer the host is asked for again (`AGAIN`, `regenerate`) is dropped with everything
  held, and so is whatever else the app sends of that response: the next generation's head and
  body are held as the first's were;
- our own error in place of a whole answer (it broke the request's rules) is marked
  `x-should-retry: false`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from ._exchange_state import AGAIN, BUFFER, DONE, ENDED, GIVEN_UP, HEAD, PASS, STREAM, State
from ._http import Headers, no_retry, without

M = TypeVar("M")


class Rewriting(Protocol):
    """What `HeldResponse` asks of the exchange (`core._exchange.Exchange` answers it)."""

    state: State
    status: int | None
    no_retry: bool

    def start(self, method: str, status: int, headers: Headers) -> Headers: ...

    def feed(self, data: bytes) -> bytes | None: ...

    def end(self, data: bytes = b"") -> bytes | None: ...

    def pass_through(self, reason: str | None = None) -> None: ...


@dataclass(frozen=True, slots=True)
class Head:
    """A response head to write: `headers` (None: the app's own head, exactly as it sent it) and
    `status` (None: the app's own)."""

    headers: Headers | None = None
    status: int | None = None


APPS_HEAD = Head()


@dataclass(slots=True)
class Writes(Generic[M]):
    """What the shell writes, in this order: `head` (None: no head now), the app's `messages` as
    it sent them, then `body`, bytes of ours (None: none), followed by more body when `more`.
    A body with no `more` ends the response: the app's body ended, or the client's stream had its
    terminal event first (`State.ENDED`), and whatever the app sends after it is dropped. (The
    usual piece, one of a stream under way, gets none: `HeldResponse.body` answers it with its
    bytes alone.)

    A value to read, made for every message of a response passed through under WSGI: not frozen
    only because a frozen dataclass's `__init__` costs several times a plain one's."""

    head: Head | None = None
    messages: tuple[M, ...] = ()
    body: bytes | None = None
    more: bool = True


class HeldResponse(Generic[M]):
    """The response as one shell sends it; see the module doc. Per request."""

    def __init__(self, exchange: Rewriting, *, length_name: bytes = b"content-length") -> None:
        """`length_name`: how the shell spells `Content-Length` when it gives a new one."""
        self.exchange = exchange
        self._length_name = length_name
        self._head: Head | None = None  # the head to write, while held
        self._held: list[tuple[M, bool]] = []  # the app's messages after its head, and which are bodies
        self._trailers = False  # the app's head announced trailers

    @property
    def head_held(self) -> bool:
        """The app's head came and is held (not written yet)."""
        return self._head is not None

    @property
    def passing(self) -> bool:
        """From here on, every message of the app's goes as it sent it: the exchange passes the
        response through, and its head and whatever was held are out."""
        return self.exchange.state is PASS and self._head is None and not self._held

    def head(self, method: str, status: int, headers: Headers, *, trailers: bool = False) -> None:
        """The app's head: the exchange decides from it (`Rewriting.start`), and it is held.
        `trailers`: the app announced trailers (the new length is then left out)."""
        new = self.exchange.start(method, status, headers)
        self._trailers = trailers
        self._head = APPS_HEAD if self.exchange.state is PASS else Head(new)

    def release(self, *messages: M) -> Writes[M]:
        """Whatever is held, then `messages`: the head may go now (it is final, or a body came)."""
        head, self._head = self._head, None
        if self._held:
            held, self._held = self._held, []
            messages = (*(m for m, _ in held), *messages)
        return Writes(head, messages)

    def body(self, message: M, data: bytes, *, end: bool) -> bytes | Writes[M]:
        """A piece of the app's body (`data`, in `message`; `end`: the last one). The usual piece,
        one of a stream under way (its head out, more to follow, nothing held), is answered with
        the bytes of ours alone (b"": nothing now, text held back); any other with `Writes`."""
        exchange = self.exchange
        state = exchange.state
        if state is STREAM:  # (the usual piece: checked first; `_rewritten`'s stream case, inline)
            out = exchange.end(data) if end else exchange.feed(data)
            if out is None:  # a bug of ours (logged): the rest passes through
                return self.release(message)
            if self._head is None and not end and exchange.state is STREAM:
                # (bytes, not a `Writes`: a value made per piece costs as much as the rest of the hop)
                return out
            head, self._head = self._head, None
            more = not end and exchange.state is not ENDED
            return Writes(head, (), out if out or not more else None, more)
        if state is HEAD:
            raise RuntimeError("the application sent a body before its head (start_response, http.response.start)")
        if state is PASS or state is DONE:
            return self.release(message)
        if state is ENDED or state is AGAIN:
            return Writes()  # the client's stream is over, or the host is asked again: dropped
        if state is BUFFER:
            self._held.append((message, True))
        out = exchange.end(data) if end else exchange.feed(data)
        return self._rewritten(message, out, end=end, buffering=state is BUFFER)

    def end(self) -> Writes[M]:
        """The app's body ended with no message of its own to carry the end (WSGI's iterable)."""
        state = self.exchange.state
        if state is HEAD or state is AGAIN:
            return Writes()  # the app never answered (the server reports it), or is asked again
        if state is PASS or state is DONE:
            return self.release()
        return self._rewritten(None, self.exchange.end(), end=True, buffering=state is BUFFER)

    def other(self, message: M, *, in_file: bool = False, trailers: bool = False) -> Writes[M]:
        """A message of the app's that is neither head nor body (ASGI's debug, trailers, early
        hints, ...); `in_file`: the body lives in a file (pathsend), so there is nothing to
        rewrite; `trailers`: the message is the response's trailers."""
        exchange = self.exchange
        if exchange.state is ENDED:
            # The client's stream had its terminal event: only trailers the head announced can
            # still follow the final body.
            return Writes(messages=(message,)) if trailers and self._trailers else Writes()
        if exchange.state is AGAIN:
            return Writes()  # of a response dropped: the host is asked again
        if in_file:
            state = exchange.state
            if self._head is not None and not any(body for _, body in self._held):
                # The head still held goes as the app sent it, and the file's bytes under it.
                self._head = APPS_HEAD
                if state is STREAM or state is BUFFER:
                    exchange.pass_through()
            elif state is STREAM or state is GIVEN_UP:
                # A stream's head that went out at once (the app gave no length) stays, and the
                # file's bytes follow it as they are.
                exchange.pass_through()
        if exchange.state is BUFFER:
            self._held.append((message, False))  # the head waits for the whole body: so does what follows it
            return Writes()
        return self.release(message)

    def drop(self) -> None:
        """Forget what is held: an answer of ours replaces the response."""
        self._head, self._held = None, []

    def replaced(self) -> None:
        """The app replaced its response before anything went out (WSGI's `exc_info`): its new
        head goes as it is, what was held is dropped, and the rest passes through."""
        self.exchange.pass_through("the app replaced its response (exc_info): passed through")
        self._head, self._held = APPS_HEAD, []

    def _rewritten(self, message: M | None, out: bytes | None, *, end: bool, buffering: bool) -> Writes[M]:
        if out is None:  # a bug of ours (logged): the rest passes through
            return self._give_back() if buffering else self.release(*(() if message is None else (message,)))
        if not buffering:
            # (a stream holds no message: only a whole body's head waits for what follows it)
            head, self._head = self._head, None
            more = not end and self.exchange.state is not ENDED
            return Writes(head, (), out if out or not more else None, more)
        state = self.exchange.state
        if state is PASS:
            return self._give_back()  # not an answer, or over the cap: the original, byte for byte
        if state is AGAIN:
            self._head, self._held = None, []  # dropped: the host is asked again
            return Writes()
        if not end:
            return Writes()
        assert self._head is not None and self._head.headers is not None
        headers = without(self._head.headers, b"content-length")
        if self.exchange.no_retry:
            headers = no_retry(headers)
        if not self._trailers:  # with trailers to follow, no length (as Starlette's GZip)
            headers.append((self._length_name, str(len(out)).encode()))
        others = tuple(m for m, body in self._held if not body)
        self._head, self._held = None, []
        return Writes(Head(headers, self.exchange.status), others, out, more=False)

    def _give_back(self) -> Writes[M]:
        """A buffered body we will not rewrite: the app's own head and messages, unchanged."""
        self._head = APPS_HEAD
        return self.release()


__all__ = ["APPS_HEAD", "Head", "HeldResponse", "Rewriting", "Writes"]
