"""`rewrite_chat_request`: a Chat Completions body for a backend that cannot take `tools`.

```python
result = rewrite_chat_request(body, dialect="hermes")
result.body          # what the host app gets
result.tools         # the normalized tools, tool_choice and parallel_tool_calls, for the response side
```

- The tool manifest and calling rules (`render_manifest`) go into the first system message; one is
  created when there is none, and the leading `system`/`developer` messages fold into it
  (`developer` becomes `system` everywhere: many templates know no `developer` role).
- An assistant message with `tool_calls` (or a legacy `function_call`) becomes one assistant
  message whose content is its text followed by the calls in the dialect's raw call text.
- Consecutive `role: "tool"` (and legacy `role: "function"`) messages become one user message
  of tool results, written the way the dialect's template writes them (`<tool_response>…`).
- `tools`, `tool_choice`, `parallel_tool_calls`, `functions` and `function_call` are removed,
  unless `forward_tools=True` (a backend that reads them itself, e.g. for constrained decoding):
  then only the non-function tools are removed. `inject_manifest=False` leaves the system prompt
  alone (the middleware passes `inject_manifest=not forward_tools` unless told otherwise).

A body with none of those fields and no tool history comes back unchanged: the same object.
Malformed input raises `BadRequest` naming the field (`messages[3].tool_calls[0].function.name`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._schema import JSON_OBJECT
from ...request._errors import invalid, invalid_body, missing, required_array, required_string
from ...request._render import render_manifest, renderer
from ...request._rewrite import Flattener, RewriteResult, content_text, with_manifest, without_tool_fields
from ...request._tools import normalize_tools
from ._checks import check_chat_messages

TOOL_FIELDS = ("tools", "tool_choice", "parallel_tool_calls", "functions", "function_call")


def _has_tool_history(message: Mapping[str, Any]) -> bool:
    role = message.get("role")
    return role in ("tool", "function") or (
        role == "assistant" and bool(message.get("tool_calls") or message.get("function_call"))
    )


def _has_tool_fields(body: Mapping[str, Any]) -> bool:
    for key in TOOL_FIELDS:  # (loops, not `any(...)`: no generator per request)
        if key in body:
            return True
    return False


def _any_tool_history(messages: list[Any]) -> bool:
    for message in messages:
        if _has_tool_history(message):
            return True
    return False


def rewrite_chat_request(
    body: Any, *, dialect: str, forward_tools: bool = False, inject_manifest: bool = True
) -> RewriteResult:
    """The body with its tools and tool history written as the dialect's text (see the module doc)."""
    if not isinstance(body, JSON_OBJECT):
        raise invalid_body()
    renderer(dialect)  # an unknown dialect is a configuration error, raised before any work
    messages = required_array(body, "messages", "expected an array of messages")
    check_chat_messages(messages)
    tools = normalize_tools(body)
    if not _has_tool_fields(body) and not _any_tool_history(messages):
        return RewriteResult(body=body, tools=tools)

    flat = Flattener(dialect)
    out: list[dict[str, Any]] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        role = message["role"]
        if role in ("tool", "function"):
            run = []
            while i < len(messages) and messages[i]["role"] in ("tool", "function"):
                run.append(_result(messages[i], i))
                i += 1
            out.append({"role": "user", "content": flat.results(run)})
            continue
        if role == "assistant" and (message.get("tool_calls") or message.get("function_call")):
            out.append(_assistant(message, i, flat))
        elif role == "developer":
            out.append({**message, "role": "system"})
        elif "tool_calls" in message or "function_call" in message:
            # An empty `tool_calls: []` (which OpenAI itself rejects) goes with the tool fields.
            out.append({k: v for k, v in message.items() if v or k not in ("tool_calls", "function_call")})
        else:
            out.append(dict(message))
        i += 1

    manifest = render_manifest(dialect, tools) if inject_manifest else None
    out = _fold_system(out, manifest, flat.prepend_manifest)
    new_body = without_tool_fields(body, TOOL_FIELDS, tools, forward_tools)
    new_body["messages"] = out
    return flat.rewritten(new_body, tools, manifest, manifest_at=("messages", 0, "content"))


def _assistant(message: Mapping[str, Any], i: int, flat: Flattener) -> dict[str, Any]:
    where = f"messages[{i}]"
    content = content_text(message.get("content"), f"{where}.content")
    calls: list[tuple[str | None, str, Any, str]] = []
    notes: list[str] = []
    tool_calls = message.get("tool_calls")
    if tool_calls:
        if not isinstance(tool_calls, list):
            raise invalid(f"{where}.tool_calls", "expected an array of tool calls")
        for j, call in enumerate(tool_calls):
            at = f"{where}.tool_calls[{j}]"
            if not isinstance(call, JSON_OBJECT):
                raise invalid(at, "expected a tool call object")
            call_id = call.get("id")
            if not isinstance(call_id, str) or not call_id:
                raise missing(f"{at}.id")
            kind = call.get("type", "function")
            if kind == "custom" and isinstance(call.get("custom"), JSON_OBJECT):
                # A custom (free-form) tool is not offered to the backend; its call stays as a note.
                custom = call["custom"]
                flat.note_call(call_id, str(custom.get("name")))
                name, data = custom.get("name"), custom.get("input")
                notes.append(f"[custom_tool_call call_id={call_id} name={name} input={data}]")
                continue
            if kind != "function":
                raise invalid(f"{at}.type", "expected 'function'")
            fn = call.get("function")
            if not isinstance(fn, JSON_OBJECT):
                raise missing(f"{at}.function")
            name = required_string(fn, "name", f"{at}.function")
            calls.append((call_id, name, fn.get("arguments", ""), f"{at}.function.arguments"))
    legacy = message.get("function_call")
    if legacy and not tool_calls:
        if not isinstance(legacy, JSON_OBJECT):
            raise invalid(f"{where}.function_call", "expected an object")
        calls.append(
            (
                None,
                required_string(legacy, "name", f"{where}.function_call"),
                legacy.get("arguments", ""),
                f"{where}.function_call.arguments",
            )
        )
    text = "\n".join(t for t in (content, *notes) if t)
    out = {k: v for k, v in message.items() if k not in ("tool_calls", "function_call", "content")}
    out["content"] = flat.assistant(text, calls)
    return out


def _result(message: Mapping[str, Any], i: int) -> tuple[str | None, str | None, str]:
    where = f"messages[{i}]"
    output = content_text(message.get("content"), f"{where}.content")
    if message["role"] == "function":  # legacy: matched by name
        return None, required_string(message, "name", where), output
    call_id = message.get("tool_call_id")
    if not isinstance(call_id, str) or not call_id:
        raise missing(f"{where}.tool_call_id")
    name = message.get("name")
    return call_id, name if isinstance(name, str) else None, output


def _fold_system(messages: list[dict[str, Any]], manifest: str | None, prepend: bool) -> list[dict[str, Any]]:
    """One leading system message holding the leading system/developer texts and the manifest."""
    lead = 0
    while lead < len(messages) and messages[lead]["role"] == "system":
        lead += 1
    if lead <= 1 and manifest is None:
        return messages
    texts = [content_text(m.get("content"), f"messages[{k}].content") for k, m in enumerate(messages[:lead])]
    text = "\n\n".join(filter(None, texts))
    if manifest is not None:
        text = with_manifest(text, manifest, prepend)
    first = dict(messages[0]) if lead else {}
    first.update(role="system", content=text)
    return [first, *messages[lead:]]


__all__ = ["TOOL_FIELDS", "rewrite_chat_request"]
