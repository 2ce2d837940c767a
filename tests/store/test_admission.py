"""`Admission`: the bounds on background responses hold whatever arrives and ends in any order;
every job admitted runs exactly once; a job is refused only when its queue is full; credentials
take turns."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolcall_middleware.store._admission import Admission, Refused

# A step: a new job from credential 0-3, or the end of the n-th running job.
STEPS = st.lists(st.one_of(st.tuples(st.just("new"), st.integers(0, 3)), st.tuples(st.just("end"), st.integers(0, 50))))
BOUNDS = st.tuples(st.integers(1, 4), st.integers(1, 3), st.integers(0, 6), st.integers(0, 4))


@given(BOUNDS, STEPS)
def test_the_bounds_hold_and_every_admitted_job_runs_once(
    bounds: tuple[int, int, int, int], steps: list[tuple[str, int]]
) -> None:
    admission = Admission(*bounds)
    most, per_credential, queue, queue_per_credential = bounds
    admitted: list[str] = []
    running: list[tuple[str, str]] = []
    ran: list[str] = []

    def start() -> None:
        for credential, key in admission.ready():
            running.append((credential, key))
            ran.append(key)
        assert len(running) == admission.running_count <= most
        for credential in {c for c, _ in running}:
            assert sum(c == credential for c, _ in running) <= per_credential
        assert admission.queued_count <= queue

    for n, (kind, value) in enumerate(steps):
        if kind == "new":
            credential, key = f"c{value}", f"job{n}"
            mine = len(admission.waiting.get(credential, ()))
            total = admission.queued_count
            try:
                admission.admit(credential, key)
            except Refused as refused:
                assert mine >= queue_per_credential or total >= queue
                assert 1 <= refused.retry_after <= 60
            else:
                assert mine < queue_per_credential and total < queue
                admitted.append(key)
        elif running:
            credential, _ = running.pop(value % len(running))
            admission.done(credential, 0.5)
        start()
    while running:  # everything ends: every job admitted has run, once
        admission.done(running.pop()[0], 0.5)
        start()
    assert sorted(ran) == sorted(admitted) and admission.queued_count == 0


def test_credentials_take_turns() -> None:
    admission = Admission(max_running=1, max_running_per_credential=1, max_queued=10, max_queued_per_credential=10)
    for n in range(3):
        admission.admit("busy", f"busy{n}")
    admission.admit("quiet", "quiet0")
    order = []
    for _ in range(4):
        [(credential, key)] = admission.ready()
        order.append(key)
        admission.done(credential, 1.0)
    assert order == ["busy0", "quiet0", "busy1", "busy2"]


def test_a_withdrawn_job_never_runs_and_frees_its_place() -> None:
    admission = Admission(max_running=1, max_running_per_credential=1, max_queued=1, max_queued_per_credential=1)
    admission.admit("a", "one")
    with pytest.raises(Refused):
        admission.admit("a", "two")
    assert admission.withdraw("a", "one") and not admission.withdraw("a", "one")
    admission.admit("a", "two")
    assert admission.ready() == [("a", "two")]


def test_a_reserved_place_counts_until_its_job_is_admitted_or_let_go() -> None:
    admission = Admission(max_running=1, max_running_per_credential=1, max_queued=2, max_queued_per_credential=2)
    admission.reserve("a")
    admission.reserve("b")
    with pytest.raises(Refused):  # (both places held while their jobs are being stored)
        admission.reserve("c")
    admission.unreserve("b")
    admission.reserve("c")
    admission.admit("a", "a1")
    admission.admit("c", "c1")
    assert admission.queued_count == 2 and admission.reserved == {}
    assert admission.ready() == [("a", "a1")]
