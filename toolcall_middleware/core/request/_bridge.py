"""`responses_to_chat`: a Responses API request as the Chat Completions request a chat-only host takes.

The bridge translates shapes only; the usual rewrite for the host's API (`rewrite_chat_request`:
manifest, flattened tool history) runs on the result afterwards, exactly as for a chat client.

- `instructions` becomes the first `system` message; `input` as a string one `user` message.
- Input messages keep their role (`developer` stays: the chat rewrite folds it into `system`);
  `input_text` / `output_text` parts become `text` parts, `input_image` an `image_url` part,
  `input_file` a `file` part, a refusal its text.
- `function_call` items become `tool_calls` of one assistant message (`id` <- `call_id`), with the
  assistant message items around them (the preamble of the same response) as its content;
  `function_call_output` items become `role: "tool"` messages. `custom_tool_call` items become
  Chat's `custom` tool calls and their outputs tool messages; calls of hosted tools
  (`local_shell_call`, `web_search_call`, …) and their outputs are kept as text notes, so the
  history is not lost though the host is never offered those tools. `reasoning` items are dropped.
- Function tools take Chat's nested shape; tools of any other type (Codex's `web_search`,
  `local_shell`, `custom`, …) are dropped and listed in `dropped_tools`. `tool_choice` and
  `parallel_tool_calls` follow (a choice of a dropped tool becomes `auto`).
- `max_output_tokens` -> `max_tokens` (what every raw serving stack reads), `temperature`,
  `top_p`, `user`, `stream` (with `stream_options.include_usage`, so the Responses usage is
  filled), `text.format` -> `response_format`. `store`, `include`, `reasoning`, `metadata`,
  `truncation`, `prompt_cache_key`, `service_tier`, … have no Chat meaning for such a host and go.
- `previous_response_id`, `conversation`, `item_reference` items and `background: true` need
  state the bridge does not keep: `BadRequest` naming the field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._schema import JSON_OBJECT
from ._errors import BadRequest, invalid, invalid_body, missing, required_string
from ._rewrite import content_text, item_kind, item_note, output_text
from ._tools import partition_tools

KEPT = ("model", "temperature", "top_p", "user", "seed", "stop")
STATEFUL = ("previous_response_id", "conversation")


@dataclass(frozen=True)
class Bridged:
    """A request translated for another API: `body`, and the tool types it could not carry."""

    body: dict[str, Any]
    dropped_tools: tuple[str, ...] = ()
    dropped_items: tuple[str, ...] = ()


def responses_to_chat(body: Any) -> Bridged:
    """The Chat Completions body for a Responses body (see the module doc)."""
    if not isinstance(body, JSON_OBJECT):
        raise invalid_body()
    for name in STATEFUL:
        if body.get(name) is not None:
            raise BadRequest(
                f"'{name}' is not supported: this endpoint bridges the Responses API to Chat Completions and "
                "keeps no conversation state. Send the whole conversation in 'input'.",
                name,
                code="unsupported_parameter",
            )
    if body.get("background") is True:
        raise BadRequest(
            "'background' responses are not supported by this endpoint.", "background", code="unsupported_parameter"
        )
    out: dict[str, Any] = {k: body[k] for k in KEPT if k in body}
    messages: list[dict[str, Any]] = []
    instructions = body.get("instructions")
    if instructions is not None:
        if not isinstance(instructions, str):
            raise invalid("instructions", "expected a string")
        if instructions:
            messages.append({"role": "system", "content": instructions})
    items = body.get("input")
    dropped_items: list[str] = []
    if isinstance(items, str):
        messages.append({"role": "user", "content": items})
    elif isinstance(items, list):
        messages.extend(_messages(items, dropped_items))
    elif items is not None:
        raise invalid("input", "expected a string or an array of input items")
    out["messages"] = messages
    tools, dropped = partition_tools(body.get("tools"), _chat_tool)
    if tools:
        out["tools"] = tools
    choice = _tool_choice(body.get("tool_choice"), dropped_all=bool(dropped) and not tools)
    if choice is not None and tools:
        out["tool_choice"] = choice
    if isinstance(body.get("parallel_tool_calls"), bool) and tools:
        out["parallel_tool_calls"] = body["parallel_tool_calls"]
    if body.get("max_output_tokens") is not None:
        out["max_tokens"] = body["max_output_tokens"]
    if body.get("stream"):
        out["stream"] = True
        out["stream_options"] = {"include_usage": True}
    response_format = _response_format(body.get("text"))
    if response_format is not None:
        out["response_format"] = response_format
    return Bridged(body=out, dropped_tools=tuple(dropped), dropped_items=tuple(dropped_items))


# -- input items ---------------------------------------------------------------------------


def _messages(items: list[Any], dropped: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    turn: dict[str, Any] | None = None  # the open assistant message that calls join

    def assistant() -> dict[str, Any]:
        nonlocal turn
        if turn is None:
            turn = {"role": "assistant", "content": None}
            out.append(turn)
        return turn

    for i, item in enumerate(items):
        where = f"input[{i}]"
        if not isinstance(item, JSON_OBJECT):
            raise invalid(where, "expected an input item object")
        kind = item_kind(item)
        if kind == "reasoning":
            dropped.append(kind)
            continue
        if kind == "item_reference":
            raise BadRequest(
                f"'{where}' is an item_reference: this endpoint keeps no stored items; send the item itself.",
                where,
                code="unsupported_parameter",
            )
        if kind == "message":
            role = item.get("role")
            if not isinstance(role, str):
                raise missing(f"{where}.role")
            if role == "assistant":
                message = assistant()
                text = content_text(item.get("content"), f"{where}.content")
                message["content"] = _join(message["content"], text)
                continue
            turn = None
            out.append({"role": role, "content": _content(item.get("content"), f"{where}.content")})
            continue
        if kind == "function_call":
            message = assistant()
            arguments = item.get("arguments", "")
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments, ensure_ascii=False)
            call = {
                "id": required_string(item, "call_id", where),
                "type": "function",
                "function": {"name": required_string(item, "name", where), "arguments": arguments},
            }
            message.setdefault("tool_calls", []).append(call)
            continue
        if kind == "custom_tool_call":
            message = assistant()
            custom = {"name": required_string(item, "name", where), "input": item.get("input", "")}
            message.setdefault("tool_calls", []).append(
                {"id": required_string(item, "call_id", where), "type": "custom", "custom": custom}
            )
            continue
        if kind in ("function_call_output", "custom_tool_call_output"):
            turn = None
            content = output_text(item.get("output"), f"{where}.output")
            out.append({"role": "tool", "tool_call_id": required_string(item, "call_id", where), "content": content})
            continue
        if kind.endswith("_call"):
            # A hosted tool's call (`local_shell_call`, `web_search_call`…): the host never had the
            # tool, but what happened stays in the transcript.
            message = assistant()
            message["content"] = _join(message["content"], item_note(item, kind))
            continue
        turn = None
        out.append({"role": "user", "content": item_note(item, kind)})
    return out


def _join(content: str | None, text: str) -> str | None:
    if not text:
        return content
    return text if not content else content + "\n\n" + text


def _content(content: Any, where: str) -> Any:
    """Responses content as Chat content: a string stays; parts become Chat's parts."""
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        raise invalid(where, "expected a string or an array of content parts")
    parts: list[dict[str, Any]] = []
    for j, part in enumerate(content):
        at = f"{where}[{j}]"
        if not isinstance(part, JSON_OBJECT):
            raise invalid(at, "expected a content part object")
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
            parts.append({"type": "text", "text": part["text"]})
        elif kind == "refusal" and isinstance(part.get("refusal"), str):
            parts.append({"type": "text", "text": part["refusal"]})
        elif kind == "input_image" and isinstance(part.get("image_url"), str):
            image: dict[str, Any] = {"url": part["image_url"]}
            if isinstance(part.get("detail"), str) and part["detail"] in ("low", "high", "auto"):
                image["detail"] = part["detail"]
            parts.append({"type": "image_url", "image_url": image})
        elif kind == "input_file" and any(part.get(k) for k in ("file_id", "file_data")):
            parts.append(
                {"type": "file", "file": {k: part[k] for k in ("file_id", "file_data", "filename") if k in part}}
            )
        else:
            parts.append({"type": "text", "text": content_text([part], at)})
    if all(p["type"] == "text" for p in parts):
        return "\n".join(p["text"] for p in parts)  # plain text: what every raw host reads
    return parts


