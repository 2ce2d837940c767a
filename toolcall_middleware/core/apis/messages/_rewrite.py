"""`rewrite_messages_request`: an Anthropic Messages body for a `/v1/messages` host that cannot take `tools`.

```python
result = rewrite_messages_request(body, dialect="hermes")
result.body          # what the host app gets, still an Anthropic Messages body
result.tools         # the normalized tools, tool_choice and parallel rule, for the response side
```

- The tool manifest and calling rules (`render_manifest`) go into `system`: appended to a string
  (prepended where the dialect's template puts the tools first), or as one more `text` block
  when `system` is a list of blocks (their `cache_control` marks stay where the client put them).
- The tools are read as `messages_to_chat` reads them for the policy (`input_schema` as the
  parameters; `tool_choice` `auto` / `any` / `tool` / `none` as `auto` / `required` / a forced
  function / `none`; `disable_parallel_tool_use` as `parallel_tool_calls: false`), so the
  manifest states the same rules the response side enforces. Server tools are dropped.
- `{"role": "system"}` messages (Claude Code sends its environment and agent list that way) fold
  into `system` after its own text: a string while all of it is strings, else text blocks.
- An assistant turn with `tool_use` blocks becomes one assistant message whose content is its text
  followed by the calls in the dialect's raw call text. Its `thinking` goes before them in the
  dialect's reasoning markup (`render_reasoning`) when the turn is part of the tool loop still
  running (after the last user turn that is not only tool results), as the open models'
  templates keep it; earlier turns' thinking, and `redacted_thinking`, are dropped.
- Each run of `tool_result` blocks in a user turn becomes one `text` block of tool results in
  the dialect's tool-response markup, matched to its call by `tool_use_id`, followed by the
  images and documents the results returned; the turn's other blocks stay as they were. A result
  with `is_error: true` is marked `[error]`. A `cache_control` mark on blocks that became one
  text moves to that text.
- `tools`, `tool_choice`, `mcp_servers` and `container` are removed, unless
  `forward_tools=True` (a host that reads them itself): then only the server tools go, and a
  `tool_choice` naming one. Everything else (`thinking`, `metadata`, `stop_sequences`, `top_k`,
  `service_tier`, `output_config`, `context_management`, `cache_control` marks) is the host's
  own API and stays.

A body with none of those fields, no tool history and no system turn comes back unchanged: the
same object. Malformed
input raises `BadRequest` naming the field in Anthropic's path style (`messages.2.content.0.id`);
the middleware answers it with Anthropic's error body (`emitter.error_object`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..._schema import JSON_OBJECT
from ...request._anthropic_content import read_content
from ...request._bridge_messages import is_client_tool, messages_to_chat
from ...request._errors import invalid, invalid_body, required_array, required_string
from ...request._fields import check_anthropic_messages
from ...request._render import render_manifest, render_reasoning, renderer
from ...request._rewrite import Flattener, RewriteResult, content_text, with_manifest
from ...request._tools import normalize_tools

TOOL_FIELDS = ("tools", "tool_choice")
SERVER_TOOL_FIELDS = ("mcp_servers", "container")  # the MCP toolsets and code container Anthropic runs
_HISTORY = ("tool_use", "tool_result")
_THINKING = ("thinking", "redacted_thinking")


def rewrite_messages_request(
    body: Any, *, dialect: str, forward_tools: bool = False, inject_manifest: bool = True
) -> RewriteResult:
    """The body with its tools and tool history written as the dialect's text (see the module doc)."""
    if not isinstance(body, JSON_OBJECT):
        raise invalid_body()
    renderer(dialect)  # an unknown dialect is a configuration error, raised before any work
    messages = _messages(body)
    system = body.get("system")
    if system is not None and not isinstance(system, (str, list)):
        raise invalid("system", "expected a string or an array of text blocks")
    as_chat = messages_to_chat(body)
    tools = replace(normalize_tools(as_chat.body), dropped=as_chat.dropped_tools)
    history = any(_blocks_of(m, _HISTORY) for m in messages)
    inline = [m for m in messages if m["role"] == "system"]
    if not any(k in body for k in (*TOOL_FIELDS, *SERVER_TOOL_FIELDS)) and not history and not inline:
        return RewriteResult(body=body, tools=tools)

    flat = Flattener(dialect)
    dropped: list[str] = []
    out: list[Any] = []
    loop = _tool_loop_start(messages)
    for i, message in enumerate(messages):
        if message["role"] == "system":
            continue  # folded into `system` below
        if message["role"] == "assistant" and _blocks_of(message, ("tool_use",)):
            replay = dialect if i > loop else None
            out.append(_assistant(message, i, flat, dropped, replay))
        elif message["role"] == "user" and _blocks_of(message, ("tool_result",)):
            out.append(_user(message, i, flat))
        else:
            out.append(message)

    new_body = _tool_fields(body, forward_tools)
    new_body["messages"] = out
    system = _fold_system(system, [m["content"] for m in inline])
    if system is not None:
        new_body["system"] = system
    manifest = render_manifest(dialect, tools) if inject_manifest else None
    at: tuple[str | int, ...] = ("system",)
    if manifest is not None:
        new_body["system"] = _with_manifest(system, manifest, flat.prepend_manifest)
        if isinstance(system, list):  # (a block of its own)
            at = ("system", 0 if flat.prepend_manifest else len(system), "text")
    return flat.rewritten(new_body, tools, manifest, dropped, manifest_at=at)


