"""Calls between a start and an end marker, read whole once the end marker arrives: `olmo3`,
`lfm2` and `functiongemma`.

```
<function_calls>\\nget_weather(city='Paris')\\nget_time(tz="UTC")\\n</function_calls>      Olmo 3
<|tool_call_start|>[get_weather(city="Paris")]<|tool_call_end|>                         LFM2, LFM2.5
<start_function_call>call:get_weather{city:<escape>Paris<escape>}<end_function_call>  FunctionGemma
```

Olmo 3 writes one Python call a line (JSON's `true`/`false`/`null` allowed), LFM2 a Python call
list, or a JSON array of `{"name", "arguments"}` when the system prompt asks for JSON output.
FunctionGemma writes Gemma's object notation with `<escape>` as the string delimiter, read by
`gemma4`'s reader. Python is parsed with `ast`, never run. The body ends at the first end marker,
as the engines' parsers find it (a regular expression up to it); the renderers write `<` in
Python strings as `\\x3c`, so no value they write can end a block early (FunctionGemma's notation
has no escape: a value holding `<escape>` or the end marker cannot be written);
a body that is not calls is text as written, output that ends inside one is a `TruncatedCall`.
Text after a call is content (LFM2 writes its answer right after the marker).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .._reasoning import ReasoningSyntax
from .._textscan import MarkerSegment
from ..framing._utf8 import json_loads
from ._base import BlockItem, BlockParser, Call, Dialect, dump_arguments
from ._dialect import SharedMarker
from ._rendering import CallToRender as RenderCall
from ._rendering import Renderer, ToolSpec, dumps, join_turn, python_literal, results_joined
from .call_grammar import CallGrammar
from .gemma4 import STR as GEMMA4_STR
from .gemma4 import GemmaMarkup, gemma_renderer, parse_arguments, read_header
from .hermes import call_from_object
from .pythonic import calls_from_list, python_call

Reader = Callable[[str], list[Call] | None]


class MarkedBlock:
    """The body after `opener`, up to `close`, read by `read` once complete."""

    def __init__(self, opener: str, close: str, read: Reader) -> None:
        self._opener, self._close, self._read = opener, close, read
        self._body = MarkerSegment((close,))
        self._items: list[BlockItem] = []

    def feed(self, text: str) -> str | None:
        hit = self._body.feed(text)
        if hit is None:
            return None
        body, marker, rest = hit
        calls = self._read(body)
        if calls:
            self._items.extend(calls)
        else:
            self._items.append(self._opener + body + marker)
        return rest

    def take(self) -> list[BlockItem]:
        items, self._items = self._items, []
        return items

    def finish(self) -> str | None:
        return self._opener + self._body.text()

    @property
    def end_marker(self) -> str:
        """The marker that ends the block (`closed_at_stop`)."""
        return self._close


def read_call_lines(body: str) -> list[Call] | None:
    """Olmo 3: one Python call a line."""
    lines = [line for line in body.splitlines() if line.strip()]
    return calls_from_list("[" + ", ".join(lines) + "]") if lines else None


def read_call_list(body: str) -> list[Call] | None:
    """LFM2: a Python call list, or a JSON array of call objects."""
    stripped = body.strip()
    if stripped.startswith("[{"):
        try:
            items = json_loads(stripped)
        except (ValueError, RecursionError):
            return None
        if not isinstance(items, list) or not items:
            return None
        found = [call_from_object(item) if isinstance(item, dict) else None for item in items]
        return None if any(c is None for c in found) else [c for c in found if c is not None]
    return calls_from_list(stripped)


ESCAPE = "<escape>"


def read_gemma_call(body: str) -> list[Call] | None:
    """FunctionGemma: `call:NAME{…}` in Gemma's notation with `<escape>` strings."""
    if GEMMA4_STR in body:
        return None  # (the delimiter is swapped for gemma4's reader: a literal one is ambiguous)
    text = body.replace(ESCAPE, GEMMA4_STR)
    header = read_header(text)
    if not isinstance(header, tuple):
        return None
    name, start = header
    args = parse_arguments(text[start - 1 :].rstrip())
    return [Call(name=name, arguments=dump_arguments(args))] if args is not None else None


def _parser(
    openers: tuple[str, ...], close: str, read: Reader, strip: bool = True, token: bool = False
) -> type[BlockParser]:
    """`token`: the markers are special tokens, so a stray `close` in the text is markup."""

    class Parser(BlockParser):
        strip_around_blocks = strip
        stray_tokens = (close,) if token else ()

        def open_block(self, opener: str) -> MarkedBlock:
            return MarkedBlock(opener, close, read)

    Parser.openers = openers
    return Parser


# -- olmo3 -----------------------------------------------------------------------------------------

OLMO, OLMO_END = "<function_calls>", "</function_calls>"
Olmo3Parser = _parser((OLMO,), OLMO_END, read_call_lines)


def _python_call(call: RenderCall) -> str:
    # `<` only occurs inside string literals here; written `\x3c` it reads back the same, and no
    # marker (the block's end, above all) can appear in the call's text.
    args = ", ".join(f"{k}={python_literal(v)}" for k, v in call.arguments.items())
    return f"{call.name}({args})".replace("<", "\\x3c")


