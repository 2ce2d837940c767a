"""The request id (`x-request-id`): the one a client or a load balancer sent, kept, else a fresh one.

`valid_request_id` says whether a sent id is kept; `request_headers` and `answer_headers` put an
id on a request and on its answer.

An id is kept only when it is safe to write into a log line, a span and a header as it came: 1 to
`MAX_LENGTH` printable ASCII characters, no spaces. Anything else (too long, control characters, a
newline that would forge a log line, non-ASCII) is replaced by a fresh id rather than cleaned, so
an id in the logs is always one that some party chose whole.

The answer carries the exchange's id. An app or upstream that answered with an id of its own
(OpenAI's `req_…`) keeps it as `x-upstream-request-id`, so both can be looked up.
"""

from __future__ import annotations

import uuid

HEADER = b"x-request-id"
UPSTREAM_HEADER = b"x-upstream-request-id"
MAX_LENGTH = 128

Headers = list[tuple[bytes, bytes]]


def valid_request_id(value: bytes | str | None) -> str | None:
    """`value` as a request id, or None when it is absent or not safe to keep as it is."""
    if value is None:
        return None
    raw = value.encode("latin-1", "replace") if isinstance(value, str) else value
    if not 0 < len(raw) <= MAX_LENGTH or not all(0x21 <= byte <= 0x7E for byte in raw):
        return None
    return raw.decode("ascii")


def fresh_request_id() -> str:
    return uuid.uuid4().hex


def request_headers(headers: Headers, rid: str) -> Headers:
    """The request's headers with `x-request-id: rid` in place of any it had (what the app, and
    the upstream behind a proxy, get)."""
    return [*(pair for pair in headers if pair[0].lower() != HEADER), (HEADER, rid.encode())]


def answer_headers(headers: Headers, rid: str) -> Headers:
    """The answer's headers carrying `rid` once: unchanged when they already do; an id of the
    app's or upstream's own that differs is kept as `x-upstream-request-id`."""
    mine = rid.encode()
    if [value for key, value in headers if key.lower() == HEADER] == [mine]:
        return headers
    out: Headers = []
    for key, value in headers:
        if key.lower() != HEADER:
            out.append((key, value))
        elif value != mine:
            out.append((UPSTREAM_HEADER, value))
    out.append((HEADER, mine))
    return out


__all__ = [
    "HEADER",
    "MAX_LENGTH",
    "answer_headers",
    "fresh_request_id",
    "request_headers",
    "valid_request_id",
]
