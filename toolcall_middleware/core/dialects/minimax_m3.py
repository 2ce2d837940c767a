"""`minimax_m3`: the namespaced XML calls of MiniMax-M3.

```
]<]minimax[>[<tool_call>
]<]minimax[>[<invoke name="create_event">]<]minimax[>[<title>Standup]<]minimax[>[</title>
]<]minimax[>[<tags>]<]minimax[>[<item>red]<]minimax[>[</item>]<]minimax[>[</tags>]<]minimax[>[</invoke>
]<]minimax[>[</tool_call>
```

Every tag is preceded by the `]<]minimax[>[` token (`NS`; whitespace may stand between the token
and its tag, as SGLang reads it), and each argument is an element named by its key, as the
template's `to_xml` writes it: an object's members are child elements, an array's items are
`<item>` children, a scalar is the text between its tags, taken verbatim (trailing whitespace is
the value's, as SGLang keeps it). Several `<invoke>` in one section are parallel calls; each is
handed out at its own `</invoke>`.

Leaf values are typed by the request's tool schema, nested schemas included (`properties`,
`additionalProperties`, an array's `items`), with `schema.coerce_value`: a string without one, but
for the literal `null`. An element with children is an array when its schema says so, or when no
schema says object and all its children are `<item>`s; otherwise an object, where a repeated key
gathers its values in a list (as vLLM's and SGLang's parsers read it). An empty element is an
empty container unless its schema is a scalar's.

Malformed markup is never a call: a closing tag that does not match, text between elements, or a
tag that is no tag makes the call's text content (the rest is read again as text). Output that
ends inside a call is a `TruncatedCall`. Reasoning is `<mm:think>…</mm:think>`; the template opens
it when thinking is turned on (`thinking_mode="enabled"`), so the output starts inside it then.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._reasoning import ReasoningSyntax
from .._schema import coerce_value, schema_types
from .._textscan import WHITESPACE, partial_marker_len
from ._base import BlockItem, BlockParser, Call, Dialect, ParseContext, dump_arguments
from ._rendering import CallToRender, Renderer, ToolSpec, dumps, fallback_results
from .call_grammar import Args, CallGrammar, KeyedElements, Lit, Name

NS = "]<]minimax[>["
SECTION = NS + "<tool_call>"
SECTION_END = NS + "</tool_call>"
THINK = ("<mm:think>", "</mm:think>")
ITEM = "item"

_TAG_MAX = 512  # whitespace, `<`, a name and `>`: a longer "tag" is no tag
_DEPTH_MAX = 64  # nesting deeper than this is not arguments


@dataclass
class _Element:
    """An open element: its key, its schema, and its children so far (`(key, value)`)."""

    key: str
    schema: Mapping[str, Any] | None
    children: list[tuple[str, Any]] = field(default_factory=list)


def _child_schema(parent: Mapping[str, Any] | None, key: str, index: int) -> Mapping[str, Any] | None:
    """The schema of child `key` (the `index`th) of an element whose schema is `parent`."""
    if not isinstance(parent, Mapping):
        return None
    if "array" in schema_types(parent) and key == ITEM:
        prefix = parent.get("prefixItems")
        chosen = prefix[index] if isinstance(prefix, list) and index < len(prefix) else parent.get("items")
        return chosen if isinstance(chosen, Mapping) else None
    props = parent.get("properties")
    found = props.get(key) if isinstance(props, Mapping) else None
    if isinstance(found, Mapping):
        return found
    extra = parent.get("additionalProperties")
    return extra if isinstance(extra, Mapping) else None


def _container(element: _Element) -> Any:
    """The value of an element with children (or none, and no scalar schema)."""
    types = schema_types(element.schema)
    keys = [key for key, _ in element.children]
    if "array" in types or ("object" not in types and keys and all(key == ITEM for key in keys)):
        return [value for _, value in element.children]
    return _members(element.children)


def _members(children: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object of the children; a key written twice gathers its values in a list."""
    out: dict[str, Any] = {}
    repeated: set[str] = set()
    for key, value in children:
        if key not in out:
            out[key] = value
        elif key in repeated:
            out[key].append(value)
        else:
            out[key] = [out[key], value]
            repeated.add(key)
    return out


