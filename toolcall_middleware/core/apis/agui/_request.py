"""An AG-UI run's input (`RunAgentInput`) checked to the protocol's types, and translated into the
Chat Completions request a raw-output host takes.

`check_run_input(body)` raises `BadRequest` naming the first field (camelCase, as on the wire:
`messages[1].toolCalls[0].function.name`) that the protocol's own types (`ag_ui.core.RunAgentInput`
of the `ag-ui-protocol` package) would refuse: `threadId` and `runId` strings, a `messages` array,
`tools` and `context` arrays where given (`state`, `forwardedProps` and `parentRunId` optional).
The check is written here, without pydantic, so the route needs no extra (with it, the shell
validates by the package's types too: `toolcall_middleware._agui`);
`tests/core/test_agui_request.py` holds it to the package's verdicts.

`run_to_chat(body)` is the Chat request (the usual Chat rewrite for the host's dialect runs on it
afterwards: the tools written into the prompt, the tool history flattened):

- `messages` keep their order: `system` and `developer` as they are; a `user` message's content,
  a string or input parts (text; an image by URL or data as an `image_url` part; any other part
  as a note saying its type); an `assistant` message's `toolCalls` as `tool_calls`; a `tool`
  message as `role: "tool"` with its `toolCallId` (its `error`, when set, is the result's text).
  `activity` and `reasoning` messages are the frontend's own and go (`dropped_items`).
- `tools` (the frontend's) become function tools; a tool without `parameters` takes no arguments.
- `context` and `state` are told to the model in the system message (the first one, or a new one
  at the start): `CONTEXT_HEADING` then each entry's `description: value`, and `STATE_HEADING`
  then the state as JSON (an absent, `null` or empty state is not mentioned).
- `forwardedProps` may carry the request fields `FORWARDED` names (Chat's snake_case, or
  camelCase: `toolChoice`, `parallelToolCalls`, `maxTokens`, …); `model` picks the host's model
  (and so the dialect, where the configuration does not name one). They are checked by Chat's
  rules here, a fault named as the client sent it (`forwardedProps.toolChoice`).
- The host is always asked for a stream (`stream: true`): an AG-UI client reads events.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..._schema import JSON_OBJECT
from ...request._bridge import Bridged
from ...request._errors import BadRequest, invalid, invalid_body, missing
from ...request._fields import check_fields
from ...request._tools import normalize_tools
from ..chat._checks import CHAT_FIELDS

ROLES = ("developer", "system", "assistant", "user", "tool", "activity", "reasoning")
DROPPED_ROLES = ("activity", "reasoning")
# forwardedProps keys taken into the Chat request, by their Chat names (camelCase accepted too).
FORWARDED = (
    "model",
    "tool_choice",
    "parallel_tool_calls",
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "seed",
    "stop",
    "user",
)
CONTEXT_HEADING = "Context from the application:"
STATE_HEADING = "The application's current state (JSON):"
NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def _string(obj: Mapping[str, Any], key: str, where: str, *, optional: bool = False) -> None:
    value = obj.get(key)
    if value is None:
        if optional:
            return
        raise missing(f"{where}{key}")
    if not isinstance(value, str):
        raise invalid(f"{where}{key}", "expected a string")


def _array(body: Mapping[str, Any], key: str, *, optional: bool = False) -> list[Any]:
    value = body.get(key)
    if value is None:
        if optional:
            return []
        raise missing(key)
    if not isinstance(value, list):
        raise invalid(key, "expected an array")
    return value


def _object(value: Any, where: str, what: str) -> Mapping[str, Any]:
    if not isinstance(value, JSON_OBJECT):
        raise invalid(where, f"expected {what} object")
    return value


def _check_content(message: Mapping[str, Any], where: str) -> None:
    content = message.get("content")
    if isinstance(content, str) or (content is None and message.get("role") == "assistant"):
        return
    if message.get("role") == "user" and isinstance(content, list):
        for j, part in enumerate(content):
            part = _object(part, f"{where}content[{j}]", "an input content")
            if not isinstance(part.get("type"), str):
                raise missing(f"{where}content[{j}].type")
            if part["type"] == "text":
                _string(part, "text", f"{where}content[{j}].")
        return
    if content is None:
        raise missing(f"{where}content")
    parts = " or an array of input parts" if message.get("role") == "user" else ""
    raise invalid(f"{where}content", "expected a string" + parts)


def _check_message(message: Any, i: int) -> None:
    where = f"messages[{i}]."
    message = _object(message, f"messages[{i}]", "a message")
    role = message.get("role")
    if role is None:
        raise missing(f"{where}role")
    if role not in ROLES:
        raise invalid(f"{where}role", "expected one of " + ", ".join(repr(r) for r in ROLES))
    _string(message, "id", where)
    if role == "activity":
        _string(message, "activityType", where)
        _object(message.get("content"), f"{where}content", "an")
        return
    _check_content(message, where)
    if role == "tool":
        _string(message, "toolCallId", where)
        _string(message, "error", where, optional=True)
    calls = message.get("toolCalls") if role == "assistant" else None
    if calls is None:
        return
    if not isinstance(calls, list):
        raise invalid(f"{where}toolCalls", "expected an array")
    for j, call in enumerate(calls):
        at = f"{where}toolCalls[{j}]"
        call = _object(call, at, "a tool call")
        _string(call, "id", at + ".")
        if call.get("type", "function") != "function":
            raise invalid(f"{at}.type", "expected 'function'")
        function = _object(call.get("function"), f"{at}.function", "a function") if "function" in call else None
        if function is None:
            raise missing(f"{at}.function")
        _string(function, "name", f"{at}.function.")
        _string(function, "arguments", f"{at}.function.")


def check_run_input(body: Mapping[str, Any]) -> None:
    """Raise `BadRequest` for the first field of a `RunAgentInput` the protocol refuses."""
    _string(body, "threadId", "")
    _string(body, "runId", "")
    _string(body, "parentRunId", "", optional=True)
    for i, message in enumerate(_array(body, "messages")):
        _check_message(message, i)
    for i, tool in enumerate(_array(body, "tools", optional=True)):
        tool = _object(tool, f"tools[{i}]", "a tool")
        _string(tool, "name", f"tools[{i}].")
        _string(tool, "description", f"tools[{i}].")
    for i, entry in enumerate(_array(body, "context", optional=True)):
        entry = _object(entry, f"context[{i}]", "a context")
        _string(entry, "description", f"context[{i}].")
        _string(entry, "value", f"context[{i}].")


def _user_content(content: Any) -> Any:
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for part in content:
        source = part.get("source") if isinstance(part.get("source"), JSON_OBJECT) else {}
        if part["type"] == "text":
            parts.append({"type": "text", "text": part["text"]})
        elif part["type"] == "image" and source.get("type") == "url" and isinstance(source.get("value"), str):
            parts.append({"type": "image_url", "image_url": {"url": source["value"]}})
        elif part["type"] == "image" and source.get("type") == "data" and isinstance(source.get("value"), str):
            url = f"data:{source.get('mimeType') or 'image/png'};base64,{source['value']}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
        else:  # (audio, video, documents, binary: the host's text cannot carry them; say they were there)
            parts.append({"type": "text", "text": f"[{part['type']}]"})
    return parts


def _chat_message(message: Mapping[str, Any]) -> dict[str, Any]:
    role = message["role"]
    if role == "tool":
        error = message.get("error")
        return {"role": "tool", "tool_call_id": message["toolCallId"], "content": error or message["content"]}
    if role == "user":
        return {"role": "user", "content": _user_content(message["content"])}
    out: dict[str, Any] = {"role": role, "content": message.get("content")}
    if message.get("name"):
        out["name"] = message["name"]
    if role == "assistant" and message.get("toolCalls"):
        out["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": dict(c["function"])} for c in message["toolCalls"]
        ]
    return out


def frontend_text(body: Mapping[str, Any]) -> str:
    """What the model is told of the frontend's `context` and `state` (empty: nothing to tell)."""
    out = []
    if body.get("context"):
        out.append(CONTEXT_HEADING)
        out.extend(f"- {entry['description']}: {entry['value']}" for entry in body["context"])
    state = body.get("state")
    if state not in (None, {}, [], ""):
        out.append(STATE_HEADING + "\n" + json.dumps(state, ensure_ascii=False, sort_keys=True))
    return "\n".join(out)


