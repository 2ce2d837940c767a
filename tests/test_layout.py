"""The package's shape: no import cycles between its modules, no module over 500 lines, and the
internal modules named `_…` (the integrations importing none of them).

The modules are the package's and those of the integrations it ships (`tests/modules.py`). The
import graph is read from the source with `ast`: an edge for each module a module imports at its
top level or inside a function (imports under `if TYPE_CHECKING:` are for the type checker and
do not run). `from package import name` is an edge to the submodule `package.name` when there is
one, else to the package. Importing a module also runs its packages' `__init__`, but Python has
started those first, so that is not an edge here.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

from tests.modules import package_modules

MAX_LINES = 500


MODULES = package_modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.AST, *, type_only: bool = False) -> list[ast.Import | ast.ImportFrom]:
    """The imports that run (`type_only`: those under `if TYPE_CHECKING:` too)."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if not type_only and isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def imports_of(name: str, path: Path, *, type_only: bool = False) -> set[str]:
    """The package's modules that module `name` imports when it runs (`type_only`: or when the
    type checker reads it)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8")), type_only=type_only):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            module = node.module or ""
            source = (f"{base}.{module}" if module else base) if node.level else module
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in MODULES else source for a in node.names]
        out.update(t for t in targets if t in MODULES and t != name)
    return out


def import_graph(*, type_only: bool = False) -> dict[str, set[str]]:
    return {name: imports_of(name, path, type_only=type_only) for name, path in MODULES.items()}


ROOTS = ("toolcall_middleware", "toolcall_middleware.core")
"""The packages whose subpackages are the nodes of the package graph (their own modules are each
a node of their own: `core`'s ground floor and the modules above it are not one layer)."""


def package_of(module: str) -> str:
    """The node `module` belongs to: the subpackage of a root it is in, else the module itself."""
    for root in sorted(ROOTS, key=len, reverse=True):
        if module.startswith(root + "."):
            top = root + "." + module[len(root) + 1 :].split(".")[0]
            if top in ROOTS:
                continue
            return top if any(m.startswith(top + ".") for m in MODULES) else module
    return module


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The imports between packages, from the imports between modules."""
    packages: dict[str, set[str]] = {}
    for module, imported in graph.items():
        node = package_of(module)
        targets = packages.setdefault(node, set())
        targets.update(package_of(m) for m in imported if package_of(m) != node)
    return packages


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import loops, each as `[a, b, ..., a]` (`a` imports `b`, ...): one is found, one of its
    edges set aside, and the search goes on until the rest of the graph has none."""
    rest = {module: set(imported) for module, imported in graph.items()}
    found: list[list[str]] = []
    while True:
        try:
            TopologicalSorter(rest).prepare()
        except CycleError as error:
            loop = list(reversed(error.args[1]))  # graphlib lists it in dependency order
            found.append(loop)
            rest[loop[0]].discard(loop[1])
        else:
            return found


def test_the_graph_reader_sees_edges_and_cycles() -> None:
    graph = import_graph()
    assert "toolcall_middleware.core.dialects._base" in graph["toolcall_middleware.core.dialects.hermes"]
    assert "toolcall_middleware.core.dialects" in graph["toolcall_middleware.core.request._render"]
    (loop,) = cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    assert loop[0] == loop[-1] and sorted(loop[:-1]) == ["a", "b", "c"]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles() -> None:
    found = cycles(import_graph())
    assert not found, "modules that import each other, directly or around a loop:\n" + "\n".join(
        " -> ".join(loop) for loop in found
    )


def test_the_package_graph_joins_subpackages_and_counts_type_only_imports() -> None:
    assert package_of("toolcall_middleware.core.dialects.auto") == "toolcall_middleware.core.dialects"
    assert package_of("toolcall_middleware.core.dialects") == "toolcall_middleware.core.dialects"
    assert package_of("toolcall_middleware.core._events") == "toolcall_middleware.core._events"
    assert package_of("toolcall_middleware.store._layer") == "toolcall_middleware.store"
    assert package_of("toolcall_middleware.config") == "toolcall_middleware.config"
    # `dialect.py` names `Renderer` for the type checker only: no edge that runs, an edge all the same.
    dialect, rendering = "toolcall_middleware.core.dialects._dialect", "toolcall_middleware.core.dialects._rendering"
    assert rendering not in import_graph()[dialect]
    assert rendering in import_graph(type_only=True)[dialect]
    modules = {
        "toolcall_middleware.core.dialects.hermes": {"toolcall_middleware.core.request._render"},
        "toolcall_middleware.core.request._render": {"toolcall_middleware.core.dialects._rendering"},
        "toolcall_middleware.core.dialects._rendering": {"toolcall_middleware.core._events"},
    }
    packages = package_graph(modules)
    assert packages["toolcall_middleware.core.dialects"] == {
        "toolcall_middleware.core.request",
        "toolcall_middleware.core._events",
    }
    (loop,) = cycles(packages)
    assert sorted(loop[:-1]) == ["toolcall_middleware.core.dialects", "toolcall_middleware.core.request"]


def test_no_package_cycles() -> None:
    found = cycles(package_graph(import_graph(type_only=True)))
    assert not found, "packages that import each other (imports for the type checker counted):\n" + "\n".join(
        " -> ".join(loop) for loop in found
    )


def test_no_module_over_500_lines() -> None:
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in MODULES.items()}
    over = {name: size for name, size in sorted(sizes.items()) if size > MAX_LINES}
    assert not over, f"modules over {MAX_LINES} lines: {over}"


