"""Anthropic Messages <-> Chat Completions requests, for the bridges to and from `/v1/messages`.

`messages_to_chat(body)`: an Anthropic client's request for a host that serves Chat Completions
(`bridge="messages-to-chat"`), and the OpenAI-shaped view of its tools that the response side's
policy reads.

- `system` (a string or text blocks) and the text of `{"role": "system"}` messages, in order,
  become the one leading `system` message (chat templates such as Qwen3's refuse a system
  message anywhere else). `cache_control` marks have no Chat counterpart and go.
- `text` blocks become text; `image` blocks `image_url` parts and base64 `document` blocks
  `file` parts; text documents, `search_result` and `tool_reference` blocks their text
  (`anthropic_content`).
- `tool_use` blocks become the assistant's `tool_calls` (`input` as the JSON `arguments`);
  `tool_result` blocks `role: "tool"` messages (placed before the rest of the user turn, as Chat
  wants them right after the calls), their text only, with the images and documents they
  returned in a user message right after them; `is_error` marks the result `[error]`.
- `thinking` blocks become the assistant message's `reasoning_content` (the field vLLM and SGLang
  give reasoning in, and their templates read back); `redacted_thinking` is dropped.
- `tools` (`input_schema`) become function tools; `tool_choice` `auto` / `any` / `tool` / `none`
  becomes `auto` / `required` / a forced function / `none`, and `disable_parallel_tool_use`
  `parallel_tool_calls: false`. Server tools (`web_search_20250305`, `bash_…`, …) and
  `mcp_servers` are dropped and listed.
- `thinking` (`enabled`, `adaptive`, `disabled`) becomes `chat_template_kwargs` `enable_thinking`
  and `thinking` (`budget_tokens` has no counterpart); `output_config.effort` becomes
  `reasoning_effort`, `output_config.format` `response_format`.
- `max_tokens`, `stop_sequences` (as `stop`), `temperature`, `top_p`, `top_k`, `stream`,
  `metadata.user_id` (as `user`) follow. `service_tier` (its values are not OpenAI's),
  `container`, `context_management` and the rest of `metadata` have no Chat meaning and go.

`chat_to_messages(body)`: an OpenAI client's Chat request for a host that serves Anthropic
Messages (`chat-to-messages`; `responses-to-messages` goes through `responses_to_chat` first).
The inverse mapping (`reasoning_content` as a `thinking` block, `user` as `metadata.user_id`,
the template's thinking switch or `reasoning_effort` as `thinking` with a budget by effort);
`max_tokens`, which Anthropic requires, defaults to `DEFAULT_MAX_TOKENS`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .._schema import JSON_OBJECT
from ._anthropic_content import block_text, chat_part, read_content
from ._bridge import Bridged
from ._errors import invalid, invalid_body, missing, required_array
from ._fields import check_anthropic_messages
from ._rewrite import content_text
from ._tools import partition_tools

DEFAULT_MAX_TOKENS = 4096
SAMPLING = ("temperature", "top_p", "top_k", "model")


# -- Anthropic -> Chat ---------------------------------------------------------------------


def messages_to_chat(body: Any) -> Bridged:
    """The Chat Completions body for an Anthropic Messages body (see the module doc)."""
    if not isinstance(body, JSON_OBJECT):
        raise invalid_body()
    out: dict[str, Any] = {k: body[k] for k in SAMPLING if k in body}
    raw = required_array(body, "messages", "expected an array of messages")
    check_anthropic_messages(raw)  # (the shapes below are then sure)
    system = [_system_text(body.get("system"), "system")]
    messages: list[dict[str, Any]] = []
    dropped_items: list[str] = []
    for i, message in enumerate(raw):
        if isinstance(message, JSON_OBJECT) and message.get("role") == "system":
            system.append(_system_text(message.get("content"), f"messages.{i}.content"))
        else:
            messages.extend(_chat_messages(message, f"messages.{i}", dropped_items))
    text = "\n\n".join(filter(None, system))
    out["messages"] = [{"role": "system", "content": text}, *messages] if text else messages
    tools, dropped = partition_tools(body.get("tools"), _chat_tool, path="tools.{}")
    if body.get("mcp_servers"):
        dropped.append("mcp_servers")  # MCP toolsets Anthropic itself connects to
    if tools:
        out["tools"] = tools
        choice = body.get("tool_choice")
        if choice is not None:
            out.update(_chat_choice(choice))
    if body.get("max_tokens") is not None:
        out["max_tokens"] = body["max_tokens"]
    if body.get("stop_sequences"):
        out["stop"] = body["stop_sequences"]
    if body.get("stream"):
        out["stream"] = True
        out["stream_options"] = {"include_usage": True}
    metadata = body.get("metadata")
    if isinstance(metadata, JSON_OBJECT) and isinstance(metadata.get("user_id"), str):
        out["user"] = metadata["user_id"]
    out.update(_thinking(body.get("thinking")))
    out.update(_output_config(body.get("output_config")))
    return Bridged(body=out, dropped_tools=tuple(dropped), dropped_items=tuple(dropped_items))


def _system_text(value: Any, where: str) -> str:
    """System text: a string, or its blocks' text (media, which a system prompt cannot hold, noted)."""
    text, media = read_content(value, where)
    notes = [f"[{block.get('type')}]" for block in media]
    return "\n".join(filter(None, (text, *notes)))


