"""AG-UI's `ApiSpec`: a client-side API only. Its runs go to the host as Chat Completions requests
(`host_api`, translated by `run_to_chat`), and the host's answer comes back as AG-UI events."""

from __future__ import annotations

from ..._api import ApiSpec
from ...inbound._base import ReaderBase
from ..chat._reader import ChatReader
from ._output import AGUIOutput, agui_error, whole_run
from ._request import check_run_input, run_to_chat

PATH = "/v1/agui"


def _reader(stream: bool) -> ReaderBase:
    return ChatReader()  # (never asked: no host answers in AG-UI; its runs are read as Chat answers)


SPEC = ApiSpec(
    name="agui",
    path=PATH,
    routes=(PATH,),
    route_suffixes=("/agui",),
    recognizes=lambda obj: False,  # no host answers in AG-UI
    reader=_reader,
    error_body=agui_error,
    check_request=check_run_input,
    output=AGUIOutput,
    whole=whole_run,
    host_api="chat",
    to_host=run_to_chat,
)

__all__ = ["PATH", "SPEC"]
