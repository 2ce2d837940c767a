"""Every request shape the current Anthropic clients send, on the native Messages route and on the
`messages-to-chat` bridge, driven by the `anthropic` SDK in process; and what comes back: stop
reasons, stop sequences, usage, errors by status, token counts.

The hosts record the body they get, so each test checks both what the client receives and what
the host was sent (carried, translated or dropped, as docs/bridges.md says).
"""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import anthropic
import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from examples.fake_model import pieces, write
from tests.asgi.test_messages_api import ANTHROPIC_TOOLS, anthropic_client, openai_client, run
from tests.hosts import anthropic_events
from toolcall_middleware import ToolCallMiddleware

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n not really an image").decode()
STATUSES = {
    400: (anthropic.BadRequestError, "invalid_request_error"),
    401: (anthropic.AuthenticationError, "authentication_error"),
    403: (anthropic.PermissionDeniedError, "permission_error"),
    404: (anthropic.NotFoundError, "not_found_error"),
    429: (anthropic.RateLimitError, "rate_limit_error"),
    500: (anthropic.InternalServerError, "api_error"),
    503: (anthropic.InternalServerError, "overloaded_error"),
    529: (anthropic.InternalServerError, "overloaded_error"),
}


class Hosts:
    """A chat-only host and a Messages host that record what they get. The model `status-N`
    answers an error with status N; `stop-END` answers text that the stop sequence `END` ended;
    any other model writes `examples/fake_model.py`'s raw hermes text."""

    def __init__(self, *, count_tokens: bool = False) -> None:
        self.seen: list[dict[str, Any]] = []
        self.counted: list[dict[str, Any]] = []
        routes = [Route("/v1/messages", self.messages, methods=["POST"])]
        if count_tokens:
            routes.append(Route("/v1/messages/count_tokens", self.count, methods=["POST"]))
        self.messages_host = Starlette(routes=routes)
        self.chat_host = Starlette(routes=[Route("/v1/chat/completions", self.chat, methods=["POST"])])

    @staticmethod
    def _error(model: str) -> Response | None:
        if not model.startswith("status-"):
            return None
        status = int(model.removeprefix("status-"))
        error = {"message": f"host says {status}", "type": "server_error", "param": None, "code": None}
        return JSONResponse({"error": error}, status_code=status)

    async def _take(self, request: Request) -> tuple[dict[str, Any], str, Response | None]:
        """The request's body (recorded), its model, and the error that model asks for."""
        body = await request.json()
        self.seen.append(body)
        model = body.get("model", "m")
        return body, model, self._error(model)

    async def chat(self, request: Request) -> Response:
        body, model, failed = await self._take(request)
        if failed is not None:
            return failed
        raw, stop = (" It is sunny", "END") if model.startswith("stop-") else (write(body), None)
        meta = {"id": "chatcmpl-1", "created": int(time.time()), "model": model}
        usage = {"prompt_tokens": 50, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 20}}
        finish = {"finish_reason": "stop", "stop_reason": stop}
        if not body.get("stream"):
            choice = {"index": 0, "message": {"role": "assistant", "content": raw}, **finish}
            return JSONResponse({**meta, "object": "chat.completion", "choices": [choice], "usage": usage})

        async def events() -> Any:
            chunk = {**meta, "object": "chat.completion.chunk"}
            for piece in pieces(raw):
                yield f"data: {json.dumps({**chunk, 'choices': [{'index': 0, 'delta': {'content': piece}}]})}\n\n"
            yield f"data: {json.dumps({**chunk, 'choices': [{'index': 0, 'delta': {}, **finish}]})}\n\n"
            yield f"data: {json.dumps({**chunk, 'choices': [], 'usage': usage})}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    async def messages(self, request: Request) -> Response:
        body, model, failed = await self._take(request)
        if failed is not None:
            return failed
        seen = {"instructions": json.dumps(body.get("system")), "messages": body["messages"]}
        raw, stop = (" It is sunny", "END") if model.startswith("stop-") else (write(seen), None)
        blocks = [{"type": "text", "text": raw}]
        reason = "stop_sequence" if stop else "end_turn"
        if not body.get("stream"):
            usage = {"input_tokens": 30, "output_tokens": 7, "cache_read_input_tokens": 20}
            message = {"id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": blocks}
            return JSONResponse({**message, "stop_reason": reason, "stop_sequence": stop, "usage": usage})
        stream = anthropic_events(blocks, reason, model)
        stream[0]["message"]["usage"] = {"input_tokens": 30, "output_tokens": 1, "cache_read_input_tokens": 20}
        stream[-2]["delta"]["stop_sequence"] = stop
        stream[-2]["usage"] = {"output_tokens": 7}  # cumulative; the others keep their start value

        async def events() -> Any:
            for event in stream:
                yield f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    async def count(self, request: Request) -> Response:
        body = await request.json()
        self.counted.append(body)
        return JSONResponse({"input_tokens": 4242})

    def app(self, route: str) -> Any:
        if route == "native":
            return ToolCallMiddleware(self.messages_host, dialect="hermes")
        return ToolCallMiddleware(self.chat_host, dialect="hermes", bridge="messages-to-chat")


