"""`deepseek_v32` and `deepseek_v4`: DeepSeek's DSML tool-call markup (V3.2, V4, V4.1).

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="get_weather">
    <｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>
    <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

V4 names the section `<｜DSML｜tool_calls>`; V4.1's encoder writes a space after the DSML bar
(`<｜DSML｜ calls>`, `<｜DSML｜ invoke …>`), and both spellings of the inner tags are accepted.
A `string="true"` value is raw text, kept exactly (whitespace, quotes, even markup: only its
closing tag ends it); a `string="false"` value is JSON, ended by the closing tag outside a JSON
string. An invoke may instead hold one JSON object, or close itself (`<｜DSML｜invoke name="f"/>`)
for no arguments. Each call is handed out when its `</｜DSML｜invoke>` arrives.

The encoder writes `\\n\\n` between the text and the section: whitespace around the section is
layout. Anything malformed in an invoke makes the whole invoke content.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any

from .._reasoning import ReasoningSyntax
from .._textscan import WHITESPACE, JsonSegment, MarkerSegment
from ._base import BlockParser, Call, Dialect, dump_arguments, load_object
from ._rendering import CallToRender, Renderer, ToolResult, ToolSpec, dumps, join_turn, results_joined
from .call_grammar import JSON_TYPES, Args, CallGrammar, Lit, Name
from .deepseek import THINK, Section, prefills_when_thinking


def _tags(prefix: str, name: str) -> tuple[str, str]:
    """Both spellings of a tag start: `<｜DSML｜name` and V4.1's `<｜DSML｜ name`."""
    return f"{prefix}｜DSML｜{name}", f"{prefix}｜DSML｜ {name}"


V32_OPEN = "<｜DSML｜function_calls>"
V32_CLOSES = tuple(t + ">" for t in _tags("</", "function_calls"))
V4_OPENS = ("<｜DSML｜tool_calls>", "<｜DSML｜ calls>")
V4_CLOSES = tuple(t + ">" for t in (*_tags("</", "tool_calls"), *_tags("</", "calls")))

INVOKE_OPENS = _tags("<", "invoke")
INVOKE_CLOSES = tuple(t + ">" for t in _tags("</", "invoke"))
PARAM_OPENS = _tags("<", "parameter")
PARAM_CLOSES = tuple(t + ">" for t in _tags("</", "parameter"))
_IN_INVOKE = (*PARAM_OPENS, *INVOKE_CLOSES)
_TAG_END = (">",)

# Attribute lists after the tag name; the fixed literals keep these linear.
_INVOKE_HEAD = re.compile(r'name="([^"]*)"')
_PARAM_HEAD = re.compile(r'name="([^"]*)"(?:\s+string="([^"]*)")?')


class _State(Enum):
    GAP = "gap"  # between invokes
    INVOKE_HEAD = "invoke_head"  # `name="f"` up to `>`
    BODY_START = "body_start"  # whitespace before the first parameter or a JSON body
    PARAMS = "params"  # between parameters
    PARAM_HEAD = "param_head"
    PARAM_VALUE = "param_value"
    JSON_BODY = "json_body"


