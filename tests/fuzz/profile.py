"""How long the fuzz suite runs: a bounded run in CI, a longer one before a release.

Every fuzz test takes its settings from `fuzz(n)`: `n` examples in the `ci` profile (the
default), 25 times as many in `long`, or exactly `TOOLCALL_FUZZ_EXAMPLES` each when that is set.
The `ci` profile is derandomized (the same examples every run, so CI never fails on a change
for an input a run happened to draw); `long` draws new ones each time.

```sh
pytest tests/fuzz                                  # ci: what `make test` runs
HYPOTHESIS_PROFILE=long pytest tests/fuzz          # before a release (~25x longer)
TOOLCALL_FUZZ_EXAMPLES=5000 pytest tests/fuzz -k c_helper
```

The profile is read here and applied per test, not loaded globally, so the rest of the suite
keeps its own settings.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

SCALE = {"ci": 1, "long": 25}
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
if PROFILE not in SCALE:
    raise RuntimeError(f"HYPOTHESIS_PROFILE={PROFILE!r}: the fuzz suite knows {sorted(SCALE)}")
EXAMPLES = os.environ.get("TOOLCALL_FUZZ_EXAMPLES")

# A request body or a stream is slow to generate (and huge strings are meant to be big).
_SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]


def examples(ci: int) -> int:
    """The number of examples a test with `ci` examples in CI runs now."""
    return int(EXAMPLES) if EXAMPLES else ci * SCALE[PROFILE]


def fuzz(ci: int) -> settings:
    """The settings of a fuzz test that runs `ci` examples in CI."""
    return settings(
        max_examples=examples(ci),
        derandomize=PROFILE == "ci",
        deadline=None,
        suppress_health_check=_SLOW,
        print_blob=True,
    )
