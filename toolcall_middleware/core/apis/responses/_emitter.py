"""Responses API: the streamed event sequence and the whole `response` object.

Rules from the SDK's types and `ResponseStreamState` (`reference/wire.md` §3): `response.created`
(empty output) then `response.in_progress`; one item open at a time, `output_index` 0, 1, 2…;
a message item opens a content part, text deltas carry `logprobs: []`; a `function_call` item is
added with `arguments: ""`, an `fc_…` id and a distinct `call_…` call id that never change; one
`sequence_number` counter from 0; every "done" value equals its deltas; the terminal event is
`response.completed`, `response.incomplete` (cut off) or `response.failed`, with the whole output.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from ..._events import Event, ReasoningDelta, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart, TruncatedCall
from ..._result import ParseResult
from ..._schema import JSON_OBJECT
from ...emitters._ids import CallIds, random_id, tool_call_id
from ...emitters._meta import Upstream, token_count, usage_details
from ...framing._utf8 import token_bytes
from ...framing.sse import SSETemplate, encode_event, json_token

_PROBE_TEXT = "toolcall-text-probe"
_PROBE_SEQ = 918273645546372819  # a sequence number no response reaches


def responses_usage(usage: Mapping[str, Any] | None) -> dict[str, Any]:
    """Chat-style or Responses-style upstream usage -> `ResponseUsage` with every required field."""
    inp = token_count(usage, "input_tokens", "prompt_tokens")
    out = token_count(usage, "output_tokens", "completion_tokens")
    in_details = usage_details(usage, "input_tokens_details", "prompt_tokens_details")
    out_details = usage_details(usage, "output_tokens_details", "completion_tokens_details")
    return {
        "input_tokens": inp,
        "input_tokens_details": {
            "cached_tokens": token_count(in_details, "cached_tokens"),
            "cache_write_tokens": token_count(in_details, "cache_write_tokens"),
        },
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": token_count(out_details, "reasoning_tokens")},
        "total_tokens": inp + out,
    }


def flat_tools(tools: Any) -> list[dict[str, Any]]:
    """Request tools echoed in the Responses shape: flat function tools, each with its
    `description`, `parameters` and `strict` (`null` where the request gave none)."""
    out: list[dict[str, Any]] = []
    for tool in tools or []:
        if not isinstance(tool, JSON_OBJECT):
            continue
        fn = tool.get("function")
        flat = {"type": "function", **fn} if isinstance(fn, JSON_OBJECT) else dict(tool)
        if flat.get("type") == "function":
            for key in ("description", "parameters", "strict"):
                flat.setdefault(key, None)
        out.append(flat)
    return out


def _number(value: Any, default: float) -> float:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class _ResponseShell:
    """The response object's fields, echoing the request."""

    def __init__(
        self, upstream: Upstream, request: Mapping[str, Any] | None, state: Mapping[str, Any] | None = None
    ) -> None:
        self.upstream = upstream
        self.request = request or {}
        self.state = state  # what each response object says of the Responses state (`core._response_hook`)
        rid = upstream.id
        self.id = rid if rid.startswith("resp_") else "resp_" + rid.removeprefix("chatcmpl-")

    def response(self, status: str, output: list[dict[str, Any]], usage: dict[str, Any] | None) -> dict[str, Any]:
        """The response object: every field the API reference and the Open Responses schema
        require, the request's settings echoed, the API's defaults for those it did not give."""
        req = self.request
        reason = "content_filter" if self.upstream.finish_reason == "content_filter" else "max_output_tokens"
        top_logprobs = req.get("top_logprobs")
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.upstream.created,
            # The host's answer time stands for the completion (a chat host stamps each chunk with
            # its start): a clock read here would make the same answer come out two ways.
            "completed_at": self.upstream.created if status == "completed" else None,
            "status": status,
            "background": False,
            "error": None,
            "incomplete_details": {"reason": reason} if status == "incomplete" else None,
            "instructions": req.get("instructions"),
            "max_output_tokens": req.get("max_output_tokens"),
            "max_tool_calls": req.get("max_tool_calls"),
            "model": self.upstream.model,
            "output": output,
            "parallel_tool_calls": bool(req.get("parallel_tool_calls", True)),
            "previous_response_id": req.get("previous_response_id"),
            "reasoning": _echo_reasoning(req.get("reasoning")),
            "store": bool(req.get("store", False)),
            "temperature": _number(req.get("temperature"), 1.0),
            "text": _echo_text(req.get("text")),
            "tool_choice": req.get("tool_choice", "auto"),
            "tools": flat_tools(req.get("tools")),
            "top_p": _number(req.get("top_p"), 1.0),
            "presence_penalty": _number(req.get("presence_penalty"), 0.0),
            "frequency_penalty": _number(req.get("frequency_penalty"), 0.0),
            "top_logprobs": top_logprobs if isinstance(top_logprobs, int) and not isinstance(top_logprobs, bool) else 0,
            "truncation": "disabled",
            "usage": usage,
            "user": _text_or_none(req.get("user")),
            "metadata": req.get("metadata") or {},
            "service_tier": self.upstream.service_tier or _text_or_none(req.get("service_tier")) or "default",
            "safety_identifier": _text_or_none(req.get("safety_identifier")),
            "prompt_cache_key": _text_or_none(req.get("prompt_cache_key")),
        }

    def stated(self, body: dict[str, Any]) -> dict[str, Any]:
        """`body`, a whole response object, with the Responses state's fields, if it has any: the
        last thing written into it (its own fields keep their places; a new one comes last)."""
        if self.state:
            body.update(self.state)
        return body


