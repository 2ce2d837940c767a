"""The dialect registry: every format by name, and selection by served model name.

Each format is declared whole in one module of this package (its parser, reasoning syntax,
incremental-streaming support and request-side renderer, on its `Dialect`); a module lists its
dialects in `DIALECTS`, and `_MODULES` below names the modules. Adding a format is adding a
module and its line there.
"""

from __future__ import annotations

import difflib
import importlib
import re
from functools import lru_cache

from ._dialect import Call, Dialect, ParseContext, ToolMachine

# Modules in the order their model patterns are tried: the specific ones first
# (`qwen3-coder` before `qwen3`, `deepseek-v3.1` before `deepseek-v3`).
_MODULES = (
    "kimi_k3",
    "kimi_k2",
    "deepseek",
    "deepseek_dsml",
    "qwen3_coder",
    "hermes",  # before llama3: "Hermes-3-Llama-3.1" is a hermes model
    "granite",
    "json_arrays",
    "cohere",
    "apertus",
    "hermes_like",
    "marked_calls",
    "step3",
    "xlam",
    "functionary",
    "glm",
    "gigachat",
    "hunyuan",
    "inkling",
    "harmony",
    "gemma4",
    "mistral",
    "minimax_m3",
    "minimax",
    "minicpm",
    "seed_oss",
    "llama3",
    "pythonic",
    "llama_function",
    "generic_json",
    "auto",
)


class UnknownDialectError(ValueError):
    """Neither the dialect name nor the model name selects a registered dialect."""


@lru_cache(maxsize=1)
def _registry() -> dict[str, Dialect]:
    registry: dict[str, Dialect] = {}
    for module_name in _MODULES:
        module = importlib.import_module(f"{__name__}.{module_name}")
        for dialect in module.DIALECTS:
            registry[dialect.name] = dialect
    return registry


def list_dialects() -> list[str]:
    """The registered dialect names."""
    return sorted(_registry())


def get_dialect(name: str) -> Dialect:
    try:
        return _registry()[name]
    except KeyError:
        # A near miss is a typo (`qwen3coder`); a model or family name is pointed at its dialects.
        typo = difflib.get_close_matches(str(name), list_dialects(), n=1, cutoff=0.9)
        hint = "" if typo else _family_hint(str(name))
        if not hint:
            close = typo or difflib.get_close_matches(str(name), list_dialects(), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
        raise UnknownDialectError(
            f"unknown dialect {name!r}; {hint}the dialects are: {', '.join(list_dialects())}"
        ) from None


def _family_hint(name: str) -> str:
    """For a model name (`Qwen/Qwen3-8B`) or a family's (`qwen`, `deepseek`) given as a dialect:
    the dialect it selects, or the family's dialects, and `model_dialects`; else nothing."""
    found = dialect_for_model(name) if name.strip() else None
    if found is not None and found.name != "auto":
        return (
            f"{name!r} is a model name, whose dialect is {found.name!r}: give that, or leave the dialect unset "
            f"so each request's model selects it, or map the name in model_dialects; "
        )
    family = normalize_model(name).strip("-_ ")
    if len(family) < 3:
        return ""
    related = [d.name for d in _registry().values() if family in d.name or any(family in p for p in d.models)]
    if not related:
        return ""
    return (
        f"{name!r} names a model family, not a dialect; its dialects are {', '.join(sorted(related))} "
        f"(model_dialects maps each served model name to one); "
    )


def normalize_model(model: str) -> str:
    """`Qwen/Qwen3-8B` -> `qwen3-8b`; `hf.co/unsloth/Kimi-K2:Q4` keeps `kimi-k2:q4`."""
    return model.strip().lower().rsplit("/", 1)[-1]


# Model families whose names we know. A name of one of them that no dialect's variant patterns
# select (a vision, older or side model, such as Kimi-VL or Qwen-7B-Chat, whose format differs
# from the family's current one) gets `auto`: the output itself shows its format. Handing it the
# family's newest format instead could read its text as markup.
FAMILIES = (
    "kimi",
    "moonshot",
    "qwen",
    "qwq",
    "deepseek",
    "glm",
    "gemma",
    "llama",
    "mistral",
    "minimax",
    "hunyuan",
    "granite",
    "phi-",
    "internlm",
    "command-",
    "nemotron",
    "seed",
    "ernie",
    "hermes",
    "gpt-oss",
    "gigachat",
)


@lru_cache(maxsize=256)
def dialect_for_model(model: str) -> Dialect | None:
    """The dialect whose model patterns match the served model name first; `auto` for another
    model of a known family (`FAMILIES`); `None` for a name of no family we know."""
    name = normalize_model(model)
    for dialect in _registry().values():
        for pattern in dialect.models:
            if re.search(pattern, name):
                return dialect
    if any(family in name for family in FAMILIES):
        return _registry()["auto"]
    return None


def resolve(dialect: str | None, model: str | None) -> Dialect:
    """`dialect` by name, else by `model`; a clear error naming the dialects when neither does."""
    if dialect is not None and dialect != "auto":
        return get_dialect(dialect)
    if model:
        found = dialect_for_model(model)
        if found is not None:
            return found
        if dialect == "auto":
            return get_dialect("auto")
        raise UnknownDialectError(
            f"no dialect is known for model {model!r}; pass dialect= one of: {', '.join(list_dialects())}"
        )
    if dialect == "auto":
        return get_dialect("auto")
    raise UnknownDialectError(f"pass dialect= or model=; the dialects are: {', '.join(list_dialects())}")


__all__ = [
    "Call",
    "Dialect",
    "ParseContext",
    "ToolMachine",
    "UnknownDialectError",
    "dialect_for_model",
    "get_dialect",
    "list_dialects",
    "normalize_model",
    "resolve",
]
