"""Legacy completions (`/v1/completions`), as one package: its `ApiSpec` (`spec`), a host's
`text_completion` answer read into raw text (`reader`) and a request's fields checked (`checks`).
The API carries no tool calls: it has no emitter or rewrite of its own, and its error body is
OpenAI's (`core._replaced.openai_error`)."""

from ._checks import check_completions
from ._reader import CompletionsReader
from ._spec import SPEC

__all__ = ["SPEC", "CompletionsReader", "check_completions"]
