"""Parsing costs work linear in the input, whole and streamed, on adversarial repeats (DESIGN.md,
invariant 4). The work is counted, not timed: every character handed to a scanning step of the
core (each class's `feed`, `find`, `advance`, ... and the marker search functions) is counted,
so text handed along again and again (a rest re-sliced per marker, a buffer rescanned from its
start) shows as growth of the count. 4x the input may cost at most ~4.5x the count.

The hostile texts are those of `benchmarks/adversarial_growth.py`, which times the same runs.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

import toolcall_middleware.core.dialects as dialects_package
from tests.core import adversarial
from toolcall_middleware import StreamParser, list_dialects, parse
from toolcall_middleware.core import _reasoning as reasoning
from toolcall_middleware.core import _textscan as textscan

SIZE = 8 * 1024
GROWTH = 4.5
# The methods that scan the text they are given, by name, on every class of the core's parsing
# modules; and the module-level marker searches.
SCANNING_METHODS = ("feed", "find", "advance")
SCANNING_FUNCTIONS = ("find_first", "partial_marker_len", "match_spaced")


def _modules() -> list[ModuleType]:
    found = [textscan, reasoning]
    for info in pkgutil.iter_modules(dialects_package.__path__):
        found.append(importlib.import_module(f"{dialects_package.__name__}.{info.name}"))
    return found


class WorkCounter:
    """Counts the characters handed to the scanning steps (installed with `monkeypatch`), and
    with `held` the text a parser holds as strings between pieces: a string that grows by
    concatenation is copied with every piece, so its size counts at every piece."""

    def __init__(self) -> None:
        self.chars = 0

    def held(self, obj: object, depth: int = 4) -> None:
        """Add the length of every string `obj` holds, its parts' too (down to `depth`)."""
        if isinstance(obj, str):
            self.chars += len(obj)
            return
        if depth == 0 or obj is None or isinstance(obj, (int, float, bool, bytes, type)) or callable(obj):
            return
        if isinstance(obj, (list, tuple)):
            for item in obj[-2:]:  # (a list of parts is joined once: only strings held whole count)
                if not isinstance(item, str):
                    self.held(item, depth - 1)
            return
        if not hasattr(obj, "__dict__") and not hasattr(obj, "__slots__"):
            return
        names = list(getattr(obj, "__dict__", {}))
        for cls in type(obj).__mro__:
            names += [n for n in getattr(cls, "__slots__", ()) if n != "__dict__"]
        for name in names:
            if name not in ("ctx", "context", "dialect", "_syntax", "_markers", "_lanes"):
                self.held(getattr(obj, name, None), depth - 1)

    def _counted(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            for arg in args[:3]:
                if isinstance(arg, str):
                    self.chars += len(arg)
                    break
            return fn(*args, **kwargs)

        return counted

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        originals = {id(getattr(textscan, name)): name for name in SCANNING_FUNCTIONS}
        for module in _modules():
            for name, value in list(vars(module).items()):
                if callable(value) and id(value) in originals and not inspect.isclass(value):
                    monkeypatch.setattr(module, name, self._counted(value))
                if inspect.isclass(value) and value.__module__ == module.__name__:
                    for method in SCANNING_METHODS:
                        fn = value.__dict__.get(method)
                        if inspect.isfunction(fn):
                            monkeypatch.setattr(value, method, self._counted(fn))


def _whole(dialect: str, text: str, counter: WorkCounter) -> None:
    parse(text, dialect)


def _streamed(dialect: str, text: str, counter: WorkCounter) -> None:
    p = StreamParser(dialect)
    for i in range(0, len(text), 61):
        p.feed(text[i : i + 61])
        counter.held(p)
    p.close()


def _cases() -> Iterator[Any]:
    for dialect in list_dialects():
        for family in adversarial.families(dialect):
            yield pytest.param(dialect, family, id=f"{dialect}-{family}")


Run = Callable[[str, str, WorkCounter], None]


def _work(monkeypatch: pytest.MonkeyPatch, run: Run, dialect: str, text: str) -> int:
    counter = WorkCounter()
    with monkeypatch.context() as patch:
        counter.install(patch)
        run(dialect, text, counter)
    return counter.chars


@pytest.mark.parametrize(("dialect", "family"), list(_cases()))
@pytest.mark.parametrize("run", [_whole, _streamed], ids=["whole", "streamed"])
def test_work_grows_linearly_with_adversarial_input(
    monkeypatch: pytest.MonkeyPatch, run: Run, dialect: str, family: str
) -> None:
    prefix, unit = adversarial.families(dialect)[family]
    small = _work(monkeypatch, run, dialect, adversarial.text_of(prefix, unit, SIZE))
    big = _work(monkeypatch, run, dialect, adversarial.text_of(prefix, unit, 4 * SIZE))
    assert small > 0
    assert big / small <= GROWTH, f"{big} characters scanned for 4x the input of {small}"


def test_the_counter_sees_a_rescan(monkeypatch: pytest.MonkeyPatch) -> None:
    """The counter's own check: a machine handed its whole held text on every piece (as a parser
    that rescans its buffer would be) counts quadratic work."""

    def rescanning(dialect: str, text: str, counter: WorkCounter) -> None:
        held = ""
        for i in range(0, len(text), 61):
            held += text[i : i + 61]
            textscan.find_first(held, ("<tool_call>",))

    small = _work(monkeypatch, rescanning, "hermes", "x" * SIZE)
    big = _work(monkeypatch, rescanning, "hermes", "x" * 4 * SIZE)
    assert big / small > 10


def test_the_counter_sees_a_held_string_grow(monkeypatch: pytest.MonkeyPatch) -> None:
    """... and a string held whole that grows with every piece (concatenated: copied each time)."""

    class Holder:
        def __init__(self) -> None:
            self.held = ""

    def growing(dialect: str, text: str, counter: WorkCounter) -> None:
        holder = Holder()
        for i in range(0, len(text), 61):
            holder.held += text[i : i + 61]
            counter.held(holder)

    small = _work(monkeypatch, growing, "hermes", " " * SIZE)
    big = _work(monkeypatch, growing, "hermes", " " * 4 * SIZE)
    assert big / small > 10
