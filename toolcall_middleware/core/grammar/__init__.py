"""Grammars that make the host's own decoder write a valid call in the dialect's native syntax.

Each dialect declares its call syntax once (`CallGrammar`, in `core.dialects.call_grammar`), beside the marker
constants its parser and renderer use; `build` turns a declaration, the offered tools and
`tool_choice` into a grammar tree; `engines` writes that tree as the constraint field each
engine reads (`constrain_fields`).
"""

from typing import Literal

# The engines `constrain` names (the configuration's type, and what `engines` writes for).
Engine = Literal["vllm", "sglang", "llama.cpp", "tgi", "ollama"]
ENGINES: tuple[Engine, ...] = ("vllm", "sglang", "llama.cpp", "tgi", "ollama")

__all__ = ["ENGINES", "Engine", "build", "constrain", "engines", "gbnf", "python", "regex"]
