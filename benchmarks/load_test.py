"""A bounded load test: many streaming clients at once on a real uvicorn, half of them leaving early.

One uvicorn server on loopback (127.0.0.1 only) runs a raw-output model behind `ToolCallMiddleware`
(hermes; Responses clients bridged to its Chat route). Each round, `--clients` clients stream at
once, alternating Chat Completions and the Responses API; every other client disconnects
mid-stream, after a random number of events. The model writes each client its own text, with
reasoning and a tool call whose arguments name the client and the round.

It checks, per round:

- nothing lost or duplicated: each client that stays gets exactly `parse()` of what the host
  wrote it (content, reasoning, each tool call's name and arguments, in order), and its stream's
  end (`[DONE]`, `response.completed`), once;
- nothing left running: the host's streams all end soon after the round (those of clients that
  left included), as the middleware stops the work of a request whose client is gone;
- memory stays flat: the server process's RSS (`/proc/PID/status`, after each round) in the last
  rounds is within `--margin` (relative, with a 4 MB floor) of the first warm round (round 2).

Rounds and requests are bounded in count and time (`--round-timeout`, `--deadline`); the script
stops its server and exits by itself: 0 when every check held, 1 otherwise.

    python benchmarks/load_test.py [--clients 200] [--rounds 6] [--chunk-ms 2] [--margin 0.10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from toolcall_middleware import ToolCallMiddleware, parse

HOST = "127.0.0.1"
ROOT = Path(__file__).resolve().parent.parent
WORDS = "the weather in that city is a question for the tool so I ask it and then answer".split()
Message = MutableMapping[str, Any]


# -- the server: a raw-output model behind the middleware ------------------------------------------


def model_text(client: int, round_: int) -> str:
    """What the model writes for one client in one round: reasoning, text, then a call."""
    rng = random.Random(client * 1000 + round_)
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 60)))
    arguments = {"city": f"City {client}", "client": client, "round": round_, "note": 'é " \\ <b>'}
    call = json.dumps({"name": "get_weather", "arguments": arguments})
    reasoning = f"<think>Client {client} asks; {words[:80]}.</think>\n"
    return f"{reasoning}Hello {client}. {words}.\n<tool_call>\n{call}\n</tool_call>"


def host_app(chunk_seconds: float) -> Callable[[Message, Any, Any], Awaitable[None]]:
    """The raw model as a bare ASGI app: `/v1/chat/completions` streamed in 6-character chunks,
    and at any other path its stats: how many of its streams are running, and its process id."""
    running = {"streams": 0, "started": 0, "pid": os.getpid()}

    async def app(scope: Message, receive: Callable[[], Awaitable[Message]], send: Any) -> None:
        if scope["type"] != "http":
            return
        data = b""
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return
            data += message.get("body", b"")
            if not message.get("more_body", False):
                break
        if scope["path"] != "/v1/chat/completions":
            out = json.dumps(running).encode()
            await send(
                {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]}
            )
            await send({"type": "http.response.body", "body": out})
            return
        user = json.loads(data)["messages"][-1]["content"]
        client, round_ = (int(part) for part in user.split()[1:4:2])  # "client N round R"
        text = model_text(client, round_)
        meta = {"id": f"chatcmpl-{client}-{round_}", "object": "chat.completion.chunk", "created": 1, "model": "m"}
        headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
        running["streams"] += 1
        running["started"] += 1
        try:
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            for i in range(0, len(text), 6):
                chunk = {
                    **meta,
                    "choices": [{"index": 0, "delta": {"content": text[i : i + 6]}, "finish_reason": None}],
                }
                await send(
                    {
                        "type": "http.response.body",
                        "body": b"data: " + json.dumps(chunk).encode() + b"\n\n",
                        "more_body": True,
                    }
                )
                await asyncio.sleep(chunk_seconds)
            last = {**meta, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
            tail = b"data: " + json.dumps(last).encode() + b"\n\ndata: [DONE]\n\n"
            await send({"type": "http.response.body", "body": tail})
        finally:
            running["streams"] -= 1

    return app


def serve_app(port: int, chunk_seconds: float) -> None:
    import uvicorn

    app = ToolCallMiddleware(host_app(chunk_seconds), dialect="hermes", bridge="responses-to-chat")
    uvicorn.run(app, host=HOST, port=port, log_level="warning", backlog=4096, timeout_keep_alive=30)


# -- the clients ---------------------------------------------------------------------------------


def request_body(api: str, client: int, round_: int) -> dict[str, Any]:
    user = f"client {client} round {round_}"
    if api == "chat":
        tools: list[dict[str, Any]] = [
            {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
        ]
        return {"model": "m", "stream": True, "messages": [{"role": "user", "content": user}], "tools": tools}
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
    return {"model": "m", "stream": True, "input": user, "tools": tools}


@dataclass
class Got:
    """What one client read of its stream."""

    content: str = ""
    reasoning: str = ""
    calls: list[tuple[str, Any]] = field(default_factory=list)
    ends: int = 0
    events: int = 0
    chat_calls: dict[int, list[str]] = field(default_factory=dict)  # index -> [id, name, arguments]

    def finish(self) -> None:
        """A Chat stream's calls, put together by index as the SDKs do (each id given once)."""
        for _, name, arguments in (self.chat_calls[i] for i in sorted(self.chat_calls)):
            self.calls.append((name, json.loads(arguments)))


