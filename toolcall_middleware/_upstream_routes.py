"""Which API routes the upstream serves, learnt without generating anything.

An empty JSON object POSTed to a route: one the upstream serves rejects it (400, 422: no `model`,
no `messages`), one it lacks answers 404 or 405. `serve` probes each API's route at start
(`probe_sync`); by default a missing Responses or Messages route is then served through the Chat
bridge (`with_default_bridges`; `--bridge` pins a choice instead), and the start-up route map
(`route_map`) says where each API goes. The proxy probes a route again when it answers a request
404 or 405 (`RouteMap.recheck`: vLLM also answers 404 for an unknown model, so the answer alone
does not say the route is gone), and `/readyz` probes the routes in use (`RouteMap.problems`).

```python
routes = RouteMap.of(config)                  # the host path of each API, and which are in use
routes.served = probe_sync(url_for, routes)   # {"chat": True, "responses": False, "messages": None}
config = with_default_bridges(config, routes.served)
```
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from .config import ToolCallConfig
from .core._api import APIS, Api, spec_for

PROBE_BODY = b"{}"
MISSING = frozenset({404, 405})
DEFAULT_BRIDGES: dict[Api, str] = {"responses": "responses-to-chat", "messages": "messages-to-chat"}
BRIDGES = ("responses-to-chat", "messages-to-chat", "chat-to-messages", "responses-to-messages")
Served = dict[Api, "bool | None"]  # per API: served, missing, or not known (no answer)


def rewritten_apis() -> list[Api]:
    """The APIs a host may serve whose answers the middleware rewrites (legacy completions carries
    no tool calls; AG-UI is no host's API, and goes to the host in another: `client_only_apis`)."""
    return [api for api in APIS if spec_for(api).output is not None and spec_for(api).host_api is None]


def client_only_apis() -> list[Api]:
    """The APIs only clients speak (AG-UI): served through a route of another API of the host."""
    return [api for api in APIS if spec_for(api).host_api is not None]


def host_path(config: ToolCallConfig, api: Api) -> str:
    """The path the host gets for requests in `api`: its first route, or its bridge route."""
    prefix = config.route_prefixes[0] if config.route_prefixes else ""
    bridged = config.bridge_routes.get(api) if api in ("chat", "messages") else None
    return prefix + (bridged or config.routes_for(api)[0])


def served_by(response: httpx.Response) -> bool:
    return response.status_code not in MISSING


async def probe(client: httpx.AsyncClient, url: httpx.URL, timeout: float) -> bool | None:
    """Whether the upstream serves `url` (None: it did not answer, or failed)."""
    try:
        response = await client.post(url, content=PROBE_BODY, headers=_JSON, timeout=timeout)
    except httpx.HTTPError:
        return None
    return served_by(response) if response.status_code < 500 else None


def probe_sync(url_for: Callable[[bytes], httpx.URL], routes: RouteMap, timeout: float = 5.0) -> Served:
    """Each API's route probed once, in turn (at start, before the server runs). An upstream that
    cannot be reached is not asked again for the next route: all are then unknown (`None`)."""
    served: Served = dict.fromkeys(routes.paths)
    with httpx.Client(timeout=timeout, trust_env=False, follow_redirects=False) as client:
        for api, path in routes.paths.items():
            try:
                response = client.post(url_for(path.encode()), content=PROBE_BODY, headers=_JSON)
            except httpx.TransportError:
                break  # (down, or silent: the routes are learnt when it answers a request)
            except httpx.HTTPError:
                continue
            served[api] = served_by(response) if response.status_code < 500 else None
    return served


def with_default_bridges(config: ToolCallConfig, served: Served) -> ToolCallConfig:
    """`config` with a missing Responses or Messages route served through the Chat bridge, when
    the upstream serves Chat and no `bridge` was chosen (a chosen one is kept as it is)."""
    if config.bridge or served.get("chat") is not True:
        return config
    bridges = {
        name
        for api, name in DEFAULT_BRIDGES.items()
        if served.get(api) is False and not (api == "responses" and config.compaction == "host")
    }
    return config.model_copy(update={"bridge": frozenset(bridges)}) if bridges else config


def remedy(api: Api, served: Served) -> str:
    """What would serve a request in `api` whose route the upstream lacks: a bridge flag to a
    route it serves, or a word on the upstream URL when it serves none."""
    for name in BRIDGES:
        client, target = name.split("-to-")
        if client == api and served.get(target) is True:  # type: ignore[call-overload]
            return f"--bridge {name} would serve it through the upstream's {target} route"
    return "it serves none of the routes a bridge could use: is --upstream the right URL?"


@dataclass
class RouteMap:
    """The host path of each API (`paths`), which of them requests go to (`in_use`), and what the
    upstream was last found to serve (`served`)."""

    paths: dict[Api, str]
    in_use: frozenset[Api]
    served: Served = field(default_factory=dict)
    # Called when a probe finds that `served` changed (`serve` bridges anew, and sets `in_use`).
    on_change: Callable[[], None] | None = None

    @classmethod
    def of(cls, config: ToolCallConfig) -> RouteMap:
        apis = rewritten_apis()
        return cls({api: host_path(config, api) for api in apis}, frozenset(config.upstream_api(a) for a in apis))

    def api_at(self, path: str) -> Api | None:
        for api, own in self.paths.items():
            if path.rstrip("/") == own:
                return api
        return None

    def missing_message(self, api: Api, upstream: str) -> str:
        said = f"The upstream {upstream} does not serve POST {self.paths[api]}"
        if api not in self.in_use:  # bridged since: the next request goes another way
            return f"{said}: from now on such requests go through the bridge to a route it serves; send it again."
        return f"{said}: {remedy(api, self.served)}."

    def _learn(self, api: Api, found: bool | None) -> None:
        if found is None or self.served.get(api) is found:
            return
        self.served[api] = found
        if self.on_change is not None:
            self.on_change()

    async def recheck(
        self, client: httpx.AsyncClient, url_for: Callable[[bytes], httpx.URL], api: Api, timeout: float
    ) -> bool:
        """A request to `api`'s route was answered 404 / 405: probe it again; whether it is gone.
        A route gone, the routes not known yet (the upstream was down at start) are probed too,
        so that a bridge to one of them can be chosen."""
        found = await probe(client, url_for(self.paths[api].encode()), timeout)
        if found is False:
            for other in [other for other in self.paths if other != api and self.served.get(other) is None]:
                self.served[other] = await probe(client, url_for(self.paths[other].encode()), timeout)
        self._learn(api, found)
        return found is False

    async def problems(
        self, client: httpx.AsyncClient, url_for: Callable[[bytes], httpx.URL], timeout: float
    ) -> list[str]:
        """What `/readyz` says of the routes in use: each that answers the probe 404 / 405 (a route
        found gone may be bridged at once, `on_change`: then the routes in use are probed anew)."""
        probed: dict[Api, bool | None] = {}
        for _ in range(2):
            in_use = self.in_use
            for api in sorted(in_use - probed.keys()):
                probed[api] = await probe(client, url_for(self.paths[api].encode()), timeout)
                self._learn(api, probed[api])
            if self.in_use == in_use:
                break
        missing = sorted(api for api in self.in_use if probed.get(api) is False)
        return [f"POST {self.paths[api]} answers 404/405: {remedy(api, self.served)}" for api in missing]


def route_map(config: ToolCallConfig, routes: RouteMap, url_for: Callable[[bytes], Any]) -> str:
    """The start-up route map: where each API's route goes, bridged or missing, said once."""
    lines = []
    for api in rewritten_apis():
        asked = config.routes_for(api)[0]
        target = config.upstream_api(api)
        where = url_for(routes.paths[target].encode())
        if target != api:
            why = f"; the upstream lacks {config.routes_for(api)[0]}" if routes.served.get(api) is False else ""
            lines.append(f"  POST {asked} -> {where} (bridged: {api}-to-{target}{why})")
        elif routes.served.get(api) is False:
            lines.append(f"  POST {asked} -> {where} (404/405: the upstream lacks it; {remedy(api, routes.served)})")
        else:
            lines.append(f"  POST {asked} -> {where}")
    for api in client_only_apis():
        if not config.routes_for(api):
            continue
        target = config.upstream_api(api)
        where = url_for(routes.paths[target].encode())
        said = f"served: {api} runs as {target} requests"
        if api == "agui":  # (the one client-only API: how its runs are checked)
            from ._agui import check_said

            said += "; " + check_said()
        lines.append(f"  POST {config.routes_for(api)[0]} -> {where} ({said})")
    return "toolcall-middleware: forwarding\n" + "\n".join(lines)


_JSON = {"content-type": "application/json", "accept": "application/json"}

__all__ = ["RouteMap", "probe", "probe_sync", "remedy", "route_map", "with_default_bridges"]
