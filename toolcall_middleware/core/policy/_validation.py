"""Checking arguments against a tool's parameters schema, with jsonschema (an optional extra).

The validator class comes from the schema's `$schema`, Draft 2020-12 when it has none. A `$ref`
is resolved only inside the schema (and the JSON Schema meta-schemas): jsonschema's default
would fetch remote references over the network, which a request must never make us do; an
unresolvable reference fails the check with a message naming it. Formats are not checked
(OpenAI's strict mode does not check them either).
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Mapping
from functools import lru_cache
from types import ModuleType
from typing import Any

from ..framing._utf8 import json_text
from ._errors import MissingExtraError, PolicyConfigError
from ._quickcheck import quick_check

_MAX_MESSAGE = 300  # jsonschema quotes the failing value, which is model output of any size


_NOT_IMPORTED = object()


def _import(name: str) -> ModuleType:
    # By name, so neither mypy nor the import of this module needs the optional package.
    return importlib.import_module(name)


def jsonschema_available() -> bool:
    module = sys.modules.get("jsonschema", _NOT_IMPORTED)
    if module is not _NOT_IMPORTED:
        return module is not None  # imported already (every response asks): no import machinery
    try:
        _import("jsonschema")
    except ImportError:
        return False
    return True


class SchemaCheck:
    """One tool's compiled parameters schema: `problem(value)` is `None` when `value` fits.

    Raises `MissingExtraError` without jsonschema, and `PolicyConfigError` (naming `param`) when
    the schema itself is not a valid JSON schema.
    """

    def __init__(self, schema: Mapping[str, Any], param: str) -> None:
        try:
            jsonschema = _import("jsonschema")
            referencing = _import("referencing")
            unresolvable = _import("referencing.exceptions").Unresolvable
        except ImportError:
            raise MissingExtraError("jsonschema", "validating tool-call arguments against a schema") from None
        cls: Any = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        try:
            cls.check_schema(schema)
        except jsonschema.exceptions.SchemaError as exc:
            raise PolicyConfigError(f"Invalid schema for '{param}': {_short(exc.message)}", param) from None
        self._validator: Any = cls(schema, registry=referencing.Registry())
        self._quick = quick_check(schema)  # a plain function for the usual schema: jsonschema only when unsure
        self._best_match = jsonschema.exceptions.best_match
        self._unresolvable: type[Exception] = unresolvable

    def problem(self, value: Any) -> str | None:
        """Why `value` does not fit the schema (the most relevant error, and where), or `None`."""
        quick = self._quick
        if quick is not None:
            try:
                if quick(value):
                    return None
            except RecursionError:
                pass  # jsonschema says what it says
        try:
            error = self._best_match(self._validator.iter_errors(value))
        except self._unresolvable as exc:
            return _short(f"the schema's reference cannot be resolved: {exc}")
        except RecursionError:
            return "the arguments are nested too deeply to check"
        if error is None:
            return None
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        return _short(f"{error.message} (at arguments{where})" if where else error.message)


def _short(text: str) -> str:
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"


__all__ = ["SchemaCheck", "jsonschema_available"]


@lru_cache(maxsize=512)
def _cached_check(schema_json: str, param: str) -> SchemaCheck:
    return SchemaCheck(json.loads(schema_json), param)


def schema_check(schema: Mapping[str, Any], param: str) -> SchemaCheck:
    """A compiled `SchemaCheck`, shared by every request that offers the same schema.

    Compiling (and checking the schema itself) costs more than validating one call, and agents
    send the same tools with every request. A check is immutable, so sharing it is safe.
    """
    if not jsonschema_available():
        return SchemaCheck(schema, param)  # raises MissingExtraError, naming the extra
    try:
        # Key order kept: it decides which error jsonschema reports first.
        key = json_text(schema, separators=(",", ":"), ascii_only=True)
    except (TypeError, ValueError):
        return SchemaCheck(schema, param)
    return _cached_check(key, param)