def read_event(api: str, block: str, got: Got) -> None:
    data = "\n".join(line[5:].lstrip(" ") for line in block.split("\n") if line.startswith("data:"))
    if not data:
        return
    got.events += 1
    if data == "[DONE]":
        got.ends += 1
        return
    event = json.loads(data)
    if api == "chat":
        for choice in event.get("choices") or []:
            delta = choice.get("delta") or {}
            got.content += delta.get("content") or ""
            got.reasoning += delta.get("reasoning_content") or ""
            for call in delta.get("tool_calls") or []:
                entry = got.chat_calls.setdefault(call["index"], ["", "", ""])
                entry[0] += call.get("id") or ""  # (an id given twice would show here)
                entry[1] += call.get("function", {}).get("name") or ""
                entry[2] += call.get("function", {}).get("arguments") or ""
        return
    kind = event["type"]
    if kind == "response.output_text.delta":
        got.content += event["delta"]
    elif kind == "response.reasoning_text.delta":
        got.reasoning += event["delta"]
    elif kind == "response.output_item.done" and event["item"]["type"] == "function_call":
        got.calls.append((event["item"]["name"], json.loads(event["item"]["arguments"])))
    elif kind in ("response.completed", "response.failed", "response.incomplete"):
        got.ends += 1 if kind == "response.completed" else 100  # anything but completed is a failure


async def one_client(
    http: httpx.AsyncClient, api: str, client: int, round_: int, leave_after: int | None
) -> tuple[bool, str]:
    """(left early, what is wrong or "")."""
    path = "/v1/chat/completions" if api == "chat" else "/v1/responses"
    got = Got()
    async with http.stream("POST", path, json=request_body(api, client, round_)) as response:
        if response.status_code != 200:
            return False, f"status {response.status_code}"
        buffer = ""
        async for text in response.aiter_text():
            buffer += text
            *blocks, buffer = buffer.replace("\r\n", "\n").split("\n\n")
            for block in blocks:
                read_event(api, block, got)
            if leave_after is not None and got.events >= leave_after:
                return True, ""  # leaving: the `async with` closes the connection mid-stream
    got.finish()
    if any(not entry[0].startswith("call_") or len(entry[0]) != 29 for entry in got.chat_calls.values()):
        return False, f"{api} client {client}: call ids {[e[0] for e in got.chat_calls.values()]}"
    expected = parse(model_text(client, round_), dialect="hermes")
    want = (
        expected.content or "",
        expected.reasoning or "",
        [(c.name, json.loads(c.arguments)) for c in expected.tool_calls],
        1,
    )
    have = (got.content, got.reasoning, got.calls, got.ends)
    if have != want:
        return False, f"{api} client {client}: got {have!r}, wanted {want!r}"
    return False, ""


