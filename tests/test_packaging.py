"""`toolcall_middleware.integrations` is importable both from the built wheel and from this
checkout (an editable install or a plain source tree), and both find the same modules."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
MODULES = ["flask", "django", "quart"]
PROBE = (
    "import sys; sys.path.insert(0, sys.argv[1]) if len(sys.argv) > 1 else None\n"
    "import toolcall_middleware.integrations.flask as f, toolcall_middleware.integrations.django as d, "
    "toolcall_middleware.integrations.quart as q\n"
    "print(f.__file__); print(d.__file__); print(q.__file__)\n"
)

NATIVE_PROBE = (
    "import sys; sys.path.insert(0, sys.argv[1])\n"
    "from toolcall_middleware.core import _compiled as compiled\n"
    "print(compiled.native)\n"
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("toolcall_middleware-*.whl")
    return built


def test_the_wheel_ships_the_integrations_inside_the_package(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for module in ["__init__", "_extras", *MODULES]:
        assert f"toolcall_middleware/integrations/{module}.py" in names
    assert "toolcall_middleware/integrations.py" not in names  # the checkout's stand-in stays out
    assert not [n for n in names if n.startswith("integrations/")]


def test_the_integrations_import_from_the_unpacked_wheel(wheel: Path, tmp_path: Path) -> None:
    zipfile.ZipFile(wheel).extractall(tmp_path)
    found = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path)], cwd=tmp_path, check=True, capture_output=True, text=True
    ).stdout.split()
    assert [Path(f).relative_to(tmp_path).as_posix() for f in found] == [
        f"toolcall_middleware/integrations/{m}.py" for m in MODULES
    ]


def test_the_integrations_import_in_this_environment(tmp_path: Path) -> None:
    """From another directory, so only the installed (editable) package can answer."""
    found = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=tmp_path, check=True, capture_output=True, text=True
    ).stdout.split()
    assert found == [str(ROOT / "integrations" / f"{m}.py") for m in MODULES]


def test_the_c_helper_is_built_by_the_install() -> None:
    """The development install compiles the C helper (`hatch_build.py`), unless asked not to: a
    build that silently fell back to pure Python would leave the C helper untested."""
    from toolcall_middleware.core import _compiled as compiled

    if os.environ.get("TOOLCALL_MIDDLEWARE_PURE_PYTHON"):
        pytest.skip("pure Python asked for")
    assert compiled.native is not None
    assert Path(compiled.native.__file__).parent == ROOT / "toolcall_middleware" / "core"


def test_the_wheel_carries_the_c_helper_and_uses_it(wheel: Path, tmp_path: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert [n for n in names if n.startswith("toolcall_middleware/core/_scan.") and n.endswith((".so", ".pyd"))]
    assert "toolcall_middleware/core/_scan.c" not in names
    assert "-none-any" not in wheel.name  # a platform wheel: it holds compiled code
    zipfile.ZipFile(wheel).extractall(tmp_path)
    found = subprocess.run(
        [sys.executable, "-c", NATIVE_PROBE, str(tmp_path)], cwd=tmp_path, check=True, capture_output=True, text=True
    )
    assert str(tmp_path) in found.stdout  # the C helper of the unpacked wheel


def test_without_a_compiler_the_wheel_is_pure_python(tmp_path: Path) -> None:
    """The C helper is optional: a build whose compiler fails warns and makes a pure wheel, which
    runs in Python."""
    out = tmp_path / "dist"
    env = {**os.environ, "CC": "/bin/false"}
    env.pop("TOOLCALL_MIDDLEWARE_PURE_PYTHON", None)
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        env=env,
    )
    (built,) = out.glob("toolcall_middleware-*.whl")
    assert built.name.endswith("-py3-none-any.whl")
    assert not [n for n in zipfile.ZipFile(built).namelist() if "/_scan." in n]
    zipfile.ZipFile(built).extractall(tmp_path / "unpacked")
    unpacked = str(tmp_path / "unpacked")
    found = subprocess.run(
        [sys.executable, "-c", NATIVE_PROBE, unpacked], cwd=tmp_path, check=True, capture_output=True, text=True
    )
    assert found.stdout.strip() == "None"


def test_the_wheel_is_typed_and_licensed(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "toolcall_middleware/py.typed" in names  # a user's mypy reads our types
    licenses = [n for n in names if n.endswith("/LICENSE") and ".dist-info/" in n]
    assert licenses, sorted(names)
    text = zipfile.ZipFile(wheel).read(licenses[0]).decode()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