def _echo_reasoning(requested: Any) -> dict[str, Any]:
    """The request's `reasoning` settings as the response echoes them (OpenAI's shape)."""
    asked = requested if isinstance(requested, JSON_OBJECT) else {}
    effort, summary = asked.get("effort"), asked.get("summary")
    return {
        "effort": effort if isinstance(effort, str) else None,
        "summary": summary if isinstance(summary, str) else None,
    }


def _echo_text(requested: Any) -> dict[str, Any]:
    """The request's `text` settings (its output format) as the response echoes them."""
    asked = requested if isinstance(requested, JSON_OBJECT) else {}
    out: dict[str, Any] = {"format": {"type": "text"}}
    if isinstance(asked.get("format"), JSON_OBJECT) and isinstance(asked["format"].get("type"), str):
        out["format"] = dict(asked["format"])
    if isinstance(asked.get("verbosity"), str):
        out["verbosity"] = asked["verbosity"]
    return out


def _message(item_id: str, text: str, status: str) -> dict[str, Any]:
    part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
    return {"id": item_id, "type": "message", "role": "assistant", "status": status, "content": [part]}


def _reasoning(item_id: str, text: str) -> dict[str, Any]:
    return {"id": item_id, "type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": text}]}


def _function_call(item_id: str, cid: str, name: str, arguments: str, status: str) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "function_call",
        "status": status,
        "call_id": cid,
        "name": name,
        "arguments": arguments,
    }


def error_event(message: str, code: str, sequence_number: int, *, kind: str = "server_error") -> dict[str, Any]:
    """The Responses stream's `error` event: the SDK type's fields (`code`, `message`, `param`,
    flat) and, nested under `error`, the live API's, on which the openai SDK raises `APIError`
    (an event without it is handed to the caller as one more event, and read past)."""
    error = {"type": kind, "code": code, "message": message, "param": None}
    return {
        "type": "error",
        "sequence_number": sequence_number,
        "code": code,
        "message": message,
        "param": None,
        "error": error,
    }


