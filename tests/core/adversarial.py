"""The hostile texts of `benchmarks/adversarial_growth.py` (one definition, timed there and
counted or property-tested here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "adversarial_growth.py"
_spec = importlib.util.spec_from_file_location("adversarial_growth", _PATH)
assert _spec is not None and _spec.loader is not None
growth = sys.modules.get("adversarial_growth") or importlib.util.module_from_spec(_spec)
if "adversarial_growth" not in sys.modules:
    sys.modules["adversarial_growth"] = growth
    _spec.loader.exec_module(growth)

SHAPES = growth.SHAPES
families = growth.families
text_of = growth.text_of
