"""The code blocks of README.md and docs/*.md, and a runner for a page's Python blocks.

A page's ```python blocks run in order in one namespace (a fresh module, in a fresh process per
page, from the repository root), so a later block may use what an earlier one defined. Two HTML
comments, invisible on the rendered page, change that for the block that follows them:

    <!-- test: compile-only (why) -->     the block is compiled, not run (a client of a server)
    <!-- test: setup                      code run first, in the page's namespace, unseen by
    raw_text = "..."                      readers: what a fragment takes as given
    -->

    python tests/docs_snippets.py docs/parser.md      # run one page's blocks
"""

from __future__ import annotations

import re
import sys
import types
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_FENCE = re.compile(r"^(`{3,})([\w+-]*)\s*$")
_MARK = re.compile(r"^<!-- test: (compile-only|setup)\b(.*)$")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # the fence's line, 1-based
    lang: str
    code: str
    compile_only: bool = False
    setup: str = ""

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line} ({self.lang or 'text'})"


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(path: Path) -> list[Block]:
    """Every fenced block of a Markdown file, with the test marks written right before it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    compile_only, setup = False, ""
    i = 0
    while i < len(lines):
        mark = _MARK.match(lines[i])
        if mark and mark.group(1) == "compile-only":
            compile_only = True
        elif mark:  # setup: the lines up to the closing -->
            j = i + 1
            while lines[j].strip() != "-->":
                j += 1
            setup += "\n".join(lines[i + 1 : j]) + "\n"
            i = j
        fence = _FENCE.match(lines[i])
        if fence:
            ticks, lang = fence.groups()
            j = i + 1
            while lines[j].rstrip() != ticks:
                j += 1
            code = "\n".join(lines[i + 1 : j]) + "\n"
            out.append(Block(path, i + 1, lang, code, compile_only, setup))
            compile_only, setup = False, ""
            i = j
        i += 1
    return out


def run_page(path: Path) -> None:
    """Run a page's Python blocks in order in one fresh module (compile-only ones only compiled)."""
    page = types.ModuleType("docs_page")
    page.__file__ = str(path)
    sys.modules["docs_page"] = page
    for block in blocks(path):
        if block.lang != "python":
            continue
        if block.setup:
            exec(compile(block.setup, f"{block.path.name}:{block.line} (setup)", "exec"), page.__dict__)
        code = compile(block.code, f"{block.path.name}:{block.line}", "exec")
        if not block.compile_only:
            exec(code, page.__dict__)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    run_page(Path(sys.argv[1]).resolve())
