"""Build hook: compiles the C helper (`toolcall_middleware/core/_scan.c`) into the wheel.

The helper is a few pure functions on bytes that make common work cheaper (see
`toolcall_middleware/core/_compiled.py`); the package works without it. So where no
C compiler answers (or `TOOLCALL_MIDDLEWARE_PURE_PYTHON` is set) the build says so and goes on,
and the wheel is pure Python. An editable install compiles it in place, next to its source.
The compiler is `CC` (and `LDSHARED`) from the environment, else the one this Python was built
with (`sysconfig`), as setuptools does.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = "toolcall_middleware/core/_scan.c"


def compile_extension(source: Path, target: Path) -> None:
    """`source` -> the shared library `target`; raises `OSError` or `CalledProcessError`."""
    config = sysconfig.get_config_vars()
    # The environment's CC and LDSHARED first, as setuptools reads them.
    cc = shlex.split(os.environ.get("CC") or str(config.get("CC") or "cc"))
    ldshared = shlex.split(os.environ.get("LDSHARED") or str(config.get("LDSHARED") or f"{cc[0]} -shared"))
    include = sysconfig.get_path("include")
    with tempfile.TemporaryDirectory() as work:
        obj = Path(work) / "_scan.o"
        flags = ["-O2", "-fPIC", "-DNDEBUG", "-fwrapv", "-I", include]
        subprocess.run([*cc, *flags, "-c", str(source), "-o", str(obj)], check=True, capture_output=True)
        subprocess.run([*ldshared, str(obj), "-o", str(target)], check=True, capture_output=True)


class HelperBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or os.environ.get("TOOLCALL_MIDDLEWARE_PURE_PYTHON"):
            return
        source = Path(self.root) / SOURCE
        name = "_scan" + str(sysconfig.get_config_var("EXT_SUFFIX") or ".so")
        if version == "editable":
            target = source.with_name(name)  # the editable install imports the source tree
        else:
            target = Path(tempfile.mkdtemp(prefix="toolcall-middleware-build-")) / name
        try:
            compile_extension(source, target)
        except (OSError, subprocess.CalledProcessError) as error:
            detail = getattr(error, "stderr", b"") or b""
            self.app.display_warning(
                f"toolcall-middleware: the C helper was not built ({error}); the package runs in pure Python.\n"
                + detail.decode(errors="replace")[-2000:]
            )
            return
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        if version != "editable":
            build_data["force_include"][str(target)] = f"toolcall_middleware/core/{name}"
