"""Header helpers, response classification and content-coding decode."""

from __future__ import annotations

import gzip
import zlib

import pytest

from toolcall_middleware.core._http import Body, ContentDecoder, classify, header, without

SSE = [(b"Content-Type", b"text/event-stream; charset=utf-8")]
JSON = [(b"content-type", b"application/json")]


def test_headers_any_case() -> None:
    headers = [(b"Content-Length", b"12"), (b"content-length", b"13"), (b"X-A", b"1")]
    assert header(headers, b"CONTENT-LENGTH") == b"12"
    assert without(headers, b"content-length") == [(b"X-A", b"1")]


@pytest.mark.parametrize(
    ("method", "status", "headers", "expected"),
    [
        ("POST", 200, SSE, Body.SSE),
        ("POST", 200, JSON, Body.JSON),
        ("POST", 200, [(b"Content-Type", b"application/vnd.api+json")], Body.JSON),
        ("POST", 200, [*JSON, (b"Content-Encoding", b"gzip")], Body.JSON),
        ("POST", 200, [*JSON, (b"content-encoding", b"br")], Body.PASS),
        ("POST", 400, JSON, Body.PASS),
        ("POST", 500, SSE, Body.PASS),
        ("POST", 204, JSON, Body.PASS),
        ("POST", 206, JSON, Body.PASS),
        ("HEAD", 200, JSON, Body.PASS),
        ("POST", 200, [(b"content-type", b"text/plain")], Body.PASS),
        ("POST", 200, [], Body.PASS),
    ],
)
def test_classify(method: str, status: int, headers: list[tuple[bytes, bytes]], expected: Body) -> None:
    assert classify(method, status, headers) is expected


@pytest.mark.parametrize("coding", [b"gzip", b"deflate", b"deflate-raw", b"identity"])
def test_decoding_at_every_split(coding: bytes) -> None:
    payload = b'data: {"a": "caf\xc3\xa9"}\n\n' * 50
    if coding == b"gzip":
        encoded = gzip.compress(payload)
    elif coding == b"deflate":
        encoded = zlib.compress(payload)
    elif coding == b"deflate-raw":
        z = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        encoded, coding = z.compress(payload) + z.flush(), b"deflate"
    else:
        encoded = payload
    for cut in [*range(8), *range(8, len(encoded) + 1, 7)]:
        decoder = ContentDecoder(coding)
        assert decoder.feed(encoded[:cut]) + decoder.feed(encoded[cut:]) + decoder.flush() == payload
