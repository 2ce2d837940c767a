"""The wire APIs the library speaks, on either side of the middleware, each declared whole in one
record.

`Api` names one: OpenAI Chat Completions (`chat`), the Responses API (`responses`), legacy
`/v1/completions` (`completions`), Anthropic Messages (`messages`), and AG-UI (`agui`), which
only clients speak: its requests go to the host in another API (`ApiSpec.host_api`). A request's
client API and the host's API (the upstream, another one when bridged) are both an `Api`.

Everything the library does differently by API is asked of that API's `ApiSpec` (`spec_for`),
declared in its own module, `core/apis/<name>.py`: its standard path, how its answers are
recognised and read, how the client's bytes are written (`Output` for a stream, `whole` for a
JSON body), its error bodies, its request rewrite and field checks. Nothing else compares API
names but the bridges (which translate one named API into another) and the features only one
API has (`tests/core/test_api_specs.py` holds the code to that). Adding an API is adding its name
to `Api` (`core._api_names`, below the readers and emitters that name it) and writing its module.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

from ._api_names import APIS, Api

if TYPE_CHECKING:
    from ._events import Event
    from ._exchange_data import AnswerSetup
    from .emitters._meta import Upstream
    from .inbound import UpstreamDone
    from .inbound._base import ReaderBase
    from .policy import PolicyError
    from .request._bridge import Bridged
    from .request._rewrite import RewriteResult


class Output(ABC):
    """The client's bytes for one streamed answer (one choice of it) in one API.

    Made when the host's answer opens (`start` gives the stream's first events); `feed` writes
    parsed events; a stream ends in `finish` (the host's end), `fail` (an answer that broke the
    request's tool rules) or `cut` (the host stopped short). The methods with a default here are
    what only some APIs have."""

    upstream: Upstream  # the host's id, model and time, and finally its finish reason
    # Plain text to its chunk's bytes (the answer's fast path), or None: see `Answer.feed_event`.
    text_sse: Callable[[str], bytes | None] | None = None

    @abstractmethod
    def start(self) -> bytes: ...

    @abstractmethod
    def feed(self, events: list[Event]) -> bytes: ...

    @abstractmethod
    def fail(self, error: PolicyError) -> bytes: ...

    @abstractmethod
    def cut(self, message: str) -> bytes: ...

    @abstractmethod
    def finish(self, done: UpstreamDone, choices: list[Output]) -> bytes:
        """The end of the stream; `choices`: every choice's output, this one first (several only
        where the API has choices)."""

    def opening(self) -> bytes:
        """What this choice would have sent before another choice's first bytes (several choices)."""
        return b""

    def logprobs_sse(self, text: str, logprobs: list[Any]) -> bytes | None:
        """`text` with the host's log probabilities of its tokens, or None: this API carries none."""
        return None


class ErrorBody(Protocol):
    """An API's error body saying `message` for `status`; `code`, `param` and `kind` (the error's
    `type`) where the API's shape has them."""

    def __call__(
        self, message: str, status: int, *, code: str | None = None, param: str | None = None, kind: str | None = None
    ) -> bytes: ...


@dataclass(frozen=True)
class Whole:
    """What a whole answer's body is made of (see `ApiSpec.whole`)."""

    setup: AnswerSetup
    upstream: Upstream
    kept_by: Mapping[int, list[Event]]  # each choice's events, as the rules kept them
    done: UpstreamDone | None
    logprobs: Mapping[int, tuple[str, list[Any]]]  # by choice: the host's content and its log probabilities
    legacy: bool  # the request used the legacy `functions` field


@dataclass(frozen=True)
class ApiSpec:
    """One wire API, as the library serves and reads it."""

    name: Api
    path: str  # the standard path (`/v1/chat/completions`): a bridged request goes there
    routes: tuple[str, ...]  # the paths clients call it at by default (the `<name>_routes` option's)
    # The request paths of this API (`kind_of_route`), wherever it is mounted: suffixes any
    # prefix may precede, and (`route_paths`) whole paths.
    route_suffixes: tuple[str, ...]
    recognizes: Callable[[Mapping[str, Any]], bool]  # an object of a host's answer is of this API
    reader: Callable[[bool], ReaderBase]  # a new reader of its answers (`stream`: the body is SSE)
    error_body: ErrorBody  # the error body a client of this API gets
    check_request: Callable[[Mapping[str, Any]], None]  # raise `BadRequest` for a field of the wrong type
    # The rewrite of a request served by a raw-output model in this API; None: its client writes
    # its own prompt, and its answer passes through (legacy completions carries no tool calls).
    rewrite: Callable[..., RewriteResult] | None = None
    route_paths: tuple[str, ...] = ()
    # Its stream's output (upstream, setup, choice, legacy `functions`) and whole body; None for
    # an API whose answers pass through.
    output: Callable[[Upstream, AnswerSetup, int, bool], Output] | None = None
    whole: Callable[[Whole], dict[str, Any]] | None = None
    # Other APIs' answer shapes a host of this API may answer in, read as such (the client still
    # gets its own API): some in-house servers answer the chat route in the completions shape.
    answered_as: tuple[Api, ...] = ()
    choices: bool = False  # answers may hold several choices (`n > 1`), and log probabilities
    # A host's error event in this API goes to its client as it came (not ours instead).
    passes_host_errors: bool = True
    ping_event: bytes | None = None  # the typed keep-alive event under the `ping_events` profile
    # Its clients may send their key in `x-api-key` (Anthropic's SDK does) as well as in
    # `Authorization: Bearer`; the proxy's own keys are read so, and an upstream's sent so.
    x_api_key: bool = False
    # An API no host serves (AG-UI): its requests go to the host in `host_api`, translated by
    # `to_host` (which checks the request first); the host's answers are read in that API.
    host_api: Api | None = None
    to_host: Callable[[Mapping[str, Any]], Bridged] | None = None


@cache
def spec_for(api: str) -> ApiSpec:
    """The spec of `api`, from its module (imported on first use: the specs name the readers and
    emitters, which themselves name `Api`)."""
    if api not in APIS:
        raise ValueError(f"unknown API {api!r}; the APIs are: {', '.join(APIS)}")
    spec: ApiSpec = importlib.import_module(f"{__package__}.apis.{api}").SPEC
    return spec


__all__ = ["APIS", "Api", "ApiSpec", "ErrorBody", "Output", "Whole", "spec_for"]
