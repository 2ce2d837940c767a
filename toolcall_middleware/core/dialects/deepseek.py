"""`deepseek_v3` and `deepseek_v31`: DeepSeek's tool-call section of special tokens.

V3-0324 and R1 write a typed header and the arguments in a ```` ```json ```` fence::

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
    ```json
    {"city": "Paris"}
    ```<｜tool▁call▁end｜>
    <｜tool▁call▁begin｜>…<｜tool▁call▁end｜><｜tool▁calls▁end｜>

V3.1 and V3.1-Terminus drop the type and the fence:
`<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜>`. The delimiters
use the fullwidth bar `｜` (U+FF5C) and `▁` (U+2581). A call's arguments end at the first end
token outside a JSON string, so a value that mentions the tokens stays a value; the fence may
hold pretty-printed, multi-line JSON. Each call is handed out as soon as its end token arrives.
Text before and after the section is content, verbatim (the template writes no layout there).

The DSML sub-formats of V3.2 and V4 live in `deepseek_dsml`; the section bookkeeping here is
shared with it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from .._reasoning import ReasoningSyntax
from .._textscan import WHITESPACE, JsonSegment, MarkerSegment
from ._base import BlockItem, BlockParser, Call, Dialect, Fragment, Opened, ParseContext, dump_arguments, load_object
from ._rendering import CallToRender, Renderer, ToolResult, ToolSpec, dumps, join_turn, tool_lines
from ._streaming import ObjectText, raw_arguments
from .call_grammar import Args, CallGrammar, Lit, Name

CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
CALLS_END = "<｜tool▁calls▁end｜>"
CALL_BEGIN = "<｜tool▁call▁begin｜>"
CALL_END = "<｜tool▁call▁end｜>"
SEP = "<｜tool▁sep｜>"

THINK = (("<think>", "</think>"),)


class Section:
    """Bookkeeping shared by the DeepSeek section blocks.

    The section's opening marker and the whitespace between calls are layout and vanish once a
    call is made. If a malformed call comes first, the opener goes back to content with it (and
    the closer at the end), so a section with no valid call reads as the model wrote it.
    """

    def __init__(self, opener: str) -> None:
        self._items: list[BlockItem] = []
        self._dropped = opener  # markers and layout not yet given back as content
        self._opener_pending = True
        self._opener_given = False
        self._made_call = False

    def take(self) -> list[BlockItem]:
        items, self._items = self._items, []
        return items

    def _emit(self, item: BlockItem) -> None:
        self._items.append(item)

    def _call(self, call: Call) -> None:
        self._items.append(call)
        self._dropped = ""
        self._opener_pending = False
        self._made_call = True

    def _malformed(self, raw: str) -> None:
        self._items.append(self._dropped + raw)
        self._dropped = ""
        if self._opener_pending:
            self._opener_pending = False
            self._opener_given = True

    def _gap(self, text: str) -> None:
        """Text between calls: whitespace is layout, anything else is not a call."""
        if text.strip(WHITESPACE):
            self._malformed(text)
        else:
            self._dropped += text

    def _end(self, closer: str) -> None:
        if self._opener_given:
            self._items.append(self._dropped + closer)
        self._dropped = ""

    def _finish_gap(self, gap: str) -> str | None:
        """The output ended between calls: a missing closer after whole calls is no truncation."""
        if not gap.strip(WHITESPACE) and (self._made_call or self._opener_given):
            return None
        return self._dropped + gap

    def _unfinished(self, raw: str) -> str:
        return self._dropped + raw


def _unfence(text: str) -> str:
    """The JSON inside a ```` ```json ```` fence (the fence itself may be missing)."""
    s = text.strip(WHITESPACE)
    if s.startswith("```"):
        s = s[3:]
        if s.startswith("json"):
            s = s[4:]
        s = s.rstrip(WHITESPACE)
        if s.endswith("```"):
            s = s[:-3]
    return s


def parse_call(body: str, raw: str | None = None) -> Call | None:
    """A call from the text between the call tokens, in either the V3 or the V3.1 layout.

    `raw` is the arguments object's own text, as streamed: kept when it is exactly the arguments.
    """
    head, sep, rest = body.partition(SEP)
    if not sep:
        return None
    if not rest.strip(WHITESPACE) or rest.lstrip(WHITESPACE).startswith("{"):
        name, args_text = head, rest  # V3.1: NAME<sep>{json}
    else:
        name, _, fenced = rest.partition("\n")  # V3: function<sep>NAME\n```json\n{json}\n```
        args_text = _unfence(fenced)
        if not args_text.strip(WHITESPACE):
            return None
    name = name.strip(WHITESPACE)
    if not name or any(c in name for c in WHITESPACE):
        return None
    args = load_object(args_text) if args_text.strip(WHITESPACE) else {}
    if args is None:
        return None
    text = raw_arguments(raw, args) if raw is not None else None
    return Call(name=name, arguments=text or dump_arguments(args))


_HEAD_MAX = 512  # the name and the fence before the arguments; longer is no call to stream


