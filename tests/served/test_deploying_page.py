"""The Deploying page's commands, and the README's `serve` ones, run as written.

Every line of every shell block of docs/deploying.md (and the README's `serve` / `demo` lines)
is either run here or listed in `NOT_RUN` with the reason; a line added to a page later fails
`test_every_command_line_is_run_or_listed` until it is one or the other. A line is run as a real
process, as typed, with what names the reader's machines pointed at loopback: the upstream (the
demo model, speaking the dialect the line asks for, behind a key check when the line gives the
upstream a key), `--port` (a free one), a Redis (a real `redis-server`), an OTLP collector (a
receiver that decodes what it is sent); the block's `export`s are its environment. Then what the
page says the line gives is checked through the official `openai` SDK: the probes answer 200, a
chat request with tools gets real `tool_calls` from the upstream, keys refuse a request without
one, `--log-format json` writes only JSON lines, `--workers N` runs N processes that all serve and
whose `/metrics` is their sum, two machines on one Redis share a stored response, `--tracing` sends the exchange's span.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from tests.docs_snippets import ROOT, blocks
from tests.served.otlp_receiver import otlp_receiver
from tests.served.test_proxy import CHAT_TOOLS, QUESTION
from tests.served.test_serve_workers import exchanges_counted, workers_of
from tests.servers import free_port, output_of, running, serve, uvicorn
from tests.store.redis_server import redis_server

DEPLOYING = ROOT / "docs" / "deploying.md"
README = ROOT / "README.md"

# Lines not run here, each with why. Nothing on the pages needs a Docker daemon or a Kubernetes
# cluster today; a line that does goes here, saying so.
NOT_RUN = {
    "pip install '.[serve]'": "installs into the reader's environment: tests/test_install.py runs it as written",
    "pip install 'toolcall-middleware[serve]'": "the published name of the same install, which "
    "tests/test_install.py runs from the checkout and from the wheel",
    "pip install '.[serve,otlp]'": "installs into the reader's environment; test_docs.py checks the extras "
    "exist, and the tracing line after it runs here with them installed",
    "make demo": "sets up .venv, then runs `toolcall-middleware demo`, which "
    "tests/served/test_serve_command.py::test_demo_command runs",
    "make test": "the whole suite and the docs build, which this test is part of",
}
# What the runner points at loopback or checks, by flag and by variable: a line with any other
# says something this test does not check yet, and fails until it does.
CHECKED_FLAGS = {"--upstream", "--port", "--dialect", "--workers", "--store", "--api-key", "--log-format", "--tracing"}
CHECKED_VARIABLES = {
    "TOOLCALL_UPSTREAM",
    "TOOLCALL_DIALECT",
    "TOOLCALL_MAX_CALLS",  # (read, so not warned of: checked by the absence of the warning)
    "TOOLCALL_API_KEYS",
    "TOOLCALL_UPSTREAM_API_KEY",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_SERVICE_NAME",
}


@dataclass(frozen=True)
class Line:
    """A command line of a page's shell block, with the variables its block exported before it."""

    where: str
    text: str
    exports: tuple[tuple[str, str], ...]

    @property
    def words(self) -> list[str]:
        return shlex.split(self.text)

    def flag(self, name: str) -> str | None:
        words = self.words
        return words[words.index(name) + 1] if name in words[:-1] else None

    def setting(self, flag: str, variable: str) -> str | None:
        """An option as the line sets it: its flag, else the exported variable."""
        return self.flag(flag) or dict(self.exports).get(variable)

    def __str__(self) -> str:
        return f"{self.where}: {self.text}"


def _serves(words: list[str]) -> bool:
    return words[:2] in (["toolcall-middleware", "serve"], ["toolcall-middleware", "demo"], ["make", "demo"]) or (
        words[0] in ("uvicorn", "gunicorn")
    )


def command_lines() -> list[Line]:
    """Every line of the Deploying page's shell blocks; the README's that serve, with the blocks
    they are in (the rest of the README's are run by test_install.py and test_docs.py)."""
    found: list[Line] = []
    for page in (DEPLOYING, README):
        for block in blocks(page):
            if block.lang != "sh":
                continue
            lines = [shlex.split(raw, comments=True) for raw in block.code.splitlines()]
            lines = [words for words in lines if words]
            if page == README and not any(_serves(words) for words in lines):
                continue
            exports: dict[str, str] = {}
            for words in lines:
                if words[0] == "export":
                    exports.update(word.split("=", 1) for word in words[1:])  # type: ignore[misc]
                else:
                    found.append(Line(str(block), shlex.join(words), tuple(exports.items())))
    return found


