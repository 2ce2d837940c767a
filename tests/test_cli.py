"""The `toolcall-middleware` command, run on the bundled samples as the README shows it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolcall_middleware import __version__
from toolcall_middleware.cli import build_parser, main

SAMPLES = Path(__file__).parent.parent / "examples" / "samples"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_parse_kimi_sample(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "parse", "--model", "moonshotai/Kimi-K2.6", str(SAMPLES / "kimi_k2.txt"))
    assert code == 0
    result = json.loads(out)
    assert result["dialect"] == "kimi_k2"
    assert result["content"] == "Let me look both up."
    assert result["reasoning"] == "The user wants the weather in Paris and the local time."
    assert [(c["id"], c["name"], c["arguments"]) for c in result["tool_calls"]] == [
        ("functions.get_weather:0", "get_weather", {"city": "Paris", "unit": "celsius"}),
        ("functions.get_time:1", "get_time", {"timezone": "Europe/Paris"}),
    ]
    assert result["finish_reason"] == "tool_calls"


def test_parse_with_tools_types_values(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "parse",
        "--model",
        "Qwen/Qwen3-Coder-30B-A3B-Instruct",
        "--tools",
        str(SAMPLES / "qwen3_coder.tools.json"),
        str(SAMPLES / "qwen3_coder.txt"),
    )
    assert code == 0
    call = json.loads(out)["tool_calls"][0]
    assert call["name"] == "set_alarm"
    assert call["arguments"] == {"hour": 7, "label": "007", "repeat": True}


def test_parse_gpt_oss_sample(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "parse", "--model", "openai/gpt-oss-20b", str(SAMPLES / "gpt_oss.txt"))
    result = json.loads(out)
    assert code == 0 and result["dialect"] == "gpt_oss"
    assert result["reasoning"] == "The user wants the weather in Oslo; call the tool."
    assert result["tool_calls"][0]["arguments"] == {"city": "Oslo"}


def test_stream_prints_events_that_merge_to_the_whole_parse(capsys: pytest.CaptureFixture[str]) -> None:
    sample = str(SAMPLES / "hermes.txt")
    code, out, _ = run(capsys, "parse", "--model", "Qwen/Qwen3-8B", "--stream", "--chunk", "3", sample)
    assert code == 0
    events = [json.loads(line) for line in out.splitlines()]
    assert len(events) > 10
    text = "".join(e["text"] for e in events if e["type"] == "text")
    reasoning = "".join(e["text"] for e in events if e["type"] == "reasoning")
    ends = [e for e in events if e["type"] == "tool_call_end"]
    _, whole, _ = run(capsys, "parse", "--model", "Qwen/Qwen3-8B", sample)
    result = json.loads(whole)
    assert text == result["content"] and reasoning == result["reasoning"]
    assert [json.loads(e["arguments"]) for e in ends] == [c["arguments"] for c in result["tool_calls"]]


def test_standard_input_and_errors() -> None:
    ok = subprocess.run(
        [sys.executable, "-m", "toolcall_middleware.cli", "parse", "--dialect", "hermes", "-"],
        input='Hi <tool_call>{"name": "f", "arguments": {}}</tool_call>',
        capture_output=True,
        text=True,
        check=False,
    )
    assert ok.returncode == 0 and json.loads(ok.stdout)["tool_calls"][0]["name"] == "f"
    bad = subprocess.run(
        [sys.executable, "-m", "toolcall_middleware.cli", "parse", "--model", "acme/unknown", "-"],
        input="x",
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2 and "no dialect is known" in bad.stderr and "hermes" in bad.stderr
    # Neither --dialect nor --model: `auto` reads each format by its markers (this was an error).
    none = subprocess.run(
        [sys.executable, "-m", "toolcall_middleware.cli", "parse", "-"],
        input='Hi <tool_call>{"name": "f", "arguments": {}}</tool_call>',
        capture_output=True,
        text=True,
    )
    assert none.returncode == 0 and none.stderr == ""
    assert json.loads(none.stdout)["dialect"] == "auto" and json.loads(none.stdout)["tool_calls"][0]["name"] == "f"


def test_parse_into_a_pipe_that_closes_ends_quietly() -> None:
    """`parse … | head` used to end in a BrokenPipeError traceback once head had its lines."""
    text = "Hello there. " * 20000
    command = f"{sys.executable} -m toolcall_middleware.cli parse --dialect hermes --stream --chunk 1 - | head -n 2"
    done = subprocess.run(["sh", "-c", command], input=text, capture_output=True, text=True, timeout=120)
    assert len(done.stdout.splitlines()) == 2
    assert done.stderr == ""


@pytest.mark.parametrize(
    ("name", "pointed_at"),
    [
        ("qwen", "its dialects are hermes, qwen3_coder"),
        ("Qwen/Qwen3-8B", "is a model name, whose dialect is 'hermes'"),
        ("deepseek", "deepseek_v3, deepseek_v31"),
    ],
)
def test_a_family_or_model_name_as_dialect_is_pointed_at_its_dialects(
    capsys: pytest.CaptureFixture[str], name: str, pointed_at: str
) -> None:
    code, _, err = run(capsys, "parse", "--dialect", name, str(SAMPLES / "kimi_k2.txt"))
    assert code == 2 and pointed_at in err and "model_dialects" in err


def test_dialects_command_lists_every_dialect(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "dialects")
    names = [line.split()[0] for line in out.splitlines()]
    assert code == 0 and "hermes" in names and "gpt_oss" in names and "auto" in names and len(names) >= 20


def test_the_bare_command_prints_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: toolcall-middleware") and "serve" in out and "parse" in out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"toolcall-middleware {__version__}"


@pytest.mark.parametrize(
    "argv",
    [
        ["serve", "--arguments-stream", "incremental"],  # an abbreviation of --arguments-streaming
        ["parse", "-", "--dialect", "hermes", "--chu", "3"],
    ],
)
def test_abbreviated_flags_are_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2 and "unrecognized arguments" in capsys.readouterr().err


def test_every_flag_has_help_and_shows_its_default() -> None:
    for command in ("serve", "parse", "demo"):
        sub = build_parser()._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
        for action in sub._actions:
            if action.option_strings and action.dest != "help":
                assert action.help, (command, action.option_strings)
        text = " ".join(sub.format_help().split())  # (argparse wraps lines)
        if command == "serve":
            assert "(default: 8080)" in text and "(default: 128)" in text
            assert "(default: /v1/messages, /messages)" in text
        if command == "parse":
            assert "(default: 4)" in text


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["parse", "missing.txt", "--dialect", "hermes"], "parse: file missing.txt: No such file or directory"),
        (["parse", "-", "--dialect", "hermez"], "did you mean 'hermes'?"),
        (["parse", "-", "--dialect", "hermes", "--tools", "README.md"], "--tools README.md: not JSON"),
        (["serve", "--dialect", "qwen3coder"], "did you mean 'qwen3_coder'?"),
    ],
)
def test_mistakes_are_one_line_and_exit_2(argv: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_demo_without_its_extra_names_it(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # what an environment without the SDK raises
    assert main(["demo"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'toolcall-middleware[demo]'" in err and "Traceback" not in err
