"""`toolcall-middleware demo`: the demo model behind the middleware, driven by the official `openai` SDK.

It serves `ToolCallMiddleware(DemoApp(dialect))` with uvicorn on a free loopback port (in a thread),
then runs one weather-tool agent loop on Chat Completions and one on the Responses API, both
streamed: the question goes out with a `get_weather` function tool, the client receives a real
tool call, runs the tool, sends the result back and receives the answer. For each turn it prints
what the raw model wrote and what the client received. Exit status 0 when every step came out as
expected, 1 otherwise. Needs the `serve` extra (uvicorn, httpx, openai).
"""

from __future__ import annotations

import contextlib
import json
import socket
import textwrap
import threading
import time
from collections.abc import Iterator
from typing import Any, TextIO

from .._middleware import ToolCallMiddleware
from ._app import DemoApp, Written

QUESTION = "What is the weather in Paris?"
PARAMETERS = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "the city name"}},
    "required": ["city"],
    "additionalProperties": False,
}
DESCRIPTION = "Current weather for a city."
CHAT_TOOL = {
    "type": "function",
    "function": {"name": "get_weather", "description": DESCRIPTION, "parameters": PARAMETERS},
}
RESPONSES_TOOL = {"type": "function", "name": "get_weather", "description": DESCRIPTION, "parameters": PARAMETERS}


def get_weather(city: str) -> str:
    """The client's tool: what a real weather service would answer."""
    return f"Sunny, 21 C in {city}"


