"""The public API is what the modules' `__all__` say, and the docs import nothing else.

Every module of the package (the `integrations/` folder ships as
`toolcall_middleware.integrations`) declares `__all__`: the names it offers, each defined or
imported there, none private. The README and the docs pages import only names some module
lists. Read from the source with `ast`, so no optional dependency is imported.
"""

from __future__ import annotations

import ast

import pytest

from tests.docs_snippets import blocks, doc_files
from tests.modules import package_modules

MODULES = package_modules()


def top_level(tree: ast.Module) -> tuple[set[str], set[str]]:
    """The names a module defines at its top level, and the names it imports there (imports
    under `if TYPE_CHECKING:` are not there at run time and do not count)."""
    defined: set[str] = set()
    imported: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, ast.Assign):
                defined.update(n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                defined.add(node.target.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                imported.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, ast.If):
                if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                    visit(node.body)
                    visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)

    visit(tree.body)
    return defined, imported


def declared_all(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            assert isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None
            value = ast.literal_eval(node.value)
            assert isinstance(value, list), "__all__ is a literal list"
            return value
    return None


def public_names(module: str) -> set[str]:
    return set(declared_all(ast.parse(MODULES[module].read_text(encoding="utf-8"))) or ())


@pytest.mark.parametrize("module", sorted(MODULES))
def test_each_module_declares_its_public_names(module: str) -> None:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    names = declared_all(tree)
    assert names is not None, f"{module} has no __all__"
    assert len(names) == len(set(names)), f"{module}.__all__ lists a name twice"
    defined, imported = top_level(tree)
    submodules = {m.rpartition(".")[2] for m in MODULES if m.rpartition(".")[0] == module}
    missing = [n for n in names if n not in defined | imported | submodules]
    assert not missing, f"{module}.__all__ names what it neither defines nor imports: {missing}"
    private = [n for n in names if n.startswith("_") and n != "__version__"]
    assert not private, f"{module}.__all__ lists private names: {private}"


def doc_imports() -> list[tuple[str, str, str]]:
    """`(where, module, name)` for each name the docs' Python blocks import from the package."""
    found = []
    for page in doc_files():
        for block in blocks(page):
            if block.lang != "python":
                continue
            for node in ast.walk(ast.parse(block.setup + block.code)):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("toolcall_middleware"):
                    found.extend((str(block), node.module or "", alias.name) for alias in node.names)
                elif isinstance(node, ast.Import):
                    found.extend(
                        (str(block), alias.name, "")
                        for alias in node.names
                        if alias.name.startswith("toolcall_middleware")
                    )
    return found


def test_the_docs_import_only_public_names() -> None:
    imports = doc_imports()
    assert imports, "the docs import from the package"
    wrong = [
        (where, module, name)
        for where, module, name in imports
        if module not in MODULES or (name and name not in public_names(module))
    ]
    assert not wrong, f"docs import names no module offers in __all__: {wrong}"
