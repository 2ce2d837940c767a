r"""The states of one exchange and the moves between them, declared in one place.

In the manner of h11's `_state.py`: an exchange is always in exactly one `State`; it moves only by
a `Trigger` the table (`TRANSITIONS`) allows from there, and any other trigger raises
`IllegalTransition` rather than leaving the exchange somewhere nobody declared. The exchange
(`core.pipeline.Exchange`, and `ToolCallExchange` over it) fires the triggers itself as its
methods learn what happened; the shells (ASGI, WSGI, Django's middleware) learn what to do with
the next message from `core.held_response`, which reads `state`, and keep no state of their own.

```
REQUEST --READ--> HEAD --STREAM--> STREAM --TERMINAL--> ENDED --END--> DONE
   |                |                 |--GIVE_UP--> GIVEN_UP --END--> DONE; --PASS--> PASS
 REFUSE             |                 |--PASS--> PASS (a failure of ours, a body in a file)
   v                |                 \--END / FAIL--> DONE
REFUSED             |--BUFFER--> BUFFER --END--> DONE; --PASS--> PASS (given back); --FAIL--> DONE
                    |                 \--AGAIN--> AGAIN --READ--> HEAD (the host asked again)
                    |--PASS----> PASS --END--> DONE
                    \--FAIL----> DONE (the host failed before anything went out)
```

- `REQUEST`: the request is being read and rewritten; no response yet.
- `REFUSED` (final): the request was answered with our 400 / 413; the host never saw it.
- `HEAD`: the host has the request; its response head decides what follows.
- `STREAM`: a stream being rewritten: the shell sends what the exchange makes of each body.
- `BUFFER`: a whole body being gathered (its length is known only at its end): the shell holds
  the messages, then sends ours with its new length, or gives the original back (`PASS`).
- `AGAIN`: the whole answer broke a rule that another generation may keep (`regenerate`):
  nothing of it goes out, and once the host's response is over the shell sends it the same
  request again (`ToolCallExchange.again`), which takes the exchange back to `HEAD`.
- `PASS`: the host's own messages go as they came: from the head, a buffered body given back,
  a body that lives in a file, or the rest after a failure of ours.
- `GIVEN_UP`: a stream given up midway (not an answer, an event over its cap): the rest is only
  decoded (its head already lost its `Content-Encoding`), so the shell still sends what the
  exchange gives back.
- `ENDED`: our terminal event went out before the host's body ended: the shell ends the
  response and drops the host's rest.
- `DONE` (final): the response is complete.
"""

from __future__ import annotations

from enum import Enum


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
# a global's read.
REQUEST, REFUSED, HEAD = State.REQUEST, State.REFUSED, State.HEAD
STREAM, BUFFER, PASS, GIVEN_UP = State.STREAM, State.BUFFER, State.PASS, State.GIVEN_UP
AGAIN, ENDED, DONE = State.AGAIN, State.ENDED, State.DONE


class Trigger(Enum):
    """What happened to an exchange."""

    READ = "read"  # the request is read (rewritten or not) and goes to the host
    REFUSE = "refuse"  # the request is answered with our error: the host never sees it
    STREAM = "stream"  # the head says: a stream of ours, rewritten as it comes
    BUFFER = "buffer"  # the head says: a whole body of ours, gathered first
    PASS = "pass"  # the host's bytes go as they came (not ours, given back, or a failure of ours)
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
        Trigger.PASS: State.PASS,
        Trigger.GIVE_UP: State.GIVEN_UP,
        Trigger.TERMINAL: State.ENDED,
        Trigger.END: State.DONE,
        Trigger.FAIL: State.DONE,
    },
    State.BUFFER: {
        Trigger.PASS: State.PASS,
        Trigger.END: State.DONE,
        Trigger.FAIL: State.DONE,
        Trigger.AGAIN: State.AGAIN,
    },
    State.AGAIN: {Trigger.READ: State.HEAD},
    State.PASS: {Trigger.END: State.DONE},
    State.GIVEN_UP: {Trigger.PASS: State.PASS, Trigger.END: State.DONE},
    State.ENDED: {Trigger.END: State.DONE},
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


__all__ = [
    "AGAIN",
    "BUFFER",
    "DONE",
    "ENDED",
    "GIVEN_UP",
    "HEAD",
    "PASS",
    "REFUSED",
    "REQUEST",
    "STREAM",
    "TRANSITIONS",
    "IllegalTransition",
    "State",
    "Trigger",
    "next_state",
]
