"""The docs' table of dialect x engine says what the code does: where the engine's grammar can
hold the dialect to its calls, and where `constrain=` is refused when the configuration is made
(then `regenerate` is the fallback). Needs no grammar engine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolcall_middleware import ToolCallConfig
from toolcall_middleware.core.dialects import get_dialect, list_dialects
from toolcall_middleware.core.grammar.engines import ENGINES, dialect_unexpressible

DOC = Path(__file__).resolve().parents[2] / "docs" / "constrain.md"
ROW = re.compile(r"^\| `([a-z0-9_]+)` \|(.*)\|$")


def table() -> dict[str, list[str]]:
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if m and m.group(1) in list_dialects():
            rows[m.group(1)] = [cell.strip() for cell in m.group(2).split("|")]
    return rows


def test_the_table_has_every_dialect_with_a_call_grammar() -> None:
    declared = {d for d in list_dialects() if get_dialect(d).grammar is not None}
    assert set(table()) == declared


@pytest.mark.parametrize("engine", ENGINES)
def test_each_cell_says_what_the_configuration_does(engine: str) -> None:
    for dialect, cells in table().items():
        cell = cells[ENGINES.index(engine)]  # type: ignore[arg-type]
        why = dialect_unexpressible(engine, dialect)  # type: ignore[arg-type]
        if why is None:
            assert cell.startswith("grammar"), (dialect, engine, cell)
            assert ToolCallConfig(dialect=dialect, constrain=engine).constrain == engine
        else:
            assert cell.startswith("regenerate"), (dialect, engine, cell)
            with pytest.raises(ValueError, match="cannot hold dialect"):
                ToolCallConfig(dialect=dialect, constrain=engine)


def test_the_page_names_every_dialect_without_a_call_grammar() -> None:
    text = DOC.read_text(encoding="utf-8")
    for dialect in list_dialects():
        if dialect != "auto" and get_dialect(dialect).grammar is None:
            assert f"`{dialect}`" in text, dialect
