"""Claude Code, the real CLI from npm, on its default model, through a multi-step file task:
read a file, edit it, run a command, answer. Against (a) a raw-output Chat host behind the
`messages-to-chat` bridge and (b) a raw-output host that answers `/v1/messages` itself, both
scripted in `claude_code_hosts.py` and served by uvicorn behind `ToolCallMiddleware`; and (c) the
Chat host alone behind `toolcall-middleware serve --bridge messages-to-chat`, as a user runs it.

Claude Code's requests carry what its default model needs: `{"role": "system"}` messages inside
`messages`, `system` blocks with `cache_control`, adaptive `thinking`, `output_config`,
`context_management`, a tool with `defer_loading`, the `anthropic-beta` header and `?beta=true`.
Its thinking blocks come back in the history with an empty signature.

Skipped where node is not installed; the CLI is installed from the npm registry into `.venv`
once (or taken from `CLAUDE_CODE_BIN`). In CI a failed install fails the test.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.servers import ROOT, free_port, serve, uvicorn

PACKAGE = "@anthropic-ai/claude-code"
TASK = "In {path} replace the word hello with goodbye, then run cat on the file and tell me what it says."


@pytest.fixture(scope="module")
def claude() -> str:
    given = os.environ.get("CLAUDE_CODE_BIN")
    if given:
        return given
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed: Claude Code cannot run here")
    prefix = ROOT / ".venv" / "claude-code"
    binary = prefix / "node_modules" / ".bin" / "claude"
    if not binary.exists():
        done = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(prefix), PACKAGE],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode != 0 or not binary.exists():
            if os.environ.get("CI"):
                pytest.fail(f"npm install {PACKAGE} failed:\n{done.stdout}\n{done.stderr}")
            pytest.skip(f"npm install {PACKAGE} failed (offline?): {done.stderr[-500:]}")
    return str(binary)


def run_claude(claude: str, base: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    (work / "notes.txt").write_text("hello world\n")
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": base,
        "ANTHROPIC_API_KEY": "none",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    prompt = TASK.format(path=work / "notes.txt")
    command = [claude, "-p", prompt, "--output-format", "stream-json", "--verbose"]
    command += ["--allowedTools", "Read", "Edit", "Bash"]  # no --model: its default model
    done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=180)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return done, events


def blocks(events: list[dict[str, Any]], role: str, kind: str) -> list[dict[str, Any]]:
    out = []
    for event in events:
        if event.get("type") == role:
            out.extend(b for b in event["message"]["content"] if isinstance(b, dict) and b.get("type") == kind)
    return out


@contextlib.contextmanager
def stack(host: str) -> Iterator[str]:
    """The base URL Claude Code is pointed at: the middleware in process over a host app, or
    `toolcall-middleware serve --bridge messages-to-chat` in front of a Chat host of its own."""
    if host != "serve":
        command, port = uvicorn(f"tests.served.claude_code_hosts:{host}")
        with serve(command, port) as base:
            yield base
        return
    command, port = uvicorn("tests.served.claude_code_hosts:chat_host")
    with serve(command, port) as upstream:
        proxy_port = free_port()
        proxy = [sys.executable, "-m", "toolcall_middleware.cli", "serve", "--upstream", upstream]
        proxy += ["--bridge", "messages-to-chat", "--dialect", "hermes", "--port", str(proxy_port)]
        with serve([*proxy, "--log-level", "warning"], proxy_port) as base:
            yield base


@pytest.mark.parametrize("host", ["chat_app", "messages_app", "serve"])
def test_claude_code_completes_a_file_task(claude: str, host: str, tmp_path: Path) -> None:
    with stack(host) as base:
        done, events = run_claude(claude, base, tmp_path)
        seen = httpx.get(base + "/seen").json()  # (through serve, the proxy asks its upstream)

    assert done.returncode == 0, done.stderr[-2000:]
    result = next(e for e in events if e.get("type") == "result")
    assert result["subtype"] == "success" and result["is_error"] is False, result
    assert result["result"] == "The file now says: goodbye world"
    assert (tmp_path / "work" / "notes.txt").read_text() == "goodbye world\n"

    # Its real tools ran, in order, each with its result; reasoning came as thinking blocks.
    uses = blocks(events, "assistant", "tool_use")
    assert [u["name"] for u in uses] == ["Read", "Edit", "Bash"]
    assert all(u["id"].startswith("toolu_") for u in uses)
    results = blocks(events, "user", "tool_result")
    assert [r["tool_use_id"] for r in results] == [u["id"] for u in uses]
    assert not any(r.get("is_error") for r in results)
    assert [b["thinking"] for b in blocks(events, "assistant", "thinking")][:3] == [
        "Step 1: use Read.",
        "Step 2: use Edit.",
        "Step 3: use Bash.",
    ]

    # The host got its default model's requests, rewritten into raw text it can read.
    tool_turns = [body for body in seen if "<tools>" in json.dumps(body)]
    assert len(tool_turns) == 4
    last = tool_turns[-1]
    assert last["model"].startswith("claude-")
    assert all(m["role"] in ("system", "user", "assistant") for m in last["messages"])
    text = json.dumps(last)
    assert "# Environment" in text  # Claude Code's system message, folded into the system prompt
    assert text.count("<tool_response>") == 3 and "goodbye world" in text
    if host in ("chat_app", "serve"):
        assert last["chat_template_kwargs"] == {"enable_thinking": True, "thinking": True}
        assistant = [m for m in last["messages"] if m["role"] == "assistant"]
        assert [m["reasoning_content"] for m in assistant] == [
            "Step 1: use Read.",
            "Step 2: use Edit.",
            "Step 3: use Bash.",
        ]
    else:
        assert not any(m["role"] == "system" for m in last["messages"])
        assert last["thinking"]["type"] in ("adaptive", "enabled")  # a Messages host's own switch
        assistant = [m for m in last["messages"] if m["role"] == "assistant"]
        assert assistant[0]["content"].startswith("<think>\nStep 1: use Read.\n</think>")