LINES = command_lines()
RUN = [line for line in LINES if line.text not in NOT_RUN]


def test_every_command_line_is_run_or_listed() -> None:
    texts = {line.text for line in LINES}
    assert not set(NOT_RUN) - texts, f"listed, but on no page any more: {set(NOT_RUN) - texts}"
    for line in RUN:
        assert line.words[:2] == ["toolcall-middleware", "serve"], f"{line}: neither run here nor listed in NOT_RUN"
        unchecked = {w for w in line.words if w.startswith("--")} - CHECKED_FLAGS
        unchecked |= {name for name, _ in line.exports} - CHECKED_VARIABLES
        assert not unchecked, f"{line}: nothing here checks what {sorted(unchecked)} gives"
    assert {"--workers", "--store", "--log-format", "--tracing"} <= {w for line in RUN for w in line.words}


# -- the machines the pages name, on loopback ---------------------------------------------------


@pytest.fixture(scope="module")
def upstreams() -> Iterator[Any]:
    """`upstream(dialect, key)`: the base URL of the demo model writing `dialect`'s markup, asking
    `key` of its clients when one is given (as `vllm serve --api-key` does); started once each."""
    with contextlib.ExitStack() as stack:
        started: dict[tuple[str, str | None], str] = {}

        def upstream(dialect: str, key: str | None) -> str:
            if (dialect, key) not in started:
                app = "tests.served.keyed_upstream:app" if key else "examples.demo_model:app"
                command, port = uvicorn(app)
                variables = [f"DEMO_DIALECT={dialect}", *([f"UPSTREAM_KEY={key}"] if key else [])]
                started[dialect, key] = stack.enter_context(serve(["env", *variables, *command], port))
            return started[dialect, key]

        yield upstream


@dataclass
class Served:
    base: str
    proc: subprocess.Popen[bytes]
    output: list[str]  # its standard output and error, once stopped


@dataclass
class Machines:
    upstream: str
    redis: str | None
    collector: str | None


def _at(url: str, machine: str) -> str:
    """`url` with its scheme, host and port those of `machine` (its path kept: `/v1` stays)."""
    return re.sub(r"^https?://[^/]+", machine, url)


@contextlib.contextmanager
def launched(line: Line, machines: Machines, tmp_path: Path) -> Iterator[Served]:
    """`line` as a process, what it names pointed at `machines`, until the block ends."""
    words = line.words
    port = free_port()
    for i, word in enumerate(words[:-1]):
        value = words[i + 1]
        if word == "--upstream":
            words[i + 1] = _at(value, machines.upstream)
        elif word == "--port":
            words[i + 1] = str(port)
        elif word == "--store" and value.startswith("redis://") and machines.redis:
            words[i + 1] = machines.redis
    if "--port" not in words:
        words += ["--port", str(port)]  # (two processes of one line may run at once: never the default)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLCALL_", "OTEL_"))}
    env["XDG_DATA_HOME"] = str(tmp_path / "data")  # (the default store's folder: this test's own)
    for name, value in line.exports:
        if name == "TOOLCALL_UPSTREAM":
            value = _at(value, machines.upstream)
        elif name == "OTEL_EXPORTER_OTLP_ENDPOINT" and machines.collector:
            value = machines.collector
        env[name] = value
    command = [str(Path(sys.executable).with_name(words[0])), *words[1:]]
    output: list[str] = []
    with running(command, port, timeout=90, env=env) as (proc, base):
        yield Served(base, proc, output)
    output.extend(output_of(proc).text(wait=10).splitlines())


# -- what the page says each line gives ---------------------------------------------------------


def _sdk(base: str, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base + "/v1", api_key=key, max_retries=0)


def _asks_a_tool(base: str, key: str, model: str) -> None:
    answer = _sdk(base, key).chat.completions.create(
        model=model, messages=[{"role": "user", "content": QUESTION}], tools=CHAT_TOOLS
    )
    calls = answer.choices[0].message.tool_calls or []
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [("get_weather", {"city": "Paris"})]
    assert answer.choices[0].finish_reason == "tool_calls"


def _probes_answer(base: str) -> None:
    for probe in ("/healthz", "/readyz"):
        answer = httpx.get(base + probe, timeout=10)
        assert answer.status_code == 200, f"{probe}: {answer.status_code} {answer.text}"