class DsmlBlock(Section):
    """Everything after the section opener, up to its closer."""

    def __init__(self, opener: str, closers: tuple[str, ...]) -> None:
        super().__init__(opener)
        self._closers = closers
        self._gap_markers = (*INVOKE_OPENS, *closers)
        self._state = _State.GAP
        self._seg: MarkerSegment | JsonSegment = MarkerSegment(self._gap_markers)
        self._raw: list[str] = []  # the current invoke's text, given back if it is malformed
        self._name = ""
        self._args: dict[str, Any] = {}
        self._bad = False
        self._param = ""
        self._string: str | None = None

    def feed(self, text: str) -> str | None:
        while True:
            if self._state is _State.BODY_START:
                body = text.lstrip(WHITESPACE)
                self._raw.append(text[: len(text) - len(body)])
                if not body:
                    return None
                text = body
                if body[0] == "{":
                    self._goto(_State.JSON_BODY, JsonSegment(INVOKE_CLOSES))
                else:
                    self._goto(_State.PARAMS, MarkerSegment(_IN_INVOKE))
            hit = self._seg.feed(text)
            if hit is None:
                return None
            before, marker, text = hit
            if self._state is _State.GAP:
                self._gap(before)
                if marker in self._closers:
                    self._end(marker)
                    return text
                self._raw, self._args, self._bad = [marker], {}, False
                self._goto(_State.INVOKE_HEAD, MarkerSegment(_TAG_END))
                continue
            self._raw += (before, marker)
            self._step(before, marker)

    def _step(self, before: str, marker: str) -> None:
        state = self._state
        if state is _State.INVOKE_HEAD:
            head = before.strip(WHITESPACE)
            closed = head.endswith("/")
            m = _INVOKE_HEAD.fullmatch(head[:-1].rstrip(WHITESPACE) if closed else head)
            self._name = m.group(1) if m else ""
            self._bad = m is None
            if closed:
                self._close_invoke()
            else:
                self._state = _State.BODY_START
        elif state is _State.PARAMS:
            self._bad = self._bad or bool(before.strip(WHITESPACE))
            if marker in INVOKE_CLOSES:
                self._close_invoke()
            else:
                self._goto(_State.PARAM_HEAD, MarkerSegment(_TAG_END))
        elif state is _State.PARAM_HEAD:
            m = _PARAM_HEAD.fullmatch(before.strip(WHITESPACE))
            self._bad = self._bad or m is None
            self._param, self._string = (m.group(1), m.group(2)) if m else ("", None)
            value_seg = JsonSegment(PARAM_CLOSES) if self._string == "false" else MarkerSegment(PARAM_CLOSES)
            self._goto(_State.PARAM_VALUE, value_seg)
        elif state is _State.PARAM_VALUE:
            self._store(before)
            self._goto(_State.PARAMS, MarkerSegment(_IN_INVOKE))
        else:  # JSON_BODY
            obj = load_object(before)
            self._bad = self._bad or obj is None
            self._args = obj or {}
            self._close_invoke()

    def _store(self, value: str) -> None:
        if self._string == "true":
            self._args[self._param] = value
            return
        try:
            self._args[self._param] = json.loads(value)
        except (ValueError, RecursionError):
            if self._string is None:
                self._args[self._param] = value  # untyped: a value that is not JSON is text
            else:
                self._bad = True
        if self._string not in (None, "true", "false"):
            self._bad = True

    def _close_invoke(self) -> None:
        if self._bad or not self._name:
            self._malformed("".join(self._raw))
        else:
            self._call(Call(name=self._name, arguments=dump_arguments(self._args)))
        self._raw = []
        self._goto(_State.GAP, MarkerSegment(self._gap_markers))

    def _goto(self, state: _State, seg: MarkerSegment | JsonSegment) -> None:
        self._state, self._seg = state, seg

    def finish(self) -> str | None:
        if self._state is _State.GAP:
            return self._finish_gap(self._seg.text())
        tail = "" if self._state is _State.BODY_START else self._seg.text()
        return self._unfinished("".join(self._raw) + tail)


class DsmlV32Parser(BlockParser):
    openers = (V32_OPEN,)
    strip_around_blocks = True

    def open_block(self, opener: str) -> DsmlBlock:
        return DsmlBlock(opener, V32_CLOSES)


class DsmlV4Parser(BlockParser):
    openers = V4_OPENS
    strip_around_blocks = True

    def open_block(self, opener: str) -> DsmlBlock:
        return DsmlBlock(opener, V4_CLOSES)


