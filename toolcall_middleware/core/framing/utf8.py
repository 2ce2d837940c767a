"""JSON as the UTF-8 bytes that go on the wire, for any string a client or a host can send.

Output keeps non-ASCII characters as they are, as the OpenAI API does. JSON can also carry a
lone UTF-16 surrogate (`"\\ud800"`): valid JSON, decoded by Python into a string that has no UTF-8
form, so `.encode()` would raise. A host or a client that sends one still gets an answer: the
document (or the string) that holds it is written with every non-ASCII character escaped, which
JSON allows and every client reads back to the same string.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any

# One encoder per separators and escaping, built once: `json.dumps` with any non-default option
# builds one per call. What they write comes from JSON (a request, a host's chunk) or is built
# from it here, so it cannot hold a cycle: no circular check, which costs every object and list.
_ENCODERS: dict[tuple[tuple[str, str] | None, bool], json.JSONEncoder] = {}


def _encoder(separators: tuple[str, str] | None, ascii_only: bool) -> json.JSONEncoder:
    encoder = _ENCODERS.get((separators, ascii_only))
    if encoder is None:
        encoder = json.JSONEncoder(ensure_ascii=ascii_only, separators=separators, check_circular=False)
        _ENCODERS[(separators, ascii_only)] = encoder
    return encoder


def json_bytes(obj: Any, *, separators: tuple[str, str] | None = None) -> bytes:
    """`json.dumps(obj, ensure_ascii=False)` as UTF-8, escaped where it must be (see the module doc)."""
    try:
        return json_text(obj, separators=separators).encode()
    except UnicodeEncodeError:
        return json_text(obj, separators=separators, ascii_only=True).encode()


def json_text(obj: Any, *, separators: tuple[str, str] | None = None, ascii_only: bool = False) -> str:
    """`json.dumps(obj, ensure_ascii=ascii_only, separators=separators)`, from an encoder built once
    (for data read from JSON, which cannot hold a cycle)."""
    return _encoder(separators, ascii_only).encode(obj)


def token_bytes(text: str) -> bytes:
    """`text` as one JSON string token (quotes included) in UTF-8, escaped where it must be."""
    try:
        return encode_basestring(text).encode()
    except UnicodeEncodeError:
        return encode_basestring_ascii(text).encode()


__all__ = ["json_bytes", "json_text", "token_bytes"]