def _with_frontend_text(messages: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """`text` in the first system message (after its own text), or a new one at the start: many
    chat templates refuse a system message anywhere else."""
    if not text:
        return messages
    first = messages[0] if messages else None
    if first is not None and first["role"] in ("system", "developer") and isinstance(first.get("content"), str):
        joined = first["content"] + "\n\n" + text if first["content"] else text
        return [{**first, "content": joined}, *messages[1:]]
    return [{"role": "system", "content": text}, *messages]


def sent_keys(props: Any) -> dict[str, str]:
    """The keys of `forwardedProps` taken into the Chat request, by their Chat names (see
    `FORWARDED`): `{"tool_choice": "toolChoice"}` where the client wrote it camelCase."""
    if not isinstance(props, JSON_OBJECT):
        return {}
    out: dict[str, str] = {}
    for name in FORWARDED:
        for key in (name, _camel(name)):
            if props.get(key) is not None:
                out[name] = key
                break
    return out


def forwarded_fields(props: Any) -> dict[str, Any]:
    """The Chat request fields `forwardedProps` carries (see `FORWARDED`)."""
    return {name: props[key] for name, key in sent_keys(props).items()}


def check_forwarded(chat: Mapping[str, Any], props: Any) -> None:
    """The Chat checks of the fields `chat` took from `forwardedProps` (their types, the tool
    choice against the run's tools), a fault named as the client sent the field
    (`forwardedProps.toolChoice`): the Chat rewrite would name it by its Chat name, a field the
    run does not have. (`normalize_tools` remembers its reading, so the rewrite reads it again
    for nothing.)"""
    sent = sent_keys(props)
    try:
        check_fields(CHAT_FIELDS, {name: chat[name] for name in sent})
        if sent.keys() & {"tool_choice", "parallel_tool_calls"}:
            normalize_tools(chat)
    except BadRequest as error:
        param = error.param or ""
        name = next((n for n in sent if param == n or param.startswith((n + ".", n + "["))), None)
        if name is None:
            raise
        as_sent = f"forwardedProps.{sent[name]}{param[len(name) :]}"
        message = error.message.replace(f"'{param}'", f"'{as_sent}'")
        raise BadRequest(message, as_sent, code=error.code) from None


def run_to_chat(body: Any) -> Bridged:
    """The Chat Completions request for an AG-UI run (see the module doc)."""
    if not isinstance(body, JSON_OBJECT):
        raise invalid_body()
    check_run_input(body)
    kept = [m for m in body["messages"] if m["role"] not in DROPPED_ROLES]
    messages = _with_frontend_text([_chat_message(m) for m in kept], frontend_text(body))
    if not messages:
        raise BadRequest("The run has no messages for the model to answer.", "messages", code="invalid_value")
    chat: dict[str, Any] = {**forwarded_fields(body.get("forwardedProps")), "messages": messages, "stream": True}
    if body.get("tools"):
        chat["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool["name"],
                    "description": tool["description"],
                    "parameters": tool.get("parameters") or NO_ARGUMENTS,
                },
            }
            for tool in body["tools"]
        ]
    check_forwarded(chat, body.get("forwardedProps"))
    dropped = tuple(m["role"] for m in body["messages"] if m["role"] in DROPPED_ROLES)
    return Bridged(chat, dropped_items=dropped)


__all__ = [
    "CONTEXT_HEADING",
    "FORWARDED",
    "STATE_HEADING",
    "check_forwarded",
    "check_run_input",
    "frontend_text",
    "run_to_chat",
]
