"""`ServeOptions`: the settings of `toolcall-middleware serve` itself, beside `ToolCallConfig`.

The command reads them (`serve.py`) and runs the app by them (`serve_workers.py`); both import
them from here.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator


class ServeOptions(BaseModel):
    """The server's own settings (the rest of the configuration is `ToolCallConfig`)."""

    # (an error never repeats the value given: the upstream URL may carry a password)
    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)

    upstream: str | None = Field(None, description="the endpoint to proxy to; none: serve the built-in demo model")
    host: str = Field("127.0.0.1", description="the address to listen on")
    port: int = Field(8080, ge=0, le=65535, description="the port to listen on")
    timeout: float = Field(10.0, gt=0, description="seconds to connect to the upstream before answering 504")
    read_timeout: float | None = Field(
        600.0, gt=0, description="seconds to wait for each upstream read before answering 504"
    )
    log_level: Literal["critical", "error", "warning", "info", "debug"] = Field(
        "info", description="the server's log level, and the middleware's"
    )
    data_dir: str | None = Field(
        None,
        description="where the default store (SQLite, state.db) lives; none: $XDG_DATA_HOME/toolcall-middleware "
        "or ~/.local/share/toolcall-middleware",
    )
    workers: int = Field(
        1, ge=1, description="worker processes serving the one port; they share the store (SQLite or Redis)"
    )
    shutdown_timeout: float = Field(
        25.0,
        gt=0,
        description="seconds a stop (SIGTERM) lets the answers under way finish; the rest end in the API's error",
    )
    api_keys: tuple[SecretStr, ...] = Field(
        (),
        description="keys a client must send (`Authorization: Bearer KEY`; on Messages routes `x-api-key` too), "
        "else a 401; /healthz, /readyz and /metrics stay open; none: no key asked",
        json_schema_extra={"flag": "--api-key"},
    )
    upstream_api_key: SecretStr | None = Field(
        None, description="the credential sent upstream in place of the client's (`Authorization` or `x-api-key`)"
    )

    @field_validator("api_keys", "upstream_api_key")
    @classmethod
    def _whole_keys(cls, value: Any) -> Any:
        keys = value if isinstance(value, tuple) else (value,) if value is not None else ()
        for key in keys:  # (never repeated in the message)
            text = key.get_secret_value()
            if not text or text != text.strip() or any(c in text for c in "\r\n,"):
                raise ValueError("a key is empty, or has spaces around it, a comma or a line break in it")
        return value


__all__ = ["ServeOptions"]
