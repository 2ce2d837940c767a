"""`BadRequest`: a request body the rewrite cannot accept, as an OpenAI-style error.

The message names the offending field the way OpenAI does (`messages[2].tool_calls[0].function.name`),
and `param` carries the same path, so the middleware can answer 400 with `.body()` and the client's
SDK raises a `BadRequestError` whose text points at the field. `invalid`, `missing` and
`invalid_body` word the usual faults; `required_string` and `required_array` read a required field
or raise them; `check_depth` refuses a body nested too deep for the rewrite to walk.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._depth import too_deep_member


class BadRequest(ValueError):
    """A malformed request body; `param` is the JSON path of the field at fault (or `None`)."""

    def __init__(self, message: str, param: str | None = None, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code

    def body(self) -> dict[str, Any]:
        """The error body OpenAI answers a 400 with."""
        return {
            "error": {
                "message": self.message,
                "type": "invalid_request_error",
                "param": self.param,
                "code": self.code,
            }
        }

    def __repr__(self) -> str:
        return f"BadRequest({self.message!r}, param={self.param!r})"


def invalid(param: str, what: str) -> BadRequest:
    """`Invalid 'param': what.` — OpenAI's wording for a field of the wrong shape."""
    return BadRequest(f"Invalid '{param}': {what}.", param, code="invalid_value")


def missing(param: str) -> BadRequest:
    """`Missing required parameter: 'param'.` — OpenAI's wording for an absent field."""
    return BadRequest(f"Missing required parameter: '{param}'.", param, code="missing_required_parameter")


def invalid_body() -> BadRequest:
    """The error for a body that is not a JSON object (there is no field to name)."""
    return BadRequest("The request body must be a JSON object.", None, code="invalid_body")


def required_string(obj: Mapping[str, Any], key: str, where: str) -> str:
    """`obj[key]` as a non-empty string, or the error naming `where.key`."""
    value = obj.get(key)
    if value is None:
        raise missing(f"{where}.{key}")
    if not isinstance(value, str) or not value:
        raise invalid(f"{where}.{key}", "expected a non-empty string")
    return value


def required_array(body: Mapping[str, Any], key: str, what: str) -> list[Any]:
    """`body[key]` as a list, or the error naming `key` (`what`: the wording for another shape)."""
    value = body.get(key)
    if value is None:
        raise missing(key)
    if not isinstance(value, list):
        raise invalid(key, what)
    return value


def check_depth(body: dict[str, Any], limit: int) -> None:
    """Raise `BadRequest`, naming where, when `body` nests deeper than `limit` levels (the body
    itself is the first)."""
    found = too_deep_member(body, limit)
    if found is not None:
        key, below = found
        raise BadRequest(
            f"Invalid '{key}': nested deeper than {limit} levels of arrays and objects (at '{key}{below}').",
            key,
            code="nested_too_deep",
        )


def too_deep_error(limit: int) -> BadRequest:
    """The error for a body too deep for JSON's own decoder (it gave up before any field)."""
    return BadRequest(
        f"The request body nests deeper than {limit} levels of arrays and objects.", None, code="nested_too_deep"
    )


__all__ = [
    "BadRequest",
    "check_depth",
    "invalid",
    "invalid_body",
    "missing",
    "required_array",
    "required_string",
    "too_deep_error",
]
