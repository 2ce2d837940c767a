"""What `ToolCallMiddleware` costs a served stream: real uvicorn, real sockets, with and without it.

Two uvicorn servers run the same host app (`middleware_overhead_app.py`: ~2 KB of prose in ~400
SSE chunks, vLLM framing, one hermes `<tool_call>` at the end); one is wrapped in the middleware.
This process is the client, on loopback, with httpx: per round and per server, N sequential
streamed requests, then M at once. Rounds alternate the order of the two servers so drift in the
machine hits both alike; each figure is the median over rounds (TTFT: over all requests).

Server CPU is the uvicorn process's own CPU time, read from /proc before and after each phase
(per-thread `schedstat`, nanoseconds; else `stat` utime+stime, in clock ticks). On a machine
with two or more cores the servers are pinned to one core and the client to another, so the
client's work does not show up as server time. The run checks it measures the real thing: the
middleware's last response must carry parsed `tool_calls`, the bare server's raw markup.

If the CPU ratio is over budget (or with --profile), the same stream goes through the app
in-process, without sockets: CPU per response bare, wrapped, and wrapped with the body passed
through (the ASGI layer alone); each stage of the exchange alone, unprofiled; then cProfile's
hot spots in the middleware. Wall-clock figures (TTFT, requests/s) move with whatever else the
machine runs; the CPU figures much less.

With `--control` a second bare server runs beside the two: what the first and the second bare
server differ by is what the machine's noise alone makes of a comparison, the yardstick for the
time to first text the middleware adds. `--tools N` offers N tools (an agent's file tools past
the first), as agents send with every turn; `--text-bytes 100 --chunks 30` is an agent's usual
turn, a word and the call.

    python benchmarks/middleware_overhead.py [--rounds R] [--sequential N] [--concurrent M]
        [--text-bytes B] [--chunks C] [--tools N] [--first-token-ms F] [--control] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from middleware_overhead_app import CALL_ARGS, CALL_NAME, make_app, request_body

from toolcall_middleware import ToolCallMiddleware

BUDGET = 1.20  # the default install's budget (DESIGN.md); 1.35x with everything in Python
APP = Path(__file__).with_name("middleware_overhead_app.py")
PATH = "/v1/chat/completions"


# -- the server processes -----------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """CPU time of a whole process (all threads): schedstat when the kernel has it, else stat."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        return total / 1e9
    except (OSError, ValueError, IndexError):
        pass
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()  # the name may hold spaces: cut after it
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_source(pid: int) -> str:
    return "schedstat (ns)" if os.path.exists(f"/proc/{pid}/schedstat") else "stat utime+stime (ticks)"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Server:
    name: str
    middleware: bool
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{PATH}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, args: argparse.Namespace, cpu: int | None) -> None:
        self.port = free_port()
        cmd = [sys.executable, str(APP), "--port", str(self.port)]
        cmd += ["--text-bytes", str(args.text_bytes), "--chunks", str(args.chunks)]
        cmd += ["--first-token-ms", str(args.first_token_ms)]
        cmd += ["--middleware"] if self.middleware else []
        self.proc = subprocess.Popen(cmd)
        if cpu is not None:
            os.sched_setaffinity(self.proc.pid, {cpu})
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"{self.name} server exited with {self.proc.returncode}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit(f"{self.name} server did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# -- the client -----------------------------------------------------------------------------------


@dataclass
class Reply:
    ttft: float  # seconds from sending the request to the first non-empty `delta.content`
    total: float
    raw: bytes = b""  # the whole body, kept only when asked (for the final check)


def first_text(event: bytes) -> bool:
    if not event.startswith(b"data: ") or event.startswith(b"data: [DONE]"):
        return False
    choices = json.loads(event[6:]).get("choices") or []
    return bool(choices and (choices[0].get("delta") or {}).get("content"))


