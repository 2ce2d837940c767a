"""What a dialect declares of its call syntax, for the grammar that constrains the host.

```python
HERMES_GRAMMAR = CallGrammar(
    call=(Lit(OPEN + '\\n{"name": '), Name(json=True), Lit(', "arguments": '), Args(), Lit("}\\n" + CLOSE)),
    separator="\\n",
)
```

A call is a sequence of parts: fixed text (`Lit`), the tool's name (`Name`, as a JSON string when
`json`), its arguments (`Args`: a JSON object, XML parameters, or Python keyword arguments) and
a run of characters (`Chars`: an index or id the format writes). Several calls are joined by
`separator`, and the whole block is wrapped in `section` (Kimi's and DeepSeek's section markers,
Mistral's `[TOOL_CALLS] [`…`]`). `trigger` is the text that starts the block, for the lazy form
(free text until it, then the constrained block); it defaults to the block's first fixed text.
`opened` is the text the chat template writes at the end of the prompt, the first call's own
opening (Functionary's `>>>`): the output's first call starts after it, the others with it.
`prose` is what opens the output when it is text instead (Functionary's `all\n`): under `auto`
the grammar then holds the whole output (not the lazy form), the calls or that text, in which
the trigger opens a call.
`special_tokens` are the markers that are single tokens of the model's vocabulary (llama.cpp must
be told to keep them as text; TGI's regex cannot match them). `reasoning` overrides the
dialect's reasoning pair (harmony's analysis channel); `document` builds the JSON schema of a
whole-output JSON dialect from the calls' schemas (the only form Ollama's `format` can carry).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

XmlElement = tuple[str, str, str]  # a parameter element: before its key, between key and value, after the value


@dataclass(frozen=True, slots=True)
class Lit:
    """Fixed text."""

    text: str


@dataclass(frozen=True, slots=True)
class Name:
    """The called tool's name; `json`: written as a JSON string (quoted, escaped)."""

    json: bool = False


@dataclass(frozen=True, slots=True)
class Args:
    """The call's arguments: a JSON object, or (`xml`) one element per parameter, its value a
    string's bare text or any other value's JSON (Qwen3-Coder's `<parameter=k>\\nv\\n</parameter>\\n`
    is `("<parameter=", ">\\n", "\\n</parameter>\\n")`).

    `types`: the element names its value's JSON type, as DSML's `string="true"` and Kimi-K3's
    `type="number"` do: each JSON type (`JSON_TYPES`) with the text written for it in place of
    `{type}` in the element's middle; the value is a string's bare text or any other value's
    JSON. `between`: the text between two elements (DSML's line break). `cdata`: a value may
    also be wrapped in this pair, its text as written (MiniCPM 5's CDATA sections). `notation`:
    the arguments in a notation of their own, neither JSON nor flat elements (`Notation`).

    `python`: Python keyword arguments, `city='Paris', days=3`, each value a Python literal
    (strings in either quote with Python's escapes, `True`/`False`/`None`, lists, dicts with
    quoted keys); a string writes each character of `escaped` as `\\xNN` (Olmo 3's and LFM2's
    renderers write `<` so, that no value can hold the block's end marker)."""

    xml: XmlElement | None = None
    types: tuple[tuple[str, str], ...] = ()
    between: str = ""
    python: bool = False
    escaped: str = ""
    cdata: tuple[str, str] | None = None
    notation: Notation | None = None


@dataclass(frozen=True, slots=True)
class KeyedElements:
    """Every value an element named by its key (MiniMax-M3): `{key}` in `opening` and `closing`
    is the key; an object's members and an array's items (named `item`) are child elements, a
    scalar the text between the tags (a string's bare text, any other value's JSON)."""

    opening: str
    closing: str
    item: str


@dataclass(frozen=True, slots=True)
class ObjectNotation:
    """Gemma's object notation: `{key:value,…}`, `[…]`, strings between `string` delimiters with
    no escapes, numbers, `true`/`false`/`null`, no whitespace. `key` and `value` write a known
    key and a constant as the renderer does."""

    string: str
    key: Callable[[str], str]
    value: Callable[[Any], str]


# Arguments written neither as JSON nor as flat XML elements.
Notation = KeyedElements | ObjectNotation


# The JSON type names a typed XML element may write for a value (`Args.types`).
JSON_TYPES = ("string", "integer", "number", "boolean", "null", "object", "array")


@dataclass(frozen=True, slots=True)
class Chars:
    """`least` to `most` (None: any number) characters of the regular-expression class `cls`."""

    cls: str
    least: int = 1
    most: int | None = None


Part = Lit | Name | Args | Chars


@dataclass(frozen=True)
class CallGrammar:
    """A dialect's call syntax (see the module doc)."""

    call: tuple[Part, ...]
    separator: str = ""
    section: tuple[str, str] = ("", "")
    trigger: str | None = None
    special_tokens: tuple[str, ...] = ()
    opened: str = ""
    prose: str = ""
    reasoning: tuple[str, str] | None = None
    document: Callable[[Sequence[Mapping[str, Any]], bool], Mapping[str, Any]] | None = None

    @property
    def start(self) -> str:
        """The text every call block starts with: the lazy form's trigger."""
        if self.trigger is not None:
            return self.trigger
        if self.section[0]:
            return self.section[0]
        first = self.call[0]
        if not isinstance(first, Lit) or not first.text:
            raise ValueError("a call grammar whose calls start with no fixed text needs a trigger")
        return first.text


def call_object_schema(name: str, arguments: Mapping[str, Any], key: str = "arguments") -> dict[str, Any]:
    """`{"name": NAME, KEY: {…}}` as a JSON schema: one call of a bare-JSON dialect."""
    return {
        "type": "object",
        "properties": {"name": {"const": name}, key: dict(arguments)},
        "required": ["name", key],
        "additionalProperties": False,
    }


__all__ = [
    "JSON_TYPES",
    "Args",
    "CallGrammar",
    "Chars",
    "KeyedElements",
    "Lit",
    "Name",
    "Notation",
    "ObjectNotation",
    "Part",
    "XmlElement",
    "call_object_schema",
]
