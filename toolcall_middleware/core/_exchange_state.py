r"""The states of one exchange and the moves between them, declared in one place.

In the manner of h11's `_state.py`: an exchange is always in exactly one `State`; it moves only by
a `Trigger` the table (`TRANSITIONS`) allows from there, and any other trigger raises
`IllegalTransition` rather than leaving the exchange somewhere nobody declared. The exchange
(`core._exchange.Exchange`, and the parts of it that rewrite a body, `core._stream_body` and
`core._whole_body`) fires the triggers itself as its verbs learn what happened; the shells (ASGI,
WSGI, Django's middleware) learn what to do with the next message from `core._held_response`,
which reads `state`, and keep no state of their own.

```
REQUEST --READ--> HEAD --STREAM--> STREAM --TERMINAL--> ENDED --END--> DONE
   |                |                 |--GIVE_UP--> GIVEN_UP --END--> DONE
 REFUSE             |                 |--FALL_BACK--> PASS (a failure of ours, a body in a file)
   v                |                 \--END / FAIL--> DONE
REFUSED             |--BUFFER--> BUFFER --END--> DONE; --PASS--> PASS (given back); --FAIL--> DONE
                    |                 \--AGAIN--> AGAIN --READ--> HEAD (the host asked again)
                    |--PASS----> PASS --END--> DONE
                    \--FAIL----> DONE (the host failed before anything went out)
FALL_BACK (a failure of ours): STREAM, BUFFER, GIVEN_UP, PASS --> PASS; ENDED --> ENDED (over)
```

- `REQUEST`: the request is being read and rewritten; no response yet.
- `REFUSED` (final): the request was answered with our 400 / 413; the host never saw it.
- `HEAD`: the host has the request; its response head decides what follows.
- `STREAM`: a stream being rewritten: the shell sends what the exchange makes of each body.
- `BUFFER`: a whole body being gathered (its length is known only at its end): the shell holds
  the messages, then sends ours with its new length, or gives the original back (`PASS`).
- `AGAIN`: the whole answer broke a rule that another generation may keep (`regenerate`):
  nothing of it goes out, and once the host's response is over the shell sends it the same
  request again (`Exchange.again`), which takes the exchange back to `HEAD`.
- `PASS`: the host's own messages go as they came: from the head, a buffered body given back,
  a body that lives in a file, or the rest after a failure of ours.
- `GIVEN_UP`: a stream given up midway (not an answer, an event over its cap): the rest is only
  decoded (its head already lost its `Content-Encoding`), so the shell still sends what the
  exchange gives back.
- `ENDED`: our terminal event went out before the host's body ended: the shell ends the
  response and drops the host's rest.
- `DONE` (final): the response is complete.

Every guard that picks a trigger is a function here, next to the table, reading only data: the
host's head as the exchange read it (`HostHead`), the sizes held, what the first event or the
whole body turned out to be. One guard is the answer's own verdict, read where a piece of a
stream is fed: `TERMINAL` once `Answer.ended` (its end or its error went out) while the host's
body goes on; a function call there would cost every chunk about a thousand instructions. The
exchange calls the guard and fires what it returns; nothing asks the table whether a move is
allowed before making it, so a move the table does not list raises. A failure of ours (or an app
replacing its response) is the trigger `FALL_BACK`, which the table lists for each state where
it can happen: where the client's answer is already complete it changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Literal

from ._http import Body


class State(Enum):
    """Where one exchange is; see the module doc."""

    REQUEST = "request"
    REFUSED = "refused"
    HEAD = "head"
    STREAM = "stream"
    BUFFER = "buffer"
    PASS = "pass"
    GIVEN_UP = "given_up"
    AGAIN = "again"
    ENDED = "ended"
    DONE = "done"


# Each state as a module global too, for the code that reads the state for every message of a
# stream: a member read off its Enum class goes through the metaclass, several times the cost of
# a global's read (benchmarks/instruction_count.py counts the difference per chunk).
REQUEST, REFUSED, HEAD = State.REQUEST, State.REFUSED, State.HEAD
STREAM, BUFFER, PASS, GIVEN_UP = State.STREAM, State.BUFFER, State.PASS, State.GIVEN_UP
AGAIN, ENDED, DONE = State.AGAIN, State.ENDED, State.DONE


class Trigger(Enum):
    """What happened to an exchange."""

    READ = "read"  # the request is read (rewritten or not) and goes to the host
    REFUSE = "refuse"  # the request is answered with our error: the host never sees it
    STREAM = "stream"  # the head says: a stream of ours, rewritten as it comes
    BUFFER = "buffer"  # the head says: a whole body of ours, gathered first
    PASS = "pass"  # the host's bytes go as they came (not ours, or a whole body given back)
    FALL_BACK = "fall_back"  # a failure of ours, or the app replaced its response: the rest as it came
    GIVE_UP = "give_up"  # a stream stops being rewritten midway: the rest is only decoded
    TERMINAL = "terminal"  # the client's stream had its terminal event before the host's ended
    END = "end"  # the host's body ended and the client has all of it
    FAIL = "fail"  # the host failed: the client's answer ended in its API's error
    AGAIN = "again"  # the whole answer broke a rule a new generation may keep: the host is asked again


TRANSITIONS: dict[State, dict[Trigger, State]] = {
    State.REQUEST: {Trigger.READ: State.HEAD, Trigger.REFUSE: State.REFUSED},
    State.REFUSED: {},
    State.HEAD: {
        Trigger.STREAM: State.STREAM,
        Trigger.BUFFER: State.BUFFER,
        Trigger.PASS: State.PASS,
        Trigger.FAIL: State.DONE,
    },
    State.STREAM: {
        Trigger.FALL_BACK: State.PASS,
        Trigger.GIVE_UP: State.GIVEN_UP,
        Trigger.TERMINAL: State.ENDED,
        Trigger.END: State.DONE,
        Trigger.FAIL: State.DONE,
    },
    State.BUFFER: {
        Trigger.PASS: State.PASS,
        Trigger.FALL_BACK: State.PASS,
        Trigger.END: State.DONE,
        Trigger.FAIL: State.DONE,
        Trigger.AGAIN: State.AGAIN,
    },
    State.AGAIN: {Trigger.READ: State.HEAD},
    State.PASS: {Trigger.FALL_BACK: State.PASS, Trigger.END: State.DONE},
    State.GIVEN_UP: {Trigger.FALL_BACK: State.PASS, Trigger.END: State.DONE},
    # The client's answer is complete: a failure of ours after it changes nothing.
    State.ENDED: {Trigger.FALL_BACK: State.ENDED, Trigger.END: State.DONE},
    State.DONE: {},
}


class IllegalTransition(RuntimeError):
    """A trigger the table does not allow from the exchange's state: a bug of ours or of a shell."""

    def __init__(self, state: State, trigger: Trigger) -> None:
        super().__init__(f"an exchange in state {state.name} cannot take {trigger.name}")
        self.state = state
        self.trigger = trigger


