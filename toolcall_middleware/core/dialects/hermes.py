"""`hermes`: `<tool_call>{"name": …, "arguments": …}</tool_call>` (Hermes 2 Pro/3, Qwen2.5, Qwen3, QwQ).

One block per call, any number of calls, text before, between and after. `arguments` may be an
object or a JSON string holding one (the sentinel form Responses proxies ask their backend for),
and some fine-tunes write `parameters`. The block ends at the first `</tool_call>` outside a JSON
string, so an argument that mentions the markers stays inside the call.

With incremental argument streaming the call opens once `"name"` is read and the arguments
object streams as the model wrote it (held until the name, when it comes first); see `streaming`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .._reasoning import ReasoningSyntax
from .._textscan import JsonSegment
from ..framing._utf8 import json_loads
from ._base import BlockItem, BlockParser, Call, Dialect, ParseContext, arguments_object, dump_arguments, load_object
from ._dialect import SharedMarker
from ._rendering import CallToRender, Renderer, ToolSpec, dumps, results_joined, tool_lines, tool_response
from ._streaming import CallObjectWatcher, raw_arguments
from .call_grammar import Args, CallGrammar, Lit, Name

OPEN = "<tool_call>"
CLOSE = "</tool_call>"


def call_from_object(obj: dict[str, Any], ctx: ParseContext | None = None, raw: str | None = None) -> Call | None:
    """A call from `{"name", "arguments" | "parameters"}`; `None` when it is not one.

    `raw` is the arguments object's own text, as streamed: kept when it is exactly the arguments.
    """
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        return None
    args = arguments_object(obj.get("arguments", obj.get("parameters", {})))
    if args is None:
        return None
    call_id = obj.get("id")
    text = raw_arguments(raw, args) if raw is not None else None
    return Call(name=name, arguments=text or dump_arguments(args), id=call_id if isinstance(call_id, str) else None)


class HermesBlock:
    """One `<tool_call>` body; with `ctx.incremental` it streams the call as it arrives."""

    def __init__(self, opener: str, close: str = CLOSE, ctx: ParseContext | None = None) -> None:
        self._opener = opener
        self._body = JsonSegment((close,))
        self._items: list[BlockItem] = []
        self._watch = CallObjectWatcher(self._items) if ctx is not None and ctx.incremental else None

    def feed(self, text: str) -> str | None:
        hit = self._body.feed(text)
        if self._watch is not None:
            self._watch.feed(text if hit is None else text[: len(text) - len(hit[2])])
        if hit is None:
            return None
        body, marker, rest = hit
        obj = load_object(body)
        raw = self._watch.arguments if self._watch is not None else None
        call = call_from_object(obj, raw=raw) if obj is not None else None
        self._items.append(call if call is not None else self._opener + body + marker)
        return rest

    @property
    def size(self) -> int:
        """The characters of the body so far, its quiet pieces included (`Block`)."""
        return self._body.size

    def take(self) -> list[BlockItem]:
        items = self._items[:]
        self._items.clear()  # in place: the watcher appends to this list
        return items

    def finish(self) -> str | None:
        return self._opener + self._body.text()

    def at_stop(self) -> Call | str | None:
        """What a body whose end marker never came is, the model having stopped (`ctx.stopped`):
        the call, when it is one whole JSON call object, read strictly (no repair: nothing is
        completed); the text the model wrote, when what follows the marker does not start as a
        JSON object (a marker named in prose); `None`, a call cut off, otherwise (an empty body
        too, and while the call streams)."""
        if self._watch is not None:
            return None
        body = self._body.text()
        start = body.lstrip()
        if start and not start.startswith("{"):
            return self._opener + body
        try:
            obj = json_loads(body)
        except (ValueError, RecursionError):
            return None
        return call_from_object(obj) if isinstance(obj, dict) else None


class HermesParser(BlockParser):
    openers = (OPEN,)
    strip_around_blocks = True

    def open_block(self, opener: str) -> HermesBlock:
        return HermesBlock(opener, ctx=self.ctx)


_PREFILLED = re.compile(r"thinking-2507|qwq")


def _prefills(model: str | None, thinking: bool | None) -> bool:
    return thinking is not False and model is not None and bool(_PREFILLED.search(model.lower()))


# -- request side: the chat template's text --------------------------------------------------------


def _hermes_calls(calls: Sequence[CallToRender]) -> str:
    return "\n".join(
        f'<tool_call>\n{{"name": {dumps(c.name)}, "arguments": {dumps(dict(c.arguments))}}}\n</tool_call>'
        for c in calls
    )


def hermes_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    return (
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
        + tool_lines(tools)
        + "\n</tools>\n\nFor each function call, return a json object with function name and arguments "
        "within <tool_call></tool_call> XML tags:\n<tool_call>\n"
        '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
    )


HERMES = Renderer(calls=_hermes_calls, tools=hermes_tools, results=results_joined(tool_response))
# What `_hermes_calls` writes, as a grammar.
HERMES_GRAMMAR = CallGrammar(
    call=(Lit(OPEN + '\n{"name": '), Name(json=True), Lit(', "arguments": '), Args(), Lit("}\n" + CLOSE)),
    separator="\n",
    trigger=OPEN,
)


DIALECTS = [
    Dialect(
        name="hermes",
        shared_markers=(SharedMarker(OPEN, r"[ \t\r\n]*\{", r"\{"),),
        description="<tool_call>{json}</tool_call>: Hermes 2 Pro/3, Qwen2.5, Qwen3, QwQ, Granite 4",
        machine=HermesParser,
        renderer=HERMES,
        grammar=HERMES_GRAMMAR,
        incremental=True,
        models=(r"hermes", r"qwq", r"qwen-?2", r"qwen3", r"granite-?4", r"ernie"),
        reasoning=ReasoningSyntax(),
        prefills_reasoning=_prefills,
    )
]


__all__ = [
    "CLOSE",
    "DIALECTS",
    "HERMES",
    "HERMES_GRAMMAR",
    "OPEN",
    "HermesBlock",
    "HermesParser",
    "call_from_object",
    "hermes_tools",
]
