"""AG-UI runs checked by the protocol's own types: `ag_ui.core.RunAgentInput` of the
`ag-ui-protocol` package (pydantic), installed with the `agui` extra.

The core checks a run's input by hand (`core.apis.agui._request.check_run_input`: the fields the
protocol requires, by type) and needs nothing installed. With the extra, a run that passes is
then validated by the package too, and whatever its types refuse (a newer field's shape, a
content part's source) is a 400 naming the field, camelCase as on the wire. `ToolCallConfig`
hands this check to the exchange where the extra is installed (`request_checks`), and `serve`
says at start which of the two checks its AG-UI route runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from .core.request._errors import BadRequest

EXTRA = "pip install 'toolcall-middleware[agui]'"


@cache
def protocol_types() -> Any:
    """`ag_ui.core.RunAgentInput`, or None where the `agui` extra is not installed."""
    try:
        from ag_ui.core import RunAgentInput
    except ImportError:
        return None
    return RunAgentInput


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def field_path(loc: tuple[int | str, ...], body: Any) -> str:
    """A pydantic error location in `body` as the wire names the field: `messages[1].toolCalls[0].id`.
    The location's other parts, a union's member (`str`, `list[…]`) or tag (a message's role, a
    content part's type), are no field of the body, and are left out."""
    out, value = "", body
    for n, part in enumerate(loc):
        last = n == len(loc) - 1
        if isinstance(part, int) and isinstance(value, list):
            out += f"[{part}]"
            value = value[part] if part < len(value) else None
            continue
        name = _camel(str(part))
        if isinstance(value, Mapping) and name in value:
            value = value[name]
        elif not (last and isinstance(value, Mapping)):
            continue  # (a union's member or tag)
        out += f".{name}" if out else name
    return out


def check_by_protocol(body: Mapping[str, Any]) -> None:
    """Raise `BadRequest` naming the first field `RunAgentInput` refuses (the extra installed)."""
    import pydantic

    types = protocol_types()
    if types is None:
        raise RuntimeError(f"the AG-UI protocol check needs the ag-ui-protocol package: {EXTRA}")
    try:
        types.model_validate(body)
    except pydantic.ValidationError as error:
        # The deepest error: of a union's members, the one the body came closest to.
        first = max(error.errors(), key=lambda e: len(e["loc"]))
        param = field_path(tuple(first["loc"]), body) or None
        raise BadRequest(f"Invalid '{param}': {first['msg']}.", param, code="invalid_value") from None


def request_checks(agui_routes: bool) -> dict[str, Callable[[Mapping[str, Any]], None]]:
    """The checks beyond the core's, by client API: the protocol's on the AG-UI route, where the
    route is on and the extra installed."""
    return {"agui": check_by_protocol} if agui_routes and protocol_types() is not None else {}


def check_said() -> str:
    """How the AG-UI route checks runs, as `serve` says it at start."""
    if protocol_types() is not None:
        return "runs checked by the ag-ui-protocol types"
    return f"runs checked by hand; {EXTRA} checks them by the protocol's own types"


__all__ = ["EXTRA", "check_by_protocol", "check_said", "field_path", "protocol_types", "request_checks"]
