"""Anthropic Messages (`/v1/messages`), as one package: everything the library knows of the API.

- `spec`: its `ApiSpec` (`SPEC`), its stream output (`MessagesOutput`) and keep-alive event.
- `reader`: a host's `message` object or event stream read into raw text and metadata, and the
  host's own `tool_use` blocks (`MessagesReader`, `NativeCalls`).
- `emitter`: parser events as Anthropic's typed stream events and `message` objects
  (`MessagesStreamEmitter`, `MessagesBuilder`).
- `rewrite`: a request rewritten for a raw-output host (`rewrite_messages_request`).
- `checks`: a request's fields checked to the API's types (`check_messages`).
- `errors`: Anthropic's error body (`anthropic_error`).

The bridges between Messages and Chat are `core.request._bridge_messages`: they translate one API
into another, and Chat's side of them is as much theirs.
"""

from ._checks import check_messages
from ._emitter import MessagesBuilder, MessagesStreamEmitter
from ._errors import anthropic_error
from ._reader import MessagesReader, NativeCalls
from ._rewrite import rewrite_messages_request
from ._spec import PING_EVENT, SPEC, MessagesOutput

__all__ = [
    "PING_EVENT",
    "SPEC",
    "MessagesBuilder",
    "MessagesOutput",
    "MessagesReader",
    "MessagesStreamEmitter",
    "NativeCalls",
    "anthropic_error",
    "check_messages",
    "rewrite_messages_request",
]
