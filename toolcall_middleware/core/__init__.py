"""The sans-IO core: synchronous, no I/O, no framework imports."""


__all__: list[str] = []
