"""What `ToolCallMiddleware` costs a stream, counted in instructions: a figure the machine's noise
does not move.

CPU time on a shared machine moves by ±10-20% from run to run; the number of instructions a
response takes does not. This runs the served benchmark's host app in-process (no sockets, the
same stream: ~2 KB in ~400 SSE chunks ending in a hermes call) under valgrind's callgrind, bare,
behind the middleware, and behind it with the body passed through (the ASGI layer alone), and
prints instructions per response. Each figure is the difference of two runs of the same process
(warm-up only, then warm-up and N responses), so start-up and imports cancel out.

Instructions are not time: the middleware's code runs between the host's, colder in the caches,
so its share of the time is larger than its share of the instructions. Use it to see whether a
change made the middleware do less, and the served benchmark for what that is worth in time.

With `--tools N` the request offers N tools (the benchmark's own and N-1 file tools of an
agent's size), as agents send: the request's rewriting and the first chunk grow with them.
`--text-bytes 100 --chunks 30` counts an agent's usual turn instead: a word, then the call.

    python benchmarks/instruction_count.py [--responses N] [--tools N] [--text-bytes B] [--chunks C]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from typing import Any

APPS = {
    "host app": "host",
    "host app + middleware": "middleware",
    "host + middleware, body passed through (ASGI layer only)": "passthrough",
}
_COLLECTED = re.compile(r"Collected : (\d+)")


def serve(app_kind: str, responses: int, tools: int, text_bytes: int, chunks: int) -> None:
    """The child: warm up, then drive `responses` requests through the app (under callgrind)."""
    from middleware_overhead import drive
    from middleware_overhead_app import make_app, request_body

    from toolcall_middleware import ToolCallMiddleware

    body = json.dumps(request_body(tools)).encode()
    media_type = "text/plain" if app_kind == "passthrough" else "text/event-stream"
    app: Any = make_app(text_bytes, chunks, media_type=media_type)
    if app_kind != "host":
        app = ToolCallMiddleware(app, dialect="hermes")

    async def run(n: int) -> None:
        for _ in range(n):
            await drive(app, body)

    asyncio.run(run(5))
    asyncio.run(run(responses))


def count(app_kind: str, responses: int, args: argparse.Namespace) -> int:
    """Instructions of the whole child process."""
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__]
    cmd += ["--child", app_kind, "--responses", str(responses), "--tools", str(args.tools)]
    cmd += ["--text-bytes", str(args.text_bytes), "--chunks", str(args.chunks)]
    # One hash seed for every child: dicts and sets then lay out alike from run to run, and the
    # count of the same code repeats (with random seeds it moves by a few hundredths).
    done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"the {app_kind} run failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--responses", type=int, default=30, help="responses counted per app")
    ap.add_argument("--tools", type=int, default=1, help="tools the request offers (at least 1)")
    ap.add_argument("--text-bytes", type=int, default=2000, help="size of the answer (as the served benchmark's)")
    ap.add_argument("--chunks", type=int, default=400, help="SSE chunks it comes in")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.tools = max(1, args.tools)
    if args.child:
        serve(args.child, args.responses, args.tools, args.text_bytes, args.chunks)
        return
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: no instruction counts (apt-get install valgrind)")
        return
    per: dict[str, float] = {}
    for label, kind in APPS.items():
        per[label] = (count(kind, args.responses, args) - count(kind, 0, args)) / args.responses
    host = per["host app"]
    offered = f"{args.tools} tool{'s' if args.tools > 1 else ''} offered"
    runs = f"{args.responses} responses per app, start-up subtracted"
    shape = f"{args.text_bytes} B in {args.chunks} chunks"
    print(f"Instructions per response (callgrind; {shape}; {offered}; {runs}):\n")
    print("| app | instructions per response | added by the middleware | per chunk | ratio |")
    print("|---|---:|---:|---:|---:|")
    for label, value in per.items():
        added = value - host
        extra = f"{added / 1e6:.2f} M | {added / args.chunks:,.0f}" if label != "host app" else " | "
        print(f"| {label} | {value / 1e6:.2f} M | {extra} | {value / host:.2f}x |")


if __name__ == "__main__":
    main()
