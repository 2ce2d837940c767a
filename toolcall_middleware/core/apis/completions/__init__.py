"""Legacy completions (`/v1/completions`), as one package: its `ApiSpec` (`spec`), a host's
`text_completion` answer read into raw text (`reader`) and a request's fields checked (`checks`).
The API carries no tool calls: it has no emitter or rewrite of its own, and its error body is
OpenAI's (`core.replaced.openai_error`)."""

from .checks import check_completions
from .reader import CompletionsReader
from .spec import SPEC

__all__ = ["SPEC", "CompletionsReader", "check_completions"]
