"""What `ToolCallWSGIMiddleware` costs a Flask view streaming SSE: the bare app against the wrapped one.

One Flask view streams a Chat Completions answer as N SSE events (default 500: ~2 KB of prose in
small deltas, then one hermes `<tool_call>`). Requests go straight into the WSGI callable, the way
a server's worker thread calls it (environ, start_response, iterate, close), so the figures are the
app's and the middleware's own work, without sockets. Per round, each variant serves a batch of
requests; rounds alternate the order so drift hits all alike; figures are medians over rounds.

Variants: the bare Flask app; the app with the middleware rewriting the stream (the real case);
the middleware on a route it does not own (its fixed cost when it only passes through); and the
same upstream events through the sans-IO exchange alone (the rewriting work itself, which the
ASGI middleware pays alike: the WSGI shell's own share is what is left). The
run checks it measures the real thing: the wrapped answer carries parsed `tool_calls`, the bare one
raw markup.

    python benchmarks/wsgi_overhead.py [--events N] [--rounds R] [--batch B]
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from flask import Flask, Response

from toolcall_middleware import ToolCallConfig, ToolCallExchange, ToolCallWSGIMiddleware
from toolcall_middleware._routing import route_request

App = Callable[[dict[str, Any], Any], Iterable[bytes]]
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


def make_app(events: int) -> Flask:
    prose = "The weather service needs a city name, so the model explains and then calls the tool. "
    text = (prose * (2000 // len(prose) + 1))[:2000] + CALL
    parts = max(1, events - 2)  # then the finish chunk and [DONE]
    cuts = [len(text) * i // parts for i in range(parts + 1)]
    deltas = [text[a:b] for a, b in itertools.pairwise(cuts)]
    meta = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1, "model": "qwen3"}
    app = Flask(__name__)

    def stream() -> Iterator[str]:
        for delta in deltas:
            yield f"data: {json.dumps({**meta, 'choices': [{'index': 0, 'delta': {'content': delta}}]})}\n\n"
        end = {**meta, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        yield f"data: {json.dumps(end)}\n\n"
        yield "data: [DONE]\n\n"

    @app.post("/v1/chat/completions")
    @app.post("/v1/other")
    def chat() -> Response:
        return Response(stream(), mimetype="text/event-stream")

    return app


def serve_one(app: App, path: str, body: bytes) -> bytes:
    """One request as a WSGI server's worker thread runs it."""
    environ = {
        "REQUEST_METHOD": "POST",
        "SCRIPT_NAME": "",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    out: list[bytes] = []

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], None]:
        return out.append

    result = app(environ, start_response)
    try:
        for chunk in result:
            out.append(chunk)
    finally:
        close = getattr(result, "close", None)
        if close is not None:
            close()
    return b"".join(out)


def text_of(stream: bytes) -> str:
    """The streamed `delta.content`, joined."""
    text = []
    for event in stream.split(b"\n\n"):
        if event.startswith(b"data: {"):
            for choice in json.loads(event[6:]).get("choices") or []:
                text.append((choice.get("delta") or {}).get("content") or "")
    return "".join(text)


def exchange_alone(chunks: list[bytes], request: bytes, config: ToolCallConfig) -> Callable[[], None]:
    """The same stream through the sans-IO exchange only: the rewriting work itself, no WSGI."""

    route = route_request(config, "POST", "/v1/chat/completions", None)
    assert route is not None

    def run() -> None:
        exchange = ToolCallExchange(config, route)
        exchange.forward(request)
        exchange.start("POST", 200, [(b"content-type", b"text/event-stream")])
        for chunk in chunks:  # as the middleware runs it
            exchange.feed(chunk)
        exchange.end()

    return run


def measure(work: Callable[[], object], batch: int) -> tuple[float, float]:
    """CPU and wall seconds per request over one batch."""
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(batch):
        work()
    return (time.process_time() - cpu) / batch, (time.perf_counter() - wall) / batch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=500, help="SSE events per response")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--batch", type=int, default=20, help="requests per variant per round")
    args = ap.parse_args()

    flask_app = make_app(args.events)
    bare: App = flask_app.wsgi_app
    wrapped = ToolCallWSGIMiddleware(flask_app.wsgi_app, dialect="hermes")
    messages = [{"role": "user", "content": "Paris?"}]
    request = json.dumps({"model": "qwen3", "stream": True, "messages": messages, "tools": TOOLS}).encode()

    raw = serve_one(bare, "/v1/chat/completions", request)
    rewritten = serve_one(wrapped, "/v1/chat/completions", request)
    events = raw.count(b"\n\n")
    assert "<tool_call>" in text_of(raw) and b'"tool_calls"' not in raw, "the bare app should stream raw markup"
    assert b'"tool_calls"' in rewritten and "<tool_call>" not in text_of(rewritten), "the middleware did not rewrite"

    upstream = [event + b"\n\n" for event in raw.split(b"\n\n") if event]  # one chunk per event, as Flask yields
    variants: dict[str, Callable[[], object]] = {
        "bare Flask app": lambda: serve_one(bare, "/v1/chat/completions", request),
        "with the middleware (rewriting)": lambda: serve_one(wrapped, "/v1/chat/completions", request),
        "with the middleware, route not ours (pass-through)": lambda: serve_one(wrapped, "/v1/other", request),
        "the rewriting alone (sans-IO exchange, no WSGI, no Flask)": exchange_alone(upstream, request, wrapped.config),
    }
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    wall: dict[str, list[float]] = {name: [] for name in variants}
    for work in variants.values():
        measure(work, 3)  # warm-up
    for n in range(args.rounds):
        order = list(variants) if n % 2 == 0 else list(reversed(variants))
        for name in order:
            c, w = measure(variants[name], args.batch)
            cpu[name].append(c)
            wall[name].append(w)

    base = statistics.median(cpu["bare Flask app"])
    print(f"Flask view streaming {events} SSE events; median of {args.rounds} rounds x {args.batch} requests")
    print(f"Python {sys.version.split()[0]}, in-process WSGI calls (no sockets)\n")
    print("| app | CPU per request | wall per request | CPU ratio to bare |\n|---|---:|---:|---:|")
    for name in variants:
        c, w = statistics.median(cpu[name]), statistics.median(wall[name])
        print(f"| {name} | {c * 1e3:.2f} ms | {w * 1e3:.2f} ms | {c / base:.2f}x |")


if __name__ == "__main__":
    main()
