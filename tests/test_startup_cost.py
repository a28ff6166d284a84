"""What every start of logsleuth pays for its own modules (issue 14 item 4: less CPU per diagnose)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "logsleuth"

def _is_dataclass(node: ast.ClassDef) -> bool:
    def name(decorator: ast.expr) -> str:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        return target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")

    return any(name(decorator) == "dataclass" for decorator in node.decorator_list)


def test_every_dataclass_has_a_docstring() -> None:
    """Without one, @dataclass writes a `__doc__` from `inspect.signature(cls)`: ~0.4 ms per class at every
    import, ~10 ms of a diagnose over its ~25 dataclasses.  Every module: watch, health and the renderers
    start with logsleuth too."""
    bare = [
        f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef) and _is_dataclass(node) and not ast.get_docstring(node)
    ]
    assert bare == []


def test_version_is_answered_before_typer_or_the_pipeline_is_imported() -> None:
    """`logsleuth --version` used to import the whole CLI and api: 0.29 s against 0.015 s for `python -c pass`
    (issue 30).  The console script answers it first; typer's eager --version prints the same text."""
    import subprocess
    import sys

    heavy = ("typer", "click", "rich", "paramiko", "logsleuth.api", "logsleuth.cli.app", "logsleuth.models")
    code = (
        "import sys; from logsleuth.__main__ import main; status = main(['--version'], quick=True); "
        f"print([m for m in {heavy!r} if m in sys.modules], status)"
    )
    quick = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    *version, loaded = quick.stdout.splitlines()
    assert loaded == "[] 0"
    typer_path = subprocess.run(
        [sys.executable, "-c", "from logsleuth.__main__ import main; raise SystemExit(main(['--version']))"],
        capture_output=True, text=True, timeout=120,
    )
    assert typer_path.returncode == 0
    assert typer_path.stdout.splitlines() == version and version[0].startswith("logsleuth ")


def test_help_and_argument_errors_import_no_stage_of_the_pipeline() -> None:
    """`--help`, completion and a mistyped option need typer and the command layer, not the api and the stages
    behind it (issue 30: `diagnose --help` imported them all, 0.30-0.38 s)."""
    import subprocess
    import sys

    stages = ("logsleuth.api", "logsleuth.reading.reader", "logsleuth.diagnosis.library", "logsleuth.case.build",
              "logsleuth.tracebacks.scanner", "logsleuth.fixes.build")
    for argv in (["diagnose", "--help"], ["health", "--help"], ["case", "--help"], ["diagnose", "--no-such-option"]):
        code = (
            "import contextlib, io, sys; from logsleuth.__main__ import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
            f"    status = main({argv!r})\n"
            f"print([m for m in {stages!r} if m in sys.modules], status)"
        )
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
        assert result.stdout.split("]")[0] + "]" == "[]", (argv, result.stdout)


def test_the_facts_tables_are_read_from_the_json_cache_once_parsed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """tomllib is pure Python: the categories, GPU and import tables cost ~15 ms a run to parse.  The first run
    parses them; a later run reads the cached JSON and never imports tomllib."""
    import os
    import subprocess
    import sys

    code = (
        "import sys; from logsleuth.facts import categories, gpus, imports; "
        "categories.table(); gpus.facts(); imports.distributions_of('torch'); print('tomllib' in sys.modules)"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env,
                           check=True).stdout.strip() for _ in range(2)]
    assert runs == ["True", "False"]