@contextlib.contextmanager
def serving(app: Any, timeout: float = 10.0) -> Iterator[str]:
    """Serve an ASGI app with uvicorn on a free loopback port, in a thread; yield its base URL."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the demo server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout)
        sock.close()


class Demo:
    """One run: prints as it goes and collects what did not come out as expected."""

    def __init__(self, dialect: str, out: TextIO) -> None:
        self.dialect = dialect
        self.out = out
        self.written: list[Written] = []
        self.failures: list[str] = []

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def check(self, ok: bool, what: str) -> None:
        if not ok:
            self.failures.append(what)
            self.say(f"   !! unexpected: {what}")

    def raw(self) -> None:
        raw = self.written[-1].raw if self.written else "(nothing)"
        self.say("   raw model output (what the host app sent):")
        for line in raw.split("\n"):
            self.say("     | " + line)

    def received(self, label: str, value: Any) -> None:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        self.say(textwrap.fill(f"{label}: {text}", 110, initial_indent="     ", subsequent_indent="       "))

    def run(self) -> int:
        import openai

        app = ToolCallMiddleware(DemoApp(self.dialect, on_write=self.written.append), dialect=self.dialect)
        with serving(app) as base:
            client = openai.OpenAI(base_url=base + "/v1", api_key="demo", max_retries=0, timeout=30)
            self.say(f"toolcall-middleware demo: the built-in demo model writes raw `{self.dialect}` text;")
            self.say(f"ToolCallMiddleware serves it at {base}/v1. Client: the official openai SDK, streaming.")
            self.chat(client)
            self.responses(client)
        if self.failures:
            self.say(f"\nFAILED: {len(self.failures)} step(s) did not go as expected.")
            return 1
        self.say("\nOK: both APIs completed the tool loop with real tool calls.")
        return 0

    # -- Chat Completions ----------------------------------------------------------------------

    def chat(self, client: Any) -> None:
        self.say("\n== Chat Completions (POST /v1/chat/completions, stream=True) ==")
        self.say(f"1. client asks: {QUESTION!r} with tools=[get_weather(city)]")
        messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
        first = self._chat_stream(client, messages)
        self.raw()
        self.say("   client received:")
        if first["reasoning"]:
            self.received("reasoning_content", first["reasoning"])
        calls = first["tool_calls"]
        for call in calls:
            self.received("tool_call", f"{call['function']['name']}({call['function']['arguments']})  id={call['id']}")
        self.received("content", first["content"] or None)
        self.received("finish_reason", first["finish"])
        self.check(first["finish"] == "tool_calls", "chat finish_reason should be tool_calls")
        self.check(
            [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]
            == [("get_weather", {"city": "Paris"})],
            "chat should receive one get_weather call for Paris",
        )
        if not calls:
            return
        messages.append({"role": "assistant", "content": first["content"] or None, "tool_calls": calls})
        for call in calls:
            result = get_weather(**json.loads(call["function"]["arguments"]))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
            self.say(f"2. client runs get_weather and sends back (role=tool, tool_call_id={call['id']}): {result!r}")
        second = self._chat_stream(client, messages)
        self.raw()
        self.say("   client received:")
        self.received("content", second["content"])
        self.received("finish_reason", second["finish"])
        self.check(second["finish"] == "stop" and not second["tool_calls"], "chat answer should end with stop")
        self.check("Sunny, 21 C in Paris" in (second["content"] or ""), "chat answer should use the tool result")

    def _chat_stream(self, client: Any, messages: list[dict[str, Any]]) -> dict[str, Any]:
        content, reasoning, finish = "", "", None
        calls: dict[int, dict[str, Any]] = {}
        stream = client.chat.completions.create(model="demo", messages=messages, tools=[CHAT_TOOL], stream=True)
        for chunk in stream:
            for choice in chunk.choices:
                delta = choice.delta
                content += delta.content or ""
                reasoning += (delta.model_extra or {}).get("reasoning_content") or ""
                for tc in delta.tool_calls or []:
                    call = calls.setdefault(
                        tc.index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
                    )
                    call["id"] = tc.id or call["id"]
                    if tc.function is not None:
                        call["function"]["name"] += tc.function.name or ""
                        call["function"]["arguments"] += tc.function.arguments or ""
                finish = choice.finish_reason or finish
        return {"content": content, "reasoning": reasoning, "finish": finish, "tool_calls": list(calls.values())}

    # -- Responses -----------------------------------------------------------------------------

    def responses(self, client: Any) -> None:
        self.say("\n== Responses API (POST /v1/responses, stream=True) ==")
        self.say(f"1. client asks: {QUESTION!r} with tools=[get_weather(city)]")
        items: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
        first = self._responses_stream(client, items)
        self.raw()
        self.say("   client received (output items of response.completed):")
        calls = [item for item in first if item["type"] == "function_call"]
        for item in first:
            if item["type"] == "reasoning":
                text = " ".join(part.get("text", "") for part in item.get("content") or item.get("summary") or [])
                self.received("reasoning item", text)
            elif item["type"] == "function_call":
                self.received("function_call", f"{item['name']}({item['arguments']})  call_id={item['call_id']}")
            elif item["type"] == "message":
                self.received("message", " ".join(p.get("text", "") for p in item["content"]))
        self.check(
            [(c["name"], json.loads(c["arguments"])) for c in calls] == [("get_weather", {"city": "Paris"})],
            "responses should receive one get_weather function_call for Paris",
        )
        if not calls:
            return
        for call in calls:
            items.append({k: call[k] for k in ("type", "call_id", "name", "arguments")})
            result = get_weather(**json.loads(call["arguments"]))
            items.append({"type": "function_call_output", "call_id": call["call_id"], "output": result})
            self.say(
                f"2. client runs get_weather and sends back (function_call_output, "
                f"call_id={call['call_id']}): {result!r}"
            )
        second = self._responses_stream(client, items)
        self.raw()
        self.say("   client received:")
        text = " ".join(p.get("text", "") for item in second if item["type"] == "message" for p in item["content"])
        self.received("output_text", text)
        self.check(not any(item["type"] == "function_call" for item in second), "responses answer should have no call")
        self.check("Sunny, 21 C in Paris" in text, "responses answer should use the tool result")

    def _responses_stream(self, client: Any, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        stream = client.responses.create(model="demo", input=items, tools=[RESPONSES_TOOL], stream=True)
        output: list[dict[str, Any]] = []
        for event in stream:
            if event.type == "response.completed":
                output = [item.model_dump(exclude_none=True) for item in event.response.output]
        return output


def run_demo(dialect: str, out: TextIO) -> int:
    return Demo(dialect, out).run()


__all__ = ["Demo", "get_weather", "run_demo", "serving"]