def _thinking(thinking: Any) -> dict[str, Any]:
    """Anthropic's `thinking` as the chat template switch open-model servers read (vLLM, SGLang and
    llama.cpp pass `chat_template_kwargs` to the template: Qwen3 and GLM read `enable_thinking`,
    DeepSeek V3.1 `thinking`). `budget_tokens` has no counterpart there and is not carried."""
    if not isinstance(thinking, JSON_OBJECT):
        return {}
    kind = thinking.get("type")
    if kind not in ("enabled", "adaptive", "disabled"):
        raise invalid("thinking.type", "expected 'enabled', 'adaptive' or 'disabled'")
    on = kind != "disabled"
    return {"chat_template_kwargs": {"enable_thinking": on, "thinking": on}}


def _output_config(config: Any) -> dict[str, Any]:
    """`output_config.effort` as `reasoning_effort`; `output_config.format` (a JSON schema) as
    `response_format`."""
    if not isinstance(config, JSON_OBJECT):
        return {}
    out: dict[str, Any] = {}
    if config.get("effort") in ("low", "medium", "high"):
        out["reasoning_effort"] = config["effort"]
    fmt = config.get("format")
    if isinstance(fmt, JSON_OBJECT) and fmt.get("type") == "json_schema" and isinstance(fmt.get("schema"), JSON_OBJECT):
        out["response_format"] = {"type": "json_schema", "json_schema": {"name": "output", "schema": fmt["schema"]}}
    return out


def _chat_messages(message: Mapping[str, Any], where: str, dropped: list[str]) -> list[dict[str, Any]]:
    """One user or assistant message (checked by `check_anthropic_messages`) as Chat messages."""
    role, content = message["role"], message["content"]
    if isinstance(content, str):
        return [{"role": role, "content": content}]
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    returned: list[dict[str, Any]] = []  # media the tool results returned: Chat's tool messages hold text only
    reasoning: list[str] = []
    for j, block in enumerate(content):
        at = f"{where}.content.{j}"
        kind = block.get("type")
        if kind == "tool_use":
            arguments = json.dumps(block.get("input") or {}, ensure_ascii=False)
            function = {"name": block["name"], "arguments": arguments}
            calls.append({"id": block["id"], "type": "function", "function": function})
        elif kind == "tool_result":
            call_id = block["tool_use_id"]
            output, media = read_content(block.get("content"), f"{at}.content")
            if block.get("is_error"):
                output = f"[error] {output}"
            results.append({"role": "tool", "tool_call_id": call_id, "content": output})
            returned.extend(chat_part(m) for m in media)
        elif kind == "thinking":
            if isinstance(block.get("thinking"), str):
                reasoning.append(block["thinking"])
        elif kind == "redacted_thinking":
            dropped.append(kind)  # encrypted by another provider: nothing a model here can read
        else:
            text = block_text(block)
            parts.append(chat_part(block) if text is None else {"type": "text", "text": text})
    out: list[dict[str, Any]] = [*results]
    if returned:
        note = {"type": "text", "text": "[the tool results' attachments]"}
        out.append({"role": "user", "content": [note, *returned]})
    if role == "assistant":
        text = "\n".join(p["text"] for p in parts if p["type"] == "text")
        if calls or text or not results:
            assistant: dict[str, Any] = {"role": "assistant", "content": text or None}
            if reasoning:
                assistant["reasoning_content"] = "\n".join(reasoning)  # vLLM's and SGLang's field
            if calls:
                assistant["tool_calls"] = calls
            out.append(assistant)
    elif parts or not results:
        plain = all(p["type"] == "text" for p in parts)
        out.append({"role": "user", "content": "\n".join(p["text"] for p in parts) if plain else parts})
    return out


def is_client_tool(tool: Mapping[str, Any]) -> bool:
    """A tool the client defines (with an `input_schema`), not a server tool Anthropic runs itself."""
    return tool.get("type") in (None, "custom") and "input_schema" in tool