def next_state(state: State, trigger: Trigger) -> State:
    """The state `trigger` leads to from `state`; `IllegalTransition` when the table has no such move."""
    try:
        return TRANSITIONS[state][trigger]
    except KeyError:
        raise IllegalTransition(state, trigger) from None


# -- the data the guards read -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HostHead:
    """The host's response head as the exchange read it: what its body is (`core._http.Body`: a
    JSON answer, an SSE stream, or something to pass), whether it gave the body's length
    (`sized`) and whether the body is content-encoded (`identity`: not), and the body the
    exchange answers instead of the host's (`replaced`: the client API's error in place of a
    bridged host's or the proxy's, or a token count's estimate), if any."""

    body: Body
    sized: bool = False
    identity: bool = True
    replaced: Literal["error", "estimate"] | None = None


NO_HEAD = HostHead(Body.PASS)  # before the host's head came


# -- the guards: what picks each trigger --------------------------------------------------------


def head_trigger(head: HostHead, *, readable: bool) -> Trigger:
    """What the host's head makes of the exchange. `readable`: the request was ours, read in a
    dialect, for an API that carries calls and is no token count. A body we replace is gathered
    whole; a stream of ours is rewritten as it comes, a JSON answer gathered; the rest passes."""
    if head.replaced is not None:
        return Trigger.BUFFER
    if not readable or head.body is Body.PASS:
        return Trigger.PASS
    return Trigger.STREAM if head.body is Body.SSE else Trigger.BUFFER


def head_final(state: State, head: HostHead) -> bool:
    """The head the exchange chose is the one the client gets whatever the body holds: a stream
    being made (no `Content-Length`: a body of known length is ready, and may live in a file,
    which wants the host's own head) whose bytes are not content-encoded (a stream given up goes
    out under it too)."""
    return state is STREAM and head.identity and not head.sized


def buffered_trigger(size: int, cap: int) -> Trigger | None:
    """A whole body being gathered: `PASS` once it is over the cap (the original goes as it came)."""
    return Trigger.PASS if size > cap else None


def unread_event_trigger(*, done: bool, answer_required: bool, bridged: bool) -> Trigger | None:
    """The host's stream began with an event that is no answer of its API (`done`: its `[DONE]`).
    A client that must get an answer (bridged, or a remote host) gets its API's error instead:
    None, the answer made to say so, whose end moves the exchange (`TERMINAL`). Otherwise
    a `[DONE]` first ends the client's stream (`TERMINAL`); anything else is given up."""
    if answer_required and not (done and not bridged):
        return None
    return Trigger.TERMINAL if done else Trigger.GIVE_UP


def whole_trigger(*, read: bool, answer_required: bool, again: bool) -> Trigger:
    """A whole body at its end. `read`: it was an answer (or one we replace) and a body of ours
    was written; `again`: the answer broke a rule another generation may keep, and
    `regenerate` allows one more. Not read and not required: the original goes as it came."""
    if again:
        return Trigger.AGAIN
    if not read and not answer_required:
        return Trigger.PASS
    return Trigger.END


__all__ = [
    "AGAIN",
    "BUFFER",
    "DONE",
    "ENDED",
    "GIVEN_UP",
    "HEAD",
    "NO_HEAD",
    "PASS",
    "REFUSED",
    "REQUEST",
    "STREAM",
    "TRANSITIONS",
    "HostHead",
    "IllegalTransition",
    "State",
    "Trigger",
    "buffered_trigger",
    "head_final",
    "head_trigger",
    "next_state",
    "unread_event_trigger",
    "whole_trigger",
]
