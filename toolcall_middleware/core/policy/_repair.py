"""`repair_arguments`: one safe repair pass over broken JSON arguments, failing closed.

Models write arguments that are almost JSON: trailing commas, single quotes, Python's
`True`/`None`, unquoted keys, comments, missing commas between members, raw newlines or
`C:\\path` backslashes inside strings, a literal `\\n` between tokens, or the whole object
encoded once more as a JSON string. Those are repaired. A repair never guesses at content:

- a text that was cut off (an unterminated string, an object or array still open at the end, a
  dangling escape or comment) is never completed, so `{"cmd": "rm -rf /tmp/bu` cannot become a
  call that runs `rm -rf /tmp/bu`;
- the result holds exactly the keys, values and structure the text held, in the same order:
  only the spelling changes (see `jsonscan.py`). Bare words that are neither keys, literals nor
  numbers (`undefined`, `NaN`), unescaped quotes inside strings, missing colons and ambiguous
  array commas are refused, not guessed at.

It is stdlib-only and deterministic. (json-repair was tried for the repair itself and fails
this contract: it completes cut-off values and drops or merges content, e.g. `{"a":0,,}` ->
`{"a": "0,"}`, `{"\\n":0,}` -> `{"": 0}`, `{'' :0}` -> `{" :{": 0}`.)
"""

from __future__ import annotations

from .._schema import decode_json
from ._jsonscan import rebuild, tokenize


def repair_arguments(text: str) -> str | None:
    """The JSON text of the object `text` means, or `None` when it cannot be repaired safely.

    - A text that already is a JSON object comes back unchanged (the same string).
    - A JSON string whose content is an object (double encoding) is unwrapped, once: its content
      comes back as it is, or repaired by the same rules when it needs it.
    - Anything else is repaired only as the module doc says; the result is compact JSON text of
      an object (non-ASCII kept as is), which `json.loads` reads back as a `dict`.

    Pure: no I/O, no state; linear in the length of `text`.
    """
    try:
        value = decode_json(text)
    except (ValueError, RecursionError):
        return _repair(text)
    if isinstance(value, dict):
        return text
    if isinstance(value, str):  # '"{\\"a\\": 1}"': the object, encoded once more
        try:
            inner = decode_json(value)
        except (ValueError, RecursionError):
            return _repair(value)
        return value if isinstance(inner, dict) else None
    return None  # an array, a number, a literal: not arguments


def _repair(text: str) -> str | None:
    tokens = tokenize(text)
    fixed = rebuild(tokens) if tokens is not None else None
    if fixed is None:
        return None
    try:
        value = decode_json(fixed)  # also refuses numbers that overflow to infinity
    except (ValueError, RecursionError):
        return None
    return fixed if isinstance(value, dict) else None


__all__ = ["repair_arguments"]
