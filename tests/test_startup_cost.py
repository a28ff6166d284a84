"""What every start of logsleuth pays for its own modules (issue 14 item 4: less CPU per diagnose)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "logsleuth"

# Modules on a diagnose's path whose dataclasses are checked here.
CHECKED = (
    "models.py", "api.py", "reading/scan.py", "render/options.py", "sources/spec.py",
    "diagnosis/library.py", "diagnosis/schema.py", "fixes/catalog.py", "fixes/command.py", "fixes/context.py",
    "ingest/launch.py", "ingest/normalize.py", "tracebacks/collector.py", "sources/ssh/connect.py",
)


def _is_dataclass(node: ast.ClassDef) -> bool:
    def name(decorator: ast.expr) -> str:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        return target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")

    return any(name(decorator) == "dataclass" for decorator in node.decorator_list)


def test_every_dataclass_has_a_docstring() -> None:
    """Without one, @dataclass writes a `__doc__` from `inspect.signature(cls)`: ~0.4 ms per class at every
    import, ~10 ms of a diagnose over its ~25 dataclasses."""
    bare = [
        f"{relative}:{node.lineno} {node.name}"
        for relative in CHECKED
        for node in ast.walk(ast.parse((PACKAGE / relative).read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef) and _is_dataclass(node) and not ast.get_docstring(node)
    ]
    assert bare == []
