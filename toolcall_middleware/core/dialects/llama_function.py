"""`llama_function`: `<function=NAME>{json}</function>` (Llama 3.1 custom-tool format, Functionary v3.1).

Text before, between and after calls is content. The arguments end at the first `</function>`
outside a JSON string, so a value that mentions the marker stays inside the call.
"""

from __future__ import annotations

import re

from ..reasoning import ReasoningSyntax
from ..textscan import JsonSegment
from .base import BlockParser, Call, Dialect, dump_arguments, load_object

OPEN = "<function="
CLOSE = "</function>"
_NAME = re.compile(r"[A-Za-z_][\w.\-]*")


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


class LlamaFunctionParser(BlockParser):
    openers = (OPEN,)

    def open_block(self, opener: str) -> LlamaFunctionBlock:
        return LlamaFunctionBlock()


DIALECTS = [
    Dialect(
        name="llama_function",
        description="<function=name>{json}</function>: Llama 3.1 custom tools, Functionary v3.1",
        machine=LlamaFunctionParser,
        models=(r"functionary.*v3\.1", r"functionary-small-v3\.1"),
        reasoning=ReasoningSyntax(),
    )
]
