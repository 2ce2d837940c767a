"""External conformance: the `canitoolcall` fixtures, parsed whole and streamed at every split.

Each fixture is a recorded raw output with the parse a correct engine must return. Ours must
match strictly (not only modulo whitespace), with no marker leaking, non-streamed, streamed one
character at a time and streamed at seeded random splits; and every stream must equal the whole
parse. The dialect is chosen from the fixture's served model name, as a user would configure it.
"""

from __future__ import annotations

import pytest
from canitoolcall.fixtures import Fixture, load_fixtures
from canitoolcall.pytest_plugin import assert_conforms, assert_equivalent
from canitoolcall.results import ParsedToolCall
from canitoolcall.results import ParseResult as Observed

from tests.conftest import random_splits, stream_parse
from toolcall_middleware import parse
from toolcall_middleware.core._result import ParseResult

FAMILIES = ("qwen3-hermes", "qwen3-xml", "kimi", "deepseek", "glm", "llama", "mistral", "gpt-oss", "gemma4")
FIXTURES = load_fixtures(families=FAMILIES)


def observed(result: ParseResult) -> Observed:
    return Observed(
        content=result.content,
        reasoning_content=result.reasoning,
        tool_calls=tuple(ParsedToolCall(c.name, c.arguments) for c in result.tool_calls),
    )


def options(fixture: Fixture) -> dict[str, object]:
    return {
        "model": fixture.models[0],
        "tools": list(fixture.tools),
        "generation_prompt": fixture.generation_prompt,
        "thinking": fixture.thinking,
    }


def test_every_family_of_this_suite_is_loaded() -> None:
    assert {f.family for f in FIXTURES} == set(FAMILIES)
    assert len(FIXTURES) >= 460


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.id for f in FIXTURES])
def test_fixture(fixture: Fixture) -> None:
    whole = observed(parse(fixture.raw_output, **options(fixture)))  # type: ignore[arg-type]
    assert_conforms(fixture, whole)

    streams = {"char": list(fixture.raw_output)}
    for seed in range(1, 6):
        streams[f"rand:{seed}"] = list(random_splits(fixture.raw_output, seed))
    for label, pieces in streams.items():
        streamed = observed(stream_parse(pieces, **options(fixture)))
        assert_conforms(fixture, streamed)
        try:
            assert_equivalent(whole, streamed)
        except AssertionError as e:
            raise AssertionError(f"{label} stream differs from the whole parse: {e}") from None
