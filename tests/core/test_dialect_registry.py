"""Every registered format is declared whole on its `Dialect`: parser, renderer, streaming mode.

The round trip of each dialect's renderer through its parser is `test_request_render.py`'s
(`test_rendered_calls_parse_back_to_the_same_calls`, over this same registry); the
incremental declaration is held to the behaviour in `test_incremental.py`.
"""

from __future__ import annotations

import json

import pytest

from toolcall_middleware import parse
from toolcall_middleware.core.dialects import ParseContext, get_dialect, list_dialects
from toolcall_middleware.core.dialects._rendering import Renderer
from toolcall_middleware.core.request import render_assistant, render_calls, rendered_dialects

FORMATS = [name for name in list_dialects() if name != "auto"]


@pytest.mark.parametrize("name", FORMATS)
def test_each_format_declares_its_parser_and_renderer_in_the_dialects_package(name: str) -> None:
    dialect = get_dialect(name)
    assert dialect.name == name
    assert isinstance(dialect.renderer, Renderer)
    machine = dialect.machine(ParseContext())
    assert machine.feed("") == [] and machine.close() == []
    # The renderer is the dialect's own, written beside its parser, not a table elsewhere.
    for hook in (dialect.machine, dialect.renderer.calls, dialect.renderer.tools):
        assert hook.__module__.startswith("toolcall_middleware.core.dialects."), (name, hook)


@pytest.mark.parametrize("name", FORMATS)
def test_each_format_reads_back_a_turn_it_writes(name: str) -> None:
    calls = [("call_1", "get_weather", '{"city": "Paris"}'), ("call_2", "get_time", "{}")]
    raw = render_assistant(name, "Let me look.", calls)
    result = parse(raw, name, tools=[{"type": "function", "function": {"name": n}} for _, n, _ in calls])
    assert [(c.name, json.loads(c.arguments)) for c in result.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {}),
    ]
    assert render_calls(name, calls) in raw


def test_auto_reads_every_format_but_writes_none() -> None:
    assert get_dialect("auto").renderer is None
    assert rendered_dialects() == FORMATS
