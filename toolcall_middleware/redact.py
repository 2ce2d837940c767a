"""`redact`, where the docs name it: the one implementation is `core._redact` (the core's own
errors are redacted too, and the core imports nothing outside it)."""

from __future__ import annotations

from .core._redact import MASK, redact, redact_url

__all__ = ["MASK", "redact", "redact_url"]