def _is_scalar(schema: Mapping[str, Any] | None) -> bool:
    types = schema_types(schema)
    return bool(types) and not types & {"object", "array"}


class MinimaxM3Block:
    """One section, after its `NS<tool_call>`; each piece is scanned once, bar a held-back tag."""

    end_marker = SECTION_END  # (`closed_at_stop`)

    def __init__(self, ctx: ParseContext) -> None:
        self._ctx = ctx
        self._raw: list[str] = [SECTION]  # the current call's text, for a malformed or cut-off one
        self._buf = ""  # a tag (from its `NS`) still waiting for its `>`, or a partial `NS`
        self._text: list[str] = []  # the text since the last tag
        self._name: str | None = None  # the open call's function
        self._stack: list[_Element] = []  # the call's open elements; [0] is its arguments
        self._leaf = False  # the last tag opened an element: text may be its value
        self._items: list[BlockItem] = []
        self._end: int | None = None

    def feed(self, text: str) -> str | None:
        self._raw.append(text)
        s, self._buf = self._buf + text, ""
        i = 0
        while self._end is None:
            j = s.find(NS, i)
            if j < 0:
                keep = partial_marker_len(s[i:], (NS,))
                self._text.append(s[i : len(s) - keep])
                self._buf = s[len(s) - keep :]
                return None
            self._text.append(s[i:j])
            k = j + len(NS)
            while k < len(s) and k - j < _TAG_MAX and s[k] in WHITESPACE:
                k += 1
            gt = s.find(">", k, j + _TAG_MAX)
            if (k < len(s) and s[k] != "<") or (gt < 0 and len(s) - j >= _TAG_MAX):
                self._malformed(s, j)
                break
            if gt < 0:
                self._buf = s[j:]
                return None
            i = gt + 1
            self._tag(s, j, s[k + 1 : gt], i)
        assert self._end is not None
        return s[self._end :]

    def take(self) -> list[BlockItem]:
        items, self._items = self._items, []
        return items

    def finish(self) -> str | None:
        raw = "".join(self._raw)
        if self._name is None and not raw.strip(WHITESPACE):
            return None  # the calls are complete; only layout (or nothing) came after them
        return raw

    # -- tags --------------------------------------------------------------------------------

    def _tag(self, s: str, start: int, tag: str, end: int) -> None:
        """The tag `<tag>` written at `s[start:end]` (from its `NS`)."""
        text = "".join(self._text)
        self._text = []
        leaf, self._leaf = self._leaf, False
        closing = tag.startswith("/")
        name = tag[1:].strip() if closing else tag.strip()
        if self._name is None:  # between calls: a call, or the section's end
            if text.strip(WHITESPACE):
                self._malformed(s, start)
            elif closing and name == "tool_call":
                self._end = end
            elif not closing and name.startswith("invoke") and (function := _invoke_name(name)):
                self._name = function
                self._stack = [_Element("", self._ctx.schema_for(function))]
            else:
                self._malformed(s, start)
            return
        top = self._stack[-1]
        if closing and len(self._stack) == 1:
            if name != "invoke" or text.strip(WHITESPACE):
                self._malformed(s, start)
                return
            call = Call(name=self._name, arguments=dump_arguments(_members(top.children)))
            self._items.append(call)
            self._raw = [s[end:]]  # what follows belongs to the next call, if any
            self._name, self._stack = None, []
            return
        if closing:
            if name != top.key or (not leaf and text.strip(WHITESPACE)):
                self._malformed(s, start)
                return
            self._stack.pop()
            if leaf and (text or _is_scalar(top.schema)):
                value = coerce_value(text, top.schema)
            else:
                value = _container(top)
            self._stack[-1].children.append((top.key, value))
            return
        if text.strip(WHITESPACE) or not _key(name) or len(self._stack) > _DEPTH_MAX:
            self._malformed(s, start)  # (text before a child element: mixed content)
            return
        schema = _child_schema(top.schema, name, sum(1 for key, _ in top.children if key == name))
        self._stack.append(_Element(name, schema))
        self._leaf = True

    def _malformed(self, s: str, i: int) -> None:
        """The structure broke at `s[i]`: the call's raw text so far is text; the rest is re-read."""
        raw = "".join(self._raw)
        self._items.append(raw[: len(raw) - (len(s) - i)])
        self._end = i


