"""`benchmarks/load_test.py` in small: 20 streaming clients for three rounds on a real uvicorn, half
leaving mid-stream; the script checks what the others get and the server's memory, and says OK."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).parent.parent.parent / "benchmarks" / "load_test.py"


def test_the_load_test_passes_in_small() -> None:
    command = [sys.executable, str(SCRIPT), "--clients", "20", "--rounds", "3", "--round-timeout", "30"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "30 completed and checked, 30 left mid-stream" in done.stdout, done.stdout
