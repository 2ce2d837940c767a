"""`qwen3_coder`: XML calls of Qwen3-Coder, Qwen3-Coder-Next and Qwen3.5/3.6/3.8.

```
<tool_call>
<function=get_weather>
<parameter=city>
Paris
</parameter>
</function>
</tool_call>
```

Values are raw text, not XML-escaped; exactly one newline on each side of a value is layout (the
template writes `\\n` + value + `\\n`), the rest is the value's own. The tool's JSON schema types
each value (`schema.coerce_value`): without one a value is a string, except the literal `null`.

What models really write, and how it is read:
- `<function=` with no `<tool_call>` before it is a call too; `</tool_call>` after it is optional.
- A value may mention the markers. `</parameter>` closes a value only when whitespace and then
  `<parameter=` or `</function>` follow it (held back until that is known); an unclosed value
  ends where `<parameter=` or `</function>` starts a line.
- Several `<function=` may share one `<tool_call>`; each call is handed out at its `</function>`.
- `<tool_call>` holding hermes JSON (`{"name": …}`) is read as hermes reads it.
- `</tool_call>` counts only after a complete call: an empty `<tool_call></tool_call>` is text,
  and one right after a `</parameter>` is value text (the call then stays unfinished).
- Anything else that breaks the structure comes back as text; output that ends inside a call is
  a `TruncatedCall`, so a cut `rm -rf /tmp/build` never runs as `rm -rf /`.

The XML body is read by `xml_calls.XmlCallBlock`, shared with `seed_oss` and `minimax_m2`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .._reasoning import ReasoningSyntax
from .._schema import JSON_OBJECT
from .._textscan import WHITESPACE
from ._base import Block, BlockItem, Dialect, ParseContext
from ._dialect import SharedMarker
from ._rendering import CallToRender, Renderer, ToolSpec, dumps, join_turn, results_joined, tool_response, value_text
from ._xml_calls import XmlCallBlock, XmlCallParser, XmlCallSyntax
from .call_grammar import Args, CallGrammar, Lit, Name
from .hermes import HERMES, HermesBlock

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
FUNCTION = "<function="
PARAMETER, PARAMETER_END = "<parameter=", "</parameter>"

QWEN3_CODER = XmlCallSyntax(
    section=OPEN,
    section_end=CLOSE,
    call=FUNCTION,
    call_end="</function>",
    param=PARAMETER,
    bare_calls=True,
    line_ends=True,
    one_newline=True,
    section_end_after_calls=True,
)


class Qwen3CoderBlock:
    """A `<tool_call>` block: XML calls, or hermes JSON when `{` comes first.

    Only whitespace is held until the first other character decides which reader gets the block;
    it then reads everything after the opener.
    """

    def __init__(self, ctx: ParseContext) -> None:
        self._ctx = ctx
        self._lead: list[str] = []  # whitespace after the opener, while undecided (parts: joined once)
        self._body: Block | None = None

    def feed(self, text: str) -> str | None:
        if self._body is None:
            body = text.lstrip(WHITESPACE)
            if not body:
                self._lead.append(text)
                return None
            text, self._lead = "".join(self._lead) + text, []
            if body[0] == "{":
                self._body = HermesBlock(OPEN, ctx=self._ctx)
            else:
                self._body = XmlCallBlock(self._ctx, QWEN3_CODER, OPEN)
        return self._body.feed(text)

    def take(self) -> Sequence[BlockItem]:
        return self._body.take() if self._body is not None else []

    def finish(self) -> str | None:
        return self._body.finish() if self._body is not None else OPEN + "".join(self._lead)


class Qwen3CoderParser(XmlCallParser):
    syntax = QWEN3_CODER

    def open_block(self, opener: str) -> Block:
        if opener == OPEN:
            return Qwen3CoderBlock(self.ctx)
        return XmlCallBlock(self.ctx, self.syntax, opener)


# Qwen3.5 and later 3.x; `qwen3-8b`, `qwen3:8b` and `qwen3-next` are hermes models.
_QWEN3_X = r"qwen3\.(?:[5-9]|[1-9][0-9])"


def _prefills(model: str | None, thinking: bool | None) -> bool:
    """Qwen3.5+ templates open `<think>\\n` themselves unless thinking is off; Coder models never think."""
    if thinking is False or model is None:
        return False
    name = model.strip().lower().rsplit("/", 1)[-1]
    return bool(re.search(_QWEN3_X, name)) and "coder" not in name and "instruct" not in name


# -- request side: the chat template's text --------------------------------------------------------

_QWEN_UNSAFE = ("</parameter>", "<parameter=", "</function>", "</tool_call>")


def _qwen_xml_ok(call: CallToRender) -> bool:
    """Whether the XML body carries the call exactly (names on one line, no markers in a value)."""
    names = [call.name, *call.arguments]
    if any(ch in n for n in names for ch in "<>\n") or any(n != n.strip() or not n for n in names):
        return False
    values = call.arguments.values()
    if any(isinstance(v, str) and v.strip().lower() == "null" for v in values):
        return False  # the text `null` reads back as a null
    return not any(m in value_text(v) for v in values for m in _QWEN_UNSAFE)


def _qwen_call(call: CallToRender) -> str:
    if not _qwen_xml_ok(call):
        return HERMES.calls([call])  # the same block also reads hermes JSON, which carries any value
    params = "".join(f"<parameter={k}>\n{value_text(v)}\n</parameter>\n" for k, v in call.arguments.items())
    return f"<tool_call>\n<function={call.name}>\n{params}</function>\n</tool_call>"


def _extra_keys(obj: Any, handled: Sequence[str]) -> str:
    """The template's `render_extra_keys`: keys it has no slot for, as `<key>value</key>` lines."""
    if not isinstance(obj, JSON_OBJECT):
        return ""
    out = []
    for key, value in obj.items():
        if key in handled:
            continue
        text = dumps(value) if isinstance(value, (Mapping, list)) else str(value)
        out.append(f"\n<{key}>{text}</{key}>")
    return "".join(out)