@dataclass
class Round:
    number: int
    completed: int = 0
    left: int = 0
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    rss_kb: int = 0
    still_running: int = 0


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def run_round(http: httpx.AsyncClient, number: int, clients: int, timeout: float, pid: int) -> Round:
    rng = random.Random(number)
    result = Round(number)
    started = time.monotonic()

    async def client(n: int) -> None:
        api = "chat" if n % 4 < 2 else "responses"
        leave_after = rng.randint(2, 20) if n % 2 else None  # (a stream has 70 events or more)
        try:
            left, wrong = await one_client(http, api, n, number, leave_after)
        except (httpx.HTTPError, ValueError, KeyError) as error:
            result.errors.append(f"client {n}: {type(error).__name__}: {error}")
            return
        if wrong:
            result.errors.append(wrong)
        elif left:
            result.left += 1
        else:
            result.completed += 1

    try:
        await asyncio.wait_for(asyncio.gather(*(client(n) for n in range(clients))), timeout)
    except asyncio.TimeoutError:
        result.errors.append(f"round {number} took over {timeout} s")
    result.seconds = time.monotonic() - started
    # The streams of clients that left must end too: wait (boundedly) until none is running.
    for _ in range(50):
        stats = (await http.get("/stats")).json()
        result.still_running = stats["streams"]
        if not result.still_running:
            break
        await asyncio.sleep(0.1)
    if result.still_running:
        result.errors.append(f"{result.still_running} host streams still running after the round")
    await asyncio.sleep(0.2)
    result.rss_kb = rss_kb(pid)
    return result


async def run_rounds(args: argparse.Namespace, base: str) -> list[Round]:
    started = time.monotonic()
    rounds: list[Round] = []
    limits = httpx.Limits(max_connections=args.clients + 10, max_keepalive_connections=args.clients + 10)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=args.round_timeout) as http:
        pid = (await http.get("/stats")).json()["pid"]  # the server's process, on this machine
        print(f"{args.clients} clients per round (half leave mid-stream), {args.rounds} rounds, server pid {pid}")
        print(f"RSS before the first round: {rss_kb(pid) / 1024:.1f} MB")
        for number in range(1, args.rounds + 1):
            if time.monotonic() - started > args.deadline:
                print(f"stopping: past the {args.deadline} s deadline")
                break
            result = await run_round(http, number, args.clients, args.round_timeout, pid)
            rounds.append(result)
            print(
                f"round {number}: {result.completed} completed, {result.left} left mid-stream, "
                f"{len(result.errors)} errors, {result.seconds:.1f} s, "
                f"server RSS {result.rss_kb / 1024:.1f} MB"
            )
            for error in result.errors[:5]:
                print("   ", error[:500])
    return rounds


def report(args: argparse.Namespace, rounds: list[Round], elapsed: float) -> int:
    completed, left = sum(r.completed for r in rounds), sum(r.left for r in rounds)
    print(
        f"total: {completed + left} requests ({completed} completed and checked, {left} left mid-stream)"
        f" in {elapsed:.1f} s"
    )
    flat = True
    if len(rounds) >= 3:
        warm = rounds[1].rss_kb
        allowed = max(warm * args.margin, 4096)
        last = [r.rss_kb for r in rounds[-2:]]
        flat = all(abs(kb - warm) <= allowed for kb in last)
        verdict = "flat" if flat else "NOT flat"
        print(
            f"RSS: first warm round {warm / 1024:.1f} MB, last rounds"
            f" {', '.join(f'{kb / 1024:.1f}' for kb in last)} MB: {verdict} (margin {allowed / 1024:.1f} MB)"
        )
    ok = flat and len(rounds) == args.rounds and not any(r.errors for r in rounds)
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


def run(args: argparse.Namespace) -> int:
    """Start the server (the test suite's helper: a subprocess on loopback, stopped after), run the rounds."""
    sys.path.insert(0, str(ROOT))
    from tests.servers import free_port, serve

    port = free_port()
    command = [sys.executable, str(Path(__file__).resolve()), "--serve", str(port), "--chunk-ms", str(args.chunk_ms)]
    started = time.monotonic()
    with serve(command, port) as base:
        rounds = asyncio.run(run_rounds(args, base))
    return report(args, rounds, time.monotonic() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--chunk-ms", type=float, default=2.0, help="the host's pause between chunks")
    parser.add_argument("--margin", type=float, default=0.10, help="RSS drift allowed after the first warm round")
    parser.add_argument("--round-timeout", type=float, default=120.0)
    parser.add_argument("--deadline", type=float, default=600.0, help="no new round after this many seconds")
    parser.add_argument("--serve", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve_app(args.serve, args.chunk_ms / 1000)
        return
    sys.exit(run(args))


if __name__ == "__main__":
    main()
