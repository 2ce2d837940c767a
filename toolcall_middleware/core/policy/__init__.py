"""The output policies (DESIGN.md, "Policies and their defaults"), between the parser and the emitters.

- `PolicyFilter`: the request's `tools`, `tool_choice`, `parallel_tool_calls`, strict mode and
  limits applied to the parser's event stream, sans-IO (`feed(events)`, `close()`), with a
  per-response `PolicyReport`.
- `PolicyError`: the event that fails a response (the emitters turn it into an OpenAI error).
- `repair_arguments`: one safe repair pass over broken JSON arguments that fails closed on
  truncation (stdlib only).

jsonschema (schema checks) is optional: it is imported only when needed, and a strict check
without it is a `MissingExtraError` naming the extra.
"""

from __future__ import annotations

from ._calls import Rejected
from ._errors import MissingExtraError, PolicyConfigError, PolicyError, PolicyEvent
from ._filter import PolicyFilter, Streaming
from ._options import UNLIMITED, PolicyLimits, render_call_text
from ._repair import repair_arguments
from ._report import PolicyNote, PolicyReport
from ._tools import ToolRules, ToolSpec, read_tool_choice, read_tools

__all__ = [
    "UNLIMITED",
    "MissingExtraError",
    "PolicyConfigError",
    "PolicyError",
    "PolicyEvent",
    "PolicyFilter",
    "PolicyLimits",
    "PolicyNote",
    "PolicyReport",
    "Rejected",
    "Streaming",
    "ToolRules",
    "ToolSpec",
    "read_tool_choice",
    "read_tools",
    "render_call_text",
    "repair_arguments",
]