ROUTES = ["native", "messages-to-chat"]


def everything(tool_result: Any) -> dict[str, Any]:
    """One request with every shape the current clients send (Claude Code, the SDK's betas)."""
    return {
        "model": "qwen3",
        "max_tokens": 512,
        "system": [
            {"type": "text", "text": "You are a weather bot."},
            {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}},
        ],
        "tools": [{**ANTHROPIC_TOOLS[0], "cache_control": {"type": "ephemeral"}}, *SERVER_TOOLS],
        "tool_choice": {"type": "auto", "disable_parallel_tool_use": True},
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "metadata": {"user_id": "user-7"},
        "stop_sequences": ["STOP"],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
            {"role": "system", "content": "The user is in Europe."},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "I call the tool.", "signature": "c2ln"},
                    {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"},
                    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
                ],
            },
            {"role": "user", "content": [tool_result]},
        ],
    }


SERVER_TOOLS: list[Any] = [
    {"type": "web_search_20250305", "name": "web_search", "max_uses": 2},
    {"type": "code_execution_20250825", "name": "code_execution"},
    {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"},
    {"type": "bash_20250124", "name": "bash"},
    {"type": "computer_20250124", "name": "computer", "display_width_px": 1024, "display_height_px": 768},
    {"type": "memory_20250818", "name": "memory"},
]
RESULT_WITH_MEDIA = {
    "type": "tool_result",
    "tool_use_id": "toolu_1",
    "cache_control": {"type": "ephemeral"},
    "content": [
        {"type": "text", "text": "Sunny, 21 C"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {
            "type": "search_result",
            "source": "https://weather.example/paris",
            "title": "Paris forecast",
            "content": [{"type": "text", "text": "Clear skies all week"}],
        },
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "UV index 6"}},
    ],
}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("route", ROUTES)
def test_every_request_shape_is_accepted_and_carried(route: str, stream: bool, caplog: Any) -> None:
    hosts = Hosts()
    client = anthropic_client(hosts.app(route))
    body = everything(RESULT_WITH_MEDIA)
    extra: dict[str, Any] = {"top_k": 40, "service_tier": "auto"}  # (sent as extra: not in every SDK version)
    extra["mcp_servers"] = [{"type": "url", "url": "https://mcp.example/sse", "name": "example"}]
    extra["container"] = "container_1"
    extra["context_management"] = {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}
    extra["output_config"] = {"effort": "high"}

    async def ask() -> Any:
        # The beta namespace: `?beta=true` and the `anthropic-beta` header, as Claude Code sends.
        create = client.beta.messages
        betas = ["interleaved-thinking-2025-05-14", "context-management-2025-06-27"]
        if not stream:
            return await create.create(**body, betas=betas, extra_body=extra)
        async with create.stream(**body, betas=betas, extra_body=extra) as s:
            return await s.get_final_message()

    with caplog.at_level("INFO", logger="toolcall_middleware"):
        answer = run(ask)
    assert answer.stop_reason == "end_turn" and answer.content[-1].text.startswith("It is Sunny, 21 C")
    assert "not offered to the host" in caplog.text and "mcp_servers" in caplog.text
    (sent,) = hosts.seen
    text = json.dumps(sent)
    assert "Sunny, 21 C" in text and "Paris forecast" in text and "Clear skies all week" in text
    assert "UV index 6" in text and "The user is in Europe." in text and "I call the tool." in text
    assert "ZW5jcnlwdGVk" not in text  # redacted thinking: nothing a model here can read
    assert "web_search" not in text and "mcp.example" not in text and "container_1" not in text
    if route == "native":
        # A Messages host: its own API, with the tools and history written as the dialect's text.
        assert [m["role"] for m in sent["messages"]] == ["user", "assistant", "user"]
        system = sent["system"]
        assert system[1] == {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
        assert system[2] == {"type": "text", "text": "The user is in Europe."}
        assert "<tools>" in system[3]["text"] and "get_weather" in system[3]["text"]
        assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2048}
        assert sent["top_k"] == 40 and sent["service_tier"] == "auto" and sent["stop_sequences"] == ["STOP"]
        assert sent["metadata"] == {"user_id": "user-7"} and sent["output_config"] == {"effort": "high"}
        assistant = sent["messages"][1]["content"]
        assert assistant.startswith("<think>\nI call the tool.\n</think>\n\n<tool_call>")
        results, image = sent["messages"][2]["content"]
        assert results["text"].startswith("<tool_response>") and results["cache_control"] == {"type": "ephemeral"}
        assert image == RESULT_WITH_MEDIA["content"][1]  # type: ignore[index]
    else:
        # A Chat host: the same conversation in Chat's shapes.
        roles = [m["role"] for m in sent["messages"]]
        assert roles == ["system", "user", "assistant", "user", "user"]
        assert sent["messages"][0]["content"].startswith("You are a weather bot.\nBe brief.\n\nThe user is in Europe.")
        assert sent["messages"][2]["reasoning_content"] == "I call the tool."
        assert sent["messages"][3]["content"].startswith("<tool_response>\nSunny, 21 C")
        attachments = sent["messages"][4]["content"]
        assert attachments[1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
        assert sent["chat_template_kwargs"] == {"enable_thinking": True, "thinking": True}
        assert sent["reasoning_effort"] == "high" and sent["top_k"] == 40 and sent["stop"] == ["STOP"]
        assert sent["user"] == "user-7"
        assert not {"service_tier", "container", "mcp_servers", "context_management", "thinking"} & set(sent)


@pytest.mark.parametrize("route", ROUTES)
def test_a_tool_result_error_and_string_system_and_disabled_thinking(route: str) -> None:
    hosts = Hosts()
    client = anthropic_client(hosts.app(route))
    body = everything({"type": "tool_result", "tool_use_id": "toolu_1", "content": "boom", "is_error": True})
    body["system"] = "You are a weather bot."
    body["thinking"] = {"type": "disabled"}
    run(lambda: client.messages.create(**body))
    (sent,) = hosts.seen
    assert "[error] boom" in json.dumps(sent)
    if route == "native":
        assert sent["system"].startswith("You are a weather bot.\n\nThe user is in Europe.\n\n")
        assert "I call the tool." in json.dumps(sent)  # the running loop's reasoning, replayed
    else:
        assert sent["chat_template_kwargs"] == {"enable_thinking": False, "thinking": False}


@pytest.mark.parametrize("route", ROUTES)
def test_a_bad_thinking_type_is_a_400_naming_it(route: str) -> None:
    client = anthropic_client(Hosts().app(route))
    body = everything(RESULT_WITH_MEDIA)
    body["thinking"] = {"type": "sometimes"}
    with pytest.raises(anthropic.BadRequestError) as info:
        run(lambda: client.messages.create(**body))
    assert info.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "Invalid 'thinking.type': expected 'enabled', 'adaptive' or 'disabled'.",
        },
    }


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("route", ROUTES)
def test_a_stop_sequence_is_named(route: str, stream: bool) -> None:
    client = anthropic_client(Hosts().app(route))
    ask = {"model": "stop-END", "max_tokens": 64, "stop_sequences": ["END"]}
    ask["messages"] = [{"role": "user", "content": "x"}]

    async def go() -> Any:
        if not stream:
            return await client.messages.create(**ask)
        async with client.messages.stream(**ask) as s:
            return await s.get_final_message()

    answer = run(go)
    assert answer.stop_reason == "stop_sequence" and answer.stop_sequence == "END"
    assert answer.content[0].text == " It is sunny"