def _invoke_name(tag: str) -> str | None:
    """`f` from `invoke name="f"` (or `'f'`); `None` when the tag is not that."""
    rest = tag[len("invoke") :]
    if not rest[:1].isspace():
        return None
    key, eq, value = rest.strip().partition("=")
    value = value.strip()
    if key.strip() != "name" or not eq or len(value) < 3 or value[0] not in "\"'" or value[-1] != value[0]:
        return None
    name = value[1:-1].strip()
    return name if name and not any(c in name for c in "\"'<>") else None


def _key(name: str) -> bool:
    return bool(name) and not any(c.isspace() or c in "<>/\"'=" for c in name)


class MinimaxM3Parser(BlockParser):
    openers = (SECTION,)
    strip_around_blocks = True  # the template writes the section on lines of its own

    def open_block(self, opener: str) -> MinimaxM3Block:
        return MinimaxM3Block(self.ctx)


def _prefills(model: str | None, thinking: bool | None) -> bool:
    """The template opens `<mm:think>` only when thinking is turned on (`thinking_mode`)."""
    return thinking is True


# -- request side: the chat template's text --------------------------------------------------------


def xml_value(value: Any) -> str:
    """A value as the template's `to_xml` writes it: members and items as child elements."""
    if isinstance(value, Mapping):
        return "".join(f"{NS}<{k}>{xml_value(v)}{NS}</{k}>" for k, v in value.items())
    if isinstance(value, list):
        return "".join(f"{NS}<{ITEM}>{xml_value(v)}{NS}</{ITEM}>" for v in value)
    return value if isinstance(value, str) else dumps(value)


def _calls(calls: Sequence[CallToRender]) -> str:
    if not calls:
        return ""
    body = "".join(f'{NS}<invoke name="{c.name}">{xml_value(dict(c.arguments))}{NS}</invoke>\n' for c in calls)
    return f"{SECTION}\n{body}{SECTION_END}"


def _tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    listing = "".join(f"<tool>{dumps(t.function())}</tool>\n" for t in tools)
    invoke = f'{NS}<invoke name="tool-name">{NS}<param-key>param-value{NS}</param-key>{NS}</invoke>'
    example = f"{SECTION}\n{invoke}\n{SECTION_END}"
    return (
        "# Tools\nYou may call one or more tools to assist with the user query.\n"
        "Here are the tools available in JSONSchema format:\n\n<tools>\n" + listing + "</tools>\n\n"
        "When making tool calls, write each parameter as an element named by its key (objects as child "
        "elements, array items as <item> elements), every tag preceded by " + NS + ":\n\n" + example
    )


MINIMAX_M3 = Renderer(calls=_calls, tools=_tools, results=fallback_results)

MINIMAX_M3_GRAMMAR = CallGrammar(
    call=(
        Lit(f'{NS}<invoke name="'),
        Name(),
        Lit('">'),
        Args(notation=KeyedElements(NS + "<{key}>", NS + "</{key}>", ITEM)),
        Lit(f"{NS}</invoke>\n"),
    ),
    section=(SECTION + "\n", SECTION_END),
    trigger=SECTION,
    special_tokens=(NS,),
)


DIALECTS = [
    Dialect(
        name="minimax_m3",
        markers=("]<]minimax[>[<tool_call>",),
        description=f'{NS}<tool_call>{NS}<invoke name="f">{NS}<k>v{NS}</k>{NS}</invoke>{NS}</tool_call>: MiniMax-M3',
        machine=MinimaxM3Parser,
        renderer=MINIMAX_M3,
        models=(r"minimax[-_]?m3",),
        reasoning=ReasoningSyntax(pairs=(THINK,)),
        prefills_reasoning=_prefills,
        grammar=MINIMAX_M3_GRAMMAR,
    )
]


__all__ = [
    "DIALECTS",
    "MINIMAX_M3",
    "MINIMAX_M3_GRAMMAR",
    "NS",
    "SECTION",
    "SECTION_END",
    "MinimaxM3Block",
    "MinimaxM3Parser",
    "xml_value",
]