def required_action(calls: list[dict[str, Any]]) -> dict[str, Any]:
    """`required_action.submit_tool_outputs.tool_calls` in the Assistants shape."""
    tool_calls = [
        {"id": c["call_id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
        for c in calls
    ]
    return {"type": "submit_tool_outputs", "submit_tool_outputs": {"tool_calls": tool_calls}}


class ResponsesStreamEmitter:
    """Events in, Responses stream events (dicts with `type` and `sequence_number`) out.

    ```python
    emitter = ResponsesStreamEmitter(Upstream(model="qwen3"), request=body)
    events = emitter.start() + emitter.feed(parser.feed(delta)) ... + emitter.finish()
    ```
    """

    def __init__(
        self,
        upstream: Upstream,
        *,
        request: Mapping[str, Any] | None = None,
        reasoning: bool = True,
        required_action: bool = False,
        call_ids: CallIds = "model",
        open_responses: bool = False,
        state: Mapping[str, Any] | None = None,
    ) -> None:
        self._shell = _ResponseShell(upstream, request, state)
        self._emit_reasoning = reasoning
        self._required_action = required_action
        # OpenAI names the reasoning text events `response.reasoning_text.*` (what its SDK reads);
        # the Open Responses specification names them `response.reasoning.*`.
        self._reasoning_event = "response.reasoning" if open_responses else "response.reasoning_text"
        self._call_ids: CallIds = call_ids
        self._seq = 0
        self._output: list[dict[str, Any]] = []
        self._open: str | None = None  # "message" | "reasoning" | "function_call"
        self._item_id = ""
        self._text: list[str] = []
        self._call: dict[str, Any] = {}
        self._truncated = False
        self._started = False
        self._finished = False
        self._delta_template: tuple[tuple[str, int], SSETemplate | None] | None = None

    @property
    def response_id(self) -> str:
        return self._shell.id

    def _event(self, type_: str, **fields: Any) -> dict[str, Any]:
        event = {"type": type_, "sequence_number": self._seq, **fields}
        self._seq += 1
        return event

    def start(self) -> list[dict[str, Any]]:
        if self._started:
            return []
        self._started = True
        shell = self._shell
        return [
            self._event("response.created", response=shell.stated(shell.response("in_progress", [], None))),
            self._event("response.in_progress", response=shell.stated(shell.response("in_progress", [], None))),
        ]

    def feed(self, events: Iterable[Event]) -> list[dict[str, Any]]:
        out = self.start()
        for event in events:
            if isinstance(event, TextDelta):
                if event.text:
                    self._open_item(out, "message")
                    out.append(self._text_event("response.output_text.delta", delta=event.text, logprobs=[]))
                    self._text.append(event.text)
            elif isinstance(event, ReasoningDelta):
                if event.text and self._emit_reasoning:
                    self._open_item(out, "reasoning")
                    out.append(self._text_event(f"{self._reasoning_event}.delta", delta=event.text))
                    self._text.append(event.text)
            elif isinstance(event, ToolCallStart):
                self._close_item(out)
                self._open = "function_call"
                self._item_id = random_id("fc_")
                self._call = {"call_id": tool_call_id(event.id, self._call_ids), "name": event.name, "arguments": []}
                item = _function_call(self._item_id, self._call["call_id"], event.name, "", "in_progress")
                out.append(self._event("response.output_item.added", output_index=len(self._output), item=item))
            elif isinstance(event, ToolCallDelta):
                if event.arguments and self._open == "function_call":
                    self._call["arguments"].append(event.arguments)
                    out.append(
                        self._event(
                            "response.function_call_arguments.delta",
                            item_id=self._item_id,
                            output_index=len(self._output),
                            delta=event.arguments,
                        )
                    )
            elif isinstance(event, ToolCallEnd):
                self._close_item(out)
            elif isinstance(event, TruncatedCall):
                self._truncated = True
        return out

    def feed_sse(self, events: list[Event]) -> bytes:
        """`feed`, encoded as SSE. A text piece inside an open message (most of them) is written
        into a template of its delta event, made once per message item: the same bytes."""
        if len(events) == 1 and type(events[0]) is TextDelta:
            out = self.text_sse(events[0].text)
            if out is not None:
                return out
        return b"".join([encode_event(e) for e in self.feed(events)])

    def text_sse(self, text: str) -> bytes | None:
        """`feed_sse([TextDelta(text)])` written into the delta event's template (made once per
        message item), for a text piece inside an open message; `None` for any other (use
        `feed_sse`)."""
        if not text or self._open != "message":
            return None
        key = (self._item_id, len(self._output))
        cached = self._delta_template
        if cached is None or cached[0] != key:
            seq, self._seq = self._seq, _PROBE_SEQ
            probe = self._text_event("response.output_text.delta", delta=_PROBE_TEXT, logprobs=[])
            self._seq = seq
            template = SSETemplate.of(encode_event(probe), str(_PROBE_SEQ), json_token(_PROBE_TEXT))
            cached = self._delta_template = (key, template)
        if cached[1] is None:
            return None
        head, middle, tail = cached[1].parts
        seq = self._seq
        self._seq = seq + 1
        self._text.append(text)
        return head + str(seq).encode() + middle + token_bytes(text) + tail

    def _text_event(self, type_: str, **fields: Any) -> dict[str, Any]:
        return self._event(type_, item_id=self._item_id, output_index=len(self._output), content_index=0, **fields)

    def _open_item(self, out: list[dict[str, Any]], kind: str) -> None:
        if self._open == kind:
            return
        self._close_item(out)
        self._open = kind
        index = len(self._output)
        if kind == "message":
            self._item_id = random_id("msg_")
            item: dict[str, Any] = {**_message(self._item_id, "", "in_progress"), "content": []}
            part: dict[str, Any] = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        else:
            self._item_id = random_id("rs_")
            item = {**_reasoning(self._item_id, ""), "content": [], "status": "in_progress"}
            part = {"type": "reasoning_text", "text": ""}
        out.append(self._event("response.output_item.added", output_index=index, item=item))
        out.append(self._text_event("response.content_part.added", part=part))

    def _close_item(self, out: list[dict[str, Any]], status: str = "completed") -> None:
        kind, self._open = self._open, None
        index = len(self._output)
        if kind == "message":
            text = "".join(self._text)
            item = _message(self._item_id, text, status)
            out.append(self._text_event("response.output_text.done", text=text, logprobs=[]))
            out.append(self._text_event("response.content_part.done", part=item["content"][0]))
        elif kind == "reasoning":
            text = "".join(self._text)
            item = _reasoning(self._item_id, text)
            out.append(self._text_event(f"{self._reasoning_event}.done", text=text))
            out.append(self._text_event("response.content_part.done", part=item["content"][0]))
        elif kind == "function_call":
            args = "".join(self._call["arguments"])
            item = _function_call(self._item_id, self._call["call_id"], self._call["name"], args, status)
            out.append(
                self._event(
                    "response.function_call_arguments.done",
                    item_id=self._item_id,
                    output_index=index,
                    arguments=args,
                    name=self._call["name"],
                )
            )
        else:
            return
        self._text = []
        out.append(self._event("response.output_item.done", output_index=index, item=item))
        self._output.append(item)

    def finish(self, *, usage: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Close the open item; `response.completed`, or `response.incomplete` when cut off."""
        if self._finished:
            return []
        out = self.start()
        self._finished = True
        called = any(item["type"] == "function_call" for item in self._output)
        reason = self._shell.upstream.finish_reason
        cut = (not called and (self._truncated or reason == "length")) or reason == "content_filter"
        self._close_item(out, "incomplete" if cut else "completed")
        status = "incomplete" if cut else "completed"
        body = self._shell.response(
            status, copy.deepcopy(self._output), responses_usage(usage or self._shell.upstream.usage)
        )
        calls = [item for item in self._output if item["type"] == "function_call"]
        if self._required_action and calls:
            # The gateway variant of Assistants-style clients: the calls to answer, announced just
            # before the final event, whose response then waits for them (`requires_action`).
            action = required_action(calls)
            out.append(self._event("response.required_action", response={"id": self._shell.id}, required_action=action))
            body["status"] = "requires_action"
            body["required_action"] = action
        out.append(self._event(f"response.{status}", response=self._shell.stated(body)))
        return out

    def fail(self, message: str, *, code: str = "server_error") -> list[dict[str, Any]]:
        """`response.failed` with an error object (strict validation failed, upstream error)."""
        if self._finished:
            return []
        out = self.start()
        self._finished = True
        self._close_item(out, "incomplete")
        body = self._shell.response("failed", copy.deepcopy(self._output), None)
        body["error"] = {"code": code, "message": message}
        out.append(self._event("response.failed", response=self._shell.stated(body)))
        return out


class ResponsesBuilder:
    """A whole parse -> the `response` object."""

    def __init__(
        self,
        upstream: Upstream,
        *,
        request: Mapping[str, Any] | None = None,
        reasoning: bool = True,
        call_ids: CallIds = "model",
        state: Mapping[str, Any] | None = None,
    ) -> None:
        self._shell = _ResponseShell(upstream, request, state)
        self._request = request
        self._emit_reasoning = reasoning
        self._call_ids: CallIds = call_ids

    def build_events(self, events: Iterable[Event], *, usage: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The whole `response` for a parse's events, its items in the order the model wrote
        them (text after a call is a message after that call): the final `response` a stream
        of the same events ends with, so a whole answer and a streamed one are the same."""
        stream = ResponsesStreamEmitter(
            self._shell.upstream,
            request=self._request,
            reasoning=self._emit_reasoning,
            call_ids=self._call_ids,
            state=self._shell.state,
        )
        stream.feed(events)
        final: dict[str, Any] = stream.finish(usage=usage)[-1]["response"]
        return final

    def build(self, result: ParseResult, *, usage: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The whole `response` for a merged parse: reasoning, then the text as one message,
        then the calls (`build_events` keeps the order they came in)."""
        output: list[dict[str, Any]] = []
        reason = self._shell.upstream.finish_reason
        cut = (
            not result.tool_calls and (result.truncated is not None or reason == "length")
        ) or reason == "content_filter"
        if result.reasoning and self._emit_reasoning:
            output.append(_reasoning(random_id("rs_"), result.reasoning))
        if result.content:
            output.append(_message(random_id("msg_"), result.content, "incomplete" if cut else "completed"))
        for call in result.tool_calls:
            output.append(
                _function_call(
                    random_id("fc_"), tool_call_id(call.id, self._call_ids), call.name, call.arguments, "completed"
                )
            )
        status = "incomplete" if cut else "completed"
        return self._shell.stated(
            self._shell.response(status, output, responses_usage(usage or self._shell.upstream.usage))
        )


__all__ = [
    "ResponsesBuilder",
    "ResponsesStreamEmitter",
    "error_event",
    "flat_tools",
    "required_action",
    "responses_usage",
]