def _qwen_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    parts = ["# Tools\n\nYou have access to the following functions:\n\n<tools>"]
    for tool in tools:
        parts.append(f"\n<function>\n<name>{tool.name}</name>")
        if tool.description is not None:
            parts.append(f"\n<description>{tool.description.strip()}</description>")
        parts.append("\n<parameters>")
        schema = tool.schema()
        props = schema.get("properties")
        if isinstance(props, JSON_OBJECT):
            for pname, fields in props.items():
                parts.append(f"\n<parameter>\n<name>{pname}</name>")
                if isinstance(fields, JSON_OBJECT):
                    if "type" in fields:
                        parts.append(f"\n<type>{fields['type']}</type>")
                    if isinstance(fields.get("description"), str):
                        parts.append(f"\n<description>{fields['description'].strip()}</description>")
                parts.append(_extra_keys(fields, ("name", "type", "description")) + "\n</parameter>")
        parts.append(_extra_keys(schema, ("type", "properties")) + "\n</parameters>\n</function>")
    parts.append(
        "\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n"
        "<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n"
        "<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n"
        "</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n"
        "- Function calls MUST follow the specified format: an inner <function=...></function> block must be "
        "nested within <tool_call></tool_call> XML tags\n- Required parameters MUST be specified\n"
        "- You may provide optional reasoning for your function call in natural language BEFORE the function "
        "call, but NOT after\n- If there is no function call available, answer the question like normal with your "
        "current knowledge and do not tell the user about function calls\n</IMPORTANT>"
    )
    return "".join(parts)


QWEN3_CODER_RENDERER = Renderer(
    calls=lambda calls: "\n".join(_qwen_call(c) for c in calls),
    tools=_qwen_tools,
    results=results_joined(tool_response),
    assistant=lambda c, k: join_turn(c, k, "\n\n"),
)


# What `_qwen_call` writes in its XML form, as a grammar.
QWEN3_CODER_GRAMMAR = CallGrammar(
    call=(
        Lit(OPEN + "\n" + FUNCTION),
        Name(),
        Lit(">\n"),
        Args(xml=(PARAMETER, ">\n", "\n" + PARAMETER_END + "\n")),
        Lit("</function>\n" + CLOSE),
    ),
    separator="\n",
    trigger=OPEN,
)


DIALECTS = [
    Dialect(
        name="qwen3_coder",
        shared_markers=(
            SharedMarker(OPEN, r"[ \t\r\n]*<function=", "<"),
            SharedMarker(FUNCTION, r"[\w.\-]+>[ \t\r\n]*(?:<parameter=|</function>)", r"[\w.\-]"),
        ),
        description="<tool_call><function=f><parameter=k>v</parameter></function></tool_call>: "
        "Qwen3-Coder, Qwen3-Coder-Next, Qwen3.5/3.6/3.8",
        machine=Qwen3CoderParser,
        renderer=QWEN3_CODER_RENDERER,
        grammar=QWEN3_CODER_GRAMMAR,
        incremental=True,
        models=(r"qwen3-coder", _QWEN3_X),
        # A call written before `</think>` ends the reasoning; a mere mention of `<tool_call>` does not.
        reasoning=ReasoningSyntax(implicit_ends=((OPEN, FUNCTION),)),
        prefills_reasoning=_prefills,
    )
]


__all__ = [
    "CLOSE",
    "DIALECTS",
    "FUNCTION",
    "OPEN",
    "QWEN3_CODER",
    "QWEN3_CODER_RENDERER",
    "Qwen3CoderBlock",
    "Qwen3CoderParser",
]