def _messages(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    messages = required_array(body, "messages", "expected an array of messages")
    check_anthropic_messages(messages)
    return messages


def _blocks_of(message: Mapping[str, Any], kinds: tuple[str, ...]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(block.get("type") in kinds for block in content)


def _tool_loop_start(messages: list[Mapping[str, Any]]) -> int:
    """The index of the last user turn that is not only tool results: the turns after it are the
    tool loop still running, whose reasoning the model's template keeps (Qwen3, GLM, Kimi and
    DeepSeek drop the reasoning of earlier turns)."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str) or any(block.get("type") != "tool_result" for block in content):
            return i
    return -1


def _fold_system(system: Any, inline: list[Any]) -> Any:
    """`system` with the text of the `role: "system"` messages after it: a string while every part
    is one, else blocks (so their `cache_control` marks stay where the client put them)."""
    if not inline:
        return system
    parts = ([] if system is None else [system]) + inline
    if all(isinstance(p, str) for p in parts):
        return "\n\n".join(p for p in parts if p)
    blocks: list[Any] = []
    for part in parts:
        blocks.extend([{"type": "text", "text": part}] if isinstance(part, str) else part)
    return blocks


def _marked(text: str, content: list[Mapping[str, Any]]) -> str | list[dict[str, Any]]:
    """Text that replaces `content`: a string, or one text block keeping the last `cache_control`
    mark among the blocks it replaces (a cache breakpoint stays at the end of the same turn)."""
    marks = [block["cache_control"] for block in content if "cache_control" in block]
    return text if not marks else [{"type": "text", "text": text, "cache_control": marks[-1]}]


def _assistant(
    message: Mapping[str, Any], i: int, flat: Flattener, dropped: list[str], replay: str | None
) -> dict[str, Any]:
    """One assistant turn: its text (and notes of server-tool blocks), then its calls; its reasoning
    first, in the dialect's form, when `replay` (the dialect) says the turn is in the running loop."""
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[tuple[str | None, str, Any, str]] = []
    for j, block in enumerate(message["content"]):
        where = f"messages.{i}.content.{j}"
        kind = block.get("type")
        if kind == "text":
            texts.append(content_text([block], where))
        elif kind == "tool_use":
            call_id, name = required_string(block, "id", where), required_string(block, "name", where)
            arguments = block.get("input", {})
            if not isinstance(arguments, JSON_OBJECT):
                raise invalid(f"{where}.input", "expected an object")
            calls.append((call_id, name, arguments, f"{where}.input"))
        elif kind == "thinking" and replay is not None and isinstance(block.get("thinking"), str):
            reasoning.append(block["thinking"])
        elif kind in _THINKING:
            dropped.append(str(kind))  # an earlier turn's, or encrypted: the template would drop it
        else:
            # A server tool's call or result: not offered to the backend, kept as a note.
            rest = {k: v for k, v in block.items() if k not in ("type", "cache_control")}
            texts.append(f"[{kind} {json.dumps(rest, ensure_ascii=False)}]")
    text = flat.assistant("\n".join(t for t in texts if t), calls)
    if reasoning and replay is not None:
        text = render_reasoning(replay, "\n".join(reasoning)) + text
    out = {k: v for k, v in message.items() if k != "content"}
    out["content"] = _marked(text, message["content"])
    return out


def _user(message: Mapping[str, Any], i: int, flat: Flattener) -> dict[str, Any]:
    """A user turn: each run of `tool_result` blocks as one text block of results, in place, then
    the images and documents those results returned."""
    blocks: list[Any] = []
    run: list[tuple[str | None, str | None, str]] = []
    run_blocks: list[Mapping[str, Any]] = []
    media: list[Any] = []

    def flush() -> None:
        if run:
            marked = _marked(flat.results(run), run_blocks)
            blocks.extend([{"type": "text", "text": marked}] if isinstance(marked, str) else marked)
            blocks.extend(media)
            run.clear()
            run_blocks.clear()
            media.clear()

    for j, block in enumerate(message["content"]):
        where = f"messages.{i}.content.{j}"
        if block.get("type") != "tool_result":
            flush()
            blocks.append(block)
            continue
        call_id = required_string(block, "tool_use_id", where)
        output, returned = read_content(block.get("content"), f"{where}.content")
        if block.get("is_error") is True:
            output = f"[error] {output}"
        run.append((call_id, flat.name_of(call_id), output))
        run_blocks.append(block)
        media.extend(returned)
    flush()
    out = {k: v for k, v in message.items() if k != "content"}
    out["content"] = blocks
    return out


def _tool_fields(body: Mapping[str, Any], forward: bool) -> dict[str, Any]:
    """The body without `tools` / `tool_choice`, or (`forward`) with them less the server tools."""
    if not forward:
        return {k: v for k, v in body.items() if k not in TOOL_FIELDS and k not in SERVER_TOOL_FIELDS}
    out = dict(body)
    raw = body.get("tools")
    if isinstance(raw, list):
        kept = [t for t in raw if is_client_tool(t)]
        if kept:
            out["tools"] = kept
        else:
            out.pop("tools")
        names = {t.get("name") for t in kept}
        choice = body.get("tool_choice")
        if isinstance(choice, JSON_OBJECT) and choice.get("type") == "tool" and choice.get("name") not in names:
            out.pop("tool_choice", None)  # it named a server tool, which went with it
    return out


def _with_manifest(system: Any, manifest: str, prepend: bool) -> Any:
    if isinstance(system, list):
        block = {"type": "text", "text": manifest}
        return [block, *system] if prepend else [*system, block]
    return with_manifest(system or "", manifest, prepend)


__all__ = ["TOOL_FIELDS", "rewrite_messages_request"]
