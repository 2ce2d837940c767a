"""`llama_function`: `<function=NAME>{json}</function>` (Llama 3.1 custom-tool format, Functionary v3.1).

Text before, between and after calls is content. The arguments end at the first `</function>`
outside a JSON string, so a value that mentions the marker stays inside the call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from .._reasoning import ReasoningSyntax
from .._textscan import JsonSegment
from ._base import BlockParser, Call, Dialect, dump_arguments, load_object
from ._dialect import SharedMarker
from ._rendering import CallToRender, Renderer, ToolSpec, dumps, join_turn
from .call_grammar import Args, CallGrammar, Lit, Name

OPEN = "<function="
CLOSE = "</function>"
_NAME = re.compile(r"[A-Za-z_][\w.:\-]*")  # names as the tool list spells them (`ns:get`)


class LlamaFunctionBlock:
    def __init__(self) -> None:
        self._name: str | None = None
        self._head: list[str] = []
        self._body = JsonSegment((CLOSE,))
        self._items: list[Call | str] = []

    def feed(self, text: str) -> str | None:
        if self._name is None:
            gt = text.find(">")
            if gt < 0:
                self._head.append(text)
                return None
            self._head.append(text[:gt])
            self._name = "".join(self._head)
            text = text[gt + 1 :]
        hit = self._body.feed(text)
        if hit is None:
            return None
        body, marker, rest = hit
        raw = f"{OPEN}{self._name}>{body}{marker}"
        args = load_object(body) if body.strip() else {}
        valid_name = _NAME.fullmatch(self._name.strip()) is not None
        if args is None or not valid_name:
            self._items.append(raw)
        else:
            self._items.append(Call(name=self._name.strip(), arguments=dump_arguments(args)))
        return rest

    def take(self) -> list[Call | str]:
        items, self._items = self._items, []
        return items

    def finish(self) -> str | None:
        if self._name is None:
            return OPEN + "".join(self._head)
        return f"{OPEN}{self._name}>" + self._body.text()

    end_marker = CLOSE  # (`closed_at_stop`)


class LlamaFunctionParser(BlockParser):
    openers = (OPEN,)

    def open_block(self, opener: str) -> LlamaFunctionBlock:
        return LlamaFunctionBlock()


# -- request side: the chat template's text --------------------------------------------------------


def _function_calls(calls: Sequence[CallToRender]) -> str:
    return "".join(f"<function={c.name}>{dumps(dict(c.arguments))}</function>" for c in calls)


def _function_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    listing = "".join(
        f"Use the function '{t.name}' to: {t.description or ''}\n"
        + json.dumps(t.function(), ensure_ascii=False, indent=4)
        + "\n\n"
        for t in tools
    )
    one_at_a_time = "- Only call one function at a time\n" if not parallel else ""
    return (
        "You have access to the following functions:\n\n"
        + listing
        + "If a you choose to call a function ONLY reply in the following format:\n"
        "<{start_tag}={function_name}>{parameters}{end_tag}\nwhere\n\nstart_tag => `<function`\n"
        "parameters => a JSON dict with the function argument name as key and function argument value as value.\n"
        "end_tag => `</function>`\n\nHere is an example,\n"
        '<function=example_function_name>{"example_name": "example_value"}</function>\n\n'
        "Reminder:\n- Function calls MUST follow the specified format\n- Required parameters MUST be specified\n"
        + one_at_a_time
        + "- Put the entire function call reply on one line\n"
        "- Always use the information returned by the function to answer to the user\n"
        "- If there is no relevant function available, do NOT call any function: respond directly to the user"
    )


LLAMA_FUNCTION = Renderer(calls=_function_calls, tools=_function_tools, assistant=lambda c, k: join_turn(c, k, ""))
# What `_function_calls` writes, as a grammar.
LLAMA_FUNCTION_GRAMMAR = CallGrammar(call=(Lit(OPEN), Name(), Lit(">"), Args(), Lit(CLOSE)), trigger=OPEN)


DIALECTS = [
    Dialect(
        name="llama_function",
        shared_markers=(SharedMarker(OPEN, r"[\w.\-]+>[ \t\r\n]*\{", r"[\w.\-]"),),
        description="<function=name>{json}</function>: Llama 3.1 custom tools, Functionary v3.1",
        machine=LlamaFunctionParser,
        renderer=LLAMA_FUNCTION,
        grammar=LLAMA_FUNCTION_GRAMMAR,
        models=(r"functionary.*v3\.1", r"functionary-small-v3\.1"),
        reasoning=ReasoningSyntax(),
    )
]


__all__ = [
    "CLOSE",
    "DIALECTS",
    "LLAMA_FUNCTION",
    "LLAMA_FUNCTION_GRAMMAR",
    "OPEN",
    "LlamaFunctionBlock",
    "LlamaFunctionParser",
]
