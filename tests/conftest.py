"""Helpers shared by the test modules: splitting an output into pieces, streaming and comparing."""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import pytest
from hypothesis import Phase, settings

from toolcall_middleware import StreamParser, merge_events, parse
from toolcall_middleware.core._result import ParseResult

# `pytest --hypothesis-profile=explicit`: each property test runs only its explicit `@example`s,
# every other test as usual. The quick run on the other Pythons (`.ci/pythons`) uses it: what
# differs between Python versions (a decoder's depth, the recursion limit) shows in examples,
# and the generated cases, which take most of the time, run on `.venv`'s Python.
settings.register_profile("explicit", phases=(Phase.explicit,))


@pytest.fixture(scope="session", autouse=True)
def _data_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """`serve` keeps its default store under `$XDG_DATA_HOME`: the servers the tests start keep
    theirs in a folder of the test run, never in the home directory of the machine."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data-home")))
        yield


def random_splits(text: str, seed: int | random.Random, max_size: int = 8) -> Iterator[str]:
    """`text` cut into pieces of 1..max_size characters at seeded random points.

    `seed` may also be a `random.Random`, to go on with its sequence across several texts.
    """
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    i = 0
    while i < len(text):
        n = rng.randint(1, max_size)
        yield text[i : i + n]
        i += n


def split_at(text: str, cuts: list[int]) -> list[str]:
    """`text` cut at the offsets `cuts` (each taken modulo `len(text) + 1`, as hypothesis gives them)."""
    points = sorted({c % (len(text) + 1) for c in cuts})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


def stream_parse(pieces: Iterator[str] | list[str], **kwargs: object) -> ParseResult:
    """Feed the pieces to a StreamParser and merge its events."""
    parser = StreamParser(**kwargs)  # type: ignore[arg-type]
    events = []
    for piece in pieces:
        events.extend(parser.feed(piece))
    events.extend(parser.close())
    return merge_events(events)


def check_streams(raw: str, *, seeds: Iterable[int], **kwargs: Any) -> ParseResult:
    """The whole parse of `raw`, after asserting that streaming it one character at a time and at
    each seed's random splits gives the same."""
    whole = parse(raw, **kwargs)
    assert stream_parse(list(raw), **kwargs) == whole
    for seed in seeds:
        assert stream_parse(random_splits(raw, seed), **kwargs) == whole
    return whole


def calls(result: ParseResult) -> list[tuple[str, Any]]:
    """The tool calls of a parse as (name, decoded arguments)."""
    return [(c.name, json.loads(c.arguments)) for c in result.tool_calls]


def function_tools(schemas: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI function tools from {tool name: {property: schema}}."""
    return [
        {"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": p}}}
        for n, p in schemas.items()
    ]


def content_around_calls(segments: Iterable[tuple[str, Any]], layout: str) -> str:
    """The content a parser gives for texts with calls after them (`segments`: each text and its
    calls), written with `layout` (the whitespace a template writes) on both sides of each call:
    the texts joined, and the first text after calls that came after a word set apart by `layout`
    (`BlockParser._set_apart`): "Checking.", a call, "Done." read "Checking.\nDone."."""
    out, apart, after_call = "", False, False
    for text, calls in segments:
        if text:
            if apart and not text[0].isspace():
                out += layout
            out += text
            apart = after_call = False
        if calls:
            if not after_call:
                apart = bool(out.strip()) and not out[-1].isspace()
            after_call = True
    return out