# `_python_call` as a grammar: the same call, its strings' `<` written only as `\x3c`.
PYTHON_CALL = python_call(escaped="<")


def _olmo_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    # vLLM's `tool_chat_template_olmo3.jinja`, its example call renamed from `get_weather`: a
    # manifest names only the functions the request lets the model call.
    return (
        "You have access to the following functions. To call functions, respond with a pythonic function call "
        "wrapped in <function_calls></function_calls> XML tags.\n\nFor example, to call a function named "
        "'example_function' with parameters city='New York' and units='celsius', respond with:\n<function_calls>\n"
        "example_function(city='New York', units='celsius')\n</function_calls>\n\nYou can call multiple functions by "
        "putting each call on a new line within the tags:\n<function_calls>\nfunction1(param1='value1')\n"
        "function2(param2='value2')\n</function_calls>\n\nHere are the available functions:\n<functions>\n"
        + "\n".join(dumps(t.function()) for t in tools)
        + "\n</functions>"
    )


OLMO3_GRAMMAR = CallGrammar(call=PYTHON_CALL, separator="\n", section=(f"{OLMO}\n", f"\n{OLMO_END}"), trigger=OLMO)

OLMO3_RENDERER = Renderer(
    calls=lambda calls: f"{OLMO}\n" + "\n".join(_python_call(c) for c in calls) + f"\n{OLMO_END}" if calls else "",
    tools=_olmo_tools,
    results=results_joined(lambda r: f"Function {r.name} returned:\n{r.output}" if r.name else r.output),
)

# -- lfm2 ------------------------------------------------------------------------------------------

LFM, LFM_END = "<|tool_call_start|>", "<|tool_call_end|>"
Lfm2Parser = _parser((LFM,), LFM_END, read_call_list, strip=False, token=True)


def _lfm_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    # LFM2's template: the tool list as JSON between its list markers, in the system turn.
    return (
        "List of tools: <|tool_list_start|>" + dumps([t.function() for t in tools]) + "<|tool_list_end|>\n\n"
        f"To call tools, write {LFM}[function_name(param='value', …)]{LFM_END}"
    )


LFM2_GRAMMAR = CallGrammar(
    call=PYTHON_CALL, separator=", ", section=(f"{LFM}[", f"]{LFM_END}"), trigger=LFM, special_tokens=(LFM, LFM_END)
)

LFM2_RENDERER = Renderer(
    calls=lambda calls: f"{LFM}[" + ", ".join(_python_call(c) for c in calls) + f"]{LFM_END}" if calls else "",
    tools=_lfm_tools,
    results=results_joined(lambda r: f"<|tool_response_start|>{r.output}<|tool_response_end|>", ""),
    assistant=lambda content, calls: join_turn(calls, content, ""),  # the answer follows the calls
)

# -- functiongemma ---------------------------------------------------------------------------------

FG, FG_END = "<start_function_call>", "<end_function_call>"
FunctionGemmaParser = _parser((FG,), FG_END, read_gemma_call, strip=False)


# Gemma 4's request side and call grammar with FunctionGemma's markers and string delimiter.
FUNCTIONGEMMA_MARKUP = GemmaMarkup(
    call=(FG, FG_END),
    declaration=("<start_function_declaration>", "<end_function_declaration>"),
    response=("<start_function_response>", "<end_function_response>"),
    string=ESCAPE,
    preamble="You are a model that can do function calling with the following functions",
)
FUNCTIONGEMMA_RENDERER = gemma_renderer(FUNCTIONGEMMA_MARKUP)

DIALECTS = [
    Dialect(
        name="olmo3",
        shared_markers=(SharedMarker("<function_calls>", r"[ \t\r\n]*[A-Za-z_][\w.]*\(", "[A-Za-z_]"),),
        description="<function_calls>\\nf(a=1)\\n…</function_calls>: Olmo 3 Instruct/Think",
        machine=Olmo3Parser,
        models=(r"olmo-?3",),
        renderer=OLMO3_RENDERER,
        grammar=OLMO3_GRAMMAR,
    ),
    Dialect(
        name="lfm2",
        markers=("<|tool_call_start|>",),
        description="<|tool_call_start|>[f(a=1)]<|tool_call_end|>: Liquid LFM2, LFM2.5",
        machine=Lfm2Parser,
        models=(r"lfm-?2",),
        renderer=LFM2_RENDERER,
        grammar=LFM2_GRAMMAR,
    ),
    Dialect(
        name="functiongemma",
        markers=("<start_function_call>",),
        description="<start_function_call>call:f{a:<escape>text<escape>}<end_function_call>: FunctionGemma",
        machine=FunctionGemmaParser,
        models=(r"functiongemma",),
        reasoning=ReasoningSyntax(),
        renderer=FUNCTIONGEMMA_RENDERER,
        grammar=FUNCTIONGEMMA_MARKUP.grammar(),
    ),
]

__all__ = [
    "DIALECTS",
    "ESCAPE",
    "FG",
    "FG_END",
    "LFM",
    "LFM2_GRAMMAR",
    "LFM_END",
    "OLMO",
    "OLMO3_GRAMMAR",
    "OLMO_END",
    "FunctionGemmaParser",
    "Lfm2Parser",
    "MarkedBlock",
    "Olmo3Parser",
    "read_call_lines",
    "read_call_list",
    "read_gemma_call",
]
