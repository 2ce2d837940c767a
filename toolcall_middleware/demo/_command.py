"""The `demo` subcommand's arguments; the run itself is in `run` (imported only when it runs)."""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any

from ..core.request._render import rendered_dialects


def add_demo_command(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="run a weather-tool agent loop (openai SDK, chat and responses, streamed) against the demo model",
        description="Serve the built-in demo model behind the middleware on loopback and drive it with the "
        "official openai SDK, printing what the raw model wrote and what the client received.",
    )
    p.add_argument("--dialect", default="hermes", choices=rendered_dialects(), help="the raw format the model writes")
    p.set_defaults(func=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    try:
        for needed in ("uvicorn", "openai"):  # (the run imports them only when it uses them)
            importlib.import_module(needed)
        from .run import run_demo
    except ImportError as e:
        print(f"toolcall-middleware demo: {e} (pip install 'toolcall-middleware[demo]')", file=sys.stderr)
        return 2
    return run_demo(args.dialect, sys.stdout)


__all__ = [
    "add_demo_command",
    "cmd_demo",
]