def _section_starts(opens: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """A section opener followed by an invoke ends an unclosed reasoning block."""
    return tuple((o, i) for o in opens for i in INVOKE_OPENS)


# -- request side: the chat template's text --------------------------------------------------------

DSML = "｜DSML｜"


def _dsml_param(key: str, value: Any) -> str:
    # A string is raw text that only the closing tag ends; one that holds a DSML marker goes as JSON.
    raw = isinstance(value, str) and DSML not in value
    text = value if raw else json.dumps(value, ensure_ascii=False)
    return f'<{DSML}parameter name="{key}" string="{"true" if raw else "false"}">{text}</{DSML}parameter>'


def _dsml_calls(block: str) -> Callable[[Sequence[CallToRender]], str]:
    def render(calls: Sequence[CallToRender]) -> str:
        if not calls:
            return ""
        invokes = "\n".join(
            f'<{DSML}invoke name="{c.name}">\n'
            + "\n".join(_dsml_param(k, v) for k, v in c.arguments.items())
            + f"\n</{DSML}invoke>"
            for c in calls
        )
        return f"<{DSML}{block}>\n{invokes}\n</{DSML}{block}>"

    return render


def _v32_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    d = DSML
    return (
        "## Tools\n\nYou have access to a set of tools you can use to answer the user's question.\n"
        f'You can invoke functions by writing a "<{d}function_calls>" block like the following as part of your '
        f'reply to the user:\n<{d}function_calls>\n<{d}invoke name="$FUNCTION_NAME">\n'
        f'<{d}parameter name="$PARAMETER_NAME" string="true|false">$PARAMETER_VALUE</{d}parameter>\n...\n'
        f'</{d}invoke>\n<{d}invoke name="$FUNCTION_NAME2">\n...\n</{d}invoke>\n</{d}function_calls>\n\n'
        "String and scalar parameters should be specified as is without any escaping or quotes, while lists and "
        'objects should use JSON format. The "string" attribute should be set to "true" for string type parameters '
        'and "false" for other types (numbers, booleans, arrays, objects).\n\n'
        "If the thinking_mode is enabled, then after function results you should strongly consider outputting a "
        f"thinking block. Here is an example:\n\n<{d}function_calls>\n...\n</{d}function_calls>\n\n"
        "<function_results>\n...\n</function_results>\n\n<think>...thinking about results</think>\n\n"
        "Here are the functions available in JSONSchema format:\n<functions>\n"
        + "\n".join(dumps(t.function()) for t in tools)
        + "\n</functions>"
    )


def _v4_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    d = DSML
    return (
        "## Tools\n\nYou have access to a set of tools to help answer the user's question. You can invoke tools by "
        f'writing a "<{d}tool_calls>" block like the following:\n\n<{d}tool_calls>\n<{d}invoke name="$TOOL_NAME">\n'
        f'<{d}parameter name="$PARAMETER_NAME" string="true|false">$PARAMETER_VALUE</{d}parameter>\n...\n'
        f'</{d}invoke>\n<{d}invoke name="$TOOL_NAME2">\n...\n</{d}invoke>\n</{d}tool_calls>\n\n'
        'String parameters should be specified as is and set `string="true"`. For all other types (numbers, '
        'booleans, arrays, objects), pass the value in JSON format and set `string="false"`.\n\n'
        "If thinking_mode is enabled (triggered by <think>), you MUST output your complete reasoning inside "
        "<think>...</think> BEFORE any tool calls or final response.\n\n"
        "Otherwise, output directly after </think> with tool calls or final response.\n\n"
        "### Available Tool Schemas\n\n"
        + "\n".join(dumps(t.function()) for t in tools)
        + "\n\nYou MUST strictly follow the above defined tool name and parameter schemas to invoke tool calls."
    )


def _v32_results(results: Sequence[ToolResult]) -> str:
    return "<function_results>" + "".join(f"\n<result>{r.output}</result>" for r in results) + "\n</function_results>"


DEEPSEEK_V32 = Renderer(
    calls=_dsml_calls("function_calls"),
    tools=_v32_tools,
    results=_v32_results,
    assistant=lambda c, k: join_turn(c, k, "\n\n"),
)
DEEPSEEK_V4 = Renderer(
    calls=_dsml_calls("tool_calls"),
    tools=_v4_tools,
    results=results_joined(lambda r: f"<tool_result>{r.output}</tool_result>", "\n\n"),
    assistant=lambda c, k: join_turn(c, k, "\n\n"),
)


def _dsml_grammar(block: str) -> CallGrammar:
    """What `_dsml_calls` writes, as a grammar: each parameter says whether it is a string."""
    return CallGrammar(
        call=(
            Lit(f'<{DSML}invoke name="'),
            Name(),
            Lit('">\n'),
            Args(
                xml=(f'<{DSML}parameter name="', '" string="{type}">', f"</{DSML}parameter>"),
                types=tuple((kind, "true" if kind == "string" else "false") for kind in JSON_TYPES),
                between="\n",
            ),
            Lit(f"\n</{DSML}invoke>"),
        ),
        separator="\n",
        section=(f"<{DSML}{block}>\n", f"\n</{DSML}{block}>"),
        trigger=f"<{DSML}{block}>",
    )


DEEPSEEK_V32_GRAMMAR = _dsml_grammar("function_calls")
DEEPSEEK_V4_GRAMMAR = _dsml_grammar("tool_calls")


DIALECTS = [
    Dialect(
        name="deepseek_v4",
        markers=("<｜DSML｜tool_calls>",),
        description='<｜DSML｜tool_calls><｜DSML｜invoke name="f">…: DeepSeek-V4, V4.1 (DSML)',
        machine=DsmlV4Parser,
        renderer=DEEPSEEK_V4,
        grammar=DEEPSEEK_V4_GRAMMAR,
        models=(r"deepseek-v4",),
        reasoning=ReasoningSyntax(pairs=THINK, implicit_ends=_section_starts(V4_OPENS)),
        prefills_reasoning=prefills_when_thinking,
    ),
    Dialect(
        name="deepseek_v32",
        markers=(V32_OPEN,),
        description='<｜DSML｜function_calls><｜DSML｜invoke name="f">…: DeepSeek-V3.2 (DSML)',
        machine=DsmlV32Parser,
        renderer=DEEPSEEK_V32,
        grammar=DEEPSEEK_V32_GRAMMAR,
        models=(r"deepseek-v3\.2", r"deepseek-v3p2"),
        reasoning=ReasoningSyntax(pairs=THINK, implicit_ends=_section_starts((V32_OPEN,))),
        prefills_reasoning=prefills_when_thinking,
    ),
]


__all__ = [
    "DEEPSEEK_V4",
    "DEEPSEEK_V4_GRAMMAR",
    "DEEPSEEK_V32",
    "DEEPSEEK_V32_GRAMMAR",
    "DIALECTS",
    "DSML",
    "INVOKE_CLOSES",
    "INVOKE_OPENS",
    "PARAM_CLOSES",
    "PARAM_OPENS",
    "V4_CLOSES",
    "V4_OPENS",
    "V32_CLOSES",
    "V32_OPEN",
    "DsmlBlock",
    "DsmlV4Parser",
    "DsmlV32Parser",
]
