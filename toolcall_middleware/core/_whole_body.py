"""A whole host body, gathered to its end, then rewritten at once.

```
the gathered bytes (content-decoded) -> [a body we answer in its place: the client API's error,
  a token count's estimate] -> JSON (within max_response_bytes and max_depth) -> `answer_kind`
  -> Answer.whole -> the client's body, or the original (not ours), or the client's 502 (not an
  answer where one is required), or nothing (a rule broken that another generation may keep)
```

`whole_answer` returns the body and the move it makes (`exchange_state.whole_trigger`); the new
status the client gets and whether it may send the request again are set on the exchange.
"""

from __future__ import annotations

from ._answering import Answering, answer_kind
from ._exchange_state import Trigger, whole_trigger
from ._replaced import estimate_tokens, host_error
from .framing._utf8 import json_bytes
from .inbound._base import decode_data
from .policy._errors import REGENERABLE


def whole_answer(ex: Answering, raw: bytes, size: int) -> tuple[bytes, Trigger]:
    """The client's body for the host's whole body `raw` (`size`: the bytes the host sent), and
    the move it makes."""
    replaced = ex.head.replaced
    if replaced == "estimate" and ex.counted is not None:
        ex.record.notes.append("the host does not count tokens: estimated")
        return json_bytes({"input_tokens": estimate_tokens(ex.counted)}), Trigger.END
    if replaced == "error":
        return host_error(raw, ex.host_status, ex.api), Trigger.END
    limits = ex.config.limits
    within = size <= limits.max_response_bytes
    obj = decode_data(raw.decode("utf-8", errors="replace"), limits.max_depth) if within else None
    kind = answer_kind(obj, ex.upstream, ex.record)
    required = ex.answer_required
    record = ex.record
    if kind is None:
        if required:
            # A bridged client does not speak the host's API, and a remote host's body that is
            # not its API's is broken (a proxy's error page): the host's bytes would mean nothing.
            record.notes.append(f"the host's answer is not a {ex.upstream} answer")
            record.unreadable = repr(raw[:200])
            ex.status = 502
            body = ex.spec.error_body(f"The host's answer could not be read as a {ex.upstream} answer.", 502)
        else:
            record.passthrough_reason = "the upstream body is not an OpenAI-style answer"
            body = raw  # the caller sends the original bytes and headers
        return body, whole_trigger(read=False, answer_required=required, again=False)
    answer = ex.new_answer(stream=False, kind=kind)
    written = answer.whole(obj)
    failed = answer.verdict.failed
    if failed is not None and failed.code in REGENERABLE and record.generations <= ex.config.regenerate:
        # Another generation may keep the rule this one broke: nothing of it goes out.
        record.notes.append(f"generation {record.generations} failed ({failed.code}): the host is asked again")
        return b"", whole_trigger(read=True, answer_required=required, again=True)
    if failed is not None:
        ex.no_retry = True
    if answer.status is not None:
        ex.status = answer.status
    trigger = whole_trigger(read=written is not None, answer_required=False, again=False)
    return (raw if written is None else written), trigger


__all__ = ["whole_answer"]