class CallStream:
    """Incremental streaming of one call's text, in either layout: `Opened` once the name is
    certain (V3.1: the arguments' `{` follows the separator; V3: the name's line has ended), then
    the raw text of the arguments object. Anything unexpected stops it; `parse_call` decides."""

    def __init__(self, emit: Callable[[BlockItem], None]) -> None:
        self._emit = emit
        self._head = ""  # the call's text until the arguments begin (short)
        self._args: ObjectText | None = None
        self.off = False

    @property
    def arguments(self) -> str | None:
        """The streamed object's text, once it closed."""
        return self._args.text() if self._args is not None and self._args.closed else None

    def feed(self, text: str) -> None:
        if self.off:
            return
        if self._args is None:
            self._head += text
            text = self._begin()
            if self._args is None:
                self.off = self.off or len(self._head) > _HEAD_MAX
                return
        piece = self._args.feed(text)
        if piece:
            self._emit(Fragment(piece))

    def _begin(self) -> str:
        """Open the call once its name is certain; returns the text that begins the arguments."""
        head, sep, rest = self._head.partition(SEP)
        body = rest.lstrip(WHITESPACE)
        if not sep or not body:
            return ""
        if body.startswith("{"):
            name, args = head, rest
        else:
            name, newline, fenced = rest.partition("\n")
            if not newline:
                return ""
            args = fenced.lstrip(WHITESPACE)
            if not args:
                return ""  # a fence or the object comes next
            if len(args) < len("```json") and "```json".startswith(args):
                return ""  # the fence, or its tag, may still come
            if args.startswith("```"):
                args = args[3:].removeprefix("json")
        name = name.strip(WHITESPACE)
        if not name or any(c in name for c in WHITESPACE):
            self.off = True
            return ""
        self._emit(Opened(name))
        self._args = ObjectText()
        return args


class ToolCallsBlock(Section):
    """Everything after `<｜tool▁calls▁begin｜>`, up to `<｜tool▁calls▁end｜>`."""

    def __init__(self, opener: str, ctx: ParseContext | None = None) -> None:
        super().__init__(opener)
        self._in_call = False
        self._seg: MarkerSegment | JsonSegment = MarkerSegment((CALL_BEGIN, CALLS_END))
        self._incremental = ctx is not None and ctx.incremental
        self._stream: CallStream | None = None

    def feed(self, text: str) -> str | None:
        while True:
            hit = self._seg.feed(text)
            if self._stream is not None:
                # A closing token outside a string inside the arguments breaks the call anyway.
                self._stream.feed(text if hit is None else text[: len(text) - len(hit[2])])
            if hit is None:
                return None
            before, marker, text = hit
            if not self._in_call:
                self._gap(before)
                if marker == CALLS_END:
                    self._end(marker)
                    return text
                self._in_call = True
                self._seg = JsonSegment((CALL_END, CALLS_END))
                self._stream = CallStream(self._emit) if self._incremental else None
                continue
            stream, self._stream = self._stream, None
            self._in_call = False
            self._seg = MarkerSegment((CALL_BEGIN, CALLS_END))
            if marker == CALLS_END:  # the call's own end token is missing
                self._malformed(CALL_BEGIN + before)
                self._end(marker)
                return text
            call = parse_call(before, stream.arguments if stream is not None else None)
            if call is None:
                self._malformed(CALL_BEGIN + before + marker)
            else:
                self._call(call)

    def finish(self) -> str | None:
        if self._in_call:
            return self._unfinished(CALL_BEGIN + self._seg.text())
        return self._finish_gap(self._seg.text())


class DeepSeekV3Parser(BlockParser):
    openers = (CALLS_BEGIN,)
    stray_tokens = (CALLS_END, CALL_BEGIN, CALL_END, SEP)

    def open_block(self, opener: str) -> ToolCallsBlock:
        return ToolCallsBlock(opener, self.ctx)


# R1 (January 2025) and its distills: the template ends with `<think>\n`. R1-0528 writes the
# opening tag itself, and V3-0324 does not reason.
_R1_PREFILLED = re.compile(r"deepseek-r1(?!-0528)")


def _prefills_r1(model: str | None, thinking: bool | None) -> bool:
    return thinking is not False and model is not None and bool(_R1_PREFILLED.search(model.lower()))


def prefills_when_thinking(model: str | None, thinking: bool | None) -> bool:
    """V3.1 and later: thinking is off by default; turned on, the prompt ends with `<think>`."""
    return thinking is True


# A tool-call section opened before `</think>` ends the reasoning: the token pair is the call
# syntax itself, while a mere mention of the section token is not.
_SECTION_START = ((CALLS_BEGIN, CALL_BEGIN),)


# -- request side: the chat template's text --------------------------------------------------------

OUTPUTS_BEGIN = "<｜tool▁outputs▁begin｜>"
OUTPUTS_END = "<｜tool▁outputs▁end｜>"
OUTPUT_BEGIN = "<｜tool▁output▁begin｜>"
OUTPUT_END = "<｜tool▁output▁end｜>"


def _v3_calls(calls: Sequence[CallToRender]) -> str:
    body = "\n".join(
        f"{CALL_BEGIN}function{SEP}{c.name}\n```json\n{dumps(dict(c.arguments))}\n```{CALL_END}" for c in calls
    )
    return CALLS_BEGIN + body + CALLS_END if calls else ""


