"""One exchange's request as its host gets it: read, checked, translated for a bridged host,
rewritten (the tools injected, the history flattened), with what was learned on the way.

```python
forwarded = forward_request(raw, api="chat", upstream="chat", config=c, record=r)
forwarded.body          # the bytes to forward, or None: forward `raw` unchanged
forwarded.request       # the client's request object
forwarded.rules         # tools, tool_choice, parallel_tool_calls (an OpenAI shape) for the answer
```

It sits above `core.request` (whose parts it runs) and the API specs (it asks the host's for its
rewrite), below the exchange (`core._exchange`). A bridged request always comes back translated:
its host does not serve the client's API. A body that is not a JSON object is a `BadRequest` on
every route (400 `invalid_json` / `invalid_body`), and the host never sees it. The record
(`Report`) gets the request's dialect, model, size and what the rewrite did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._api import Api, ApiSpec, spec_for
from ._exchange_data import ExchangeConfig, Report
from ._host import for_host, request_dialect
from ._http import Headers, json_head
from ._stored_input import StoredInput
from .apis.responses._compaction import expand_compactions
from .apis.responses._rewrite import NOTHING_FOLDED, Folded, rewrite_responses_request
from .framing._utf8 import items_json, joined_json, json_bytes, json_bytes_from, json_bytes_with
from .grammar.constrain import constrained_body
from .request._body import read_request
from .request._errors import BadRequest, check_depth, too_deep_error
from .request._render import manifest_token
from .request._tools import ToolSet

SPLICED_MANIFEST = 2048  # a manifest this long is written from its JSON made once (shorter: as it comes)


@dataclass(frozen=True)
class Forwarded:
    """A request as its host gets it; see the module doc."""

    body: bytes | None = None
    request: dict[str, Any] = field(default_factory=dict)
    rules: Mapping[str, Any] = field(default_factory=dict)
    counted: Mapping[str, Any] | None = None  # a `/count_tokens` body as the host gets it


@dataclass(frozen=True)
class Forward:
    """What becomes of a request of ours (`Exchange.forward`): `refusal`, our answer (status,
    headers, body), goes to the client instead and the host never sees the request; else the
    host gets `body` (None: the body as it came)."""

    body: bytes | None = None
    refusal: tuple[int, Headers, bytes] | None = None


def refusal(spec: ApiSpec, error: BadRequest, record: Report) -> tuple[int, Headers, bytes]:
    """The answer to a request refused before the host saw it, in the client API's error shape
    (`spec`'s): 400 for a malformed request, 413 for a bridged one too large to translate,
    marked so that SDKs do not send it again unchanged (`x-should-retry: false`)."""
    status = 413 if error.code == "request_too_large" else 400
    body = spec.error_body(error.message, status, code=error.code, param=error.param)
    record.refused, record.status = error.code or "invalid_request", status
    record.response_bytes = len(body)  # (the shell sends it after the record is made)
    return status, json_head(body, final=True), body


def injects_manifest(config: ExchangeConfig) -> bool:
    """Whether the tool manifest goes into the prompt: as configured, or, left unset, unless the
    tools are forwarded (a backend that takes them writes them into its prompt itself, by its
    chat template)."""
    return config.inject_manifest if config.inject_manifest is not None else not config.forward_tools


def forward_request(
    raw: bytes,
    *,
    api: Api,
    upstream: Api,
    config: ExchangeConfig,
    record: Report,
    count_tokens: bool = False,
    stored: StoredInput | None = None,
) -> Forwarded:
    """The request `raw` as the host gets it; raises `BadRequest` for a malformed one of ours.
    `stored`: what the Responses state says of a body it wrote (`core._stored_input`)."""
    if stored is not None and api == upstream == "responses" and not count_tokens:
        try:
            forwarded = _forward_stored(raw, stored, config, record)
        except BadRequest:
            forwarded = None  # (read whole below: its error, as any request's, names its place)
        if forwarded is not None:
            return forwarded
    bridged = upstream != api
    record.request_bytes = len(raw)
    # A body that is no request is refused the same way on every route, bridged or not, before
    # the host sees it: its record says so under the dialect the route would have used.
    try:
        body = read_request(raw)
    except RecursionError:
        # Too deep for JSON's own decoder: refused on every route, as any body over `max_depth`
        # (the host's decoder may well fail the same way, as a 500).
        record.dialect = config.dialect_for(None)
        raise too_deep_error(config.limits.max_depth) from None
    except (ValueError, UnicodeDecodeError):
        record.dialect = config.dialect_for(None)
        raise BadRequest("The request body is not valid JSON.", None, code="invalid_json") from None
    if not isinstance(body, dict):
        record.dialect = config.dialect_for(None)
        raise BadRequest("The request body must be a JSON object.", None, code="invalid_body")
    check_depth(body, config.limits.max_depth)  # before anything below walks it
    request = body
    model = body.get("model") if isinstance(body.get("model"), str) else None
    dialect = config.dialect_for(model)
    record.dialect, record.model = dialect, model
    record.stream = bool(body.get("stream"))
    if count_tokens:
        return _count_request(body, config, record)
    expanded = False
    if api == "responses" and config.compaction == "emulate":
        compacted = expand_compactions(body)  # (before the fields are checked: it is no item they know)
        expanded, body = compacted is not body, compacted
    body, rules, dropped = for_host(api, upstream, body)
    record.stream = record.stream or bool(body.get("stream"))  # (an AG-UI run asks its host for a stream)
    further = config.request_checks().get(api)  # (AG-UI's, by the protocol's own types)
    if further is not None:
        further(request)
    rewrite = spec_for(upstream).rewrite
    if rewrite is None:  # its client writes its own prompt (legacy completions)
        return Forwarded(None, request, rules)
    result = rewrite(
        body,
        dialect=request_dialect(dialect),
        forward_tools=config.forward_tools,
        inject_manifest=injects_manifest(config),
    )
    record.dropped_tool_types = list(dropped if dropped is not None else result.tools.dropped)
    record.echoed_function_calls = result.calls_flattened
    if config.constrain is not None and upstream == "chat":
        constrained = _constrained(result.body, result.tools, config, model, dialect, record)
        if constrained is not None:
            record.rewritten_request = True
            return Forwarded(json_bytes(constrained), request, rules)
    if not result.changed and not bridged and not expanded:
        return Forwarded(None, request, rules)
    record.rewritten_request = True
    manifest = result.manifest
    if manifest is not None and result.manifest_at is not None and len(manifest) >= SPLICED_MANIFEST:
        # An agent's manifest runs to many KB, the same every turn: its JSON is made once.
        new = json_bytes_with(result.body, result.manifest_at, lambda text: manifest_token(text, manifest))
        return Forwarded(new, request, rules)
    return Forwarded(json_bytes(result.body), request, rules)


def _forward_stored(raw: bytes, stored: StoredInput, config: ExchangeConfig, record: Report) -> Forwarded | None:
    """A native Responses request whose input begins with a stored chain's context, read without
    the context (`core._stored_input`): the same body for the host as reading it whole, or None to
    read it whole (not the body the state wrote, a compaction item to expand, AG-UI's checks)."""
    body = stored.read(raw)
    if body is None or config.request_checks().get("responses") is not None:
        return None
    limit = config.limits.max_depth
    check_depth(body, limit)
    model = body.get("model") if isinstance(body.get("model"), str) else None
    dialect = config.dialect_for(model)
    key = (request_dialect(dialect), config.compaction == "emulate", limit)
    folded = stored.folded.get(key, NOTHING_FOLDED)
    if folded.length > len(stored.items) or stored.unchecked_depth(folded.length, limit):
        return None
    body["input"] = items = [*stored.items, *body["input"]]
    probe = {"input": items[folded.length :]}
    if key[1] and expand_compactions(probe) is not probe:
        return None
    record.request_bytes = len(raw)
    record.dialect, record.model = dialect, model
    record.stream = bool(body.get("stream"))
    _, rules, _ = for_host("responses", "responses", body)
    result = rewrite_responses_request(
        body,
        dialect=key[0],
        forward_tools=config.forward_tools,
        inject_manifest=injects_manifest(config),
        resume=folded,
        keep_at=len(stored.items),
    )
    # (another dialect's flattening, of fewer items, is still where a turn in it goes on from)
    stored.after.update(stored.folded)
    stored.after[key] = result.folded
    record.dropped_tool_types = list(result.tools.dropped)
    record.echoed_function_calls = result.calls_flattened
    if not result.changed:
        return Forwarded(None, body, rules)
    record.rewritten_request = True
    new = result.body
    written: Folded = result.folded
    done = len(written.emitted)
    texts = {"input": f"[{joined_json(written.emitted_json, items_json(new['input'][done:]))}]"}
    manifest = result.manifest
    if manifest is not None and result.manifest_at == ("instructions",) and len(manifest) >= SPLICED_MANIFEST:
        texts["instructions"] = manifest_token(new["instructions"], manifest)
    return Forwarded(json_bytes_from(new, texts)[0], body, rules)


def _constrained(
    body: Any, tools: ToolSet, config: ExchangeConfig, model: str | None, dialect: str, record: Report
) -> dict[str, Any] | None:
    """The host's body with its engine's grammar field (`constrain`), or `None`: none applies."""
    assert config.constrain is not None
    if not isinstance(body, dict):
        return None
    constrained = constrained_body(
        body,
        tools,
        engine=config.constrain,
        dialect=request_dialect(dialect),
        model=model,
        thinking=config.thinking,
        all_strict=config.strict,
    )
    if constrained is not None:
        record.notes.append(f"constrained: {config.constrain}")
    return constrained


def _count_request(body: dict[str, Any], config: ExchangeConfig, record: Report) -> Forwarded:
    """A `/count_tokens` body rewritten as its message would be, so the host counts the
    manifest and the flattened history; kept for the estimate should the host not count."""
    messages = spec_for("messages")  # Anthropic's token counting
    messages.check_request(body)
    assert messages.rewrite is not None
    result = messages.rewrite(
        body,
        dialect=request_dialect(record.dialect),
        forward_tools=config.forward_tools,
        inject_manifest=injects_manifest(config),
    )
    if not result.changed:
        return Forwarded(None, body, counted=result.body)
    record.rewritten_request = True
    return Forwarded(json_bytes(result.body), body, counted=result.body)


__all__ = [
    "SPLICED_MANIFEST",
    "Forward",
    "Forwarded",
    "StoredInput",
    "forward_request",
    "injects_manifest",
    "refusal",
]
