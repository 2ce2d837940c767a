"""The `toolcall-middleware` command: `demo`, `serve`, `parse` raw model output, list the `dialects`.

Every parser of it takes no abbreviated flags (`--arguments-stream` is an error, not
`--arguments-streaming`) and shows each flag's default in `--help`. A mistake is one line on
standard error and exit status 2, never a traceback; the bare command prints the help.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

from . import __version__
from ._serve import add_serve_command
from .core._events import Event, ReasoningDelta, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart, TruncatedCall
from .core._parser import StreamParser
from .core._result import ParseResult, merge_events
from .core.dialects import UnknownDialectError, get_dialect, list_dialects
from .demo._command import add_demo_command


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
        "tool_calls": [{"id": c.id, "name": c.name, "arguments": json.loads(c.arguments)} for c in result.tool_calls],
        "truncated": result.truncated,
        "finish_reason": result.finish_reason,
    }


def _pieces(stream: TextIO, size: int) -> Iterator[str]:
    """The input as it arrives, in pieces of at most `size` characters."""
    while piece := stream.read(size):
        yield piece


class CommandError(Exception):
    """A mistake in what the command was given: said in one line, exit status 2."""


class HelpFormatter(argparse.HelpFormatter):
    """Help that shows a flag's default where it has one worth showing."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if "%(default)" in text or default in (None, False, argparse.SUPPRESS) or action.option_strings == []:
            return text
        return f"{text} (default: %(default)s)"


class Parser(argparse.ArgumentParser):
    """The command's parsers: no abbreviated flags, defaults in the help."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)


def _read(path: str, what: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise CommandError(f"{what} {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise CommandError(f"{what} {path}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def _load_tools(path: str | None) -> list[Any] | None:
    if path is None:
        return None
    try:
        value = json.loads(_read(path, "--tools"))
    except json.JSONDecodeError as e:
        raise CommandError(f"--tools {path}: not JSON: {e.msg} (line {e.lineno}, column {e.colno})") from None
    tools = value.get("tools", value) if isinstance(value, dict) else value
    if not isinstance(tools, list):
        raise CommandError(f"--tools {path}: expected a list of tools or an object with 'tools'")
    return tools


def cmd_parse(args: argparse.Namespace) -> int:
    # Neither a dialect nor a model: `auto` reads each format by its markers.
    dialect = args.dialect if args.dialect is not None or args.model is not None else "auto"
    try:
        parser = StreamParser(
            dialect,
            model=args.model,
            tools=_load_tools(args.tools),
            generation_prompt=args.generation_prompt,
            thinking=args.thinking,
        )
    except UnknownDialectError as e:
        raise CommandError(f"--dialect: {e}") from None
    except ValueError as e:  # tools of the wrong shape
        raise CommandError(f"--tools {args.tools}: {e}") from None
    stream: TextIO = sys.stdin if args.file == "-" else io.StringIO(_read(args.file, "file"))
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
    top = Parser(prog="toolcall-middleware", description=__doc__.split("\n\n")[0])
    top.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = top.add_subparsers(dest="command", parser_class=Parser, metavar="COMMAND")

    p = sub.add_parser("parse", help="parse raw model output into content, reasoning and tool calls (JSON)")
    p.add_argument("file", help="a file of raw model output, or - for standard input")
    p.add_argument("--dialect", help="the format (see `toolcall-middleware dialects`); neither it nor --model: auto")
    p.add_argument("--model", help="a served model name that selects the dialect, e.g. Qwen/Qwen3-8B")
    p.add_argument("--stream", action="store_true", help="print the events as they come, one JSON object a line")
    p.add_argument("--tools", help="a JSON file with the request's tools (types parameter values)")
    p.add_argument("--generation-prompt", help="the text the chat template appended after the last message")
    thinking = p.add_mutually_exclusive_group()
    thinking.add_argument(
        "--thinking", dest="thinking", action="store_true", default=None, help="the request turned thinking on"
    )
    thinking.add_argument("--no-thinking", dest="thinking", action="store_false", help="the request turned it off")
    p.add_argument("--chunk", type=int, default=4, help="characters per piece fed from a file")
    p.set_defaults(func=cmd_parse)

    d = sub.add_parser("dialects", help="list the dialects")
    d.set_defaults(func=cmd_dialects)

    add_serve_command(sub)
    add_demo_command(sub)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        result: int = args.func(args)
    except CommandError as e:
        print(f"toolcall-middleware {args.command}: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader left (`parse … | head`): nothing more to say, and nothing to say it to. What
        # Python would flush to the closed pipe at exit goes nowhere instead of to a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return result


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = [
    "CommandError",
    "HelpFormatter",
    "Parser",
    "build_parser",
    "cmd_dialects",
    "cmd_parse",
    "main",
    "result_json",
]
