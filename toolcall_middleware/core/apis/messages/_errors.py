"""Anthropic's error body: what the middleware answers a Messages client in place of the host's
(a bridged host's error, a request of ours refused), in the shape the Anthropic SDK reads.

- `error_type(status)`: Anthropic's error `type` for an HTTP status (its API reference: 400
  `invalid_request_error`, 401 `authentication_error`, 402 `billing_error`, 403
  `permission_error`, 404 `not_found_error`, 413 `request_too_large`, 429 `rate_limit_error`, 500
  `api_error`, 504 `timeout_error`, 529 `overloaded_error`). Other 4xx are
  `invalid_request_error`; 503 (a server out of capacity) is `overloaded_error`, other 5xx
  `api_error`.
- `anthropic_error(message, status)`: the body, `{"type": "error", "error": {type, message}}`,
  the Messages spec's `error_body`.
"""

from __future__ import annotations

from ...framing._utf8 import json_bytes
from ._emitter import error_object

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "overloaded_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def error_type(status: int) -> str:
    """Anthropic's error `type` for `status` (see the module doc)."""
    return ERROR_TYPES.get(status, "invalid_request_error" if status < 500 else "api_error")


def anthropic_error(
    message: str, status: int, *, code: str | None = None, param: str | None = None, kind: str | None = None
) -> bytes:
    """An Anthropic error body; its `type` is Anthropic's for `status` (its shape has no code or param)."""
    return json_bytes(error_object(message, error_type(status)))


__all__ = ["ERROR_TYPES", "anthropic_error", "error_type"]
