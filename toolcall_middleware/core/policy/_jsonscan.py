"""A lenient reader of almost-JSON arguments: tokens, and the exact JSON they spell.

`tokenize(text)` walks the text once, with no regular expressions, and returns its tokens:
the structural characters `{ } [ ] : ,`, strings (in double or single quotes, decoded) and bare
words (literals, numbers, unquoted keys). Comments (`//`, `#`, `/* */`) and the literal `\\n`
escapes some models write between tokens are skipped. It refuses (returns `None`) a text that
was cut off or that it could only guess at:

- an unterminated string or block comment, a dangling backslash, an object or array still open
  at the end (so a cut-off `{"cmd": "rm -rf /tmp/bu` can never be "completed" into a command);
- an escape that Python reads as a character (`\\x41`, `\\a`, `\\101`) where a backslash is
  also a fair reading (`C:\\apps`);
- mismatched or extra closing brackets, text before or after the object, a top level that is
  not an object, nesting deeper than `MAX_DEPTH`.

`rebuild(tokens)` writes the tokens out as JSON, changing only how they are written: quotes,
Python's `True`/`False`/`None`, unquoted keys, number spellings (`01`, `.5`, `+1`), commas
(trailing, doubled or missing between object members). Every key and value stays, in order. It
refuses bare words that are not literals or numbers (`undefined`, `NaN`, `tru`), a missing
colon or value, and commas whose meaning in arrays differs between languages (`[1,,2]` has a
hole in JavaScript; `['a' 'b']` is one string in Python).
"""

from __future__ import annotations

import json

MAX_DEPTH = 128

Token = tuple[str, str]  # (kind, text): kind is one of `{}[]:,`, "str" (decoded) or "word"

_WS = " \t\r\n\ufeff"
_STRUCT = "{}[]:,"
_LITERALS = {"true": "true", "True": "true", "false": "false", "False": "false", "null": "null", "None": "null"}
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "'": "'"}
_HEX = frozenset("0123456789abcdefABCDEF")
_DIGITS = frozenset("0123456789")


def tokenize(text: str) -> list[Token] | None:
    """The tokens of a text that may be broken JSON of one object, or `None` (see the module doc)."""
    tokens: list[Token] = []
    depth = 0
    stack: list[str] = []
    closed = False
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c in _WS:
            i += 1
        elif c == "\\" and nxt in ("n", "r", "t"):  # `{\n"a": 1}` written with a literal backslash-n
            i += 2
        elif c == "#" or (c == "/" and nxt == "/"):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif c == "/" and nxt == "*":
            end = text.find("*/", i + 2)
            if end < 0:
                return None  # an unterminated comment: cut off
            i = end + 2
        elif closed:
            return None  # text after the object
        elif c in "{[":
            if not stack and c != "{":
                return None
            stack.append(c)
            depth = max(depth, len(stack))
            if depth > MAX_DEPTH:
                return None
            tokens.append((c, c))
            i += 1
        elif c in "}]":
            if not stack or stack.pop() != ("{" if c == "}" else "["):
                return None
            closed = not stack
            tokens.append((c, c))
            i += 1
        elif not stack:
            return None  # text before the object
        elif c in ":,":
            tokens.append((c, c))
            i += 1
        elif c in "\"'":
            end, value = _string(text, i)
            if end < 0:
                return None  # an unterminated string (cut off), or an escape that is a guess
            tokens.append(("str", value))
            i = end
        else:
            j = i
            while j < n and text[j] not in _WS and text[j] not in _STRUCT and text[j] not in "\"'#/\\":
                j += 1
            if j == i:
                return None  # a stray `/` or backslash
            tokens.append(("word", text[i:j]))
            i = j
    return tokens if closed else None


def _string(text: str, start: int) -> tuple[int, str]:
    """Decode the string opened at `start`: (index after its closing quote, value), or (-1, "")."""
    quote = text[start]
    out: list[str] = []
    i, n = start + 1, len(text)
    while i < n:
        c = text[i]
        if c == quote:
            return i + 1, "".join(out)
        if c != "\\":
            out.append(c)  # raw newlines and tabs too: the model's content
            i += 1
            continue
        if i + 1 >= n:
            return -1, ""
        e = text[i + 1]
        if e == "u" and i + 6 <= n and all(h in _HEX for h in text[i + 2 : i + 6]):
            unit = int(text[i + 2 : i + 6], 16)
            i += 6
            low = text[i + 2 : i + 6] if text.startswith("\\u", i) else ""
            if 0xD800 <= unit < 0xDC00 and len(low) == 4 and all(h in _HEX for h in low):
                second = int(low, 16)
                if 0xDC00 <= second < 0xE000:
                    unit = 0x10000 + ((unit - 0xD800) << 10) + (second - 0xDC00)
                    i += 6
            out.append(chr(unit))
        elif e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 2
        elif _python_escape(text, i):
            return -1, ""
        else:  # `C:\path`, `\d+`: the backslash is part of the value, as the model meant it
            out.append("\\" + e)
            i += 2
    return -1, ""


