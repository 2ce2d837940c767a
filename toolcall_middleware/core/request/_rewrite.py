"""What the Chat, Responses and Messages rewrites share: the result value, and the history flattener
(and how a Responses input item is read, which the Responses bridge shares).

`Flattener` turns one conversation's tool history into the dialect's text, turn by turn. It
remembers each call's name and the id the dialect writes for it (Kimi's `functions.f:N` counts
calls across the whole conversation; Mistral wants 9 alphanumerics), so a tool result is written
with the same id and name as the call it answers, matched by the client's call id.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._schema import JSON_OBJECT
from ..dialects._rendering import CallToRender, ToolResult
from ._errors import invalid
from ._render import load_arguments, renderer
from ._tools import ToolSet

TEXT_PARTS = ("text", "input_text", "output_text")


@dataclass(frozen=True)
class RewriteResult:
    """A rewritten request body and what the rewrite did.

    `body`: the body for the backend (the very input object when nothing needed rewriting).
    `tools`: the request's tools, normalized (for the response side: schemas, `tool_choice`).
    `manifest`: the tool text injected into the system prompt / `instructions`, if any.
    `calls_flattened` / `results_flattened`: tool calls and tool results written as text.
    `dropped_items`: the types of input items removed (Responses `reasoning` items).
    `manifest_at`: where in `body` the string that holds the manifest is (keys and indexes), so
    that writing the body out can take the manifest's JSON made once (`manifest_token`).
    `folded`: a Responses rewrite's flattening of the input up to the item it was asked to keep
    it at (`responses.Folded`), for a later request whose input begins with the same items.
    """

    body: Any
    tools: ToolSet
    manifest: str | None = None
    calls_flattened: int = 0
    results_flattened: int = 0
    dropped_items: tuple[str, ...] = ()
    changed: bool = False
    manifest_at: tuple[str | int, ...] | None = None
    folded: Any = None

    @property
    def dropped_tool_types(self) -> tuple[str, ...]:
        """The types of the non-function tools removed from what the backend sees."""
        return self.tools.dropped

    @property
    def echoed_calls(self) -> bool:
        """Whether the history held tool calls (echoed `function_call` items, `tool_calls`)."""
        return self.calls_flattened > 0


def content_text(content: Any, where: str) -> str:
    """Message content as text: a string, or the text of its parts (other parts as a `[type]` note)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise invalid(where, "expected a string or an array of content parts")
    out = []
    for i, part in enumerate(content):
        if isinstance(part, str):
            out.append(part)
            continue
        if not isinstance(part, JSON_OBJECT):
            raise invalid(f"{where}[{i}]", "expected a content part object")
        kind = part.get("type")
        if kind in TEXT_PARTS and isinstance(part.get("text"), str):
            out.append(part["text"])
        elif kind == "refusal" and isinstance(part.get("refusal"), str):
            out.append(part["refusal"])
        else:
            # A part text cannot carry (an image, a file): say what was there rather than drop it.
            ref = next((part[k] for k in ("image_url", "file_id", "file_url", "filename") if part.get(k)), None)
            if isinstance(ref, JSON_OBJECT):
                ref = ref.get("url")
            out.append(f"[{kind}{': ' + str(ref) if isinstance(ref, str) and len(ref) < 512 else ''}]")
    return "\n".join(out)


def output_text(output: Any, where: str) -> str:
    """A tool result's output as text (a string, content parts, or any JSON value)."""
    if isinstance(output, (str, list)) or output is None:
        return content_text(output, where)
    return json.dumps(output, ensure_ascii=False)


