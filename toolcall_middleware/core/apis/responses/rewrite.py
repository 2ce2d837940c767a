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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...request.errors import invalid, invalid_body, required_string
from ...request.render import render_manifest, renderer
from ...request.rewrite import (
    Flattener,
    RewriteResult,
    content_text,
    item_kind,
    item_note,
    output_text,
    with_manifest,
    without_tool_fields,
)
from ...request.tools import normalize_tools
from ...schema import JSON_OBJECT
from .checks import check_input_items

TOOL_FIELDS = ("tools", "tool_choice", "parallel_tool_calls")


def _is_call(kind: str) -> bool:
    return kind.endswith("_call")


def _is_output(kind: str) -> bool:
    return kind.endswith("_call_output")


def _is_history(item: Mapping[str, Any]) -> bool:
    kind = item_kind(item)  # (asked of every item of a long input: its kind read once)
    return _is_call(kind) or _is_output(kind)


def rewrite_responses_request(
    body: Any, *, dialect: str, forward_tools: bool = False, inject_manifest: bool = True
) -> RewriteResult:
    """The body with its tools and tool history written as the dialect's text (see the module doc)."""
    if not isinstance(body, JSON_OBJECT):
        raise invalid_body()
    renderer(dialect)
    items = body.get("input")
    if items is not None and not isinstance(items, (str, list)):
        raise invalid("input", "expected a string or an array of input items")
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise invalid("instructions", "expected a string")
    if isinstance(items, list):
        check_input_items(items)
    tools = normalize_tools(body)
    history = isinstance(items, list) and any(_is_history(item) for item in items)
    if not any(k in body for k in TOOL_FIELDS) and not history:
        return RewriteResult(body=body, tools=tools)

    flat = Flattener(dialect)
    dropped: list[str] = []
    new_body = without_tool_fields(body, TOOL_FIELDS, tools, forward_tools)
    if isinstance(items, list):
        new_body["input"] = _flatten(items, flat, dropped)
    manifest = render_manifest(dialect, tools) if inject_manifest else None
    if manifest is not None:
        new_body["instructions"] = with_manifest(instructions or "", manifest, flat.prepend_manifest)
    return flat.rewritten(new_body, tools, manifest, dropped, manifest_at=("instructions",))


def _flatten(items: list[Any], flat: Flattener, dropped: list[str]) -> list[Any]:
    out: list[Any] = []
    turn: list[tuple[int, Mapping[str, Any]]] = []  # assistant-side items of one turn
    results: list[tuple[str | None, str | None, str]] = []

    def flush() -> None:
        if turn:
            out.extend(_assistant_turn(turn, flat))
            turn.clear()
        if results:
            out.append({"type": "message", "role": "user", "content": flat.results(results)})
            results.clear()

    for i, item in enumerate(items):
        kind = item_kind(item)
        if kind == "reasoning":
            dropped.append(kind)  # the backend cannot use it, and it never carries a call
            continue
        if _is_output(kind):
            if turn:
                flush()
            results.append(_result(item, i, kind, flat))
            continue
        if _is_call(kind) or (kind == "message" and item.get("role") == "assistant"):
            if results:
                flush()
            turn.append((i, item))
            continue
        flush()
        if kind == "message" and item.get("role") == "developer":
            out.append({**item, "role": "system"})
        else:
            out.append(item)
    flush()
    return out


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


__all__ = ["TOOL_FIELDS", "rewrite_responses_request"]
