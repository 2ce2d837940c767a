"""The Open Responses compliance suite against `toolcall-middleware serve --profiles open_responses`,
natively and through the responses-to-chat bridge: every one of its tests passes.

The suite is not part of this project: it is read from `../shared/vendor/openresponses` beside the
checkout (where CI puts it), run by its own runner under bun, installed with npm into a cache
directory outside the checkout. Skipped where the suite, node or npm is missing, or the install fails.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.servers import ROOT, free_port, serve

SUITE = ROOT.parent / "shared" / "vendor" / "openresponses"
RUNNER_PACKAGES = ["zod@3", "tsx", "bun"]


def runner() -> Path:
    """A copy of the suite's runner and sources with its few packages installed (made once)."""
    if not (SUITE / "bin" / "compliance-test.ts").is_file():
        pytest.skip(f"the Open Responses suite is not at {SUITE}")
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed to run the Open Responses suite")
    # (Keyed by the suite's tests: a newer suite gets a fresh copy.)
    tests = SUITE / "src" / "lib" / "compliance-tests.ts"
    key = hashlib.sha256(str(SUITE.resolve()).encode() + tests.read_bytes()).hexdigest()[:12]
    home = Path(tempfile.gettempdir()) / f"toolcall-openresponses-{key}"
    bun = home / "node_modules" / ".bin" / "bun"
    if not bun.exists():
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        for part in ("bin", "src"):
            shutil.copytree(SUITE / part, home / part)
        shutil.copy(SUITE / "tsconfig.json", home / "tsconfig.json")
        (home / "package.json").write_text('{"name": "openresponses-compliance", "private": true}\n')
        install = ["npm", "install", "--no-audit", "--no-fund", *RUNNER_PACKAGES]
        done = subprocess.run(install, cwd=home, capture_output=True, text=True, timeout=600)
        if done.returncode != 0 or not bun.exists():
            shutil.rmtree(home, ignore_errors=True)
            pytest.skip(f"could not install the suite's runner: {done.stderr[-500:]}")
    return home


@pytest.mark.parametrize("flags", [[], ["--bridge", "responses-to-chat"]], ids=["native", "bridge"])
def test_the_open_responses_suite_passes_in_full(flags: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    home = runner()
    port = free_port()
    command = [sys.executable, "-m", "toolcall_middleware.cli", "serve", "--profiles", "open_responses", *flags]
    with serve([*command, "--port", str(port), "--log-level", "warning"], port) as base:
        run = [str(home / "node_modules" / ".bin" / "bun"), "run", "bin/compliance-test.ts"]
        done = subprocess.run(
            [*run, "-u", base + "/v1", "-k", "none", "-m", "demo"], cwd=home, capture_output=True, timeout=600
        )
    output = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout.decode("utf-8", "replace"))
    found = re.search(r"Results: (\d+) passed, (\d+) failed, (\d+) skipped, (\d+) total", output)
    assert found is not None, output[-2000:]
    passed, failed, skipped, total = map(int, found.groups())
    with capsys.disabled():
        print(f"\nOpen Responses suite ({' '.join(flags) or 'native'}): {passed} of {total} passed")
    assert (failed, skipped) == (0, 0) and passed == total and total >= 17, output[-3000:]
    assert done.returncode == 0
