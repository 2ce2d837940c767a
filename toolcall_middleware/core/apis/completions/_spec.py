"""Legacy completions (`/v1/completions`): `text_completion` answers. The API has no way to carry
a tool call, and its client writes its own prompt: a client of it gets the host's answer as the
host wrote it (`choices[].text`). The library reads it only as a host's answer (some in-house
servers answer the chat route in its shape)."""

from __future__ import annotations

from ..._api import ApiSpec
from ..._replaced import openai_error
from ...inbound._base import ReaderBase
from ._checks import check_completions
from ._reader import CompletionsReader, is_text_completion


def _reader(stream: bool) -> ReaderBase:
    return CompletionsReader(stream=stream)  # (its chunks and whole bodies share one `object`)


SPEC = ApiSpec(
    name="completions",
    path="/v1/completions",
    routes=("/v1/completions", "/completions"),
    route_suffixes=("/completions",),
    recognizes=is_text_completion,
    reader=_reader,
    error_body=openai_error,
    check_request=check_completions,
)

__all__ = ["SPEC"]