@pytest.mark.parametrize("route", ROUTES)
def test_usage_accumulates_as_the_sdk_reads_it(route: str) -> None:
    """The streamed message's usage, as the SDK's accumulator builds it from `message_start` and
    `message_delta`, equals the whole answer's: cache reads apart from the input tokens."""
    client = anthropic_client(Hosts().app(route))
    ask = {"model": "stop-END", "max_tokens": 64, "messages": [{"role": "user", "content": "x"}]}

    async def streamed() -> Any:
        async with client.messages.stream(**ask) as s:
            return await s.get_final_message()

    whole = run(lambda: client.messages.create(**ask)).usage
    assert run(streamed).usage == whole
    assert (whole.input_tokens, whole.output_tokens, whole.cache_read_input_tokens) == (30, 7, 20)
    assert whole.cache_creation_input_tokens == 0


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("status", sorted(STATUSES))
def test_a_bridged_hosts_error_is_anthropic_shaped_with_its_type(status: int, stream: bool) -> None:
    client = anthropic_client(Hosts().app("messages-to-chat"))
    error, kind = STATUSES[status]
    ask = {"model": f"status-{status}", "max_tokens": 64, "messages": [{"role": "user", "content": "x"}]}

    async def go() -> Any:
        if not stream:
            return await client.messages.create(**ask)
        async with client.messages.stream(**ask) as s:
            return await s.get_final_message()

    with pytest.raises(error) as info:
        run(go)
    assert info.value.status_code == status
    assert info.value.body == {"type": "error", "error": {"type": kind, "message": f"host says {status}"}}