def _chat_tool(tool: Mapping[str, Any], where: str) -> dict[str, Any] | str:
    """A client tool as a Chat function tool; a server tool as its type (or name), to drop."""
    if not is_client_tool(tool):
        return str(tool.get("type") or tool.get("name"))  # the host cannot run a server tool
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise missing(f"{where}.name")
    fn: dict[str, Any] = {"name": name}
    if isinstance(tool.get("description"), str):
        fn["description"] = tool["description"]
    fn["parameters"] = tool["input_schema"]
    return {"type": "function", "function": fn}


def _chat_choice(choice: Any) -> dict[str, Any]:
    if not isinstance(choice, JSON_OBJECT):
        raise invalid("tool_choice", "expected an object")
    kind = choice.get("type")
    out: dict[str, Any] = {}
    if kind == "auto":
        out["tool_choice"] = "auto"
    elif kind == "any":
        out["tool_choice"] = "required"
    elif kind == "none":
        out["tool_choice"] = "none"
    elif kind == "tool":
        name = choice.get("name")
        if not isinstance(name, str) or not name:
            raise missing("tool_choice.name")
        out["tool_choice"] = {"type": "function", "function": {"name": name}}
    else:
        raise invalid("tool_choice.type", "expected 'auto', 'any', 'tool' or 'none'")
    if choice.get("disable_parallel_tool_use") is True:
        out["parallel_tool_calls"] = False
    return out


# -- Chat -> Anthropic ---------------------------------------------------------------------


def chat_to_messages(body: Any) -> Bridged:
    """The Anthropic Messages body for a Chat Completions body (see the module doc)."""
    if not isinstance(body, JSON_OBJECT):
        raise invalid_body()
    raw = required_array(body, "messages", "expected an array of messages")
    out: dict[str, Any] = {k: body[k] for k in SAMPLING if k in body}
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    for i, message in enumerate(raw):
        where = f"messages[{i}]"
        if not isinstance(message, JSON_OBJECT):
            raise invalid(where, "expected a message object")
        role = message.get("role")
        if role in ("system", "developer"):
            system.append(content_text(message.get("content"), f"{where}.content"))
            continue
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                raise missing(f"{where}.tool_call_id")
            result = {
                "type": "tool_result",
                "tool_use_id": call_id,
                "content": content_text(message.get("content"), f"{where}.content"),
            }
            _append(turns, "user", [result])
        elif role == "user":
            _append(turns, "user", _anthropic_blocks(message.get("content"), f"{where}.content"))
        elif role == "assistant":
            blocks = [b for b in _anthropic_blocks(message.get("content"), f"{where}.content") if b.get("text") != ""]
            reasoning = message.get("reasoning_content")
            if isinstance(reasoning, str) and reasoning:
                blocks.insert(0, {"type": "thinking", "thinking": reasoning, "signature": ""})
            for j, call in enumerate(message.get("tool_calls") or []):
                blocks.append(_tool_use(call, f"{where}.tool_calls[{j}]"))
            _append(turns, "assistant", blocks or [{"type": "text", "text": ""}])
        else:
            raise invalid(f"{where}.role", "expected 'system', 'developer', 'user', 'assistant' or 'tool'")
    if system:
        out["system"] = "\n\n".join(s for s in system if s)
    out["messages"] = turns
    tools, dropped = partition_tools(body.get("tools"), _anthropic_tool)
    if tools:
        out["tools"] = tools
        choice = _anthropic_choice(body.get("tool_choice"), body.get("parallel_tool_calls"))
        if choice is not None:
            out["tool_choice"] = choice
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    out["max_tokens"] = limit if isinstance(limit, int) and limit > 0 else DEFAULT_MAX_TOKENS
    stop = body.get("stop")
    # (A Chat client's `stop` is checked before this; a Responses client has no such field, so a
    # value that is no string or list of strings is not the host's to refuse: it is left out.)
    sequences = [stop] if isinstance(stop, str) else stop if isinstance(stop, list) else []
    if sequences and all(isinstance(s, str) for s in sequences):
        out["stop_sequences"] = sequences
    if body.get("stream"):
        out["stream"] = True
    if isinstance(body.get("user"), str):
        out["metadata"] = {"user_id": body["user"]}
    thinking = _anthropic_thinking(body, out["max_tokens"])
    if thinking is not None:
        out["thinking"] = thinking
    return Bridged(body=out, dropped_tools=tuple(dropped))


THINKING_BUDGETS = {"low": 1024, "medium": 4096, "high": 16384, "xhigh": 32768}
MIN_THINKING_BUDGET = 1024  # Anthropic's least `budget_tokens`, which must stay under `max_tokens`


