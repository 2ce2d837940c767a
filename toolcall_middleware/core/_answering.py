"""What the body rewriters read of their exchange (`Answering`), and which reader the host's first
object takes (`answer_kind`).

A host body is rewritten by one of two parts of the exchange (`core._exchange.Exchange`): a stream
event by event (`core._stream_body.StreamBody`), or a whole body at its end
(`core._whole_body.whole_answer`). Neither keeps a state of its own: each reads the exchange's
`state` and moves it through its one way to move (`move`, the table's), so the exchange stays in
one state that every part sees. `Answering` is the exchange as they see it, declared here so that
neither imports the exchange.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ._answer import Answer
from ._api import Api, ApiSpec, spec_for
from ._detect import detect, kind_of
from ._exchange_data import ExchangeConfig, Report, RouteMatch
from ._exchange_state import HostHead, State, Trigger


class Answering(Protocol):
    """The exchange as its body rewriters read it (`core._exchange.Exchange` is the one)."""

    state: State
    route: RouteMatch
    head: HostHead
    api: Api
    upstream: Api
    spec: ApiSpec
    record: Report
    bridged: bool
    answer_required: bool  # an answer that is not the API's is the client's error, not passed on
    counted: Mapping[str, Any] | None  # a count request's body as the host gets it
    status: int | None  # a new status for the client, decided at the end of a whole body
    no_retry: bool

    @property
    def config(self) -> ExchangeConfig: ...

    host_status: int  # the host's own status (the client's may be another)

    def move(self, trigger: Trigger) -> State: ...

    def new_answer(self, *, stream: bool, kind: Api) -> Answer: ...


def answer_kind(obj: Any, upstream: Api, record: Report) -> Api | None:
    """The reader for the host's first object: its own API's, or None (not ours). A host may
    answer in another shape its API's spec allows (`answered_as`: a chat route answered in the
    legacy completions shape, as some in-house servers do), which is read as such (and noted)."""
    if obj is None:
        return None
    spec = spec_for(upstream)
    kind = detect(obj, route=spec.path)
    if kind is None:
        other = kind_of(obj)
        if other is not None and other in spec.answered_as:
            record.notes.append(f"the host answered the {upstream} route in the {other} shape")
            return other
    return kind


__all__ = ["Answering", "answer_kind"]
