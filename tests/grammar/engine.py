"""The grammar engine the constraint tests compile with: xgrammar, the library vLLM and SGLang
use (and a GBNF reader for llama.cpp's grammars). It pulls torch, so it lives in its own
environment (`make .venv-grammar`); elsewhere these tests skip, unless
TOOLCALL_MIDDLEWARE_GRAMMAR_ENGINES=required (set by `make test-grammar`), when a missing
engine is a failure."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import pytest

REQUIRED = os.environ.get("TOOLCALL_MIDDLEWARE_GRAMMAR_ENGINES") == "required"

try:
    import xgrammar
except ImportError:
    if REQUIRED:
        raise
    pytest.skip("xgrammar is not installed here (make test-grammar runs these tests)", allow_module_level=True)


def accepts(grammar: Any, text: str) -> bool:
    return bool(xgrammar.testing._is_grammar_accept_string(grammar, text))


def from_fields(engine: str, fields: Mapping[str, Any]) -> Any:
    """The grammar an engine compiles from the fields we send it."""
    if engine == "vllm":
        return xgrammar.Grammar.from_structural_tag(fields["structured_outputs"]["structural_tag"])
    if engine == "sglang":
        return xgrammar.Grammar.from_structural_tag(json.dumps(fields["response_format"]))
    if engine == "llama.cpp":
        return xgrammar.Grammar.from_ebnf(fields["grammar"])
    if engine == "tgi":
        return xgrammar.Grammar.from_regex(fields["response_format"]["value"])
    if engine == "ollama":
        return xgrammar.Grammar.from_json_schema(json.dumps(fields["format"]))
    raise ValueError(engine)
