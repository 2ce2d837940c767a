"""`toolcall-middleware serve` options (flags and config file, validated by the models, errors naming
the field), `serve` without an upstream (the demo model behind the middleware) and `demo`, run as
the README runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import openai
import pytest

from tests.servers import ROOT, free_port, serve
from toolcall_middleware._env import settable
from toolcall_middleware._serve import resolve
from toolcall_middleware._serve_options import ServeOptions
from toolcall_middleware.cli import build_parser, main


def serve_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["serve", *args]) == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--max-calls", "0"], "limits.max_calls (--max-calls): Input should be greater than 0"),
        (["--max-call-bytes", "lots"], "limits.max_call_bytes (--max-call-bytes): Input should be a valid integer"),
        (["--port", "70000"], "port (--port): Input should be less than or equal to 65535"),
        (["--reasoning-field", "thoughts"], "reasoning_field (--reasoning-field): Input should be"),
        (["--profiles", "nope"], "profiles.0 (--profiles): Input should be"),
        (["--chat-routes", "v1/chat"], "chat_routes (--chat-routes): 'v1/chat' must start with '/'"),
        (["--model-dialects", "qwen3"], "model_dialects: expected KEY=VALUE, got 'qwen3'"),
        (["--model-dialects", "qwen3=nope"], "(--model-dialects): model 'qwen3' maps to unknown dialect"),
        (["--dialect", "nope"], "dialect (--dialect): unknown dialect 'nope'"),
        (["--dialect", "hermez"], "unknown dialect 'hermez'; did you mean 'hermes'?"),
        (["--upstream", "ftp://host"], "upstream: upstream 'ftp://host' must be an http:// or https:// URL"),
    ],
)
def test_bad_flags_name_the_field(capsys: pytest.CaptureFixture[str], args: list[str], field: str) -> None:
    err = serve_error(capsys, *args)
    assert "invalid configuration" in err
    assert field in err


def test_bad_config_file_names_the_field(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    toml = tmp_path / "bad.toml"
    toml.write_text('dialect = "hermes"\nstrictness = true\n[limits]\nmax_calls = -1\n')
    err = serve_error(capsys, "--config", str(toml))
    assert "strictness: Extra inputs are not permitted" in err
    assert "limits.max_calls (--max-calls): Input should be greater than 0" in err

    js = tmp_path / "bad.json"
    js.write_text(json.dumps({"port": "eighty", "strict": "maybe"}))
    err = serve_error(capsys, "--config", str(js))
    assert "port (--port): Input should be a valid integer" in err
    assert "strict (--strict): Input should be a valid boolean" in err

    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert "not valid JSON" in serve_error(capsys, "--config", str(broken))
    assert "No such file" in serve_error(capsys, "--config", str(tmp_path / "missing.toml"))


def test_a_yaml_config_file_is_told_toml_or_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """YAML was read as TOML, and its error spoke only of TOML."""
    for name in ("toolcall.yaml", "toolcall.yml"):
        yaml = tmp_path / name
        yaml.write_text("dialect: hermes\nstrict: true\n")
        assert "a config file is TOML or JSON (.toml, .json), not YAML" in serve_error(capsys, "--config", str(yaml))
    other = tmp_path / "toolcall.conf"
    other.write_text("dialect: hermes\n")
    assert "(a config file is TOML or JSON)" in serve_error(capsys, "--config", str(other))


def test_flags_override_the_config_file(tmp_path: Path) -> None:
    toml = tmp_path / "toolcall.toml"
    toml.write_text(
        'upstream = "http://127.0.0.1:8000"\nport = 9000\ndialect = "qwen3_coder"\nstrict = true\n'
        'chat_routes = ["/v1/chat/completions", "/api/chat"]\n'
        '[model_dialects]\n"my-model" = "kimi_k2"\n[limits]\nmax_calls = 4\nmax_call_bytes = 1000\n'
    )
    args = build_parser().parse_args(
        ["serve", "--config", str(toml), "--no-strict", "--max-calls", "8", "--port", "9001", "--thinking"]
    )
    options, config = resolve(args)
    assert options == ServeOptions(upstream="http://127.0.0.1:8000", port=9001)
    assert config.dialect == "qwen3_coder" and config.strict is False and config.thinking is True
    assert config.chat_routes == ("/v1/chat/completions", "/api/chat")
    assert config.model_dialects == {"my-model": "kimi_k2"}
    assert (config.limits.max_calls, config.limits.max_call_bytes) == (8, 1000)
    assert config.repair is True  # untouched options keep their defaults


def test_forward_tools_leaves_the_prompt_alone_unless_told() -> None:
    def exchange_settings(*flags: str) -> tuple[bool, bool]:
        from toolcall_middleware.core._forwarded import injects_manifest

        _, config = resolve(build_parser().parse_args(["serve", *flags]))
        return config.forward_tools, injects_manifest(config)

    assert exchange_settings() == (False, True)
    assert exchange_settings("--forward-tools") == (True, False)
    assert exchange_settings("--forward-tools", "--inject-manifest") == (True, True)
    assert exchange_settings("--no-inject-manifest") == (False, False)


def test_every_config_option_has_a_flag() -> None:
    """The flags are derived from the model: every field but the callback is settable."""
    from toolcall_middleware.config import Limits, ToolCallConfig

    text = build_parser().parse_args(["serve"])  # parses with no flags
    assert text.func.__name__ == "cmd_serve"
    help_text = subprocess.run(
        [sys.executable, "-m", "toolcall_middleware.cli", "serve", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    fields = [*ServeOptions.model_fields, *ToolCallConfig.model_fields, *Limits.model_fields]
    flags = {o.path.rsplit(".", 1)[-1]: o.flag for model in (ServeOptions, ToolCallConfig) for o in settable(model)}
    for name in fields:
        if name in ("limits", "on_report"):
            continue
        named = {"api_keys": "--api-key"}.get(name, "--" + name.replace("_", "-"))  # (repeated: one key each)
        assert flags[name] == named and named + " " in help_text, name


def test_serve_without_upstream_serves_the_demo_model() -> None:
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "toolcall_middleware.cli",
        "serve",
        "--dialect",
        "qwen3_coder",
        "--port",
        str(port),
    ]
    with serve([*command, "--log-level", "warning"], port) as base:
        sdk = openai.OpenAI(base_url=base + "/v1", api_key="test", max_retries=0)
        tools: Any = [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "parameters": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                    },
                },
            }
        ]
        answer = sdk.chat.completions.create(
            model="any",
            messages=[{"role": "user", "content": "Weather in Lima for 5 days?"}],
            tools=tools,
        )
    call = (answer.choices[0].message.tool_calls or [])[0]
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Lima", "days": 5}  # typed by the schema
    assert answer.choices[0].message.model_extra["reasoning_content"]


@pytest.mark.parametrize(
    ("dialect", "marker"), [("hermes", "<tool_call>"), ("kimi_k2", "<|tool_calls_section_begin|>")]
)
def test_demo_command(dialect: str, marker: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolcall_middleware.cli", "demo", "--dialect", dialect],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "raw model output" in out and marker in out  # what the model wrote
    assert 'tool_call: get_weather({"city": "Paris"})' in out  # what the chat client received
    assert 'function_call: get_weather({"city": "Paris"})' in out  # what the responses client received
    assert out.count("get_weather returned: Sunny, 21 C in Paris") >= 4  # raw answer and received answer, both APIs
    assert out.rstrip().endswith("OK: both APIs completed the tool loop with real tool calls.")


def test_example_config_file_is_valid() -> None:
    args = build_parser().parse_args(["serve", "--config", str(ROOT / "examples" / "toolcall.toml"), "--no-strict"])
    options, config = resolve(args)
    assert options.upstream == "http://localhost:8000" and options.port == 8080
    assert config.dialect == "qwen3_coder" and config.strict is False
    assert config.dialect_for("moonshotai/Kimi-K2.6") == "kimi_k2" and config.limits.max_calls == 16