def _v3_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    return (
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
        + tool_lines(tools)
        + f"\n</tools>\n\nFor function call returns, you should first print {CALLS_BEGIN}\n"
        f"For each function call, you should return object like:\n{CALL_BEGIN}function{SEP}<function_name>\n"
        f"```json\n<function_arguments_in_json_format>\n```{CALL_END}\n"
        f"At the end of function call returns, you should print {CALLS_END}"
    )


def _v3_results(results: Sequence[ToolResult]) -> str:
    body = "\n".join(f"{OUTPUT_BEGIN}{r.output}{OUTPUT_END}" for r in results)
    return OUTPUTS_BEGIN + body + OUTPUTS_END


DEEPSEEK_V3 = Renderer(
    calls=_v3_calls, tools=_v3_tools, results=_v3_results, assistant=lambda c, k: join_turn(c, k, "")
)


def _v31_calls(calls: Sequence[CallToRender]) -> str:
    body = "".join(f"{CALL_BEGIN}{c.name}{SEP}{dumps(dict(c.arguments))}{CALL_END}" for c in calls)
    return CALLS_BEGIN + body + CALLS_END if calls else ""


def _v31_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    listing = "".join(
        f"### {t.name}\nDescription: {t.description or ''}\n\nParameters: {dumps(dict(t.schema()))}\n\n" for t in tools
    )
    return (
        "## Tools\nYou have access to the following tools:\n\n"
        + listing
        + "IMPORTANT: ALWAYS adhere to this exact format for tool use:\n"
        f"{CALLS_BEGIN}{CALL_BEGIN}tool_call_name{SEP}tool_call_arguments{CALL_END}{{{{additional_tool_calls}}}}"
        f"{CALLS_END}\n\nWhere:\n\n- `tool_call_name` must be an exact match to one of the available tools\n"
        "- `tool_call_arguments` must be valid JSON that strictly follows the tool's Parameters Schema\n"
        "- For multiple tool calls, chain them directly without separators or spaces"
    )


DEEPSEEK_V31 = Renderer(
    calls=_v31_calls,
    tools=_v31_tools,
    results=lambda rs: "".join(f"{OUTPUT_BEGIN}{r.output}{OUTPUT_END}" for r in rs),
    assistant=lambda c, k: join_turn(c, k, ""),
)


# What `_v3_calls` and `_v31_calls` write, as grammars.
_DEEPSEEK_TOKENS = (CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END, SEP)
DEEPSEEK_V3_GRAMMAR = CallGrammar(
    call=(Lit(CALL_BEGIN + "function" + SEP), Name(), Lit("\n```json\n"), Args(), Lit("\n```" + CALL_END)),
    separator="\n",
    section=(CALLS_BEGIN, CALLS_END),
    special_tokens=_DEEPSEEK_TOKENS,
)
DEEPSEEK_V31_GRAMMAR = CallGrammar(
    call=(Lit(CALL_BEGIN), Name(), Lit(SEP), Args(), Lit(CALL_END)),
    section=(CALLS_BEGIN, CALLS_END),
    special_tokens=_DEEPSEEK_TOKENS,
)


DIALECTS = [
    Dialect(
        name="deepseek_v31",
        markers=(CALLS_BEGIN,),
        description="<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>: DeepSeek-V3.1, V3.1-Terminus",
        machine=DeepSeekV3Parser,
        renderer=DEEPSEEK_V31,
        grammar=DEEPSEEK_V31_GRAMMAR,
        incremental=True,
        models=(r"deepseek-v3\.1", r"deepseek-v3p1"),
        reasoning=ReasoningSyntax(pairs=THINK, implicit_ends=_SECTION_START),
        prefills_reasoning=prefills_when_thinking,
    ),
    Dialect(
        name="deepseek_v3",
        description="<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json\\n{json}\\n```: DeepSeek-V3, R1",
        machine=DeepSeekV3Parser,
        renderer=DEEPSEEK_V3,
        grammar=DEEPSEEK_V3_GRAMMAR,
        incremental=True,
        # `deepseek-v3.1`/`-v3.2` belong to the later formats (`deepseek_v31`, `deepseek_dsml`).
        models=(r"deepseek-v3(?![.p]\d)", r"deepseek-r1"),
        reasoning=ReasoningSyntax(pairs=THINK, implicit_ends=_SECTION_START),
        prefills_reasoning=_prefills_r1,
    ),
]


__all__ = [
    "CALLS_BEGIN",
    "CALLS_END",
    "CALL_BEGIN",
    "CALL_END",
    "DEEPSEEK_V3",
    "DEEPSEEK_V31",
    "DIALECTS",
    "OUTPUTS_BEGIN",
    "OUTPUTS_END",
    "OUTPUT_BEGIN",
    "OUTPUT_END",
    "SEP",
    "THINK",
    "CallStream",
    "DeepSeekV3Parser",
    "Section",
    "ToolCallsBlock",
    "parse_call",
    "prefills_when_thinking",
]
