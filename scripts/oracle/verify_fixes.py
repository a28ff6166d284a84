"""Prove logsleuth's fixes against the REAL SGLang: each failing fixture must fail, be diagnosed as its
expected pattern, and every command logsleuth proposes must then pass SGLang's own validation.

For every ``tests/fixtures/sglang/<version>/<name>.toml`` with ``expect_failure = true``:
  (a) re-run ``command`` on that version             -> must fail (the fixture is still true)
  (b) ``logsleuth diagnose LOG --cmd COMMAND --engine-version V --format json``
                                                     -> failures[0].diagnosis.pattern == expect_pattern
  (c) run ``fix.command`` and each alternative's ``command`` on the same version -> must pass
Prints a patterns x versions table of fixtures that went fail -> pass; exits 1 on any miss, 0 otherwise,
and 0 with a clear message when logsleuth itself is not importable yet (nothing to verify against).
Fixtures with an empty expect_pattern are listed as "unpatterned" and not counted as misses.

Usage: verify_fixes.py [--versions V ...] [--only NAME ...] [--jobs N] [--cli "python -m logsleuth"]
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import VERSIONS, run_command_string, venv_dir  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "sglang"
CLI_TIMEOUT_S = 120


@dataclass(frozen=True)
class Fixture:
    name: str
    version: str
    log: Path
    command: str
    expect_pattern: str


@dataclass
class Verdict:
    fixture: Fixture
    ok: bool = False
    problems: list[str] = field(default_factory=list)
    fixes_checked: int = 0
    needs_input: list[str] = field(default_factory=list)  # fixes with a value only the user can give


def load_fixtures(versions: list[str], only: list[str] | None) -> list[Fixture]:
    found = []
    for version in versions:
        for meta_path in sorted((FIXTURES / version).glob("*.toml")):
            meta = tomllib.loads(meta_path.read_text())
            if not meta.get("command") or not meta.get("expect_failure"):
                continue
            if only is not None and meta_path.stem not in only:
                continue
            found.append(
                Fixture(
                    name=meta_path.stem,
                    version=meta.get("engine_version", version),
                    log=meta_path.with_suffix(".log"),
                    command=meta["command"],
                    expect_pattern=meta.get("expect_pattern", ""),
                )
            )
    return found


def default_cli() -> tuple[list[str] | None, str]:
    """The logsleuth command to use and, when there is none, why.

    Prefers an installed ``logsleuth`` console script; otherwise ``python -m logsleuth`` from this checkout,
    which works only once the package is installed (``logsleuth.patterns`` is mapped from the top-level
    ``patterns/`` by the packaging), so that import is checked first.
    """
    script = shutil.which("logsleuth")
    if script:
        return [script], ""
    probe = subprocess.run(
        [sys.executable, "-c", "import logsleuth.__main__, logsleuth.patterns"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["import failed"])[-1]
        return None, f"logsleuth is not importable ({last}); install it first, e.g. pip install -e ."
    return [sys.executable, "-m", "logsleuth"], ""


def diagnose(cli: list[str], fx: Fixture) -> dict[str, Any]:
    """Run the CLI and return failures[0].diagnosis (raises ValueError with a reason when unusable)."""
    argv = [
        *cli,
        "diagnose",
        str(fx.log),
        "--cmd",
        fx.command,
        "--engine-version",
        fx.version,
        "--format",
        "json",
    ]
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=CLI_TIMEOUT_S, check=False)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise ValueError(f"CLI exit {proc.returncode}, no JSON ({exc.msg}): {' | '.join(tail)}") from None
    failures = report.get("failures") or []
    if not failures:
        raise ValueError("CLI found no failure in the log")
    diagnosis = failures[0].get("diagnosis")
    if not diagnosis:
        raise ValueError("failures[0].diagnosis is null")
    return diagnosis


def proposed_commands(
    diagnosis: dict[str, Any], original: str
) -> list[tuple[str, str, dict[str, str], list[str]]]:
    """(label, command, env) for the main fix and every alternative.

    A fix that is only environment variables (``env`` set, ``command`` null) applies to the original
    command, so that is what gets run, with those variables.
    """
    fix = diagnosis.get("fix") or {}
    out = []
    for label, entry in [("fix", fix)] + [
        (f"alternative {i}", alt) for i, alt in enumerate(fix.get("alternatives") or [], start=1)
    ]:
        env = {str(k): str(v) for k, v in (entry.get("env") or {}).items()}
        command = entry.get("command") or (original if env else "")
        out.append((label, command, env, list(entry.get("needs_input") or [])))
    return out


def verify(cli: list[str], fx: Fixture, rerun_original: bool) -> Verdict:
    verdict = Verdict(fx)
    if rerun_original:
        original = run_command_string(fx.version, fx.command)
        if original.passed:
            verdict.problems.append("original command now PASSES (fixture is stale)")
            return verdict
    try:
        diagnosis = diagnose(cli, fx)
    except (ValueError, subprocess.TimeoutExpired) as exc:
        verdict.problems.append(f"diagnose: {exc}")
        return verdict
    if diagnosis.get("pattern") != fx.expect_pattern:
        verdict.problems.append(f"diagnosed as {diagnosis.get('pattern')!r}, expected {fx.expect_pattern!r}")
        return verdict
    for label, command, env, wanted in proposed_commands(diagnosis, fx.command):
        if not command and wanted:
            # The fix needs a value only the user knows (e.g. which model to serve): nothing to run.
            verdict.needs_input.append(f"{label}: needs {', '.join(wanted)}")
            continue
        if not command:
            verdict.problems.append(f"{label}: no command")
            continue
        try:
            result = run_command_string(fx.version, command, extra_env=env)
        except ValueError as exc:
            verdict.problems.append(f"{label}: {exc}")
            continue
        verdict.fixes_checked += 1
        if not result.passed:
            last = [line for line in result.output.splitlines() if line.strip()][-1:] or ["(no output)"]
            shown = " ".join([*(f"{k}={v}" for k, v in env.items()), command])
            verdict.problems.append(f"{label} still fails: {shown}\n      -> {last[0][:200]}")
    verdict.ok = not verdict.problems
    return verdict


def print_table(verdicts: list[Verdict], versions: list[str]) -> None:
    cells: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for v in verdicts:
        cells[v.fixture.expect_pattern][v.fixture.version].append(v.ok)
    width = max([len("pattern"), *(len(p) for p in cells)])
    print(f"\n{'pattern':{width}}  " + "  ".join(f"{v:>13}" for v in versions))
    for pattern in sorted(cells):
        row = []
        for version in versions:
            oks = cells[pattern].get(version, [])
            row.append(f"{sum(oks)}/{len(oks)} fail->pass" if oks else "-")
        print(f"{pattern:{width}}  " + "  ".join(f"{c:>13}" for c in row))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Verify logsleuth fixes against the real SGLang.")
    parser.add_argument("--versions", nargs="*", default=list(VERSIONS))
    parser.add_argument("--only", nargs="*", default=None, help="fixture names (default: all)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--cli", default=None, help='logsleuth command to use (default: "python -m logsleuth")'
    )
    parser.add_argument(
        "--no-rerun", action="store_true", help="skip step (a), re-running the original command"
    )
    ns = parser.parse_args(argv)

    cli, why = (shlex.split(ns.cli), "") if ns.cli else default_cli()
    if cli is None:
        print(f"verify-fixes: SKIPPED: {why}")
        return 0
    missing = [v for v in ns.versions if not (venv_dir(v) / ".ready").exists()]
    if missing:
        print(
            f"verify-fixes: oracle venvs missing for {missing}: run scripts/oracle/setup.sh", file=sys.stderr
        )
        return 2

    fixtures = load_fixtures(ns.versions, ns.only)
    patterned = [f for f in fixtures if f.expect_pattern]
    unpatterned = [f for f in fixtures if not f.expect_pattern]
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, ns.jobs)) as pool:
        verdicts = list(pool.map(lambda fx: verify(cli, fx, not ns.no_rerun), patterned))

    for v in verdicts:
        fx = v.fixture
        status = f"ok ({v.fixes_checked} fix command(s) pass)" if v.ok else "MISS"
        if v.needs_input:
            status += f"; not runnable without user input: {'; '.join(v.needs_input)}"
        print(f"{fx.version:13} {fx.name:45} {fx.expect_pattern:34} {status}")
        for problem in v.problems:
            print(f"    - {problem}")
    print_table(verdicts, ns.versions)
    if unpatterned:
        names = sorted({f.name for f in unpatterned})
        print(
            f"\nunpatterned (expect_pattern empty, not verified): {len(unpatterned)} fixtures: {', '.join(names)}"
        )
    misses = sum(not v.ok for v in verdicts)
    print(f"\n{len(verdicts) - misses} verified, {misses} missed, in {time.monotonic() - started:.0f}s")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
