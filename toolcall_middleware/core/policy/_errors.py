"""What the policy stage says when something is wrong.

`PolicyError` is an event: the output broke a rule the request set (a strict tool's schema, a
required call, a limit), so the response must fail. It goes into the event stream in place of
the offending call, nothing follows it, and the emitters turn it into an OpenAI-style error
(`error` body, an error chunk with `finish_reason: "error"`, `response.failed`).

`PolicyConfigError` is an exception: the request's `tools` / `tool_choice` / `parallel_tool_calls`
(or a limit) cannot be read. It carries the OpenAI-style message and the `param` it names, for a
400 response. `MissingExtraError` names the optional extra to install.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._events import Event

EXTRA = "strict"  # `pip install "toolcall-middleware[strict]"`: jsonschema, for schema checks

# The error codes a `PolicyError` carries.
INVALID_TOOL_ARGUMENTS = "invalid_tool_arguments"  # strict: not a JSON object, or not the schema
UNKNOWN_TOOL = "unknown_tool"  # strict: a name the request did not offer
TOOL_NOT_ALLOWED = "tool_not_allowed"  # strict: a name `tool_choice` rules out
TOOL_CALL_REQUIRED = "tool_call_required"  # `required` or a forced function, and no call went out
TOO_MANY_TOOL_CALLS = "too_many_tool_calls"  # more calls than `max_calls`
TOOL_ARGUMENTS_TOO_LARGE = "tool_arguments_too_large"  # one call's arguments over `max_arguments_bytes`
INCOMPLETE_TOOL_CALL = "incomplete_tool_call"  # a call already streamed never ended

# A whole answer that fails is a 502: the host answered, and what it answered cannot be delivered
# as the request asked (a bad answer from the server behind the middleware, neither the client's
# fault, which 4xx would say, nor a bug of ours, which 500 would). It goes with `x-should-retry:
# false`: the same request would cost a generation that may well fail the same way.
FAILED_ANSWER_STATUS = 502

# The rules a new generation may keep where this one broke them: the model's own choices (a call
# `tool_choice` required, a strict tool's name or arguments). The limits (`max_calls`, the size
# of arguments) and a call cut off are not asked again: the same model tends to do the same.
REGENERABLE = frozenset({TOOL_CALL_REQUIRED, INVALID_TOOL_ARGUMENTS, UNKNOWN_TOOL, TOOL_NOT_ALLOWED})


@dataclass(frozen=True, slots=True)
class PolicyError:
    """The response fails here: `message` for people, `code` (above) for programs, and `param`,
    the request field whose rule was broken (`tools[0].function.parameters`, `tool_choice`), or
    `None` for the middleware's own limits."""

    message: str
    code: str
    param: str | None = None


PolicyEvent = Event | PolicyError


class PolicyConfigError(ValueError):
    """The request's tool settings cannot be read: an OpenAI-style message naming `param`."""

    def __init__(self, message: str, param: str | None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param

    def to_error(self) -> dict[str, str | None]:
        """The `error` object of a 400 response body."""
        return {"message": self.message, "type": "invalid_request_error", "param": self.param, "code": None}


class MissingExtraError(ImportError):
    """An optional dependency of a policy is not installed."""

    def __init__(self, package: str, feature: str) -> None:
        super().__init__(
            f'{feature} needs the {package!r} package: pip install "toolcall-middleware[{EXTRA}]"',
            name=package,
        )


__all__ = [
    "FAILED_ANSWER_STATUS",
    "INCOMPLETE_TOOL_CALL",
    "INVALID_TOOL_ARGUMENTS",
    "REGENERABLE",
    "TOOL_ARGUMENTS_TOO_LARGE",
    "TOOL_CALL_REQUIRED",
    "TOOL_NOT_ALLOWED",
    "TOO_MANY_TOOL_CALLS",
    "UNKNOWN_TOOL",
    "MissingExtraError",
    "PolicyConfigError",
    "PolicyError",
    "PolicyEvent",
]