def _keys(line: Line) -> list[str]:
    given = [line.words[i + 1] for i, w in enumerate(line.words[:-1]) if w == "--api-key"]
    return given or [k for k in (dict(line.exports).get("TOOLCALL_API_KEYS") or "").split(",") if k]


def _refuses_without_a_key(base: str, keys: list[str]) -> None:
    bare = httpx.post(base + "/v1/chat/completions", json={"model": "m", "messages": []}, timeout=10)
    assert bare.status_code == 401 and bare.json()["error"]["type"], bare.text
    with pytest.raises(openai.AuthenticationError):
        _sdk(base, "sk-not-one-of-them").chat.completions.create(
            model="m", messages=[{"role": "user", "content": QUESTION}]
        )
    for key in keys:  # (each of them is let in: the answers below use the first)
        assert _sdk(base, key).models.with_raw_response.list().status_code == 200


def _all_workers_serve(served: Served, workers: int, key: str, model: str) -> None:
    """N processes serve, and `/metrics` counts what all of them did, whichever one answers it."""
    assert len(workers_of(served.proc.pid)) == workers
    for _ in range(2 * workers):  # (fresh connections, which the kernel spreads over the workers)
        _asks_a_tool(served.base, key, model)
    asked = 2 * workers + 1  # (and the first)
    assert [exchanges_counted(served.base, at_least=asked) for _ in range(workers)] == [asked] * workers


def _shared_on_one_redis(line: Line, machines: Machines, tmp_path: Path, key: str, model: str) -> None:
    """A second machine running the same line sees what the first stored."""
    with launched(line, machines, tmp_path / "one") as one, launched(line, machines, tmp_path / "two") as two:
        _probes_answer(two.base)
        first = _sdk(one.base, key).responses.create(model=model, input="Remember: Paris.")
        assert _sdk(two.base, key).responses.retrieve(first.id).id == first.id
        later = _sdk(two.base, key).responses.create(model=model, input="And then?", previous_response_id=first.id)
        assert later.previous_response_id == first.id


@pytest.mark.parametrize("line", RUN, ids=str)
def test_the_line_serves_what_the_page_says(line: Line, upstreams: Any, tmp_path: Path) -> None:
    dialect = line.setting("--dialect", "TOOLCALL_DIALECT")
    model = "Qwen/Qwen3-8B" if dialect is None else "any-model"  # (no dialect named: the model's, hermes)
    upstream_key = dict(line.exports).get("TOOLCALL_UPSTREAM_API_KEY")
    upstream = upstreams(dialect or "hermes", upstream_key)
    keys = _keys(line)
    key = keys[0] if keys else "sk-anything"
    store = line.flag("--store")
    with contextlib.ExitStack() as stack:
        redis = stack.enter_context(redis_server()) if store and store.startswith("redis://") else None
        collector = stack.enter_context(otlp_receiver()) if "--tracing" in line.words else None
        machines = Machines(upstream, redis, collector.url if collector else None)
        with launched(line, machines, tmp_path) as served:
            _probes_answer(served.base)
            _asks_a_tool(served.base, key, model)  # (from the upstream: the demo behind it speaks `dialect`)
            if keys:
                _refuses_without_a_key(served.base, keys)
            workers = int(line.flag("--workers") or 1)
            if workers > 1:
                _all_workers_serve(served, workers, key, model)
        if redis:
            _shared_on_one_redis(line, machines, tmp_path, key, model)
        if collector:  # (what was left is sent on SIGTERM)
            deadline = time.monotonic() + 10
            while not any(s.name == "toolcall.exchange" for s in collector.spans) and time.monotonic() < deadline:
                time.sleep(0.1)
            spans = [s for s in collector.spans if s.name == "toolcall.exchange"]
            assert spans and spans[0].attributes["http.route"] == "/v1/chat/completions", collector.spans
            assert spans[0].resource["service.name"] == dict(line.exports)["OTEL_SERVICE_NAME"]
    output = "\n".join(served.output)
    assert f"proxy to {_at(line.setting('--upstream', 'TOOLCALL_UPSTREAM') or '', upstream)}," in output, output
    assert "no option reads it" not in output, output  # (every variable the page exports is an option's)
    if line.flag("--log-format") == "json":
        records = [json.loads(text) for text in served.output if text.strip()]  # (each line one JSON object)
        assert all(isinstance(r, dict) for r in records)
        assert any(r.get("path") == "/v1/chat/completions" and r.get("calls_emitted") == 1 for r in records), records
