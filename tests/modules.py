"""The package's modules by dotted name, read from the source tree (for the layout and API tests).

The top-level `integrations/` folder ships as `toolcall_middleware.integrations`, so its modules
are listed under that name (in place of the stand-in `toolcall_middleware/integrations.py`).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def package_modules() -> dict[str, Path]:
    """Each module's source file by its dotted name."""
    found: dict[str, Path] = {}
    for path in sorted((ROOT / "toolcall_middleware").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    for path in sorted((ROOT / "integrations").glob("*.py")):
        name = "toolcall_middleware.integrations" + ("" if path.stem == "__init__" else f".{path.stem}")
        found[name] = path
    return found
