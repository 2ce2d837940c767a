"""Which reader applies: from the object itself (`object` / `type`), from the route, or neither.

Each API's spec is asked (`core._api`), so this sits above the readers (`core.inbound`) that the
specs name.

`None` is the "not ours" answer: the middleware passes such a response through untouched. An
error body (`{"error": …}`) is not ours either: it is the host's own answer and goes out as it
came. Inside a stream the reader reports errors itself (`UpstreamError`).
"""

from __future__ import annotations

from ._api import APIS, Api, spec_for
from ._depth import MAX_DEPTH
from ._schema import JSON_OBJECT
from .inbound._base import Reader, upstream_error


def kind_of(obj: object) -> Api | None:
    """The API an upstream object belongs to, or `None` (an error, or something else).

    Each API's spec says whether the object is one of its own (`ApiSpec.recognizes`): `object`
    decides (`chat.completion`, `chat.completion.chunk`, `text_completion`, `response`), then a
    Responses event's `type` (`response.…`); a host that omits `object` is judged by its choices
    (`delta` / `message` -> Chat, `text` -> completions); an Anthropic `message` or stream event
    (`message_start`, `content_block_…`, …) is `messages`.
    """
    if not isinstance(obj, JSON_OBJECT) or upstream_error(obj) is not None:
        return None
    for api in APIS:
        if spec_for(api).recognizes(obj):
            return api
    return None


def kind_of_route(path: str) -> Api | None:
    """The API a request path is for: `…/chat/completions`, `…/completions`, `…/responses`,
    `…/v1/messages` (Anthropic).

    Any prefix is fine (`/v1/…`, `/openai/deployments/<name>/…`, a proxy's mount point); the
    query string and a trailing slash are ignored. Sub-resources (`/v1/responses/<id>`,
    `/v1/chat/completions/<id>/messages`) are not generation routes: `None`.
    """
    path = "/" + path.split("?", 1)[0].split("#", 1)[0].strip("/")
    found: Api | None = None
    longest = 0  # the longest suffix decides: `/chat/completions` also ends with `/completions`
    for api in APIS:
        spec = spec_for(api)
        if path in spec.route_paths:
            return api
        for suffix in spec.route_suffixes:
            if len(suffix) > longest and path.endswith(suffix):
                found, longest = api, len(suffix)
    return found


def detect(obj: object = None, *, route: str | None = None) -> Api | None:
    """The reader for a response, from its first object and/or the request's route.

    With an object, the object decides, and a route that names another API makes it not ours
    (the host answered something other than what was asked). Without one (a stream, before its
    first event), the route decides. `None`: not ours, pass through untouched.
    """
    by_route = kind_of_route(route) if route is not None else None
    if obj is None:
        return by_route
    by_object = kind_of(obj)
    if by_object is None or (by_route is not None and by_route != by_object):
        return None
    return by_object


def reader_for(kind: Api, *, stream: bool = True, max_depth: int = MAX_DEPTH) -> Reader:
    """A new reader for one response. `stream` says whether the body is SSE; it matters only for
    legacy completions, whose chunks and whole bodies share one `object`. `max_depth`: the data it
    decodes nested deeper is no answer (`decode_data`)."""
    reader = spec_for(kind).reader(stream)
    reader.max_depth = max_depth
    return reader


__all__ = [
    "detect",
    "kind_of",
    "kind_of_route",
    "reader_for",
]
