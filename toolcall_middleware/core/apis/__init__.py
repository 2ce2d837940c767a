"""One package per wire API (`chat`, `responses`, `messages`, `completions`, `agui`), each holding
everything the library knows of that API: its `ApiSpec` as `SPEC` (see `core._api`), its reader,
emitter, request rewrite, field checks and error body. What several APIs share stays below them:
the readers' base (`core.inbound`), `Upstream` and the ids (`core.emitters`), the rewrites' and
checks' vocabulary and the bridges (`core.request`), OpenAI's error body (`core._replaced`)."""

__all__: list[str] = []
