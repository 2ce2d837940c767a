"""The request id rules (`core._request_id`): what is kept is exactly what was sent and safe to
write anywhere; the answer always carries the id once, and nothing of the app's is lost."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from toolcall_middleware.core._request_id import (
    HEADER,
    MAX_LENGTH,
    UPSTREAM_HEADER,
    answer_headers,
    fresh_request_id,
    request_headers,
    valid_request_id,
)

SAFE = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=MAX_LENGTH)
NAMES = st.sampled_from([b"content-type", b"x-request-id", b"X-Request-ID", b"server", b"x-upstream-request-id"])
HEADERS = st.lists(st.tuples(NAMES, st.binary(max_size=20)), max_size=6)


@given(st.binary(max_size=200))
def test_an_id_is_kept_whole_or_not_at_all(sent: bytes) -> None:
    kept = valid_request_id(sent)
    if kept is not None:
        assert kept.encode() == sent and 0 < len(kept) <= MAX_LENGTH
        assert all(0x21 <= c <= 0x7E for c in sent)  # nothing that could forge a log line or a header
    else:
        assert not sent or len(sent) > MAX_LENGTH or any(c < 0x21 or c > 0x7E for c in sent)


@given(SAFE)
def test_every_safe_id_is_kept(sent: str) -> None:
    assert valid_request_id(sent) == sent == valid_request_id(sent.encode())


def test_unsafe_ids_are_refused() -> None:
    for sent in ("", "x" * (MAX_LENGTH + 1), "two words", "line\nbreak", "caf\u00e9", "tab\t", None):
        assert valid_request_id(sent) is None
    assert valid_request_id(fresh_request_id()) is not None and fresh_request_id() != fresh_request_id()


@given(HEADERS, SAFE, st.booleans())
def test_the_answer_carries_the_id_once_and_keeps_the_rest(
    headers: list[tuple[bytes, bytes]], rid: str, echoed: bool
) -> None:
    if echoed:  # the app echoed the id itself (somewhere among the rest)
        headers = [*headers[:1], (HEADER, rid.encode()), *headers[1:]]
    out = answer_headers(headers, rid)
    assert [v for k, v in out if k.lower() == HEADER] == [rid.encode()]
    assert answer_headers(out, rid) == out  # once is enough
    others = [(k, v) for k, v in headers if k.lower() != HEADER]
    theirs = [(UPSTREAM_HEADER, v) for k, v in headers if k.lower() == HEADER and v != rid.encode()]
    expected = [*others, *theirs, (HEADER, rid.encode())]
    assert sorted((k.lower(), v) for k, v in out) == sorted((k.lower(), v) for k, v in expected)  # nothing lost


@given(HEADERS, SAFE)
def test_the_request_carries_the_id_once(headers: list[tuple[bytes, bytes]], rid: str) -> None:
    out = request_headers(headers, rid)
    assert [v for k, v in out if k.lower() == HEADER] == [rid.encode()]
    assert [p for p in out if p[0].lower() != HEADER] == [p for p in headers if p[0].lower() != HEADER]