def test_the_stateless_asgi_shell_imports_nothing_of_the_store() -> None:
    """The Responses state is a layer in front of the stateless middleware (`middleware.py`):
    `asgi.py` and the request it drives know nothing of a store."""
    graph = import_graph()
    for shell in ("toolcall_middleware._asgi", "toolcall_middleware._asgi_request"):
        store = sorted(m for m in graph[shell] if m.startswith("toolcall_middleware.store"))
        assert not store, f"{shell} imports {store}"


SHELLS = (
    "toolcall_middleware._asgi",
    "toolcall_middleware._asgi_request",
    "toolcall_middleware._wsgi",
    "toolcall_middleware._wsgi_request",
    "toolcall_middleware.integrations.django",
)


def test_no_shell_is_called_an_exchange_or_keeps_a_flag_of_its_own() -> None:
    """The shells are named for their I/O; what the exchange is doing is read off its state (and
    the held response's, which reads it), never off a flag a shell sets on itself or a word the
    exchange projects its state into (`mode`)."""
    for shell in SHELLS:
        path = MODULES[shell]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        classes = [node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
        assert not [c for c in classes if c.endswith("Exchange")], (shell, classes)
        set_on_self = {
            target.attr
            for node in ast.walk(tree)
            if isinstance(node, (ast.Assign, ast.AnnAssign))
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"
        }
        assert not set_on_self & {"flowing", "passing", "mode"}, (shell, set_on_self)
        modes = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "mode"]
        assert not modes, f"{shell} reads a `mode` off the exchange"


EXCHANGE = "toolcall_middleware.core._exchange"
SHELL_GROUPS = {
    "asgi": ("toolcall_middleware._asgi", "toolcall_middleware._asgi_request"),
    "wsgi": ("toolcall_middleware._wsgi", "toolcall_middleware._wsgi_request"),
    "django": ("toolcall_middleware.integrations.django",),
}


