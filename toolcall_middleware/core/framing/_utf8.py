"""JSON as the UTF-8 bytes that go on the wire, for any string a client or a host can send.

Output keeps non-ASCII characters as they are, as the OpenAI API does. JSON can also carry a
lone UTF-16 surrogate (`"\\ud800"`): valid JSON, decoded by Python into a string that has no UTF-8
form, so `.encode()` would raise. A host or a client that sends one still gets an answer: the
document (or the string) that holds it is written with every non-ASCII character escaped, which
JSON allows and every client reads back to the same string.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from json.encoder import c_make_encoder, encode_basestring, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any

# One encoder per separators and escaping, built once: `json.dumps` builds one per call (and goes
# through three Python calls to reach it). What they write comes from JSON (a request, a host's
# chunk) or is built from it here, so it cannot hold a cycle: no circular check, which costs every
# object and list. Where json's C accelerator is missing, a `JSONEncoder` does the same.
Encode = Callable[[Any, int], Any]  # (obj, indent level) -> the text's parts
_ENCODERS: dict[tuple[tuple[str, str] | None, bool], Encode] = {}


def _encoder(separators: tuple[str, str] | None, ascii_only: bool) -> Encode:
    encode = _ENCODERS.get((separators, ascii_only))
    if encode is None:
        item, key = separators if separators is not None else (", ", ": ")
        if c_make_encoder is not None:
            strings = encode_basestring_ascii if ascii_only else encode_basestring
            encode = c_make_encoder(None, _refuse, strings, None, key, item, False, False, True)
        else:  # pragma: no cover - CPython builds ship the accelerator
            encoder = json.JSONEncoder(ensure_ascii=ascii_only, separators=(item, key), check_circular=False)
            encode = lambda obj, _level: (encoder.encode(obj),)  # noqa: E731
        _ENCODERS[(separators, ascii_only)] = encode
    return encode


def _refuse(obj: Any) -> Any:
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


COMPACT = (",", ":")  # the separators of what goes on the wire (OpenAI's chunks have no spaces)
_PLAIN = _encoder(None, False)
_PLAIN_COMPACT = _encoder(COMPACT, False)


def json_bytes(obj: Any, *, separators: tuple[str, str] | None = None) -> bytes:
    """`json.dumps(obj, ensure_ascii=False)` as UTF-8, escaped where it must be (see the module doc)."""
    if separators is None:
        encode = _PLAIN
    else:
        encode = _PLAIN_COMPACT if separators == COMPACT else _encoder(separators, False)
    try:
        return "".join(encode(obj, 0)).encode()
    except UnicodeEncodeError:
        return json_text(obj, separators=separators, ascii_only=True).encode()


# `json_bytes_with`: the string it writes from a token made beforehand is encoded as this
# marker's token first (the encoder asks `default` for an object it does not know), then the
# token goes in its place.
_SPLICED = object()
_MARK = "\x00toolcall-middleware: spliced\x00"
_MARK_TOKEN = encode_basestring(_MARK)


def _mark(obj: Any) -> Any:
    if obj is _SPLICED:
        return _MARK
    return _refuse(obj)


_SPLICING = (
    c_make_encoder(None, _mark, encode_basestring, None, ": ", ", ", False, False, True)
    if c_make_encoder is not None
    else None
)


def json_bytes_with(obj: Any, at: Sequence[str | int], token_of: Callable[[str], str]) -> bytes:
    """`json_bytes(obj)`, with the string at the path `at` (keys and indexes) written as
    `token_of(it)`, its JSON string token made some cheaper way (a long text sent with every
    request, the tools' manifest, escaped once): the rest of `obj` is encoded as usual. The
    containers along `at` are the caller's own: the string is put back before this returns. A
    value at `at` that is no string, or a body holding the marker's text, is written as usual."""
    holder = obj
    for key in at[:-1]:
        holder = holder[key]
    last = at[-1]
    value = holder[last]
    if _SPLICING is None or type(value) is not str:
        return json_bytes(obj)
    holder[last] = _SPLICED
    try:
        text = "".join(_SPLICING(obj, 0))
    finally:
        holder[last] = value
    head, mark, tail = text.partition(_MARK_TOKEN)
    if not mark or _MARK_TOKEN in tail:
        return json_bytes(obj)  # (the body holds the marker's text itself)
    try:
        return (head + token_of(value) + tail).encode()
    except UnicodeEncodeError:
        return json_bytes(obj)  # (a lone surrogate: written with every non-ASCII character escaped)


def json_text(obj: Any, *, separators: tuple[str, str] | None = None, ascii_only: bool = False) -> str:
    """`json.dumps(obj, ensure_ascii=ascii_only, separators=separators)`, from an encoder built once
    (for data read from JSON, which cannot hold a cycle)."""
    encode = _PLAIN if separators is None and not ascii_only else _encoder(separators, ascii_only)
    return "".join(encode(obj, 0))


# What JSON allows around a value (json.decoder's WHITESPACE); `*`: it always matches.
_SPACE: Callable[[str, int], re.Match[str]] = re.compile(r"[ \t\n\r]*").match  # type: ignore[assignment]


def loads_with(decoder: json.JSONDecoder) -> Callable[[str | bytes], Any]:
    """`decoder.decode` as one Python call: its C scanner called directly (`json.loads` and
    `decode` are three calls before it). The same value and the same errors for any text;
    bytes are decoded as `json.loads` decodes them."""
    scan: Callable[[str, int], tuple[Any, int]] = decoder.scan_once  # type: ignore[attr-defined]

    def loads(text: str | bytes) -> Any:
        if not isinstance(text, str):
            text = text.decode(json.detect_encoding(text), "surrogatepass")
        elif text.startswith("\ufeff"):
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        try:
            value, end = scan(text, _SPACE(text, 0).end())
        except StopIteration as error:
            raise json.JSONDecodeError("Expecting value", text, error.value) from None
        end = _SPACE(text, end).end()
        if end != len(text):
            raise json.JSONDecodeError("Extra data", text, end)
        return value

    return loads


_json_loads = loads_with(json.JSONDecoder())

try:  # pydantic's JSON parser (Rust, with pydantic, which the package depends on): 2-3x faster
    from pydantic_core import from_json as _from_json
except ImportError:  # pragma: no cover - pydantic_core before from_json
    _from_json = _json_loads  # type: ignore[assignment]


def json_loads(text: str | bytes) -> Any:
    """`json.loads(text)`: the same value for any JSON text, the same error for any other.

    Most of what is read here (every host chunk the fast path cannot take, every request) is valid
    UTF-8 JSON, which pydantic's parser reads into the same value 2-3 times faster. What it will
    not read (invalid JSON, a lone surrogate escape, another encoding, a BOM, deep nesting) goes
    to json's own decoder, whose value or error is `json.loads`'s."""
    try:
        return _from_json(text)
    except (ValueError, TypeError):  # (a str with a lone surrogate is a TypeError to it)
        return _json_loads(text)


def items_json(items: Iterable[Any]) -> str:
    """The JSON text of `items` as the members of an array (`json_text` of the array, without its
    brackets): a long list kept so, to write later documents that hold it without encoding it again."""
    return json_text(list(items))[1:-1]


def joined_json(*members: str | None) -> str:
    """Arrays' members (`items_json`) as the members of one array."""
    return ", ".join(text for text in members if text)


def json_bytes_from(obj: Mapping[str, Any], texts: Mapping[str, str]) -> tuple[bytes, dict[str, tuple[int, int]]]:
    """`json_bytes(obj)`, an object, with the members named in `texts` written from their JSON text
    made beforehand rather than encoded again (the same bytes, where each text is its value's
    `json_text`), and where in the bytes each of those texts lies (start, end). An object with a
    lone surrogate (no UTF-8 form) is written by `json_bytes`, every non-ASCII character escaped,
    with no places."""
    parts = [b"{"]
    places: dict[str, tuple[int, int]] = {}
    size = 1
    try:
        for n, (key, value) in enumerate(obj.items()):
            head = ((", " if n else "") + json_text(key) + ": ").encode()
            given = texts.get(key)
            part = (json_text(value) if given is None else given).encode()
            if given is not None:
                places[key] = (size + len(head), size + len(head) + len(part))
            parts += (head, part)
            size += len(head) + len(part)
    except UnicodeEncodeError:
        return json_bytes(obj), {}
    parts.append(b"}")
    return b"".join(parts), places


def token_bytes(text: str) -> bytes:
    """`text` as one JSON string token (quotes included) in UTF-8, escaped where it must be."""
    try:
        return encode_basestring(text).encode()
    except UnicodeEncodeError:
        return encode_basestring_ascii(text).encode()


__all__ = [
    "COMPACT",
    "items_json",
    "joined_json",
    "json_bytes",
    "json_bytes_from",
    "json_bytes_with",
    "json_loads",
    "json_text",
    "loads_with",
    "token_bytes",
]
