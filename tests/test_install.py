"""The README's install commands work as written on a machine that has only Python and `make`.

The commands run in a copy of the checkout (so the build leaves this tree alone), with a fresh
virtualenv first on PATH, the way a user who follows the Installing section types them. The
packages come from the package index, as they would for that user.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs_snippets import ROOT, blocks

# What a copy of the checkout leaves out: our own environments and build output.
_NOT_SOURCE = shutil.ignore_patterns(".venv", ".git", "dist", "build", "site", "*.so", "__pycache__", "venvs")


def _install_commands() -> list[str]:
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    section = text.index("## Installing")
    (block,) = [b for b in blocks(readme) if b.lang == "sh" and section < text.index(b.code) < section + 2000]
    return [shlex.join(shlex.split(line, comments=True)) for line in block.code.splitlines() if line.strip()]


def test_the_install_section_names_the_checkout_and_the_wheel() -> None:
    commands = _install_commands()
    assert commands == [
        "pip install '.[serve]'",
        "make dist",
        "pip install --find-links dist 'toolcall-middleware[serve]'",
    ]


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    copy = tmp_path / "toolcall-middleware"
    shutil.copytree(ROOT, copy, ignore=_NOT_SOURCE)
    return copy


def _run(command: str, cwd: Path, venv: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"`{command}` failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done


def _installed_from(venv: Path) -> str:
    probe = "import toolcall_middleware, httpx, uvicorn; print(toolcall_middleware.__file__)"
    return subprocess.run(
        [str(venv / "bin" / "python"), "-c", probe], cwd=venv, check=True, capture_output=True, text=True
    ).stdout.strip()


def test_the_readme_install_commands_work_as_written(checkout: Path, tmp_path: Path) -> None:
    first, build, second = _install_commands()

    from_checkout = tmp_path / "from-checkout"
    subprocess.run([sys.executable, "-m", "venv", str(from_checkout)], check=True)
    _run(first, checkout, from_checkout)
    assert _installed_from(from_checkout).startswith(str(from_checkout))  # installed, not a path to the copy
    _run("toolcall-middleware serve --help", checkout, from_checkout)

    _run(build, checkout, from_checkout)
    wheels = sorted((checkout / "dist").glob("toolcall_middleware-*.whl"))
    assert len(wheels) == 1 and list((checkout / "dist").glob("toolcall_middleware-*.tar.gz"))

    from_wheel = tmp_path / "from-wheel"
    subprocess.run([sys.executable, "-m", "venv", str(from_wheel)], check=True)
    _run(second, checkout, from_wheel)
    assert _installed_from(from_wheel).startswith(str(from_wheel))
    served = _run("toolcall-middleware serve --help", checkout, from_wheel)
    assert "--upstream" in served.stdout