# -- tools ---------------------------------------------------------------------------------


def _chat_tool(tool: Mapping[str, Any], where: str) -> dict[str, Any] | str:
    """A function tool in Chat's nested shape; any other tool as its type, to drop."""
    kind = tool.get("type", "function")
    if kind != "function":
        return str(kind)
    if isinstance(tool.get("function"), JSON_OBJECT):  # already Chat's shape: clients mix them up
        return {"type": "function", "function": dict(tool["function"])}
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise missing(f"{where}.name")
    fn = {k: tool[k] for k in ("name", "description", "parameters", "strict") if tool.get(k) is not None}
    return {"type": "function", "function": fn}


def _tool_choice(choice: Any, *, dropped_all: bool) -> Any:
    if choice is None or isinstance(choice, str):
        return None if dropped_all else choice
    if not isinstance(choice, JSON_OBJECT):
        raise invalid("tool_choice", "expected a string or an object")
    kind = choice.get("type")
    if kind == "function":
        name = choice.get("name")
        if isinstance(choice.get("function"), JSON_OBJECT):
            return dict(choice)
        if not isinstance(name, str) or not name:
            raise missing("tool_choice.name")
        return {"type": "function", "function": {"name": name}}
    if kind == "allowed_tools":
        entries = choice.get("tools")
        if not isinstance(entries, list):
            raise invalid("tool_choice.tools", "expected an array of tools")
        names = [
            e.get("name") for e in entries if isinstance(e, JSON_OBJECT) and e.get("type", "function") == "function"
        ]
        functions = [{"type": "function", "function": {"name": n}} for n in names if isinstance(n, str)]
        mode = choice.get("mode", "auto")
        return {"type": "allowed_tools", "allowed_tools": {"mode": mode, "tools": functions}}
    return None  # a hosted tool's choice: the tool is dropped, so is the choice ("auto")


def _response_format(text: Any) -> dict[str, Any] | None:
    if not isinstance(text, JSON_OBJECT) or not isinstance(text.get("format"), JSON_OBJECT):
        return None
    fmt = text["format"]
    if fmt.get("type") == "json_schema":
        schema = {k: fmt[k] for k in ("name", "description", "schema", "strict") if k in fmt}
        return {"type": "json_schema", "json_schema": schema}
    if fmt.get("type") == "json_object":
        return {"type": "json_object"}
    return None


__all__ = ["Bridged", "responses_to_chat"]
