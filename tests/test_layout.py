"""The layout's rules, checked over the import graph (every import statement, function-level ones included).

The pipeline is sources -> ingest -> tracebacks -> diagnosis -> fixes -> render (docs/architecture.md).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "logsleuth"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _imported(name: str, path: Path) -> set[str]:
    """The logsleuth modules `path` imports (the longest module prefix of each imported name)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join([*package[: len(package) - (node.level - 1)], *([node.module] if node.module else [])]) if node.level else (node.module or "")
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        for imported in names:
            parts = imported.split(".")
            while parts and ".".join(parts) not in MODULES:
                parts.pop()
            if parts and ".".join(parts) != name:
                found.add(".".join(parts))
    return found


GRAPH = {name: _imported(name, path) for name, path in MODULES.items()}


def _cycles() -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in GRAPH[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)
    return found


# The layers, lowest first (docs/architecture.md, "Layers", lists the same names in the same order).  A module
# may import its own layer and those below it, never one above.  A module belongs to the layer of the longest
# prefix here that names it (`logsleuth` itself only by its exact name): so a stage's value types (health.model,
# diff.model, watch.events) sit below the renderers that draw them, and render.safety below the stages that
# make text safe for a terminal with it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundation", ("logsleuth", "logsleuth.lazyre", "logsleuth.errors", "logsleuth.wording", "logsleuth.paths", "logsleuth.models",
                    "logsleuth.versions", "logsleuth.redact", "logsleuth.command_line", "logsleuth.http_exchange", "logsleuth.facts", "logsleuth.machine", "logsleuth.toml_cache", "logsleuth.pydantic_display",
                    "logsleuth.render.safety", "logsleuth.render.options", "logsleuth.cli.option_table")),
    ("sources", ("logsleuth.sources", "logsleuth.internal")),
    ("ingest", ("logsleuth.ingest",)),
    ("tracebacks", ("logsleuth.tracebacks",)),
    ("diagnosis", ("logsleuth.diagnosis",)),
    ("fixes", ("logsleuth.fixes",)),
    ("reasoning", ("logsleuth.reasoning",)),
    ("reading", ("logsleuth.reading",)),
    ("stage models and checks", ("logsleuth.health", "logsleuth.check", "logsleuth.merge", "logsleuth.diff.model",
                                 "logsleuth.watch.events")),
    ("render", ("logsleuth.render",)),
    ("api", ("logsleuth.api",)),
    ("commands' logic", ("logsleuth.case", "logsleuth.diff", "logsleuth.explain", "logsleuth.watch")),
    ("cli", ("logsleuth.cli", "logsleuth.__main__")),
)


def _layer(module: str) -> int | None:
    best: tuple[int, int] | None = None  # (prefix length, layer)
    for number, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            named = module == prefix or (prefix != "logsleuth" and module.startswith(prefix + "."))
            if named and (best is None or len(prefix) > best[0]):
                best = (len(prefix), number)
    return None if best is None else best[1]


def test_every_module_has_a_layer() -> None:
    assert [module for module in GRAPH if _layer(module) is None] == []


def test_no_module_imports_a_layer_above_its_own() -> None:
    upward = [
        f"{module} ({LAYERS[_layer(module) or 0][0]}) imports {target} ({LAYERS[_layer(target) or 0][0]})"
        for module, targets in sorted(GRAPH.items())
        for target in sorted(targets)
        if (_layer(target) or 0) > (_layer(module) or 0)
    ]
    assert upward == []


def test_the_layer_checker_sees_an_upward_import() -> None:
    """A guard on the checker: the core stages are below the api, which is below the commands."""
    assert _layer("logsleuth.ingest.lines") < _layer("logsleuth.tracebacks.grammar") < _layer("logsleuth.api")  # type: ignore[operator]
    assert _layer("logsleuth.render.safety") == 0 and _layer("logsleuth.render.rich_view") == _layer("logsleuth.render")
    assert _layer("logsleuth.cli.app") == len(LAYERS) - 1


def test_the_architecture_map_lists_the_layers_in_order() -> None:
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    listed = [line.split("**")[1] for line in section.splitlines() if line[:1].isdigit() and "**" in line]
    assert listed == [name for name, _ in LAYERS]


def test_ingest_imports_nothing_above_it() -> None:
    """The first stage reads bytes into lines: it imports only the foundation (issue 30: it used to reach up
    into the traceback scanner, grouping and sources)."""
    for module, targets in GRAPH.items():
        if _in(module, "ingest"):
            assert [t for t in targets if (_layer(t) or 0) > 0 and not _in(t, "ingest")] == [], module


def _in(module: str, *packages: str) -> bool:
    return any(module == f"logsleuth.{p}" or module.startswith(f"logsleuth.{p}.") for p in packages)


def test_the_graph_sees_the_imports() -> None:
    """A guard on the checker itself: known edges must be there."""
    assert "logsleuth.tracebacks.grammar" in GRAPH["logsleuth.tracebacks.scanner"]
    assert "logsleuth.sources.ssh.open" in GRAPH["logsleuth.sources.open"]  # a function-level import


def test_no_import_cycle() -> None:
    assert _cycles() == []


@pytest.mark.parametrize("stage", ["ingest", "tracebacks", "diagnosis"])
def test_the_core_stages_never_import_the_outside(stage: str) -> None:
    for module, targets in GRAPH.items():
        if not _in(module, stage):
            continue
        for target in targets:
            assert not _in(target, "render", "cli", "api", "watch"), f"{module} imports {target}"
            if _in(target, "sources"):
                assert stage == "ingest" and target == "logsleuth.sources.base", f"{module} imports {target}"


def test_render_sees_only_the_model() -> None:
    for module, targets in GRAPH.items():
        if _in(module, "render"):
            bad = [t for t in targets if _in(t, "sources", "fixes", "diagnosis", "ingest", "tracebacks", "internal")]
            assert not bad, f"{module} imports {bad}"


@pytest.mark.parametrize("package", ["sources", "sources.ssh", "internal", "internal.ssh_helper"])
def test_package_inits_import_nothing(package: str) -> None:
    assert GRAPH[f"logsleuth.{package}"] == set()
    tree = ast.parse(MODULES[f"logsleuth.{package}"].read_text(encoding="utf-8"))
    assert not [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom) and node.module != "__future__"]


def test_sources_base_is_a_leaf() -> None:
    assert not [t for t in GRAPH["logsleuth.sources.base"] if t.startswith("logsleuth.")]


def test_only_the_seam_knows_the_ssh_helper() -> None:
    users = {module for module, targets in GRAPH.items() if any(_in(t, "internal") for t in targets) and not _in(module, "internal")}
    assert users == {"logsleuth.__main__", "logsleuth.sources.open"}


def test_api_imports_neither_typer_nor_rich() -> None:
    code = "import sys, logsleuth.api; print(sorted(m for m in ('typer', 'rich', 'click') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
    for module in ("logsleuth.api", *(m for m in GRAPH if _in(m, "ingest", "tracebacks", "diagnosis", "fixes", "sources"))):
        tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                assert not any(n.split(".")[0] in ("typer", "rich", "click") for n in names), module