class Flattener:
    """The tool history of one conversation, written as the dialect's text."""

    def __init__(self, dialect: str) -> None:
        self._renderer = renderer(dialect)
        self._ids: dict[str, str] = {}  # client call id -> the id written in the dialect
        self._names: dict[str, str] = {}
        self._legacy: dict[str, str] = {}  # name -> client id of its latest legacy `function_call`
        self._count = 0
        self.n_calls = 0
        self.n_results = 0

    def copy(self) -> Flattener:
        """A flattener that goes on from where this one is, which this one's later turns leave as it is."""
        out = Flattener.__new__(Flattener)
        out.__dict__.update(self.__dict__)
        out._ids, out._names, out._legacy = dict(self._ids), dict(self._names), dict(self._legacy)
        return out

    def _native(self, call_id: str, name: str) -> str:
        return self._renderer.native_id(call_id, name, self._count)

    def assistant(self, content: str, calls: Sequence[tuple[str | None, str, Any, str]]) -> str:
        """An assistant turn: `calls` are `(client_id, name, arguments, param)`, `client_id` `None`
        for a legacy `function_call`; `param` names the arguments' field for errors."""
        decoded = []
        for client_id, name, arguments, param in calls:
            args = load_arguments(arguments, param)
            if client_id is None:
                client_id = f"function_call_{self._count}"
                self._legacy[name] = client_id
            native = self._native(client_id, name)
            self._ids[client_id] = native
            self._names[client_id] = name
            decoded.append(CallToRender(id=native, name=name, arguments=args))
            self._count += 1
        self.n_calls += len(decoded)
        r = self._renderer
        return r.assistant(content, r.calls(decoded))

    def name_of(self, call_id: str) -> str | None:
        return self._names.get(call_id)

    def note_call(self, call_id: str, name: str) -> None:
        """Remember a call written some other way (a hosted or custom tool call), for its result."""
        self._names[call_id] = name

    def results(self, results: Sequence[tuple[str | None, str | None, str]]) -> str:
        """One turn of results: `(client_id, name, output)`; a legacy result has no id but a name."""
        rendered = []
        for client_id, name, output in results:
            if client_id is None and name is not None:
                client_id = self._legacy.get(name, name)
            client_id = client_id or ""
            rendered.append(
                ToolResult(
                    call_id=self._ids.get(client_id, client_id),
                    output=output,
                    name=name or self._names.get(client_id),
                )
            )
        self.n_results += len(rendered)
        return self._renderer.results(rendered)

    @property
    def prepend_manifest(self) -> bool:
        return self._renderer.prepend

    def rewritten(
        self,
        body: Any,
        tools: ToolSet,
        manifest: str | None,
        dropped_items: Sequence[str] = (),
        manifest_at: tuple[str | int, ...] | None = None,
        folded: Any = None,
    ) -> RewriteResult:
        """The result of a rewrite that went through this flattener: changed, with its counts;
        `manifest_at` where it wrote the manifest (when it did)."""
        return RewriteResult(
            body=body,
            tools=tools,
            manifest=manifest,
            calls_flattened=self.n_calls,
            results_flattened=self.n_results,
            dropped_items=tuple(dropped_items),
            changed=True,
            manifest_at=manifest_at if manifest is not None else None,
            folded=folded,
        )


def without_tool_fields(
    body: Mapping[str, Any], fields: Sequence[str], tools: ToolSet, forward: bool
) -> dict[str, Any]:
    """The body without its tool fields, or with them (`forward`) less the tools it drops.

    A backend that reads `tools` itself still must not see a hosted tool type: servers reject them
    ("'type' of tool must be 'function'", codex#10635), and so a `tool_choice` naming one goes too.
    """
    if not forward:
        return {k: v for k, v in body.items() if k not in fields}
    out = dict(body)
    if tools.dropped and isinstance(body.get("tools"), list):
        kept = [
            t for t in body["tools"] if not (isinstance(t, JSON_OBJECT) and t.get("type", "function") != "function")
        ]
        if kept:
            out["tools"] = kept
        else:
            out.pop("tools")
    if tools.ignored_choice is not None:
        out.pop("tool_choice", None)
    return out


def with_manifest(text: str, manifest: str, prepend: bool) -> str:
    """System text with the manifest after it (or before it, where the template puts it first)."""
    if not text:
        return manifest
    return manifest + "\n\n" + text if prepend else text + "\n\n" + manifest


def item_kind(item: Mapping[str, Any]) -> str:
    """`message`, `function_call`, `reasoning`, … (an item with a role and no type is a message)."""
    kind = item.get("type")
    return kind if isinstance(kind, str) else "message"


def item_note(item: Mapping[str, Any], kind: str) -> str:
    """An item the backend has no shape for (a hosted tool's call) as a text note, so it is not lost."""
    rest = {k: v for k, v in item.items() if k not in ("type", "id", "status")}
    return f"[{kind} {json.dumps(rest, ensure_ascii=False)}]"


__all__ = [
    "Flattener",
    "RewriteResult",
    "content_text",
    "item_kind",
    "item_note",
    "output_text",
    "with_manifest",
    "without_tool_fields",
]
