"""Every code block of README.md and docs/*.md works as written (`tests/docs_snippets.py`).

- ```python blocks run, page by page, in a fresh process (compile-only ones are compiled);
- ```sh lines: `toolcall-middleware …` parses with the real argparse parser; `make` names a
  Makefile target, `pip install` extras that pyproject.toml has, `uvicorn` / `gunicorn` a module
  that exists; any other command is one of a few known ones;
- ```console blocks: each `$ toolcall-middleware …` line runs, and prints the lines after it;
- ```toml and ```json blocks parse.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs_snippets import ROOT, Block, blocks, doc_files
from toolcall_middleware.cli import build_parser

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PAGES = doc_files()
ALL = [block for page in PAGES for block in blocks(page)]
# Commands the docs use that are neither ours nor checked further: they only need to be named.
EXTERNAL = {"cat", "claude", "export"}
# Files the docs name as the reader's own (`cat output.txt | … --tools tools.json -`).
PLACEHOLDERS = {"output.txt", "tools.json"}


def _ids(items: list[Block]) -> list[str]:
    return [str(b) for b in items]


def _page_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("page", [p for p in PAGES if any(b.lang == "python" for b in blocks(p))], ids=_page_id)
def test_python_blocks_run(page: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "docs_snippets.py"), str(page)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    if page.name == "README.md":  # each quickstart got its call
        assert 'tool_calls get_weather {"city": "Paris"}' in done.stdout
        assert done.stdout.count("""{'name': 'get_weather', 'arguments': '{"city": "Paris"}'}""") == 2
        assert 'get_weather {"city": "Paris"} tool_calls' in done.stdout


def test_compile_only_is_rare() -> None:
    marked = [b for b in ALL if b.compile_only]
    assert all(b.path.name != "README.md" for b in marked), "the README's quickstarts run"
    assert len(marked) <= 3, _ids(marked)


def _check_toolcall_middleware(args: list[str], block: Block) -> None:
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            build_parser().parse_args(args)
    except SystemExit as e:
        raise AssertionError(f"{block}: `toolcall-middleware {shlex.join(args)}`: {err.getvalue().strip()}") from e
    for arg in args:
        if arg.startswith("examples/"):
            assert (ROOT / arg).exists(), f"{block}: {arg} does not exist"


def _check_command(words: list[str], block: Block) -> None:
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):  # VAR=value before the command
        words = words[1:]
    command, args = words[0], words[1:]
    if command == "toolcall-middleware":
        _check_toolcall_middleware(args, block)
    elif command == "make":
        makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
        for target in args:
            assert re.search(rf"^{re.escape(target)}:", makefile, re.M), f"{block}: no make target {target}"
    elif command == "pip":
        assert args[0] == "install", f"{block}: pip {args}"
        extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
            "optional-dependencies"
        ]
        specs = args[1:]
        if specs[:2] == ["--find-links", "dist"]:  # the wheel `make dist` built
            assert re.search(r"^dist:", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
            specs = specs[2:]
        for spec in specs:
            name, _, rest = spec.partition("[")
            assert name in ("toolcall-middleware", "."), f"{block}: pip install {spec}"
            for extra in filter(None, rest.rstrip("]").split(",")):
                assert extra in extras, f"{block}: no extra [{extra}]"
    elif command in ("uvicorn", "gunicorn"):
        target = next(a for a in args if ":" in a and not a.startswith("-"))
        module = target.split(":")[0]
        if module != "app":  # the README's own `app.py`
            assert (ROOT / (module.replace(".", "/") + ".py")).exists(), f"{block}: no module {module}"
    elif command == "python":
        assert (ROOT / args[0]).exists(), f"{block}: no file {args[0]}"
    else:
        assert command in EXTERNAL, f"{block}: unknown command {command!r}"
    for arg in args:
        if arg.endswith((".txt", ".json", ".toml")) and not arg.startswith("-") and arg not in PLACEHOLDERS:
            assert (ROOT / arg).exists(), f"{block}: {arg} does not exist"


@pytest.mark.parametrize("block", [b for b in ALL if b.lang == "sh"], ids=str)
def test_shell_blocks_name_real_commands(block: Block) -> None:
    for line in block.code.splitlines():
        for segment in line.split(" | "):
            words = shlex.split(segment, comments=True)
            if words:
                _check_command(words, block)


@pytest.mark.parametrize("block", [b for b in ALL if b.lang == "console"], ids=str)
def test_console_blocks_print_what_they_show(block: Block) -> None:
    command = Path(sys.executable).with_name("toolcall-middleware")
    for session in block.code.split("$ ")[1:]:
        line, _, expected = session.partition("\n")
        words = shlex.split(line)
        env = dict(os.environ)
        while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):  # `TOOLCALL_PORT=0 toolcall-middleware …`
            name, _, value = words.pop(0).partition("=")
            env[name] = value
        assert words[0] == "toolcall-middleware", f"{block}: only our command runs here"
        done = subprocess.run([str(command), *words[1:]], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
        assert (done.stdout + done.stderr).strip() == expected.strip(), f"{block}: `{line}`"


@pytest.mark.parametrize("block", [b for b in ALL if b.lang in ("toml", "json")], ids=str)
def test_data_blocks_parse(block: Block) -> None:
    if block.lang == "toml":
        tomllib.loads(block.code)
    else:
        json.loads(block.code)


def test_every_block_has_a_known_language() -> None:
    """A block is run or checked by its language; a bare one is output, shown as it is."""
    unknown = [b for b in ALL if b.lang not in ("python", "sh", "console", "toml", "json", "")]
    assert not unknown, _ids(unknown)


def test_options_reference_is_generated() -> None:
    """docs/options.md is what docs/gen_options.py writes from ToolCallConfig, Limits and ServeOptions."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "gen_options.py"), "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_readme_links_reach_the_pages() -> None:
    """The README is not part of the MkDocs build, which checks the pages' own links: check its."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for target, anchor in re.findall(r"\]\(((?:docs/)?[\w./-]+\.md)(?:#([\w-]+))?\)", readme):
        page = ROOT / target
        assert page.exists(), target
        if anchor:
            headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.M)
            slugs = {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in headings}
            assert anchor in slugs, f"{target}#{anchor}"


def test_readme_stays_a_front_page() -> None:
    """The README is the front page (issue #25: at most about 400 lines); the rest goes in docs/."""
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 400
