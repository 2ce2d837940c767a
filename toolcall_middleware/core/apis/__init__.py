"""One module per wire API, each declaring its `ApiSpec` as `SPEC` (see `core.api`)."""

__all__: list[str] = []
