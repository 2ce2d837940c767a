"""Framework integrations: `toolcall_middleware.integrations.flask`, `.django`, `.quart`.

Their modules live in the repository's top-level `integrations/` folder. The wheel ships that
folder as this package (pyproject: force-include; this file is left out of it). In a source
checkout or an editable install there is no such folder inside the package, so this module stands
in for it: a module with a `__path__` is a package to the import system, and its path is that
folder. Either way `import toolcall_middleware.integrations.flask` finds the same file.
"""

from __future__ import annotations

from pathlib import Path

__path__ = [str(Path(__file__).resolve().parent.parent / "integrations")]


__all__: list[str] = []
