"""The one import helper the integrations share: a framework, or an error naming the extra."""

from __future__ import annotations

import importlib
from types import ModuleType


def require(module: str, extra: str) -> ModuleType:
    """Import `module` now (integrations import their framework lazily), or say what to install."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(
            f"toolcall_middleware.integrations.{extra} needs {module}: pip install 'toolcall-middleware[{extra}]'"
        ) from error


__all__ = [
    "require",
]
