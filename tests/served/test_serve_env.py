"""`serve` configured from the environment (`TOOLCALL_<OPTION>`): each option read from its
variable, flags over the environment over the config file, errors naming the variable, and the
same variables in process through `ToolCallConfig.from_env`."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from tests.served.test_proxy import CHAT_TOOLS, QUESTION
from tests.servers import ROOT, free_port, serve, uvicorn
from toolcall_middleware._env import settable
from toolcall_middleware._serve import resolve
from toolcall_middleware._serve_options import ServeOptions
from toolcall_middleware.cli import build_parser, main
from toolcall_middleware.config import Limits, ToolCallConfig

SERVE = [sys.executable, "-m", "toolcall_middleware.cli", "serve"]
WEATHER: Any = {"name": "get_weather", "input_schema": CHAT_TOOLS[0]["function"]["parameters"]}


@pytest.fixture(scope="module")
def raw_model() -> Iterator[str]:
    command, port = uvicorn("examples.demo_model:app")
    with serve(["env", "DEMO_DIALECT=kimi_k2", *command], port) as base:
        yield base


def test_serve_takes_every_setting_from_the_environment(raw_model: str, tmp_path: Path) -> None:
    """The upstream, the port, the dialect, a list, a limit and the log level, each from its
    variable; the config file under the environment, a flag over both."""
    port = free_port()
    toml = tmp_path / "toolcall.toml"
    toml.write_text(f'port = {free_port()}\ndialect = "hermes"\nstrict = true\n[limits]\nmax_calls = 1\n')
    env = [
        f"TOOLCALL_UPSTREAM={raw_model}",
        f"TOOLCALL_PORT={port}",  # over the file's port: the server answers here
        "TOOLCALL_DIALECT=nope",  # under the flag: never validated
        "TOOLCALL_BRIDGE=messages-to-chat",
        "TOOLCALL_MAX_CALLS=4",
        "TOOLCALL_log_level=warning",  # (names in any case)
        f"TOOLCALL_CONFIG={toml}",
    ]
    with serve(["env", *env, *SERVE, "--dialect", "kimi_k2", "--no-strict"], port) as base:
        chat = openai.OpenAI(base_url=base + "/v1", api_key="test", max_retries=0).chat.completions.create(
            model="demo", messages=[{"role": "user", "content": QUESTION}], tools=CHAT_TOOLS
        )
        messages = anthropic.Anthropic(base_url=base, api_key="test", max_retries=0).messages.create(
            model="demo", max_tokens=200, messages=[{"role": "user", "content": QUESTION}], tools=[WEATHER]
        )
    call = (chat.choices[0].message.tool_calls or [])[0]
    assert (call.function.name, json.loads(call.function.arguments)) == ("get_weather", {"city": "Paris"})
    used = [block for block in messages.content if block.type == "tool_use"]  # bridged to the chat upstream
    assert [(block.name, block.input) for block in used] == [("get_weather", {"city": "Paris"})]


def test_each_layer_over_the_one_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    toml = tmp_path / "toolcall.toml"
    toml.write_text('upstream = "http://file:1"\nport = 9000\ndialect = "hermes"\n[limits]\nmax_calls = 2\n')
    monkeypatch.setenv("TOOLCALL_PORT", "9001")
    monkeypatch.setenv("TOOLCALL_MAX_CALLS", "3")
    monkeypatch.setenv("TOOLCALL_MAX_DEPTH", "40")
    monkeypatch.setenv("TOOLCALL_PROFILES", "required_action, extensions")
    monkeypatch.setenv("TOOLCALL_MODEL_DIALECTS", "my-model=kimi_k2,other=qwen3_coder")
    monkeypatch.setenv("TOOLCALL_CHAT_ROUTES", '["/v1/chat/completions", "/api/chat"]')  # or JSON
    monkeypatch.setenv("TOOLCALL_STRICT", "true")
    monkeypatch.setenv("TOOLCALL_GENERATION_PROMPT", "")  # empty: unset
    args = build_parser().parse_args(["serve", "--config", str(toml), "--max-calls", "5", "--no-strict"])
    options, config = resolve(args)
    assert options == ServeOptions(upstream="http://file:1", port=9001)
    assert (config.limits.max_calls, config.limits.max_depth) == (5, 40)
    assert config.profiles == {"required_action", "extensions"} and config.strict is False
    assert config.model_dialects == {"my-model": "kimi_k2", "other": "qwen3_coder"}
    assert config.chat_routes == ("/v1/chat/completions", "/api/chat") and config.generation_prompt is None
    assert config.dialect == "hermes"


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("TOOLCALL_MAX_CALLS", "0", "limits.max_calls (TOOLCALL_MAX_CALLS): Input should be greater than 0"),
        ("TOOLCALL_PORT", "eighty", "port (TOOLCALL_PORT): Input should be a valid integer"),
        ("TOOLCALL_STRICT", "maybe", "strict (TOOLCALL_STRICT): Input should be a valid boolean"),
        ("TOOLCALL_PROFILES", "nope", "profiles.0 (TOOLCALL_PROFILES): Input should be"),
        ("TOOLCALL_MODEL_DIALECTS", "qwen3", "TOOLCALL_MODEL_DIALECTS: expected KEY=VALUE pairs, got 'qwen3'"),
        ("TOOLCALL_CHAT_ROUTES", "[oops", "TOOLCALL_CHAT_ROUTES: "),
        ("TOOLCALL_API_KEYS", "a, ,b", ""),  # (empty items dropped: valid)
    ],
)
def test_a_bad_variable_is_named(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, variable: str, value: str, said: str
) -> None:
    monkeypatch.setenv(variable, value)
    if not said:
        options, _ = resolve(build_parser().parse_args(["serve"]))
        assert [key.get_secret_value() for key in options.api_keys] == ["a", "b"]
        return
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert "invalid configuration" in err and said in err


def test_a_flag_is_named_for_its_own_value(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLCALL_MAX_CALLS", "3")
    assert main(["serve", "--max-calls", "0"]) == 2
    assert "limits.max_calls (--max-calls): Input should be greater than 0" in capsys.readouterr().err


def test_help_names_every_variable() -> None:
    help_text = subprocess.run(
        [*SERVE, "--help"], cwd=ROOT, capture_output=True, text=True, check=True, env={"COLUMNS": "200"}
    ).stdout
    for model in (ServeOptions, ToolCallConfig):
        for option in settable(model):
            assert f"[env: {option.env}]" in " ".join(help_text.split()), option.env
    assert "TOOLCALL_CONFIG" in help_text and "flags override the environment" in " ".join(help_text.split())


def test_a_misspelt_variable_is_pointed_out() -> None:
    done = subprocess.run(
        ["env", "TOOLCALL_DIALCT=hermes", "TOOLCALL_PORT=-1", *SERVE], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 2  # (the port refused: the server never starts)
    assert "TOOLCALL_DIALCT is set, but no option reads it (did you mean TOOLCALL_DIALECT?)" in done.stderr
    assert "port (TOOLCALL_PORT): Input should be greater than or equal to 0" in done.stderr


def test_the_middleware_reads_the_same_variables_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLCALL_DIALECT", "kimi_k2")
    monkeypatch.setenv("TOOLCALL_MAX_CALLS", "3")
    monkeypatch.setenv("TOOLCALL_BRIDGE", "responses-to-chat")
    monkeypatch.setenv("TOOLCALL_UPSTREAM", "http://ignored:1")  # a serve option: not the middleware's
    config = ToolCallConfig.from_env(dialect="hermes", limits={"max_depth": 40})
    assert config.dialect == "hermes"  # given in code: it wins
    assert config.limits == Limits(max_calls=3, max_depth=40)
    assert config.bridge == {"responses-to-chat"}
    assert ToolCallConfig() == ToolCallConfig.model_validate({})  # nothing else reads the environment
    assert ToolCallConfig().dialect is None and ToolCallConfig().limits.max_calls == Limits().max_calls
