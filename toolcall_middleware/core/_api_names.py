"""The names of the wire APIs the library speaks (`Api`), on the core's ground floor.

The readers of a host's answer and the emitters name the API they are of; what each API is
(`ApiSpec`) is declared above them, in `core._api`, which names them in turn. `core._api` exports
these names too.
"""

from __future__ import annotations

from typing import Literal, get_args

Api = Literal["chat", "responses", "completions", "messages", "agui"]

APIS: tuple[Api, ...] = get_args(Api)


__all__ = ["APIS", "Api"]
