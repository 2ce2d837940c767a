"""Framing: wire objects <-> bytes (SSE for streams, JSON for whole bodies)."""


__all__: list[str] = []
