"""What the in-process framework tests share: requests and checks of the rewritten answers."""

from __future__ import annotations

import json
from typing import Any

from tests.asgi.harness import sse_events
from tests.wire import replay_chat, replay_responses

from .sdk_turns import RESPONSES_TOOLS, TOOLS


def chat_request(*, stream: bool) -> dict[str, Any]:
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    return {"model": "qwen3", "messages": messages, "tools": TOOLS, "stream": stream}


def responses_request(*, stream: bool) -> dict[str, Any]:
    return {"model": "qwen3", "input": "Weather in Paris?", "tools": RESPONSES_TOOLS, "stream": stream}


def check_chat(body: bytes, *, stream: bool) -> None:
    if stream:
        message = replay_chat([c for c in sse_events(body) if c != "[DONE]"]).choices[0].message
        calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]
        content = message.content
    else:
        message = json.loads(body)["choices"][0]["message"]
        calls = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message["tool_calls"]]
        content = message["content"]
    assert content == "Let me check." and calls == [("get_weather", {"city": "Paris"})]


def check_responses(body: bytes, *, stream: bool) -> None:
    output = replay_responses(sse_events(body)).model_dump()["output"] if stream else json.loads(body)["output"]
    calls = [(i["name"], json.loads(i["arguments"])) for i in output if i["type"] == "function_call"]
    assert calls == [("get_weather", {"city": "Paris"})]