def _python_escape(text: str, i: int) -> bool:
    """Whether the backslash at `i` starts an escape Python reads as something else than a
    backslash: `\\x41` is "A" there, `\\a` a bell, `\\101` an octal "A" (but `C:\\Users` and
    `C:\\xampp` are not escapes in Python either). The model's meaning would be a guess."""
    e = text[i + 1]
    if e in "av01234567":
        return True
    if e == "x":
        return _hex_run(text, i + 2, 2)
    if e == "U":
        return _hex_run(text, i + 2, 8)
    return e == "N" and text.startswith("{", i + 2)


def _hex_run(text: str, start: int, size: int) -> bool:
    return start + size <= len(text) and all(h in _HEX for h in text[start : start + size])


def rebuild(tokens: list[Token]) -> str | None:
    """The tokens of one object written as JSON text, or `None` (see the module doc)."""
    out: list[str] = []
    stack: list[str] = []
    # What may come next: "key" (or `}`), "colon", "value", "member" (after a member's value),
    # "item" (an array's first value, or `]`), "next" (after an item), "after_comma" (in an array).
    state = "value"
    for kind, text in tokens:
        if kind == ",":
            if state == "member":
                state = "key"
            elif state == "next":
                state = "after_comma"
            elif state != "key":  # doubled and leading commas are harmless only between members
                return None
            continue
        if kind == ":":
            if state != "colon":
                return None
            out.append(": ")
            state = "value"
            continue
        if kind in "}]":
            if state not in (("key", "member") if kind == "}" else ("item", "next", "after_comma")):
                return None
            stack.pop()
            out.append(kind)
            state = _after_value(stack)
            continue
        if state in ("key", "member"):
            if kind not in ("str", "word"):
                return None
            if out[-1] != "{":
                out.append(", ")  # commas are written here, however many (or few) the text had
            out.append(_string_json(text))
            state = "colon"
            continue
        if state not in ("value", "item", "after_comma"):
            return None  # "colon" wanted, or two array items with no comma between them
        if state == "after_comma":
            out.append(", ")
        if kind in "{[":
            stack.append(kind)
            out.append(kind)
            state = "key" if kind == "{" else "item"
            continue
        value = _string_json(text) if kind == "str" else _word_json(text)
        if value is None:
            return None
        out.append(value)
        state = _after_value(stack)
    return "".join(out) if not stack and state == "done" else None


def _after_value(stack: list[str]) -> str:
    if not stack:
        return "done"
    return "member" if stack[-1] == "{" else "next"


def _string_json(text: str) -> str:
    out = json.dumps(text, ensure_ascii=False)
    try:
        out.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (`"\ud83d"`): keep it escaped, as it came
        out = json.dumps(text)
    return out


def _word_json(word: str) -> str | None:
    """A literal or a number in JSON spelling (`True` -> `true`, `.5` -> `0.5`), or `None`."""
    if word in _LITERALS:
        return _LITERALS[word]
    sign, body = ("-", word[1:]) if word[:1] == "-" else ("", word[1:] if word[:1] == "+" else word)
    mantissa, e, exponent = body.replace("E", "e").partition("e")
    whole, dot, fraction = mantissa.partition(".")
    if not (set(whole) <= _DIGITS and set(fraction) <= _DIGITS and (whole or fraction)):
        return None
    digits = exponent[1:] if exponent[:1] in ("+", "-") else exponent
    if e and not (digits and set(digits) <= _DIGITS):
        return None
    # JSON's number grammar, the same value: one leading zero at most, digits on both sides of a dot.
    return sign + (whole.lstrip("0") or "0") + ("." + (fraction or "0") if dot else "") + (e + exponent)


__all__ = ["MAX_DEPTH", "Token", "rebuild", "tokenize"]