async def one(client: httpx.AsyncClient, url: str, body: bytes, keep: bool) -> Reply:
    """One streamed request; SSE events are decoded only until the first text, then just counted."""
    start = time.perf_counter()
    ttft: float | None = None
    pending = b""
    kept: list[bytes] = []
    headers = {"content-type": "application/json"}
    async with client.stream("POST", url, content=body, headers=headers) as response:
        if response.status_code != 200:
            raise SystemExit(f"{url}: HTTP {response.status_code}")
        async for data in response.aiter_raw():
            if keep:
                kept.append(data)
            if ttft is None:
                pending += data
                *events, pending = pending.split(b"\n\n")
                if any(first_text(e) for e in events):
                    ttft = time.perf_counter() - start
    total = time.perf_counter() - start
    if ttft is None:
        raise SystemExit(f"{url}: no text in the stream")
    return Reply(ttft, total, b"".join(kept))


@dataclass
class Phase:
    cpu: float  # server CPU seconds per response
    rps: float
    ttfts: list[float]
    client_cpu: float  # this process's CPU seconds per response
    last: Reply


async def phase(client: httpx.AsyncClient, server: Server, body: bytes, n: int, concurrent: bool) -> Phase:
    cpu0, client0, wall0 = cpu_seconds(server.pid), time.process_time(), time.perf_counter()
    if concurrent:
        replies = list(await asyncio.gather(*(one(client, server.url, body, keep=i == n - 1) for i in range(n))))
    else:
        replies = [await one(client, server.url, body, keep=i == n - 1) for i in range(n)]
    wall = time.perf_counter() - wall0
    cpu = cpu_seconds(server.pid) - cpu0
    client_cpu = time.process_time() - client0
    return Phase(cpu / n, n / wall, [r.ttft for r in replies], client_cpu / n, replies[-1])


# -- the checks -------------------------------------------------------------------------------


def events_of(raw: bytes) -> list[dict[str, Any]]:
    out = []
    for event in raw.split(b"\n\n"):
        if event.startswith(b"data: ") and not event.startswith(b"data: [DONE]"):
            out.append(json.loads(event[6:]))
    return out


def check(server: Server, reply: Reply) -> str:
    """The middleware's client must get a parsed call and no markup; the bare server's, markup."""
    content, finish = "", None
    calls: dict[int, dict[str, str]] = {}
    for chunk in events_of(reply.raw):
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            content += delta.get("content") or ""
            for call in delta.get("tool_calls") or []:
                entry = calls.setdefault(call["index"], {"name": "", "arguments": ""})
                function = call.get("function") or {}
                entry["name"] += function.get("name") or ""
                entry["arguments"] += function.get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    if server.middleware:
        ok = (
            len(calls) == 1
            and calls[0]["name"] == CALL_NAME
            and json.loads(calls[0]["arguments"]) == CALL_ARGS
            and "<tool_call>" not in content
            and finish == "tool_calls"
        )
        seen = f"tool_calls={list(calls.values())}, finish_reason={finish}"
    else:
        ok = not calls and "<tool_call>" in content and f'"name": "{CALL_NAME}"' in content and finish == "stop"
        seen = f"raw <tool_call> markup in content, finish_reason={finish}"
    if not ok:
        raise SystemExit(f"{server.name}: the last response is not what it should be: {seen}\n{content[-300:]!r}")
    return seen


# -- the in-process profile -------------------------------------------------------------------

Message = MutableMapping[str, Any]