def template_thinking(body: Mapping[str, Any]) -> bool | None:
    """A Chat body's chat-template thinking switch, where it has one: `enable_thinking` (Qwen3,
    GLM) or `thinking` (DeepSeek V3.1) in `chat_template_kwargs`. (An Anthropic body's `thinking`
    reads as these in its Chat view, `messages_to_chat`.)"""
    kwargs = body.get("chat_template_kwargs")
    if isinstance(kwargs, JSON_OBJECT):
        for key in ("enable_thinking", "thinking"):
            if isinstance(kwargs.get(key), bool):
                return bool(kwargs[key])
    return None


def _anthropic_thinking(body: Mapping[str, Any], max_tokens: int) -> dict[str, Any] | None:
    """The chat template's thinking switch (`template_thinking`) or `reasoning_effort` as
    Anthropic's `thinking`: off, or on with the effort's budget (as much as `max_tokens` leaves)."""
    switch = template_thinking(body)
    effort = body.get("reasoning_effort")
    if switch is False or effort in ("none", "minimal"):
        return {"type": "disabled"}
    if switch is not True and effort not in THINKING_BUDGETS:
        return None
    budget = min(THINKING_BUDGETS.get(str(effort), THINKING_BUDGETS["medium"]), max_tokens - 1)
    return {"type": "enabled", "budget_tokens": budget} if budget >= MIN_THINKING_BUDGET else None


def _append(turns: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    """Anthropic wants alternating turns: consecutive messages of one role join."""
    if turns and turns[-1]["role"] == role:
        turns[-1]["content"].extend(blocks)
    else:
        turns.append({"role": role, "content": list(blocks)})


def _anthropic_blocks(content: Any, where: str) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise invalid(where, "expected a string or an array of content parts")
    blocks: list[dict[str, Any]] = []
    for j, part in enumerate(content):
        if isinstance(part, JSON_OBJECT) and part.get("type") == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, JSON_OBJECT) else None
            if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
                media, data = url[5:].split(";base64,", 1)
                blocks.append({"type": "image", "source": {"type": "base64", "media_type": media, "data": data}})
                continue
            if isinstance(url, str):
                blocks.append({"type": "image", "source": {"type": "url", "url": url}})
                continue
        blocks.append({"type": "text", "text": content_text([part], f"{where}[{j}]")})
    return blocks


def _tool_use(call: Any, where: str) -> dict[str, Any]:
    if not isinstance(call, JSON_OBJECT):
        raise invalid(where, "expected a tool call object")
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        raise missing(f"{where}.id")
    if call.get("type", "function") == "custom" and isinstance(call.get("custom"), JSON_OBJECT):
        custom = call["custom"]
        return {
            "type": "tool_use",
            "id": call_id,
            "name": str(custom.get("name")),
            "input": {"input": custom.get("input")},
        }
    fn = call.get("function")
    if not isinstance(fn, JSON_OBJECT) or not isinstance(fn.get("name"), str):
        raise missing(f"{where}.function.name")
    arguments = fn.get("arguments") or "{}"
    try:
        value = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        raise invalid(f"{where}.function.arguments", "expected a JSON object") from None
    if not isinstance(value, JSON_OBJECT):
        raise invalid(f"{where}.function.arguments", "expected a JSON object")
    return {"type": "tool_use", "id": call_id, "name": fn["name"], "input": dict(value)}


def _anthropic_tool(tool: Mapping[str, Any], where: str) -> dict[str, Any] | str:
    """A function tool (either OpenAI shape) as an Anthropic client tool; any other as its type, to drop."""
    if tool.get("type", "function") != "function":
        return str(tool.get("type"))
    fn: Mapping[str, Any] = tool["function"] if isinstance(tool.get("function"), JSON_OBJECT) else tool
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        raise missing(f"{where}.function.name")
    entry: dict[str, Any] = {"name": name}
    if isinstance(fn.get("description"), str):
        entry["description"] = fn["description"]
    entry["input_schema"] = fn.get("parameters") or {"type": "object", "properties": {}}
    return entry


def _anthropic_choice(choice: Any, parallel: Any) -> dict[str, Any] | None:
    out: dict[str, Any] | None
    if choice is None or choice == "auto":
        out = {"type": "auto"}
    elif choice == "required":
        out = {"type": "any"}
    elif choice == "none":
        out = {"type": "none"}
    elif isinstance(choice, JSON_OBJECT) and choice.get("type") == "function":
        fn: Mapping[str, Any] = choice["function"] if isinstance(choice.get("function"), JSON_OBJECT) else choice
        out = {"type": "tool", "name": fn.get("name")}
    else:
        out = {"type": "auto"}  # allowed_tools and hosted choices: the policy enforces them on the answer
    if parallel is False and out["type"] != "none":
        out["disable_parallel_tool_use"] = True
    if choice is None and parallel is not False:
        return None
    return out


__all__ = ["DEFAULT_MAX_TOKENS", "chat_to_messages", "messages_to_chat", "template_thinking"]
