"""`constrain=`: a request's constraint, in its host's engine's field, added to the host's body.

```python
body = constrained_body(body, tools, engine="vllm", dialect="hermes", model=m, thinking=None)
```

The body is the one the host gets (already rewritten for it); `tools` the request's tools as the
rewrite read them. A request that asks for no call (`tool_choice` `auto` with no strict tool,
`none`) and a dialect whose grammar the engine cannot say come back as they were (`None`): then
only the answer's own checks, and `regenerate`, stand behind the tool rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..dialects import get_dialect
from ..request._tools import ToolSet
from .build import build_constraint
from .engines import Engine, Unexpressible, body_with, constrain_fields, without_reasoning


def constrained_body(
    body: Mapping[str, Any],
    tools: ToolSet,
    *,
    engine: Engine,
    dialect: str,
    model: str | None,
    thinking: bool | None,
    all_strict: bool = False,
) -> dict[str, Any] | None:
    """The host's body with the engine's constraint field, or `None` (see the module doc)."""
    declared = get_dialect(dialect)
    if declared.grammar is None:
        return None
    syntax = declared.reasoning
    pair = syntax.pairs[0] if syntax is not None and syntax.pairs else None
    constraint = build_constraint(
        declared.grammar,
        tools,
        reasoning=pair,
        prefilled=declared.prefills_reasoning(model, thinking),
        all_strict=all_strict,
    )
    if constraint is None:
        return None
    if engine == "tgi":
        constraint = without_reasoning(constraint)
    try:
        fields, dropped = constrain_fields(engine, constraint, tools.parallel, with_tools="tools" in body)
    except Unexpressible:
        return None
    return body_with(body, fields, dropped)


__all__ = ["constrained_body"]
