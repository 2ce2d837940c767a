"""`hunyuan_v3`: the calls of Tencent Hunyuan 3 (Hy3), GLM's argument pairs in a section.

```
<tool_calls>
<tool_call>get_weather<tool_sep>
<arg_key>city</arg_key>
<arg_value>Beijing</arg_value>
</tool_call>
<tool_call>get_current_date<tool_sep>
</tool_call>
</tool_calls>
```

Each call is GLM's (`glm.GlmBlock`) with `<tool_sep>` between the name and the arguments; the
markers are special tokens, written with or without the newlines. Several calls in one section
are parallel calls. Values are raw text typed by the request's tool schema, a string without one
(but for the literal `null`), as vLLM's `hy_v3` and SGLang's `hunyuan` parsers read them: unlike
GLM, an untyped value is not JSON-decoded. A call that is not well formed, and what follows it,
is text; output that ends inside a call is a `TruncatedCall`. (Hunyuan-A13B writes a JSON array
in `<tool_calls>` instead: `hunyuan_a13b`. Hy4 suffixes every token and drops `<tool_sep>`.)

Reasoning is `<think>…</think>`. The template opens the block itself when thinking is asked for
(and writes an empty, closed one when it is off); a `<tool_calls>` section opening before
`</think>` ends an unclosed block, as SGLang's `hunyuan` reasoning reads it.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._reasoning import ReasoningSyntax
from .._schema import coerce_value
from .._textscan import WHITESPACE
from ._base import BlockItem, BlockParser, Call, Dialect, ParseContext
from ._dialect import SharedMarker
from ._rendering import CallToRender, Renderer, ToolSpec, join_turn, results_joined, tools_in_tags, value_text
from .call_grammar import Args, CallGrammar, Lit, Name
from .glm import CLOSE, KEY, KEY_END, OPEN, VALUE, VALUE_END, GlmBlock

SECTION, SECTION_END = "<tool_calls>", "</tool_calls>"
TOOL_SEP = "<tool_sep>"


class HunyuanSection:
    """A `<tool_calls>` section: GLM calls with `<tool_sep>`, up to `</tool_calls>`."""

    def __init__(self, ctx: ParseContext) -> None:
        self._ctx = ctx
        self._call: GlmBlock | None = None
        self._lead = [SECTION]  # text not yet handed out: given back if the next call is malformed
        self._carry = ""  # a marker prefix, between calls
        self._calls = 0
        self._items: list[BlockItem] = []

    def feed(self, text: str) -> str | None:
        s = text
        while True:
            if self._call is not None:
                rest = self._call.feed(s)
                done = self._take_call()
                if rest is None:
                    return None
                if not done:  # malformed: it and what follows are text
                    return rest
                s = rest
            s, self._carry = self._carry + s, ""
            body = s.lstrip(WHITESPACE)
            ws = s[: len(s) - len(body)]
            if not body:
                self._lead.append(ws)
                return None
            for marker in (OPEN, SECTION_END):
                if body.startswith(marker):
                    break
                if marker.startswith(body):
                    self._lead.append(ws)
                    self._carry = body
                    return None
            else:
                marker = ""
            if marker == OPEN:
                self._lead += (ws, OPEN)
                self._call = GlmBlock(self._ctx, name_end=TOOL_SEP, typing=coerce_value)
                s = body[len(OPEN) :]
                continue
            if marker == SECTION_END or self._calls:
                # The section's end, or text after its calls (the end forgotten): the block is over.
                self._lead = []
                return body[len(marker) :] if marker else body
            self._items.append("".join(self._lead) + ws)  # `<tool_calls>` followed by no call: text
            self._lead = []
            return body

    def _take_call(self) -> bool:
        """Hand out what the call found; whether it was a call (`False`: its text, now content)."""
        assert self._call is not None
        items = self._call.take()
        for item in items:
            if isinstance(item, str):
                # GlmBlock gives back its own `<tool_call>`: the lead already holds it.
                self._items.append("".join(self._lead[:-1]) + item)
                self._lead, self._call = [], None
                return False
            if isinstance(item, Call):
                self._lead, self._call = [], None
                self._calls += 1
            self._items.append(item)
        return True

    def take(self) -> list[BlockItem]:
        items, self._items = self._items, []
        return items

    def finish(self) -> str | None:
        if self._call is not None:
            raw = self._call.finish() or ""
            return "".join(self._lead[:-1]) + raw
        if self._calls:
            return None  # the calls are complete; only the section's end is missing
        return "".join(self._lead) + self._carry


class HunyuanParser(BlockParser):
    openers = (SECTION,)
    strip_around_blocks = True

    def open_block(self, opener: str) -> HunyuanSection:
        return HunyuanSection(self.ctx)


def _prefills(model: str | None, thinking: bool | None) -> bool:
    """The template opens `<think>` when thinking is asked for; off, it writes `<think></think>`."""
    return thinking is True


# -- request side ----------------------------------------------------------------------------------


def _calls(calls: Sequence[CallToRender]) -> str:
    if not calls:
        return ""
    body = "".join(
        f"<tool_call>{c.name}{TOOL_SEP}\n"
        + "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{value_text(v)}</arg_value>\n" for k, v in c.arguments.items())
        + "</tool_call>\n"
        for c in calls
    )
    return f"{SECTION}\n{body}{SECTION_END}"


def _tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    # Hy3's own template was not available to copy: the tools, and the format the engines read.
    return tools_in_tags(
        tools,
        f"For function calls, write them within {SECTION}{SECTION_END}, each in this format:\n"
        f"<tool_call>{{function-name}}{TOOL_SEP}\n<arg_key>{{arg-key-1}}</arg_key>\n"
        "<arg_value>{arg-value-1}</arg_value>\n...\n</tool_call>",
    )


HUNYUAN_V3 = Renderer(
    calls=_calls,
    tools=_tools,
    assistant=lambda content, calls: join_turn(content, calls, ""),
    results=results_joined(lambda r: f"<tool_response>{r.output}</tool_response>"),
)


# What `_calls` writes, as a grammar.
HUNYUAN_V3_GRAMMAR = CallGrammar(
    call=(
        Lit(OPEN),
        Name(),
        Lit(TOOL_SEP + "\n"),
        Args(xml=(KEY, KEY_END + "\n" + VALUE, VALUE_END + "\n")),
        Lit(CLOSE + "\n"),
    ),
    section=(SECTION + "\n", SECTION_END),
    trigger=SECTION,
    special_tokens=(SECTION, SECTION_END, OPEN, CLOSE, TOOL_SEP, KEY, KEY_END, VALUE, VALUE_END),
)


DIALECTS = [
    Dialect(
        name="hunyuan_v3",
        shared_markers=(SharedMarker("<tool_calls>", r"[ \t\r\n]*<tool_call>", "<"),),
        description="<tool_calls><tool_call>f<tool_sep><arg_key>k</arg_key><arg_value>v</arg_value>"
        "</tool_call></tool_calls>: Hunyuan 3 (Hy3)",
        machine=HunyuanParser,
        renderer=HUNYUAN_V3,
        grammar=HUNYUAN_V3_GRAMMAR,
        incremental=True,
        models=(r"(?<![a-z])(?:hunyuan|hy)-?3(?![0-9])",),
        reasoning=ReasoningSyntax(pairs=(("<think>", "</think>"),), implicit_ends=((SECTION, OPEN),)),
        prefills_reasoning=_prefills,
    )
]


__all__ = [
    "DIALECTS",
    "HUNYUAN_V3",
    "HUNYUAN_V3_GRAMMAR",
    "SECTION",
    "SECTION_END",
    "TOOL_SEP",
    "HunyuanParser",
    "HunyuanSection",
]
