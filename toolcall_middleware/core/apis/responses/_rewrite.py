"""`rewrite_responses_request`: a Responses API body for a backend that cannot take `tools`.

What Codex and the Agents SDK send (`reference/wire.md` §4.2), made plain for a raw-text model:

- The tool manifest and calling rules go into `instructions`.
- Echoed `function_call` items are accepted (never rejected, with or without an item `id`) and
  become assistant text in the dialect's raw call syntax; consecutive calls, and the assistant
  `message` items around them (the `output_text` preamble of the same response), merge into one
  assistant turn. `reasoning` items are dropped.
- `function_call_output` items become one user message of tool results, each matched to its call
  by `call_id` (not the item `id`: sglang#13056), in the dialect's tool-response markup.
- Calls of hosted or custom tools (`custom_tool_call`, `local_shell_call`, …) and their outputs are
  kept as text notes: those tools are not offered to the backend, but what happened is not lost.
- `developer` input messages become `system`; `input` as a plain string is kept as it is.
- `tools`, `tool_choice` and `parallel_tool_calls` are removed unless `forward_tools=True`; then
  only the hosted tools are removed (and a `tool_choice` naming one).

A body with none of those fields and no tool history comes back unchanged: the same object.

The input is flattened item by item (`_Fold`), so a request whose input begins with items an
earlier request flattened goes on from where that one stood (`Folded`, kept at `keep_at`): a
stored chain's context is read once, not on every turn (`core._stored_input`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..._schema import JSON_OBJECT
from ...framing._utf8 import items_json, joined_json
from ...request._errors import invalid, invalid_body, required_string
from ...request._render import render_manifest, renderer
from ...request._rewrite import (
    Flattener,
    RewriteResult,
    content_text,
    item_kind,
    item_note,
    output_text,
    with_manifest,
    without_tool_fields,
)
from ...request._tools import normalize_tools
from ._checks import check_input_items

TOOL_FIELDS = ("tools", "tool_choice", "parallel_tool_calls")


def _is_call(kind: str) -> bool:
    return kind.endswith("_call")


def _is_output(kind: str) -> bool:
    return kind.endswith("_call_output")


def _is_history(item: Mapping[str, Any]) -> bool:
    kind = item_kind(item)  # (asked of every item of a long input: its kind read once)
    return _is_call(kind) or _is_output(kind)


@dataclass(frozen=True)
class Folded:
    """The flattening of a Responses input's first `length` items, which a later request whose
    input begins with the same items goes on from (a stored chain's context: `core._stored_input`):
    the items written so far (`emitted`, and their JSON text, `items_json`), the assistant turn
    and the tool results not written yet, the flattener's calls, the items dropped, and whether
    any item so far was tool history. Those items were checked when it was made."""

    length: int = 0
    emitted: tuple[Any, ...] = ()
    emitted_json: str = ""
    turn: tuple[tuple[int, Mapping[str, Any]], ...] = ()
    results: tuple[tuple[str | None, str | None, str], ...] = ()
    flat: Flattener | None = None
    dropped: tuple[str, ...] = ()
    history: bool = False


NOTHING_FOLDED = Folded()


def rewrite_responses_request(
    body: Any,
    *,
    dialect: str,
    forward_tools: bool = False,
    inject_manifest: bool = True,
    resume: Folded = NOTHING_FOLDED,
    keep_at: int | None = None,
) -> RewriteResult:
    """The body with its tools and tool history written as the dialect's text (see the module doc).

    `resume`: the flattening of the input's first items, made by an earlier request whose input
    began with them (they are not checked or read again); `keep_at`: the item at which to keep the
    flattening for a later request (`RewriteResult.folded`)."""
    if not isinstance(body, JSON_OBJECT):
        raise invalid_body()
    renderer(dialect)
    items = body.get("input")
    if items is not None and not isinstance(items, (str, list)):
        raise invalid("input", "expected a string or an array of input items")
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise invalid("instructions", "expected a string")
    listed: list[Any] = items if isinstance(items, list) else []
    fold: _Fold | None = None
    kept: Folded | None = None
    if isinstance(items, list):
        check_input_items(listed, resume.length)
        fold = _Fold(dialect, resume)
        if keep_at is not None:
            fold.feed(listed, keep_at)
            kept = fold.folded()
    tools = normalize_tools(body)
    history = fold is not None and (fold.history or any(_is_history(item) for item in listed[fold.length :]))
    if not any(k in body for k in TOOL_FIELDS) and not history:
        return RewriteResult(body=body, tools=tools, folded=kept)

    new_body = without_tool_fields(body, TOOL_FIELDS, tools, forward_tools)
    if fold is None:
        flat, dropped = Flattener(dialect), []
    else:
        fold.feed(listed, len(listed))
        new_body["input"] = fold.finish()
        flat, dropped = fold.flat, fold.dropped
    manifest = render_manifest(dialect, tools) if inject_manifest else None
    if manifest is not None:
        new_body["instructions"] = with_manifest(instructions or "", manifest, flat.prepend_manifest)
    return flat.rewritten(new_body, tools, manifest, dropped, manifest_at=("instructions",), folded=kept)


class _Fold:
    """The input's items flattened one by one, from a `Folded` on: assistant-side items gather
    into one turn, tool results into one user message, each written when the other kind (or
    anything else) comes."""

    def __init__(self, dialect: str, start: Folded) -> None:
        self.start = start
        self.length = start.length  # items read
        self.history = start.history
        self.flat = start.flat.copy() if start.flat is not None else Flattener(dialect)
        self.out = list(start.emitted)
        self.turn = list(start.turn)  # assistant-side items of one turn
        self.results = list(start.results)
        self.dropped = list(start.dropped)

    def feed(self, items: list[Any], end: int) -> None:
        """Read the items up to `end`."""
        out, turn, results, flat = self.out, self.turn, self.results, self.flat
        for i in range(self.length, end):
            item = items[i]
            kind = item_kind(item)
            if kind == "reasoning":
                self.dropped.append(kind)  # the backend cannot use it, and it never carries a call
                continue
            if _is_output(kind):
                self.history = True
                if turn:
                    self.flush()
                results.append(_result(item, i, kind, flat))
                continue
            if _is_call(kind) or (kind == "message" and item.get("role") == "assistant"):
                self.history = self.history or _is_call(kind)
                if results:
                    self.flush()
                turn.append((i, item))
                continue
            self.flush()
            if kind == "message" and item.get("role") == "developer":
                out.append({**item, "role": "system"})
            else:
                out.append(item)
        self.length = max(self.length, end)

    def flush(self) -> None:
        if self.turn:
            self.out.extend(_assistant_turn(self.turn, self.flat))
            self.turn.clear()
        if self.results:
            self.out.append({"type": "message", "role": "user", "content": self.flat.results(self.results)})
            self.results.clear()

    def folded(self) -> Folded:
        """Where the flattening is, as a later request goes on from it."""
        start = self.start
        written = self.out[len(start.emitted) :]
        text = joined_json(start.emitted_json, items_json(written)) if written else start.emitted_json
        return Folded(
            self.length,
            tuple(self.out),
            text,
            tuple(self.turn),
            tuple(self.results),
            self.flat.copy(),
            tuple(self.dropped),
            self.history,
        )

    def finish(self) -> list[Any]:
        """The input flattened: what is still gathering written out."""
        self.flush()
        return self.out


def _assistant_turn(turn: list[tuple[int, Mapping[str, Any]]], flat: Flattener) -> list[Any]:
    """One assistant turn: its messages' text, notes of hosted calls, then its function calls."""
    if not any(_is_call(item_kind(item)) for _, item in turn):
        return [item for _, item in turn]  # plain assistant messages stay as they were
    texts: list[str] = []
    calls: list[tuple[str | None, str, Any, str]] = []
    for i, item in turn:
        kind = item_kind(item)
        where = f"input[{i}]"
        if kind == "message":
            texts.append(content_text(item.get("content"), f"{where}.content"))
        elif kind == "function_call":
            call_id, arguments = required_string(item, "call_id", where), item.get("arguments", "")
            calls.append((call_id, required_string(item, "name", where), arguments, f"{where}.arguments"))
        else:
            ref = item.get("call_id") or item.get("id")
            name = item.get("name")
            if isinstance(ref, str):
                flat.note_call(ref, name if isinstance(name, str) else kind)
            texts.append(item_note(item, kind))
    content = "\n\n".join(t for t in texts if t)
    return [{"type": "message", "role": "assistant", "content": flat.assistant(content, calls)}]


def _result(item: Mapping[str, Any], i: int, kind: str, flat: Flattener) -> tuple[str | None, str | None, str]:
    where = f"input[{i}]"
    call_id: Any = required_string(item, "call_id", where) if kind == "function_call_output" else item.get("call_id")
    if not isinstance(call_id, str):
        call_id = item.get("id") if isinstance(item.get("id"), str) else None
    output = output_text(item.get("output"), f"{where}.output")
    if kind != "function_call_output":
        output = f"[{kind}] {output}"
    return call_id, flat.name_of(call_id) if call_id else None, output


__all__ = ["NOTHING_FOLDED", "TOOL_FIELDS", "Folded", "rewrite_responses_request"]
