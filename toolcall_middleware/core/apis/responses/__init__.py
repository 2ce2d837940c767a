"""The Responses API (`/v1/responses`), as one package: everything the library knows of the API.

- `spec`: its `ApiSpec` (`SPEC`) and its stream output (`ResponsesOutput`).
- `reader`: a host's `response` object or event stream read into raw text and metadata
  (`ResponsesReader`).
- `emitter`: parser events as the typed Responses events and `response` objects
  (`ResponsesStreamEmitter`, `ResponsesBuilder`).
- `rewrite`: a request rewritten for a raw-output host (`rewrite_responses_request`).
- `checks`: a request's fields and `input` items checked to the API's types (`check_responses`).
- `compaction`: `/v1/responses/compact` for a host without it.

Its error body is OpenAI's (`core._replaced.openai_error`), which Chat and completions share.
"""

from ._checks import check_responses
from ._emitter import ResponsesBuilder, ResponsesStreamEmitter
from ._reader import ResponsesReader
from ._rewrite import rewrite_responses_request
from ._spec import SPEC, ResponsesOutput

__all__ = [
    "SPEC",
    "ResponsesBuilder",
    "ResponsesOutput",
    "ResponsesReader",
    "ResponsesStreamEmitter",
    "check_responses",
    "rewrite_responses_request",
]
