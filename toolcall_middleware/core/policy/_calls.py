"""The decisions on one call: its name, its size, its arguments, and whether it may go out.

`CallJudge` holds the request's rules and settles a `PendingCall`'s fate: `go` (it may go out),
`text` (it becomes ordinary text), `drop`, or `error` (the response fails with its
`PolicyError`). Every decision other than `go` is written down as a `PolicyNote`. The stream
mechanics (order, renumbering, what is emitted when) are `filter.py`'s.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from .._events import ToolCallStart
from .._schema import decode_json
from ..dialects._base import dump_arguments
from . import _errors as errors
from ._coerce import coerce_arguments
from ._errors import PolicyConfigError, PolicyError
from ._options import PolicyLimits
from ._quickcheck import Check, quick_check
from ._repair import repair_arguments
from ._report import Action, PolicyNote
from ._tools import ToolRules, ToolSpec
from ._validation import SchemaCheck, jsonschema_available, schema_check

Fate = Literal["go", "text", "drop", "error"]
Rejected = Literal["text", "drop"]


@dataclass(slots=True, eq=False)
class PendingCall:
    """A call between its start and the moment it is emitted (or not)."""

    start: ToolCallStart
    spec: ToolSpec | None
    strict: bool
    fate: Fate = "go"
    error: PolicyError | None = None
    deltas: list[str] = field(default_factory=list)
    size: int = 0
    end: str | None = None  # the parser's final arguments, once the call ended
    arguments: str | None = None  # what goes out: `end`, or its repair
    live: int | None = None  # the output index, once the start went out (incremental streaming)

    @property
    def settled(self) -> bool:
        """Nothing more about it is needed to emit it (or not)."""
        return self.end is not None or self.fate in ("drop", "error")


class CallJudge:
    """The request's rules over single calls (see the `PolicyFilter` doc for what they are)."""

    def __init__(
        self, rules: ToolRules, *, strict: bool, repair: bool, rejected: Rejected, limits: PolicyLimits
    ) -> None:
        self.rules = rules
        self.notes: list[PolicyNote] = []
        self._strict = strict
        self._repair = repair
        self._rejected: Fate = rejected
        self._limits = limits
        self._parallel = True
        # Strict schemas are compiled now, so a broken one (or, with the global `strict`, a missing
        # jsonschema) fails the request up front; loose ones on first use. Without jsonschema, a
        # tool that is strict by its own flag still gets the JSON check, and each of its calls a
        # `schema_unchecked` note: clients such as the Agents SDK mark every tool strict, and
        # failing all their requests over an optional package would be worse.
        self._loose_checks = jsonschema_available()
        self._checks: dict[str, SchemaCheck | None] = {}  # by tool: `None`, nothing to check against
        self._quick: dict[str, Check | None] = {}  # without jsonschema: coercion's check, by tool
        for spec in (rules.offered or {}).values():
            if spec.parameters and (strict or (spec.strict and self._loose_checks)):
                self._checks[spec.name] = self._compiled(spec)

    def serial(self) -> None:
        """`parallel_tool_calls: false`: only the first call may go out."""
        self._parallel = False

    def open(self, start: ToolCallStart, emitted: int) -> PendingCall:
        """A call starts: rule on its name (and on whether any call may still go out)."""
        offered = self.rules.offered
        spec = offered.get(start.name) if offered is not None else None
        call = PendingCall(start, spec, self._strict or (spec is not None and spec.strict))
        name = start.name
        if self.rules.suppress:
            self.decide(call, self._rejected, "tool_choice_none")
        elif offered is not None and spec is None:
            if self._strict:
                message = f"The model called {name!r}, which is not one of the request's tools."
                self.fail(call, "unknown_name", errors.UNKNOWN_TOOL, message, "tools")
            else:
                self.decide(call, self._rejected, "unknown_name")
        elif self.rules.allowed is not None and name not in self.rules.allowed:
            if self._strict:
                message = f"The model called {name!r}, which 'tool_choice' does not allow."
                self.fail(call, "tool_choice", errors.TOOL_NOT_ALLOWED, message, "tool_choice")
            else:
                self.decide(call, self._rejected, "tool_choice")
        else:
            self.may_go(call, emitted)  # settled now when it already cannot, so nothing is buffered
        return call

    def may_go(self, call: PendingCall, emitted: int) -> bool:
        """Whether a call may go out after `emitted` calls; settles it when not."""
        cap = self._limits.max_calls
        if not self._parallel and emitted:
            self.decide(call, "drop", "parallel_tool_calls")
        elif cap is not None and emitted >= cap:
            self.exceed(call, "max_calls", errors.TOO_MANY_TOOL_CALLS, f"The model made more than {cap} tool calls.")
        return call.fate == "go"

    def fits(self, call: PendingCall, piece: str, *, whole: bool) -> bool:
        """Count a fragment's bytes (or, with `whole`, the final arguments'); a call over the cap
        is settled at once and `False` returned."""
        cap = self._limits.max_arguments_bytes
        if cap is None:
            return True
        size = len(piece.encode("utf-8", "surrogatepass"))
        call.size = max(call.size, size) if whole else call.size + size
        if call.size <= cap:
            return True
        call.deltas.clear()
        if call.fate == "text":
            self.decide(call, "drop", "max_arguments_bytes", f"over {cap} bytes")
        else:
            message = f"The arguments of the call to {call.start.name!r} are over the limit of {cap} bytes."
            self.exceed(call, "max_arguments_bytes", errors.TOOL_ARGUMENTS_TOO_LARGE, message)
        return False

    def check_arguments(self, call: PendingCall) -> None:
        """At the end of a call that may go out: a JSON object (or repaired into one), that fits
        its schema when it is strict; a loose call that does not fit is noted and kept."""
        name = call.start.name
        param = call.spec.param if call.spec is not None else None
        text = call.arguments or ""
        value = _object(text)
        if value is None:
            if call.strict or call.live is not None:
                why = "must be a JSON object" if call.strict else "were streamed and are not a JSON object"
                message = f"The arguments of the call to {name!r} {why}."
                self.fail(call, "invalid_json", errors.INVALID_TOOL_ARGUMENTS, message, param)
                return
            fixed = repair_arguments(text) if self._repair else None
            if fixed is None:
                self.decide(call, self._rejected, "invalid_json")
                return
            self.note("repaired", "repaired", call)
            if not self.fits(call, fixed, whole=True):  # quotes added by the repair count too
                return
            call.arguments = fixed
            value = json.loads(fixed)
        check = self._check_for(call.spec)
        if check is None and call.strict and call.spec is not None and call.spec.parameters:
            self.note("kept", "schema_unchecked", call, "jsonschema is not installed")
        problem = check.problem(value) if check is not None else None
        if call.strict:
            if problem is not None:
                message = f"The arguments of the call to {name!r} do not match its schema: {problem}"
                self.fail(call, "schema", errors.INVALID_TOOL_ARGUMENTS, message, param)
            return
        if (problem is not None or check is None) and self._coerced(call, value, check, problem):
            return
        if problem is not None:
            self.note("kept", "schema", call, problem)

    def _coerced(
        self, call: PendingCall, value: dict[str, Any], check: SchemaCheck | None, problem: str | None
    ) -> bool:
        """A loose call whose arguments do not fit its schema (or could not be checked), typed by
        the schema (`coerce_arguments`): kept when the result fits, which jsonschema says, or
        without it the quick check (`quick_check`: only a certain yes counts). Part of the repair
        pass: not with `repair=False`, nor for arguments that already went out piece by piece."""
        spec = call.spec
        if not self._repair or call.live is not None or spec is None or not spec.parameters:
            return False
        typed = coerce_arguments(value, spec.parameters)
        if typed is value:
            return False
        if check is not None:
            if check.problem(typed) is not None:
                return False
        else:
            quick = self._quick_for(spec)
            if quick is None or not quick(typed):
                return False
        text = dump_arguments(typed)
        cap = self._limits.max_arguments_bytes
        if cap is not None and len(text.encode("utf-8", "surrogatepass")) > cap:
            return False  # typed, it would be over the cap: it goes as the model wrote it
        self.fits(call, text, whole=True)
        call.arguments = text
        self.note("repaired", "coerced", call, problem or "typed by the schema")
        return True

    def _quick_for(self, spec: ToolSpec) -> Check | None:
        if spec.name not in self._quick:
            self._quick[spec.name] = quick_check(spec.parameters)
        return self._quick[spec.name]

    def _check_for(self, spec: ToolSpec | None) -> SchemaCheck | None:
        if spec is None or not spec.parameters:
            return None
        if spec.name not in self._checks:
            try:
                self._checks[spec.name] = self._compiled(spec) if self._loose_checks else None
            except PolicyConfigError:  # a loose tool's broken schema: nothing to check against
                self._checks[spec.name] = None
        return self._checks[spec.name]

    def _compiled(self, spec: ToolSpec) -> SchemaCheck:
        """The tool's schema compiled, once for the rules (a broken one raises every time)."""
        assert spec.parameters is not None
        check: SchemaCheck | None = self.rules.compiled.get(spec.name)
        if check is None:
            check = self.rules.compiled[spec.name] = schema_check(spec.parameters, spec.param)
        return check

    # -- settling ---------------------------------------------------------------------------------

    def note(self, action: Action, reason: str, call: PendingCall, detail: str = "") -> None:
        self.notes.append(PolicyNote(action, reason, call.start.index, call.start.name, detail))

    def decide(self, call: PendingCall, fate: Fate, reason: str, detail: str = "") -> None:
        if fate == "text" and call.start.drafted:
            fate = "drop"  # a call drafted in the reasoning never becomes content
        call.fate = fate
        self.note("text" if fate == "text" else "dropped", reason, call, detail)

    def fail(self, call: PendingCall, reason: str, code: str, message: str, param: str | None = None) -> None:
        if call.start.drafted:  # a draft the rules refuse is dropped: the answer stands without it
            self.decide(call, "drop", reason, message)
            return
        call.fate = "error"
        call.error = PolicyError(message, code, param)
        self.note("error", reason, call, message)

    def exceed(self, call: PendingCall, reason: str, code: str, message: str) -> None:
        """Over a limit: an error, or a drop when so configured and nothing of it went out yet."""
        if self._limits.on_exceed == "error" or call.live is not None:
            self.fail(call, reason, code, message)
        else:
            self.decide(call, "drop", reason)


def _object(text: str) -> dict[str, Any] | None:
    try:
        value = decode_json(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


__all__ = ["CallJudge", "Fate", "PendingCall", "Rejected"]
