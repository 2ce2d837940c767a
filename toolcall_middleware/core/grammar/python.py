"""Python literals as grammar text: what `gbnf.PythonGbnf` and `regex.python_arguments` build
Python keyword arguments from (`city='Paris', days=3`, each value a Python literal).

```python
literal_texts("a<b", escaped="<")   # ["'a\\x3cb'", '"a\\x3cb"']: the string in either quote
literal_texts({"k": [True, None]})  # ["{'k': [True, None]}"]
gbnf_rules("-3c", escaped="<")      # the base rules, their strings without a raw `<`
```

The syntax is the one `rendering.python_literal` writes and `ast.literal_eval` reads: a string
in either quote, with Python's escapes and no raw control character; an integer or a number;
`True`, `False`, `None`; a list; a dict whose keys are quoted strings. A space may follow each
`,` and `:`, and no other whitespace comes between the parts: no line break, as Olmo 3 reads one
call a line. A string writes each character of `escaped` only as `\\xNN` (the renderers of
Olmo 3 and LFM2 so write `<`, that no value can hold their block's end marker).
"""

from __future__ import annotations

from typing import Any

from ..dialects._rendering import python_literal

_SHORT = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
ESCAPE_REGEX = r"""\\(?:[\\'"abfnrtv]|[0-7]{1,3}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8})"""
KEYWORD_REGEX = "[A-Za-z_][A-Za-z0-9_]*"
SEPARATOR_REGEX = ", ?"  # (the renderers write ", ")
# The base rules every string's `escaped` leaves alike (the others' names end with a suffix).
SHARED_RULES = {"escape", "integer", "number", "boolean", "none"}


def quoted(text: str, quote: str, escaped: str = "") -> str:
    """`text` as a Python string literal in `quote`, escaped as `repr` escapes it (and each
    character of `escaped` as `\\xNN`)."""
    out = [quote]
    for ch in text:
        if ch in _SHORT:
            out.append(_SHORT[ch])
        elif ch == quote:
            out.append("\\" + ch)
        elif ch in escaped or not ch.isprintable():
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append(quote)
    return "".join(out)


def literal_texts(value: Any, escaped: str = "") -> list[str]:
    """The texts a model may write for `value`: a string in either quote, any other value as
    the renderer writes it (`<` occurs only inside its strings: escaping it there is safe)."""
    if isinstance(value, str):
        return [quoted(value, "'", escaped), quoted(value, '"', escaped)]
    text = python_literal(value)
    for ch in escaped:
        text = text.replace(ch, f"\\x{ord(ch):02x}")
    return [text]


def string_regex(escaped: str) -> str:
    """A Python string literal as a regular expression."""
    extra = "".join(_class_char(c) for c in escaped)
    return "(?:" + "|".join(f"{q}(?:[^{q}\\\\\\x00-\\x1f{extra}]|{ESCAPE_REGEX})*{q}" for q in "'\"") + ")"


def gbnf_rules(s: str, escaped: str) -> dict[str, str]:
    """The base rules of Python literals in GBNF, those not in `SHARED_RULES` named with `s`."""
    extra = "".join(_class_char(c) for c in escaped)
    quotes = {"'": '"\'"', '"': '"\\""'}
    return {
        "py-escape": '"\\\\" ( ["\'\\\\abfnrtv] | [0-7]{1,3} | "x" [0-9a-fA-F]{2} | "u" [0-9a-fA-F]{4} | '
        '"U" [0-9a-fA-F]{8} )',
        f"py-string{s}": " | ".join(
            f"{lit} ( [^{q}\\\\\\x00-\\x1f{extra}] | py-escape )* {lit}" for q, lit in quotes.items()
        ),
        "py-integer": '"-"? ( "0" | [1-9] [0-9]* )',
        "py-number": 'py-integer ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?',
        "py-boolean": '"True" | "False"',
        "py-none": '"None"',
        f"py-value{s}": f"py-dict{s} | py-list{s} | py-string{s} | py-number | py-boolean | py-none",
        f"py-list{s}": f'"[" ( py-value{s} ( "," " "? py-value{s} )* )? "]"',
        f"py-item{s}": f'py-string{s} ":" " "? py-value{s}',
        f"py-dict{s}": f'"{{" ( py-item{s} ( "," " "? py-item{s} )* )? "}}"',
        f"py-kwarg{s}": f'[A-Za-z_] [A-Za-z0-9_]* "=" py-value{s}',
        f"py-kwargs{s}": f'( py-kwarg{s} ( "," " "? py-kwarg{s} )* )?',
    }


def _class_char(ch: str) -> str:
    return "\\" + ch if ch in "]\\^-[" else ch


__all__ = [
    "ESCAPE_REGEX",
    "KEYWORD_REGEX",
    "SEPARATOR_REGEX",
    "SHARED_RULES",
    "gbnf_rules",
    "literal_texts",
    "quoted",
    "string_regex",
]