COUNT = {
    "model": "qwen3",
    "system": "You are a weather bot.",
    "tools": ANTHROPIC_TOOLS,
    "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "system", "content": "The user is in Europe."},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [
                        {"type": "text", "text": "Sunny"},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                    ],
                }
            ],
        },
    ],
}


@pytest.mark.parametrize("route", ROUTES)
def test_count_tokens_is_estimated_where_the_host_cannot_count(route: str) -> None:
    hosts = Hosts()
    client = anthropic_client(hosts.app(route))
    counted = run(lambda: client.messages.count_tokens(**COUNT)).input_tokens
    bare = run(lambda: client.messages.count_tokens(model="qwen3", messages=[{"role": "user", "content": "Hi"}]))
    assert bare.input_tokens == 2  # "user" and "Hi": 6 characters, at four a token rounded up
    # The rewritten body, manifest and flattened history in, at four characters a token, and
    # 1,600 for the image.
    assert 1600 + 100 < counted < 1600 + 1000
    assert hosts.seen == []  # never a generation for a count


def test_count_tokens_goes_to_a_host_that_counts_rewritten() -> None:
    hosts = Hosts(count_tokens=True)
    client = anthropic_client(hosts.app("native"))
    assert run(lambda: client.messages.count_tokens(**COUNT)).input_tokens == 4242
    (sent,) = hosts.counted
    assert "tools" not in sent and "<tools>" in sent["system"] and "The user is in Europe." in sent["system"]
    assert "<tool_call>" in json.dumps(sent["messages"]) and "<tool_response>" in json.dumps(sent["messages"])


def test_count_tokens_passes_a_hosts_other_errors_through() -> None:
    async def denied(request: Request) -> Response:
        return JSONResponse({"type": "error", "error": {"type": "authentication_error", "message": "no"}}, 401)

    host = Starlette(routes=[Route("/v1/messages/count_tokens", denied, methods=["POST"])])
    client = anthropic_client(ToolCallMiddleware(host, dialect="hermes"))
    with pytest.raises(anthropic.AuthenticationError) as info:
        run(lambda: client.messages.count_tokens(**COUNT))
    assert info.value.body == {"type": "error", "error": {"type": "authentication_error", "message": "no"}}


@pytest.mark.parametrize("bridge", ["chat-to-messages", "responses-to-messages"])
def test_a_messages_hosts_error_reaches_openai_clients_in_their_shape(bridge: str) -> None:
    async def overloaded(request: Request) -> Response:
        return JSONResponse({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, 529)

    host = Starlette(routes=[Route("/v1/messages", overloaded, methods=["POST"])])
    client = openai_client(ToolCallMiddleware(host, dialect="hermes", bridge=bridge))

    async def ask() -> Any:
        if bridge == "chat-to-messages":
            return await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        return await client.responses.create(model="m", input="hi")

    with pytest.raises(openai.InternalServerError) as info:
        run(ask)
    assert info.value.status_code == 529
    assert info.value.body == {"message": "Overloaded", "type": "server_error", "param": None, "code": None}
