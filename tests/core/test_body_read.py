"""`BodyRead`: the rules every shell reads a request body by, as a table, then as properties: a body
read to its end is exactly what was sent, however the server cuts it, and reading stops as soon as
the limit is crossed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolcall_middleware.core._body_read import BodyRead

LIMIT = 10


@pytest.mark.parametrize(
    ("declared", "skipped", "over"),
    [
        (None, False, False),
        ("10", False, False),
        (b"10", False, False),
        (" 7 ", False, False),
        ("11", True, True),  # declared over the limit: not read at all
        ("ten", True, False),  # no length at all: not ours to judge
        ("-1", True, False),
        ("\u00b2", True, False),  # a digit, but not an ASCII one
    ],
)
def test_what_the_declared_length_decides(declared: str | bytes | None, skipped: bool, over: bool) -> None:
    read = BodyRead(LIMIT, declared)
    assert (read.skipped, read.over, read.reading) == (skipped, over, not skipped)


def test_pushed_pieces_read_to_the_end() -> None:
    read = BodyRead(LIMIT, "6")
    read.feed(b"abc", more=True)
    assert read.reading and not read.complete
    read.feed(b"def", more=False)
    assert not read.reading and read.complete and read.body == b"abcdef" and read.parts == [b"abc", b"def"]


def test_pushed_pieces_stop_past_the_limit() -> None:
    read = BodyRead(LIMIT)
    read.feed(b"x" * 11, more=True)
    assert not read.reading and read.over and not read.complete
    ended = BodyRead(LIMIT)
    ended.feed(b"x" * 11, more=False)  # it ended in the read that crossed the limit: whole, but over
    assert ended.complete and ended.over


def test_pulled_reads_ask_for_the_declared_length_and_stop_there() -> None:
    read = BodyRead(LIMIT, "5")
    assert read.wanted(4) == 4
    read.take(b"abcd")
    assert read.wanted(4) == 1
    read.take(b"e")
    assert not read.reading and read.complete and read.body == b"abcde"


def test_a_pulled_body_short_of_its_length_is_not_complete() -> None:
    read = BodyRead(LIMIT, "5")
    read.take(b"ab")
    read.take(b"")
    assert not read.reading and read.ended and not read.complete and read.body == b"ab"


def test_an_empty_declared_body_is_read_at_once() -> None:
    read = BodyRead(LIMIT, "0")
    assert not read.reading and read.complete and read.body == b""


def test_a_pulled_body_without_a_length_reads_to_its_end_or_the_limit() -> None:
    read = BodyRead(LIMIT)
    assert read.wanted(64) == 64
    read.take(b"abc")
    read.take(b"")
    assert read.complete and read.body == b"abc"
    over = BodyRead(LIMIT)
    over.take(b"x" * 11)
    assert not over.reading and over.over and not over.complete


body = st.binary(max_size=40)


@given(body, st.lists(st.integers(0, 40), max_size=8))
def test_pushed_pieces_give_the_body_or_stop_at_the_limit(data: bytes, cuts: list[int]) -> None:
    points = sorted({min(c, len(data)) for c in cuts})
    pieces = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    read = BodyRead(LIMIT)
    fed = 0
    for i, piece in enumerate(pieces):
        if not read.reading:
            break
        read.feed(piece, more=i < len(pieces) - 1)
        fed += 1
    assert read.body == b"".join(pieces[:fed])
    if fed == len(pieces):
        assert read.complete and read.body == data
    else:  # it stopped early only because the limit was crossed, in the last piece read
        assert read.over and len(b"".join(pieces[: fed - 1])) <= LIMIT


@given(body, st.integers(1, 16))
def test_pulled_reads_give_exactly_the_declared_body(data: bytes, most: int) -> None:
    read = BodyRead(64, str(len(data)))
    stream = iter(data[i : i + 1] for i in range(len(data)))  # a server that gives a byte a read
    while read.reading:
        assert 1 <= read.wanted(most) <= most
        read.take(next(stream, b""))
    assert read.complete and read.body == data
