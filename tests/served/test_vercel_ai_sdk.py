"""The Vercel AI SDK's Responses provider (npm `ai` + `@ai-sdk/openai`) through a full tool loop,
with its defaults, against a Chat-only raw-output host through the bridge. It stores by default,
so its second step refers to the first answer's reasoning by `item_reference`: the store resolves
it (without a store the bridge must refuse it).

Skipped where node is not installed; the packages are installed from the npm registry into
`.venv/ai-sdk` once. In CI a failed install fails the test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.servers import ROOT, free_port, serve, uvicorn

PACKAGES = ["ai@6", "@ai-sdk/openai@3", "zod@4"]
SCRIPT = Path(__file__).parent / "js" / "ai_sdk_tool_loop.mjs"


@pytest.fixture(scope="module")
def node_modules() -> Path:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed: the AI SDK cannot run here")
    prefix = ROOT / ".venv" / "ai-sdk"
    modules = prefix / "node_modules"
    if not (modules / "@ai-sdk" / "openai").exists():
        done = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(prefix), *PACKAGES],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode != 0:
            if os.environ.get("CI"):
                pytest.fail(f"npm install {' '.join(PACKAGES)} failed:\n{done.stdout}\n{done.stderr}")
            pytest.skip(f"npm install failed (offline?): {done.stderr[-500:]}")
    return modules


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    command, port = uvicorn("tests.store.hosts:host")
    with serve(command, port) as base:
        yield base


def tool_loop(node_modules: Path, base: str) -> dict[str, Any]:
    done = subprocess.run(
        ["node", str(SCRIPT), base],
        env={**os.environ, "NODE_PATH": str(node_modules)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def check(result: dict[str, Any]) -> None:
    assert result["calls"] == ["Paris"]
    assert result["text"] == "It is Sunny."
    second = result["sent"][1]
    assert any(item.get("type") == "item_reference" and item["id"].startswith("rs_") for item in second)


def test_through_serve_and_its_default_store(node_modules: Path, upstream: str, tmp_path: Path) -> None:
    port = free_port()
    command = [sys.executable, "-m", "toolcall_middleware.cli", "serve", "--upstream", upstream, "--port", str(port)]
    flags = ["--dialect", "hermes", "--bridge", "responses-to-chat", "--data-dir", str(tmp_path)]
    with serve([*command, *flags], port) as base:
        check(tool_loop(node_modules, base))


def test_through_the_middleware_with_a_memory_store(node_modules: Path) -> None:
    command, port = uvicorn("tests.store.hosts:bridged")
    with serve(command, port) as base:
        check(tool_loop(node_modules, base))
