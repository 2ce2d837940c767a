"""The `toolcall-middleware` command: `demo`, `serve`, `parse` raw model output, list the `dialects`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

from .core.dialects import UnknownDialectError, get_dialect, list_dialects
from .core.events import Event, ReasoningDelta, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart, TruncatedCall
from .core.parser import StreamParser
from .core.result import ParseResult, merge_events
from .demo.command import add_demo_command
from .serve import add_serve_command


def _event_json(event: Event) -> dict[str, Any]:
    if isinstance(event, TextDelta):
        return {"type": "text", "text": event.text}
    if isinstance(event, ReasoningDelta):
        return {"type": "reasoning", "text": event.text}
    if isinstance(event, ToolCallStart):
        return {"type": "tool_call_start", "index": event.index, "id": event.id, "name": event.name}
    if isinstance(event, ToolCallDelta):
        return {"type": "tool_call_delta", "index": event.index, "arguments": event.arguments}
    if isinstance(event, ToolCallEnd):
        return {"type": "tool_call_end", "index": event.index, "arguments": event.arguments}
    if isinstance(event, TruncatedCall):
        return {"type": "truncated_call", "text": event.text}
    raise TypeError(f"unknown event {event!r}")


def result_json(dialect: str, result: ParseResult) -> dict[str, Any]:
    return {
        "dialect": dialect,
        "content": result.content,
        "reasoning": result.reasoning,
        "tool_calls": [
            {"id": c.id, "name": c.name, "arguments": json.loads(c.arguments)} for c in result.tool_calls
        ],
        "truncated": result.truncated,
        "finish_reason": result.finish_reason,
    }


def _pieces(stream: TextIO, size: int) -> Iterator[str]:
    """The input as it arrives, in pieces of at most `size` characters."""
    while piece := stream.read(size):
        yield piece


def _load_tools(path: str | None) -> list[Any] | None:
    if path is None:
        return None
    with open(path, encoding="utf-8") as f:
        value = json.load(f)
    tools = value.get("tools", value) if isinstance(value, dict) else value
    if not isinstance(tools, list):
        raise SystemExit(f"--tools {path}: expected a list of tools or an object with 'tools'")
    return tools


def cmd_parse(args: argparse.Namespace) -> int:
    try:
        parser = StreamParser(
            args.dialect,
            model=args.model,
            tools=_load_tools(args.tools),
            generation_prompt=args.generation_prompt,
            thinking=args.thinking,
        )
    except UnknownDialectError as e:
        print(f"toolcall-middleware: {e}", file=sys.stderr)
        return 2
    stream: TextIO = sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")
    events: list[Event] = []
    with stream:
        for piece in _pieces(stream, args.chunk):
            new = parser.feed(piece)
            events.extend(new)
            if args.stream:
                for event in new:
                    print(json.dumps(_event_json(event), ensure_ascii=False), flush=True)
    tail = parser.close()
    events.extend(tail)
    if args.stream:
        for event in tail:
            print(json.dumps(_event_json(event), ensure_ascii=False), flush=True)
        return 0
    print(json.dumps(result_json(parser.dialect.name, merge_events(events)), ensure_ascii=False, indent=2))
    return 0


def cmd_dialects(args: argparse.Namespace) -> int:
    for name in list_dialects():
        dialect = get_dialect(name)
        print(f"{name:16} {dialect.description}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="toolcall-middleware", description=__doc__)
    sub = top.add_subparsers(dest="command", required=True)

    p = sub.add_parser("parse", help="parse raw model output into content, reasoning and tool calls (JSON)")
    p.add_argument("file", help="a file of raw model output, or - for standard input")
    p.add_argument("--dialect", help="the format (see `toolcall-middleware dialects`)")
    p.add_argument("--model", help="a served model name that selects the dialect, e.g. Qwen/Qwen3-8B")
    p.add_argument("--stream", action="store_true", help="print the events as they come, one JSON object a line")
    p.add_argument("--tools", help="a JSON file with the request's tools (types parameter values)")
    p.add_argument("--generation-prompt", help="the text the chat template appended after the last message")
    thinking = p.add_mutually_exclusive_group()
    thinking.add_argument("--thinking", dest="thinking", action="store_true", default=None)
    thinking.add_argument("--no-thinking", dest="thinking", action="store_false")
    p.add_argument("--chunk", type=int, default=4, help="characters per piece fed from a file (default 4)")
    p.set_defaults(func=cmd_parse)

    d = sub.add_parser("dialects", help="list the dialects")
    d.set_defaults(func=cmd_dialects)

    add_serve_command(sub)
    add_demo_command(sub)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "parse" and args.dialect is None and args.model is None:
        print("toolcall-middleware parse: give --dialect or --model", file=sys.stderr)
        return 2
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