def _exchange_reads(module: str) -> set[str]:
    """The attributes a shell module reads off an exchange: `exchange.x`, `ex.x`, `self.exchange.x`."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        owner = node.value
        if (isinstance(owner, ast.Name) and owner.id in ("exchange", "ex")) or (
            isinstance(owner, ast.Attribute) and owner.attr == "exchange"
        ):
            found.add(node.attr)
    return found


def test_there_is_one_exchange_class_and_nothing_builds_on_it() -> None:
    """One exchange object: the only class called `…Exchange` is `core._exchange.Exchange`, and no
    class of the package subclasses it (what the configuration adds comes by composition)."""
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            if node.name.endswith("Exchange"):
                assert (name, node.name) == (EXCHANGE, "Exchange"), f"{name}.{node.name}: a second exchange class"
            bases = {
                b.id if isinstance(b, ast.Name) else b.attr
                for b in node.bases
                if isinstance(b, ast.Name | ast.Attribute)
            }
            assert not bases & {"Exchange", "ToolCallExchange"}, f"{name}.{node.name} subclasses the exchange"


def test_the_shells_read_no_flag_off_the_exchange() -> None:
    """What a shell does next it reads off the exchange's `state` (the table's), never off a flag
    (a bool the exchange keeps or computes besides its state). Every attribute a shell reads off
    an exchange is checked on a real one: a verb, the state, or data (the record, the config,
    the path, the head), and no bool."""
    from toolcall_middleware import ToolCallConfig
    from toolcall_middleware.core._exchange import Exchange, RouteMatch

    exchange = Exchange(ToolCallConfig(dialect="hermes"), RouteMatch("responses", "chat", "/v1/chat/completions"))
    for group in SHELL_GROUPS.values():
        for module in group:
            for attr in sorted(_exchange_reads(module)):
                assert hasattr(exchange, attr), f"{module} reads {attr!r}, which the exchange does not have"
                value = getattr(exchange, attr)
                assert not isinstance(value, bool), f"{module} reads the flag {attr!r} off the exchange"


def test_django_drives_the_exchange_with_the_verbs_asgi_and_wsgi_use() -> None:
    """Django's middleware calls no verb of the exchange that neither the ASGI nor the WSGI shell
    calls (the held response, `core._held_response`, calls `start`, `feed` and `end` for all three)."""
    from toolcall_middleware.core._exchange import Exchange

    def verbs(group: tuple[str, ...]) -> set[str]:
        return {a for module in group for a in _exchange_reads(module) if callable(getattr(Exchange, a, None))}

    asgi, wsgi, django = (verbs(SHELL_GROUPS[k]) for k in ("asgi", "wsgi", "django"))
    assert {"forward", "report", "again"} <= django
    assert django <= asgi | wsgi, f"Django's own verbs: {sorted(django - (asgi | wsgi))}"
PUBLIC_MODULES = {
    "toolcall_middleware.cli",  # the command's entry point (pyproject's [project.scripts])
    "toolcall_middleware.config",
    "toolcall_middleware.logs",
    "toolcall_middleware.metrics",
    "toolcall_middleware.proxy",
    "toolcall_middleware.redact",
    "toolcall_middleware.shell_support",  # what a framework's own shell imports
    "toolcall_middleware.demo.run",
    "toolcall_middleware.core.framing.sse",
    "toolcall_middleware.core.dialects.call_grammar",
    "toolcall_middleware.core.grammar.build",
    "toolcall_middleware.core.grammar.constrain",
    "toolcall_middleware.core.grammar.engines",
    "toolcall_middleware.core.grammar.gbnf",
    "toolcall_middleware.core.grammar.python",
    "toolcall_middleware.core.grammar.regex",
}
"""The public modules that are not a package, an integration or a registered dialect's (docs/layout.md,
"The public API"). Every other module is internal, and named `_…`."""


def is_public(module: str) -> bool:
    """Whether `module` is on the public surface: a package (its `__init__`), an integration, a
    registered dialect's module (the registry imports them by their names), or listed above."""
    from toolcall_middleware.core.dialects import _MODULES

    return (
        MODULES[module].name == "__init__.py"
        or module.startswith("toolcall_middleware.integrations.")
        or module in {f"toolcall_middleware.core.dialects.{name}" for name in _MODULES}
        or module in PUBLIC_MODULES
    )


def test_every_module_not_named_private_is_on_the_public_list() -> None:
    named_public = [m for m in MODULES if not any(part.startswith("_") for part in m.split("."))]
    unlisted = sorted(m for m in named_public if not is_public(m))
    assert not unlisted, f"add these to PUBLIC_MODULES or name them `_…`: {unlisted}"
    stale = sorted(m for m in PUBLIC_MODULES if m not in MODULES or m.rpartition(".")[2].startswith("_"))
    assert not stale, f"PUBLIC_MODULES lists what is no public module: {stale}"
    assert not is_public("toolcall_middleware.core._exchange")
    assert is_public("toolcall_middleware.core.dialects.hermes") and is_public("toolcall_middleware.core.apis.chat")


def test_the_integrations_import_only_public_modules() -> None:
    graph = import_graph(type_only=True)
    integrations = [m for m in MODULES if m.startswith("toolcall_middleware.integrations.")]
    assert "toolcall_middleware.integrations.django" in integrations
    for integration in integrations:
        internal = sorted(
            m for m in graph[integration] if not m.startswith("toolcall_middleware.integrations") and not is_public(m)
        )
        assert not internal, f"{integration} imports internal modules: {internal}"
