"""The host's response head, read: what its body is to the exchange and the headers the client gets.

`read_head` turns the host's status and headers into a `HostHead` (the data the guards of
`core._exchange_state` decide by), the trigger `head_trigger` picks from it, the headers to send
(a rewritten body loses its length, validators and, once decoded, its content-coding) and the
content decoder. Two heads are answered with a body of ours (`HostHead.replaced`): a bridged
host's error, or the reverse proxy's own (`PROXY_ERROR`), in the client API's error shape, and a
token count the host does not serve (404, 405, 501), with an estimate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ._answering import Answering
from ._exchange_state import HostHead, Trigger, head_trigger
from ._http import Body, ContentDecoder, Headers, answerable, classify, header, without
from ._replaced import openai_error

PROXY_ERROR = b"x-toolcall-proxy-error"  # the reverse proxy marks its own errors so (proxy.py)


@dataclass(frozen=True, slots=True)
class ReadHead:
    """The host's head as the exchange takes it: `head` and the `trigger` it fires, the
    `headers` the client gets, the body's content `decoder`, and a new `status` (an estimate's
    200), if any."""

    head: HostHead
    trigger: Trigger
    headers: Headers
    decoder: ContentDecoder
    status: int | None = None


def read_head(ex: Answering, method: str, status: int, headers: Headers) -> ReadHead:
    """The head of the host's response to `ex`'s request; notes what passes, and why, in its record."""
    record = ex.record
    record.status = status
    coding = header(headers, b"content-encoding")
    replaced = _replacement(ex, status, header(headers, PROXY_ERROR) is not None) if record.dialect else None
    if replaced is not None:
        head = HostHead(Body.JSON, identity=coding is None, replaced=replaced)
        kept = without(
            headers, b"content-length", b"transfer-encoding", b"content-encoding", b"content-type", PROXY_ERROR
        )
        new = [*kept, (b"content-type", b"application/json")]
        estimate = 200 if replaced == "estimate" else None
        return ReadHead(head, head_trigger(head, readable=True), new, ContentDecoder(coding), estimate)
    count_tokens = ex.route.count_tokens
    body = classify(method, status, headers)
    sniffed = ex.answer_required and body is Body.PASS and answerable(method, status, headers)
    if sniffed and not count_tokens and ex.spec.output is not None:
        # A 2xx of a content type no answer has: read as JSON, so an answer is still taken and
        # anything else becomes the client's 502 (`whole_body`), never its bytes.
        body = Body.JSON
        record.notes.append(f"the host answered {header(headers, b'content-type')!r}: read as JSON")
        headers = [*without(headers, b"content-type"), (b"content-type", b"application/json")]
    decoder = ContentDecoder(coding)
    head = HostHead(body, sized=header(headers, b"content-length") is not None, identity=decoder.identity)
    readable = not count_tokens and bool(record.dialect) and ex.spec.output is not None
    trigger = head_trigger(head, readable=readable)
    if trigger is Trigger.PASS:
        if ex.spec.output is None and body is not Body.PASS and not count_tokens:
            # An API with no way to carry a tool call (legacy completions), whose client writes
            # its own prompt: its answer reaches it as the host wrote it (`choices[].text`).
            record.passthrough_reason = f"the {ex.api} API carries no tool calls: passed through"
        else:
            record.passthrough_reason = f"status {status} / {header(headers, b'content-type')!r}"
        return ReadHead(head, trigger, headers, decoder)
    new = without(headers, b"content-length", b"transfer-encoding", b"etag", b"content-md5", b"digest")
    if not decoder.identity:
        new = without(new, b"content-encoding")
    return ReadHead(head, trigger, new, decoder)


def _replacement(ex: Answering, status: int, ours: bool) -> Literal["error", "estimate"] | None:
    """The body of ours that replaces a host answer with `status` (see the module doc), if any;
    `ours`: the error is the reverse proxy's own (`PROXY_ERROR`), not the host's."""
    if ex.route.count_tokens and status in (404, 405, 501) and ex.counted is not None:
        return "estimate"
    if status >= 400 and (ex.bridged or (ours and ex.spec.error_body is not openai_error)):
        return "error"
    return None


__all__ = ["PROXY_ERROR", "ReadHead", "read_head"]
