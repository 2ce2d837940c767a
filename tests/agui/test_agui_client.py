"""The AG-UI route as `@ag-ui/client`'s `HttpAgent` (npm) uses it: a two-run tool loop (the call
in run one; the tool's result and the answer in run two) against `serve` in front of a chat-only
raw-output host, and against the middleware in process under uvicorn, with the host's output cut
in two at every character. The client checks each run's event order itself. Then the same loop
through CopilotKit's runtime (`@copilotkit/runtime`, its v2 AG-UI endpoint, run headless in node)
with an `HttpAgent` on the route as its agent.

Skipped where node is not installed; the packages are installed from the npm registry into
`.venv/ag-ui` and `.venv/copilotkit` once. In CI a failed install fails the test.
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

from tests.agui.hosts import FIRST, SECOND
from tests.agui.protocol import EVENT_MESSAGE
from tests.servers import ROOT, free_port, serve, uvicorn

PACKAGES = ["@ag-ui/client@0"]
COPILOTKIT = ["@copilotkit/runtime@1"]  # (it brings the @ag-ui/client it was built with)
SCRIPT = Path(__file__).parent / "js" / "agui_tool_loop.mjs"
SPLITS: list[int | None] = [None, *range(1, max(len(FIRST), len(SECOND)))]


def installed(folder: str, packages: list[str], marker: str) -> Path:
    """The node_modules of `.venv/<folder>`, where `packages` are installed once."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed: the AG-UI clients cannot run here")
    prefix = ROOT / ".venv" / folder
    modules = prefix / "node_modules"
    if not (modules / marker).exists():
        done = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(prefix), *packages],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            if os.environ.get("CI"):
                pytest.fail(f"npm install {' '.join(packages)} failed:\n{done.stdout}\n{done.stderr}")
            pytest.skip(f"npm install failed (offline?): {done.stderr[-500:]}")
    return modules


@pytest.fixture(scope="module")
def node_modules() -> Path:
    return installed("ag-ui", PACKAGES, "@ag-ui/client")


@pytest.fixture(scope="module")
def copilotkit_modules() -> Path:
    return installed("copilotkit", COPILOTKIT, "@copilotkit/runtime")


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    command, port = uvicorn("tests.agui.hosts:host")
    with serve(command, port) as base:
        yield base


def tool_loops(node_modules: Path, url: str, *through: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        ["node", str(SCRIPT), url, json.dumps(SPLITS), *through],
        # (CopilotKit's runtime reports telemetry unless told not to: these tests send nothing out)
        env={**os.environ, "NODE_PATH": str(node_modules), "COPILOTKIT_TELEMETRY_DISABLED": "true"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loops: list[dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    return loops


def check(loops: list[dict[str, Any]]) -> None:
    assert [loop["split"] for loop in loops] == SPLITS
    for loop in loops:
        where = f"split at {loop['split']}"
        assert [(c["name"], c["arguments"]) for c in loop["calls"]] == [("get_weather", {"city": "Paris"})], where
        assert loop["calls"][0]["id"].startswith("call_"), where
        assert loop["firstText"] == "Let me check.", where
        assert loop["answer"] == "It is Sunny in Paris.", where
        # The client keeps the model's reasoning as messages of its own; they go back in run two,
        # and the route leaves them out of what the model is sent.
        assert loop["roles"] == ["user", "reasoning", "assistant", "tool", "reasoning", "assistant"], where
        first, second = loop["first"], loop["second"]
        assert first["started"] == {"threadId": "thread-1", "runId": "run-1"}, where
        assert second["started"] == {"threadId": "thread-1", "runId": "run-2"}, where
        assert first["reasoning"] == "I need the weather tool.", where
        assert second["reasoning"] == "The tool answered.", where
        assert first["types"][0] == "RUN_STARTED" and first["types"][-1] == "RUN_FINISHED", where
        assert first["types"].count("TOOL_CALL_START") == first["types"].count("TOOL_CALL_END") == 1, where
        assert "TOOL_CALL_START" not in second["types"] and second["types"][-1] == "RUN_FINISHED", where
        # Each run's MESSAGES_SNAPSHOT, which the client applied, is the conversation it then holds:
        # the run's messages and the ones the run's events made, under the same ids.
        for run in (first, second):
            assert run["types"][-2:] == ["MESSAGES_SNAPSHOT", "RUN_FINISHED"], where
            assert run["snapshot"] == run["messages"], where
        assert [m["role"] for m in first["snapshot"]] == ["user", "reasoning", "assistant"], where
        call = first["snapshot"][-1]["toolCalls"][0]
        assert (call["id"], call["function"]["name"]) == (loop["calls"][0]["id"], "get_weather"), where
        assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}, where
        assert first["snapshot"][-1]["content"] == "Let me check.", where
        for message in first["snapshot"] + second["snapshot"]:
            EVENT_MESSAGE.validate_python(message)


def test_through_serve(node_modules: Path, upstream: str) -> None:
    port = free_port()
    command = [sys.executable, "-m", "toolcall_middleware.cli", "serve", "--upstream", upstream, "--port", str(port)]
    flags = ["--dialect", "hermes", "--store", "none", "--log-level", "warning"]
    with serve([*command, *flags], port) as base:
        check(tool_loops(node_modules, base + "/v1/agui"))


def test_through_the_middleware_under_uvicorn(node_modules: Path) -> None:
    command, port = uvicorn("tests.agui.hosts:app")
    with serve(command, port) as base:
        check(tool_loops(node_modules, base + "/v1/agui"))


def test_through_copilotkits_runtime(copilotkit_modules: Path) -> None:
    command, port = uvicorn("tests.agui.hosts:app")
    with serve(command, port) as base:
        check(tool_loops(copilotkit_modules, base + "/v1/agui", "copilotkit"))
