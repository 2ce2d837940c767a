"""Options as flat fields, and their values from the environment (`TOOLCALL_<OPTION>`).

A model's options (`ToolCallConfig`, its `Limits`, `serve`'s `ServeOptions`) are its fields with
nested models flattened (`flat_fields`): one name each, which is the `serve` flag
(`--max-calls`) and, upper-cased under `TOOLCALL_`, the environment variable
(`TOOLCALL_MAX_CALLS`; the `limits` fields by their own names, as their flags). A field added to a
model is a flag and a variable at once, with no code of its own.

The environment is read by pydantic-settings (`env_values`): names in any case, an empty variable
as unset. A list is comma-separated (`TOOLCALL_PROFILES=required_action,extensions`) or a JSON
array; a map is comma-separated `KEY=VALUE` pairs (`TOOLCALL_MODEL_DIALECTS=my-model=kimi_k2`) or a
JSON object; anything else is a string the model validates (`TOOLCALL_STRICT=true`,
`TOOLCALL_PORT=8080`). The values are only read here: the model validates them, with the rest.

```python
ToolCallConfig.from_env(dialect="hermes")   # TOOLCALL_* under the options given, which win
```
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, SecretStr

PREFIX = "TOOLCALL_"
# Variables of this prefix that are no option (read where they are used), for `unknown_variables`.
OTHER_VARIABLES = frozenset({"TOOLCALL_CONFIG", "TOOLCALL_MIDDLEWARE_PURE_PYTHON"})
Kind = Literal["bool", "list", "map", "value", "skip"]


class Option(NamedTuple):
    """One settable field: `path` dotted through nested models (`limits.max_calls`), its `flag`
    (`--max-calls`; a field may name its own, as `api_keys` does `--api-key`) and `env` variable."""

    path: str
    annotation: Any
    help: str
    flag: str
    env: str


def flat_fields(model: type[BaseModel], prefix: str = "") -> Iterator[Option]:
    """Each field of `model`, nested models flattened; the help ends with the field's default
    where it has one to show."""
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from flat_fields(annotation, f"{prefix}{name}.")
            continue
        default = field.get_default(call_default_factory=True)
        shown = ", ".join(map(str, default)) if isinstance(default, (tuple, frozenset)) else default
        suffix = f" (default: {shown})" if shown not in (None, "", {}, ()) and not callable(shown) else ""
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        flag = str(extra.get("flag") or "--" + name.replace("_", "-"))
        yield Option(f"{prefix}{name}", annotation, (field.description or "") + suffix, flag, PREFIX + name.upper())


def kind(annotation: Any) -> Kind:
    """How a field is given as text: `bool`, `list`, `map`, `value`, or `skip` (a callback)."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    origin = typing.get_origin(annotation)
    if annotation is bool or (args == [bool] and origin is not None and origin is not Literal):
        return "bool"
    if origin in (tuple, frozenset, set, list):
        return "list"
    if origin is dict:
        return "map"
    union = origin in (typing.Union, types.UnionType)
    if union and len(args) == 1:
        return kind(args[0])
    if origin is Literal or annotation in (str, int, float, SecretStr) or union:
        return "value" if "Callable" not in str(annotation) else "skip"
    return "skip"


def settable(model: type[BaseModel]) -> list[Option]:
    """The options of `model` given as text (flags, variables): all but callbacks."""
    return [option for option in flat_fields(model) if kind(option.annotation) != "skip"]


def merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `over`'s values over it, nested mappings merged key by key."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    """`{"limits.max_calls": 4}` as `{"limits": {"max_calls": 4}}`."""
    out: dict[str, Any] = {}
    for path, value in flat.items():
        *parents, leaf = path.split(".")
        target = out
        for parent in parents:
            target = target.setdefault(parent, {})
        target[leaf] = value
    return out


def env_values(model: type[BaseModel]) -> dict[str, Any]:
    """The options of `model` the environment sets, as a nested dict of values for the model to
    validate; a value no option can take (a map that is no `KEY=VALUE` list) is a ValueError
    naming its variable."""
    try:
        from pydantic_settings import SettingsError
    except ImportError:  # pragma: no cover - depends on the environment
        need = "options from the environment need pydantic-settings: pip install 'toolcall-middleware[env]'"
        raise ImportError(need) from None
    options = {option.path.rsplit(".", 1)[-1]: option for option in settable(model)}
    try:
        found = _source(_settings_class(model))()
    except SettingsError as e:
        cause = e.__cause__ or e
        name = next((o.env for leaf, o in options.items() if f'"{leaf}"' in str(e)), PREFIX + "*")
        raise ValueError(f"{name}: {cause}") from None
    return nest({options[leaf].path: value for leaf, value in found.items() if leaf in options})


def unknown_variables(*models: type[BaseModel], environ: Mapping[str, str]) -> list[str]:
    """`TOOLCALL_*` variables set that no option of `models` reads: a typo an operator should see."""
    known = {option.env for model in models for option in settable(model)} | OTHER_VARIABLES
    return sorted(name for name in environ if name.upper().startswith(PREFIX) and name.upper() not in known)


# -- pydantic-settings -----------------------------------------------------------------------


@cache
def _settings_class(model: type[BaseModel]) -> Any:
    """A `BaseSettings` with `model`'s options as flat fields, which only reads them: the fields
    take any value (the model checks them) but keep their kind, which decides how text is split."""
    from pydantic import create_model
    from pydantic_settings import BaseSettings, SettingsConfigDict

    class Reader(BaseSettings):
        model_config = SettingsConfigDict(env_prefix=PREFIX, env_ignore_empty=True, extra="ignore")

    fields: dict[str, Any] = {}
    for option in settable(model):
        shape = {"list": list[Any], "map": dict[str, Any]}.get(kind(option.annotation), Any)
        fields[option.path.rsplit(".", 1)[-1]] = (shape, None)
    return create_model(f"{model.__name__}FromEnv", __base__=Reader, **fields)


def _source(settings: Any) -> Any:
    """pydantic-settings' reader of the environment, with lists and maps also as comma-separated text."""
    from pydantic_settings import EnvSettingsSource

    class Source(EnvSettingsSource):
        def decode_complex_value(self, field_name: str, field: Any, value: Any) -> Any:
            text = str(value).strip()
            if text.startswith(("[", "{")):
                return json.loads(text)
            items = [item.strip() for item in text.split(",") if item.strip()]
            if typing.get_origin(field.annotation) is not dict:
                return items
            pairs = [item.partition("=") for item in items]
            bad = [key for key, sep, _ in pairs if not sep]
            if bad:
                raise ValueError(f"expected KEY=VALUE pairs, got {bad[0]!r}")
            return {key.strip(): value.strip() for key, _, value in pairs}

    return Source(settings)


__all__ = [
    "PREFIX",
    "Option",
    "env_values",
    "flat_fields",
    "kind",
    "merge",
    "nest",
    "settable",
    "unknown_variables",
]
