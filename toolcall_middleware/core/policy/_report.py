"""`PolicyReport`: what the policy stage did to one response, for telemetry and logs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ._errors import PolicyError

# What happened to a call; `kept` is a call that went out despite a note (a non-strict mismatch).
Action = Literal["dropped", "text", "repaired", "kept", "error"]

# Why, one of:
#   unknown_name         the request did not offer the name
#   tool_choice_none     `tool_choice: "none"`
#   tool_choice          `tool_choice` forces or allows other names
#   parallel_tool_calls  `parallel_tool_calls: false` and a call already went out
#   max_calls            the `max_calls` limit
#   max_arguments_bytes  the `max_arguments_bytes` limit
#   invalid_json         the arguments are not a JSON object (and could not be repaired)
#   repaired             the arguments were repaired (action `repaired`)
#   coerced              the arguments were typed by the schema, which they then fit (action `repaired`)
#   schema               the arguments do not fit the tool's schema
#   schema_unchecked     a strict tool's schema could not be checked (jsonschema is not installed)
#   unfinished           the output ended inside the call
#   after_error          the response had already failed
Reason = str


@dataclass(frozen=True, slots=True)
class PolicyNote:
    """One thing done to one call: `index` is the parser's index of the call."""

    action: Action
    reason: Reason
    index: int
    name: str
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "reason": self.reason,
            "index": self.index,
            "name": self.name,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class PolicyReport:
    """`calls_found` calls came from the parser and `calls_emitted` went out; `notes` say what
    happened to the others (and to repaired or mismatching calls that went out); `error` is the
    `PolicyError` the response failed with, if it did."""

    calls_found: int = 0
    calls_emitted: int = 0
    notes: tuple[PolicyNote, ...] = ()
    error: PolicyError | None = None

    def _with(self, action: Action) -> tuple[PolicyNote, ...]:
        return tuple(n for n in self.notes if n.action == action)

    @property
    def dropped(self) -> tuple[PolicyNote, ...]:
        return self._with("dropped")

    @property
    def as_text(self) -> tuple[PolicyNote, ...]:
        """Calls that went out as ordinary text instead."""
        return self._with("text")

    @property
    def repaired(self) -> tuple[PolicyNote, ...]:
        return self._with("repaired")

    @property
    def schema_mismatches(self) -> tuple[PolicyNote, ...]:
        """Calls of non-strict tools that went out although they do not fit the schema."""
        return tuple(n for n in self.notes if n.action == "kept" and n.reason == "schema")

    @property
    def strict_failures(self) -> tuple[PolicyNote, ...]:
        """Calls whose arguments failed a strict tool's JSON or schema check."""
        return tuple(n for n in self.notes if n.action == "error" and n.reason in ("invalid_json", "schema"))

    @property
    def unknown_names(self) -> tuple[str, ...]:
        """The names called that the request did not offer, each once, in order."""
        return tuple(dict.fromkeys(n.name for n in self.notes if n.reason == "unknown_name"))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready record."""
        return {
            "calls_found": self.calls_found,
            "calls_emitted": self.calls_emitted,
            "dropped": len(self.dropped),
            "as_text": len(self.as_text),
            "repaired": len(self.repaired),
            "schema_mismatches": len(self.schema_mismatches),
            "strict_failures": len(self.strict_failures),
            "unknown_names": list(self.unknown_names),
            "notes": [n.to_dict() for n in self.notes],
            "error": None
            if self.error is None
            else {"message": self.error.message, "code": self.error.code, "param": self.error.param},
        }


__all__ = ["Action", "PolicyNote", "PolicyReport", "Reason"]