async def drive(
    app: Callable[..., Awaitable[None]], body: bytes, capture: Callable[[Message], Awaitable[None]] | None = None
) -> int:
    """One request through an ASGI app in-process; returns the number of body bytes sent."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": PATH,
        "raw_path": PATH.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 2),
    }
    sent = 0
    given = False

    async def receive() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # the client never leaves
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        nonlocal sent
        sent += len(message.get("body", b""))
        if capture is not None:
            await capture(message)

    await app(scope, receive, send)
    return sent


def cpu_per_request(apps: list[Any], body: bytes, n: int, repeat: int = 5) -> list[float]:
    """CPU seconds per request of in-process ASGI apps, batches interleaved, best of `repeat` each
    (the least disturbed by whatever else the machine runs)."""

    async def batch(app: Any) -> float:
        start = time.process_time()
        for _ in range(n):
            await drive(app, body)
        return (time.process_time() - start) / n

    best = [float("inf")] * len(apps)
    for app in apps:
        asyncio.run(batch(app))  # warm-up
    for _ in range(repeat):
        for i, app in enumerate(apps):
            best[i] = min(best[i], asyncio.run(batch(app)))
    return best


def host_messages(args: argparse.Namespace, body: bytes) -> list[bytes]:
    """The body messages the host app sends, as the middleware receives them."""
    out: list[bytes] = []
    app = make_app(args.text_bytes, args.chunks)

    async def capture(message: Message) -> None:
        if message["type"] == "http.response.body" and message.get("body"):
            out.append(bytes(message["body"]))

    asyncio.run(drive(app, body, capture))
    return out


def stages(args: argparse.Namespace, body: bytes) -> list[tuple[str, float]]:
    """CPU per response of each stage of the exchange run alone on the same stream (no profiler).

    Uses the core's internal stages, so a refactor may break it: the caller reports that and goes on.
    """
    from toolcall_middleware import StreamParser
    from toolcall_middleware.core._detect import reader_for
    from toolcall_middleware.core._exchange import Exchange, RouteMatch
    from toolcall_middleware.core.apis.chat import ChatStreamEmitter
    from toolcall_middleware.core.emitters._meta import Upstream
    from toolcall_middleware.core.framing.sse import SSEDecoder, encode_data
    from toolcall_middleware.core.policy import PolicyFilter
    from toolcall_middleware.core.policy._validation import SchemaCheck

    messages = host_messages(args, body)
    request = json.loads(body)
    tools = request["tools"]
    config = ToolCallMiddleware(make_app(), dialect="hermes").config
    datas = [e.data for m in messages for e in SSEDecoder().feed(m) if e.data and e.data != "[DONE]"]
    objs = [json.loads(d) for d in datas]
    texts = [c["choices"][0]["delta"].get("content") or "" for c in objs]
    parser = StreamParser("hermes", tools=tools)
    parsed = [parser.feed(t) for t in texts] + [parser.close()]
    policy = PolicyFilter(tools, None, None)
    judged: list[list[Any]] = [list(policy.feed(e)) for e in parsed] + [list(policy.close())]

    def exchange() -> None:  # as the middleware drives it (the fast path for the usual chunk)
        ex = Exchange(config, RouteMatch("chat", "chat"))
        ex.forward(body)
        ex.start("POST", 200, [(b"content-type", b"text/event-stream; charset=utf-8")])
        for m in messages:
            ex.feed(m)
        ex.end()

    def sse() -> None:
        decoder = SSEDecoder()
        for m in messages:
            decoder.feed(m)

    def loads() -> None:
        for d in datas:
            json.loads(d)

    def reader() -> None:
        r = reader_for("chat", stream=True)
        for o in objs:
            r.feed(o)

    raws = [e.raw for m in messages for e in SSEDecoder().feed(m) if e.data and e.data != "[DONE]"]

    def template() -> None:  # the reader's template on each whole event, else decoding
        r = reader_for("chat", stream=True)
        for raw, data in zip(raws, datas, strict=True):
            r.settle()  # (as `Answer.feed_event` reads it: the template on the bytes as they came)
            template = r.template
            if template is None or r.done or template.match_text(raw) is None:
                r.feed_data(data)

    def parse() -> None:
        p = StreamParser("hermes", tools=tools)
        for t in texts:
            p.feed(t)
        p.close()

    def filter_() -> None:
        f = PolicyFilter(tools, None, None)
        for e in parsed:
            list(f.feed(e))
        list(f.close())

    def schema() -> None:
        SchemaCheck(tools[0]["function"]["parameters"], "tools[0].function.parameters")

    def emit() -> None:
        emitter = ChatStreamEmitter(Upstream(id="chatcmpl-bench", model="bench-model", created=1))
        for e in judged:
            b"".join(encode_data(c) for c in emitter.feed(e))
        emitter.finish()

    def emit_sse() -> None:  # what the exchange runs: text chunks from a template
        emitter = ChatStreamEmitter(Upstream(id="chatcmpl-bench", model="bench-model", created=1))
        for e in judged:
            emitter.feed_sse(e)
        emitter.finish()

    def dumps() -> None:
        for o in objs:
            json.dumps(o, ensure_ascii=False, separators=(",", ":")).encode()

    def best(fn: Callable[[], None], n: int = 30) -> float:
        fn()
        times = []
        for _ in range(5):
            start = time.process_time()
            for _ in range(n):
                fn()
            times.append((time.process_time() - start) / n)
        return min(times)

    return [
        ("the whole exchange (core._exchange.Exchange, the fast path for the usual chunk), alone", best(exchange)),
        ("  chunk template on each whole SSE event (template.match_text, else feed_data)", best(template)),
        ("  hermes StreamParser", best(parse)),
        ("  PolicyFilter (schema compile included)", best(filter_)),
        ("    compiling the tool's schema once, uncached (SchemaCheck; requests share it)", best(schema)),
        ("  ChatStreamEmitter.feed_sse (text chunks from a template)", best(emit_sse)),
        ("  the long way, which the fast path skips for most chunks:", 0.0),
        ("    SSE decoding (framing.sse.SSEDecoder)", best(sse)),
        ("    json.loads of each upstream chunk", best(loads)),
        ("    inbound chat reader, decoded chunks (reader.feed)", best(reader)),
        ("    ChatStreamEmitter.feed + encode_data (dicts, json.dumps)", best(emit)),
        ("  (floor: json.dumps of each upstream chunk)", best(dumps)),
    ]


def profile(args: argparse.Namespace, body: bytes) -> None:
    n = args.profile_requests
    chunks = len(host_messages(args, body))
    size = (args.text_bytes, args.chunks)
    # The same bytes as text/plain: the middleware's ASGI layer runs, the exchange passes them through.
    host, wrapped, plain_host, plain = cpu_per_request(
        [
            make_app(*size),
            ToolCallMiddleware(make_app(*size), dialect="hermes"),
            make_app(*size, "text/plain"),
            ToolCallMiddleware(make_app(*size, "text/plain"), dialect="hermes"),
        ],
        body,
        n,
    )
    print(f"\nIn-process, no sockets (CPU per response, best of 5 interleaved batches of {n}; {chunks} body messages):")
    print("| app | CPU per response | added by the middleware | per chunk |\n|---|---:|---:|---:|")
    print(f"| host app | {host * 1e3:.2f} ms | | |")
    print(
        f"| host app + middleware | {wrapped * 1e3:.2f} ms | {(wrapped - host) * 1e3:.2f} ms | "
        f"{(wrapped - host) / chunks * 1e6:.1f} µs |"
    )
    print(
        f"| host + middleware, body passed through (ASGI layer only) | {plain * 1e3:.2f} ms | "
        f"{(plain - plain_host) * 1e3:.2f} ms | {(plain - plain_host) / chunks * 1e6:.1f} µs |"
    )

    kinds = {"field": "reasoning in `reasoning_content`", "think": "reasoning in `<think>` in the content"}
    print("\nThe same answer with its first half as reasoning (CPU per response, in-process, as above):")
    print("| stream | host app | added by the middleware | per chunk |\n|---|---:|---:|---:|")
    for kind, label in kinds.items():
        bare, wrapped_kind = cpu_per_request(
            [make_app(*size, reasoning=kind), ToolCallMiddleware(make_app(*size, reasoning=kind), dialect="hermes")],
            body,
            n,
        )
        added = wrapped_kind - bare
        print(f"| {label} | {bare * 1e3:.2f} ms | {added * 1e3:.2f} ms | {added / chunks * 1e6:.1f} µs |")

    try:
        rows = stages(args, body)
    except Exception as exc:  # internal names moved: the rest of the report still stands
        print(f"\n(stage breakdown unavailable: {type(exc).__name__}: {exc})")
    else:
        print("\nStages of the exchange, each run alone on the same stream (no profiler, best of 5):")
        print("| stage | CPU per response | per chunk |\n|---|---:|---:|")
        for label, seconds in rows:
            if not seconds:
                print(f"| {label} | | |")
                continue
            print(f"| {label} | {seconds * 1e3:.2f} ms | {seconds / chunks * 1e6:.2f} µs |")

    wrapped_app = ToolCallMiddleware(make_app(args.text_bytes, args.chunks), dialect="hermes")
    runs = max(10, n // 4)

    async def batch() -> None:
        for _ in range(runs):
            await drive(wrapped_app, body)

    asyncio.run(batch())
    profiler = cProfile.Profile()
    profiler.enable()
    asyncio.run(batch())
    profiler.disable()
    stats: Any = pstats.Stats(profiler)
    rows_p = []
    for (file, line, func), (_cc, calls, tottime, cumtime, _callers) in stats.stats.items():
        if "toolcall_middleware" in file:
            where = file.split("toolcall_middleware/", 1)[1]
            rows_p.append((tottime, cumtime, calls, f"{where}:{line}({func})"))
    print(f"\nMiddleware hot spots (cProfile over {runs} responses; its overhead inflates times, use them to rank):")
    print("| own µs/response | cumulative µs/response | calls/response | function |\n|---:|---:|---:|---|")
    for tottime, cumtime, calls, name in sorted(rows_p, reverse=True)[: args.profile_top]:
        print(f"| {tottime / runs * 1e6:.0f} | {cumtime / runs * 1e6:.0f} | {calls // runs} | {name} |")


# -- main -------------------------------------------------------------------------------------


@dataclass
class Results:
    seq: list[Phase] = field(default_factory=list)
    conc: list[Phase] = field(default_factory=list)


def med(values: list[float]) -> float:
    return statistics.median(values)


async def load(args: argparse.Namespace, servers: list[Server], body: bytes) -> dict[str, Results]:
    results = {s.name: Results() for s in servers}
    limits = httpx.Limits(max_connections=max(args.concurrent, 1), max_keepalive_connections=max(args.concurrent, 1))
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:
        for server in servers:  # warm-up: imports, first-request paths, connection pool
            await phase(client, server, body, args.warmup, concurrent=False)
            await phase(client, server, body, args.concurrent, concurrent=True)
        for r in range(args.rounds):
            for server in servers if r % 2 == 0 else servers[::-1]:
                results[server.name].seq.append(await phase(client, server, body, args.sequential, False))
                results[server.name].conc.append(await phase(client, server, body, args.concurrent, True))
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7, help="alternating rounds per server")
    ap.add_argument("--sequential", type=int, default=40, help="N sequential requests per round")
    ap.add_argument("--concurrent", type=int, default=16, help="M requests at once per round")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--text-bytes", type=int, default=2000, help="size of the streamed answer")
    ap.add_argument("--chunks", type=int, default=400, help="SSE chunks the answer is streamed in")
    ap.add_argument("--tools", type=int, default=1, help="tools the request offers (at least 1)")
    ap.add_argument("--control", action="store_true", help="a second bare server: the comparison's noise")
    ap.add_argument(
        "--first-token-ms",
        type=float,
        default=0.0,
        help="the host waits this long after its head before its first chunk (a model's prefill); 0: at once",
    )
    ap.add_argument("--no-pin", action="store_true", help="do not pin servers and client to separate cores")
    ap.add_argument("--profile", action="store_true", help="profile even when the ratio is within budget")
    ap.add_argument("--profile-requests", type=int, default=100)
    ap.add_argument("--profile-top", type=int, default=15)
    args = ap.parse_args()

    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    pin = not args.no_pin and len(cores) >= 2
    if pin:
        os.sched_setaffinity(0, {cores[1]})
    servers = [Server("without", middleware=False), Server("with", middleware=True)]
    if args.control:
        servers.append(Server("control", middleware=False))
    body = json.dumps(request_body(max(1, args.tools))).encode()
    try:
        for server in servers:
            server.start(args, cores[0] if pin else None)
        start = time.perf_counter()
        results = asyncio.run(load(args, servers, body))
        elapsed = time.perf_counter() - start
        seen = {s.name: check(s, results[s.name].seq[-1].last) for s in servers}
        seen_conc = {s.name: check(s, results[s.name].conc[-1].last) for s in servers}
        source = cpu_source(servers[0].pid)
    finally:
        for server in servers:
            server.stop()

    raw, mw = results["without"], results["with"]
    rows: list[tuple[str, float, float, str]] = []

    def add(label: str, without: float, with_: float, unit: str) -> None:
        rows.append((label, without, with_, unit))

    add("server CPU per response, sequential", med([p.cpu for p in raw.seq]), med([p.cpu for p in mw.seq]), "ms")
    add("server CPU per response, concurrent", med([p.cpu for p in raw.conc]), med([p.cpu for p in mw.conc]), "ms")
    add(
        "time to first text, sequential",
        med([t for p in raw.seq for t in p.ttfts]),
        med([t for p in mw.seq for t in p.ttfts]),
        "ms",
    )
    add(
        "time to first text, concurrent",
        med([t for p in raw.conc for t in p.ttfts]),
        med([t for p in mw.conc for t in p.ttfts]),
        "ms",
    )
    add("requests/s, sequential", med([p.rps for p in raw.seq]), med([p.rps for p in mw.seq]), "/s")
    add("requests/s, concurrent", med([p.rps for p in raw.conc]), med([p.rps for p in mw.conc]), "/s")
    add(
        "client CPU per response, sequential",
        med([p.client_cpu for p in raw.seq]),
        med([p.client_cpu for p in mw.seq]),
        "ms",
    )

    placement = f"pinned: servers on core {cores[0]}, client on core {cores[1]}" if pin else "not pinned"
    print(
        f"{args.rounds} rounds x ({args.sequential} sequential + {args.concurrent} concurrent) streamed requests "
        f"per server; answer {args.text_bytes} B in {args.chunks} chunks, hermes; {max(1, args.tools)} tool(s); "
        f"first chunk {args.first_token_ms:g} ms after the head; "
        f"server CPU from /proc {source}; {placement}; "
        f"load took {elapsed:.1f} s.\n"
    )
    print("| metric (median) | without | with middleware | ratio |\n|---|---:|---:|---:|")
    for label, without, with_, unit in rows:
        scale = 1e3 if unit == "ms" else 1.0
        fmt = "{:.2f} ms" if unit == "ms" else "{:.0f} /s"
        print(f"| {label} | {fmt.format(without * scale)} | {fmt.format(with_ * scale)} | {with_ / without:.2f}x |")

    ttft = {label: (without, with_) for label, without, with_, _ in rows if label.startswith("time to first text")}
    seq_without, seq_with = ttft["time to first text, sequential"]
    added = (seq_with - seq_without) * 1e3
    print(f"\nTime to first text added by the middleware (sequential, medians): {added:+.3f} ms.")
    if args.control:
        control = results["control"]
        noise = (med([t for p in control.seq for t in p.ttfts]) - seq_without) * 1e3
        cpu_noise = med([p.cpu for p in control.seq]) / med([p.cpu for p in raw.seq])
        print(
            f"The same bare server twice (the comparison's noise): time to first text {noise:+.3f} ms, "
            f"server CPU {cpu_noise:.2f}x."
        )

    print("\nChecked, last response of each run:")
    for name in seen:
        print(f"- {name}: sequential: {seen[name]}; concurrent: {seen_conc[name]}")

    ratio = med([p.cpu for p in mw.seq]) / med([p.cpu for p in raw.seq])
    verdict = "within" if ratio <= BUDGET else "OVER"
    print(f"\nServer CPU ratio (sequential) {ratio:.2f}x: {verdict} the {BUDGET:.2f}x budget.")
    if ratio > BUDGET or args.profile:
        profile(args, body)


if __name__ == "__main__":
    main()
