"""`kimi_k2`: the section tokens of Kimi-K2-Instruct, K2-0905, K2-Thinking, K2.5 and K2.6.

```
<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:N<|tool_call_argument_begin|>{json}
<|tool_call_end|>…<|tool_calls_section_end|>
```

The call id `functions.NAME:N` (N counts calls across the conversation) is the model's own id and
is kept as the call's id; the name is NAME. Ids without the `functions.` prefix (`get_weather:0`)
are read the same way; a bare counter (`3`) names a tool only when exactly one tool is offered.
Some checkpoints write the singular `<|tool_call_section_begin|>`, and a call without a section
around it is read too. Text between the markers inside a section is dropped (vLLM does the same);
a decoder may put a space between adjacent special tokens. The arguments end at the first
`<|tool_call_end|>` outside a JSON string, so a value that mentions a marker keeps it. Content
around the section is kept verbatim.

Reasoning is `<think>…</think>`; the K2-Thinking, K2.5 and K2.6 templates open it themselves when
thinking is on, and a section that starts before `</think>` ends the reasoning implicitly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .._reasoning import ReasoningSyntax
from .._textscan import JsonSegment, MarkerScanner
from ._base import BlockItem, BlockParser, Call, Dialect, Fragment, Opened, ParseContext, dump_arguments, load_object
from ._rendering import CallToRender, Renderer, ToolSpec, dumps, join_turn, results_joined
from ._streaming import ObjectText, raw_arguments
from .call_grammar import Args, CallGrammar, Chars, Lit, Name

SECTION_BEGINS = ("<|tool_calls_section_begin|>", "<|tool_call_section_begin|>")
SECTION_ENDS = ("<|tool_calls_section_end|>", "<|tool_call_section_end|>")
CALL_BEGIN = "<|tool_call_begin|>"
ARGUMENT_BEGIN = "<|tool_call_argument_begin|>"
CALL_END = "<|tool_call_end|>"
THINK = ("<think>", "</think>")


def name_from_id(call_id: str, ctx: ParseContext) -> str | None:
    """NAME from `functions.NAME:N` or `NAME:N`; a bare counter only names the single offered tool."""
    if call_id.isascii() and call_id.isdigit():
        # SGLang guesses the name of a bare counter from the tools; only an unambiguous guess is safe.
        tools = list(ctx.tools)
        return tools[0] if len(tools) == 1 else None
    name = call_id.removeprefix("functions.")
    head, colon, counter = name.rpartition(":")
    if colon and counter.isascii() and counter.isdigit():
        name = head
    if not name or any(ch.isspace() for ch in name):
        return None
    return name


_BETWEEN = (CALL_BEGIN, *SECTION_ENDS)
_IN_ID = (ARGUMENT_BEGIN, CALL_END, CALL_BEGIN, *SECTION_ENDS)
_ARGS_END = (CALL_END, *SECTION_ENDS)


class KimiSectionBlock:
    """A tools section (or, with `bare`, one call written without a section around it).

    Each call is handed out by `take()` as soon as its own `<|tool_call_end|>` arrives.
    """

    def __init__(self, opener: str, ctx: ParseContext, *, bare: bool = False) -> None:
        self._ctx = ctx
        self._bare = bare
        self._section_raw: list[str] = [] if bare else [opener]  # until the first call starts
        self._started = bare
        self._items: list[BlockItem] = []
        self._scanner = MarkerScanner(_IN_ID if bare else _BETWEEN)
        self._stream: ObjectText | None = None  # the arguments' own text, when streaming them
        self._in_id = bare
        self._id: list[str] = []
        self._args: JsonSegment | None = None  # the arguments of the current call, once they began

    def feed(self, text: str) -> str | None:
        while True:
            if self._args is not None:
                done = self._feed_arguments(text)
                if done is None:
                    return None
                end_marker, text = done
                if end_marker in SECTION_ENDS or self._bare:
                    return text
                continue
            before, marker, text = self._scanner.feed(text)
            if self._in_id:
                self._id.append(before)
                if marker is None:
                    return None
                if marker == ARGUMENT_BEGIN:
                    self._args = JsonSegment(_ARGS_END)
                    self._open_stream()
                    continue
                # The call ended before its arguments began: it is not a call.
                self._items.append(self._call_raw() + (marker if marker == CALL_END else ""))
                self._in_id = False
                self._scanner = MarkerScanner(_BETWEEN)
                if marker == CALL_BEGIN:
                    self._begin_call()
                    continue
                if marker in SECTION_ENDS or self._bare:
                    return text
                continue
            if not self._started:
                self._section_raw.append(before)
            # Anything else between the calls of a section is noise, dropped like vLLM does.
            if marker is None:
                return None
            if marker != CALL_BEGIN:
                return text
            self._begin_call()

    def _begin_call(self) -> None:
        self._started = True
        self._in_id = True
        self._id = []
        self._scanner = MarkerScanner(_IN_ID)

    def _open_stream(self) -> None:
        """Incremental streaming: the name is known once the arguments begin."""
        if not self._ctx.incremental:
            return
        call_id = "".join(self._id).strip()
        name = name_from_id(call_id, self._ctx)
        if name is not None:
            self._items.append(Opened(name, call_id))
            self._stream = ObjectText()

    def _feed_arguments(self, text: str) -> tuple[str, str] | None:
        assert self._args is not None
        hit = self._args.feed(text)
        if self._stream is not None:
            # A closing marker outside a string inside the object breaks the call anyway.
            piece = self._stream.feed(text if hit is None else text[: len(text) - len(hit[2])])
            if piece:
                self._items.append(Fragment(piece))
        if hit is None:
            return None
        body, marker, rest = hit
        call = self._call(body) if marker == CALL_END else None
        # A section end inside the arguments ends the section too; it is the section's marker, not
        # the call's text.
        raw = self._call_raw(body, marker if marker == CALL_END else "")
        self._items.append(call if call is not None else raw)
        self._args = None
        self._stream = None
        self._in_id = False
        self._scanner = MarkerScanner(_BETWEEN)
        return marker, rest

    def _call(self, body: str) -> Call | None:
        call_id = "".join(self._id).strip()
        name = name_from_id(call_id, self._ctx)
        if name is None:
            return None
        args = load_object(body) if body.strip() else {}
        if args is None:
            return None
        stream, self._stream = self._stream, None
        raw = raw_arguments(stream.text(), args) if stream is not None and stream.closed else None
        return Call(name=name, arguments=raw or dump_arguments(args), id=call_id)

    def _call_raw(self, body: str | None = None, marker: str = "") -> str:
        raw = CALL_BEGIN + "".join(self._id)
        if body is None:
            return raw
        return raw + ARGUMENT_BEGIN + body + marker

    def take(self) -> list[BlockItem]:
        items, self._items = self._items, []
        return items

    def finish(self) -> str | None:
        if self._args is not None:
            return self._call_raw(self._args.text())
        if self._in_id:
            return self._call_raw() + self._scanner.pending
        if not self._started:
            # The section was opened and nothing followed: the model was cut off.
            return "".join(self._section_raw) + self._scanner.pending
        return None


class KimiK2Parser(BlockParser):
    openers = (*SECTION_BEGINS, CALL_BEGIN)
    stray_tokens = (*SECTION_ENDS, ARGUMENT_BEGIN, CALL_END)

    def open_block(self, opener: str) -> KimiSectionBlock:
        return KimiSectionBlock(opener, self.ctx, bare=opener == CALL_BEGIN)


_THINKING_MODELS = re.compile(r"thinking|k2[.p][5-9]")


def _prefills(model: str | None, thinking: bool | None) -> bool:
    # K2-Thinking, K2.5 and K2.6 templates end the generation prompt with `<think>` unless
    # thinking is off; K2-Instruct and K2-0905 do not think.
    return thinking is not False and model is not None and bool(_THINKING_MODELS.search(model.lower()))


# -- request side: the chat template's text --------------------------------------------------------

_KIMI_ID = re.compile(r"(?:functions\.)?(.+):[0-9]+")


def _kimi_id(call_id: str, name: str, n: int) -> str:
    """`functions.NAME:N`, N counting calls across the conversation: the id K2 was trained on."""
    m = _KIMI_ID.fullmatch(call_id)
    return call_id if m is not None and m.group(1) == name else f"functions.{name}:{n}"


def _kimi_calls(calls: Sequence[CallToRender]) -> str:
    body = "".join(
        f"<|tool_call_begin|>{_kimi_id(c.id, c.name, i)}<|tool_call_argument_begin|>{dumps(dict(c.arguments))}"
        "<|tool_call_end|>"
        for i, c in enumerate(calls)
    )
    return f"<|tool_calls_section_begin|>{body}<|tool_calls_section_end|>" if calls else ""


def _kimi_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    # The template declares the tools as one JSON list in a `tool_declare` message and says no more;
    # the call syntax is spelled out here because no template slot carries it.
    return (
        "# Tools\n\nThe available tools, declared in JSON:\n" + dumps([t.chat_shape() for t in tools]) + "\n\n"
        "To call tools, write <|tool_calls_section_begin|>, then for each call <|tool_call_begin|>"
        "functions.NAME:INDEX<|tool_call_argument_begin|>{JSON arguments}<|tool_call_end|>, then "
        "<|tool_calls_section_end|>. INDEX counts the tool calls of the conversation from 0."
    )


KIMI_K2 = Renderer(
    calls=_kimi_calls,
    tools=_kimi_tools,
    results=results_joined(lambda r: f"## Return of {r.call_id}\n{r.output}", "\n\n"),
    assistant=lambda c, k: join_turn(c, k, ""),
    native_id=_kimi_id,
)


# What `_kimi_calls` writes, as a grammar (the id `functions.NAME:INDEX`).
KIMI_K2_GRAMMAR = CallGrammar(
    call=(Lit(CALL_BEGIN + "functions."), Name(), Lit(":"), Chars("0-9"), Lit(ARGUMENT_BEGIN), Args(), Lit(CALL_END)),
    section=(SECTION_BEGINS[0], SECTION_ENDS[0]),
    special_tokens=(SECTION_BEGINS[0], SECTION_ENDS[0], CALL_BEGIN, ARGUMENT_BEGIN, CALL_END),
)


DIALECTS = [
    Dialect(
        name="kimi_k2",
        markers=("<|tool_calls_section_begin|>", "<|tool_call_section_begin|>"),
        description=(
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{json}"
            "<|tool_call_end|><|tool_calls_section_end|>: Kimi-K2, K2-Thinking, K2.5, K2.6"
        ),
        machine=KimiK2Parser,
        renderer=KIMI_K2,
        grammar=KIMI_K2_GRAMMAR,
        incremental=True,
        models=(r"kimi-?k2",),
        reasoning=ReasoningSyntax(
            pairs=(THINK,),
            implicit_ends=tuple((begin,) for begin in SECTION_BEGINS),
        ),
        prefills_reasoning=_prefills,
    )
]


__all__ = [
    "ARGUMENT_BEGIN",
    "CALL_BEGIN",
    "CALL_END",
    "DIALECTS",
    "KIMI_K2",
    "SECTION_BEGINS",
    "SECTION_ENDS",
    "THINK",
    "KimiK2Parser",
    "KimiSectionBlock",
    "name_from_id",
]
