"""Prove logsleuth's vLLM fixes against the REAL `vllm serve`: each failing fixture must fail, be diagnosed as
its expected pattern, and every command logsleuth proposes must then pass vLLM's own validation.

For every ``tests/fixtures/vllm/<version>/<name>.toml`` with ``expect_failure = true`` and a pattern:
  (a) re-run ``command`` on that version            -> must fail (the fixture is still true)
  (b) ``logsleuth diagnose LOG --cmd COMMAND --engine-version V --format json``
                                                    -> failures[0].diagnosis.pattern == expect_pattern
  (c) run ``fix.command`` and each alternative's ``command`` on the same version -> must pass; an upgrade
      alternative (``pip install --upgrade "vllm>=X"``, logsleuth/facts/relaxed_checks.toml) runs the fixture's
      own command on the oldest oracle release at or after X instead
For a failing fixture without a pattern, only (a) and the upgrade alternatives of (c) are checked, when its
diagnosis offers one (the rest of its advice is general guidance, not a command).
A fix that needs a value only the user knows (``needs_input``) is listed, not run. A fix with neither a
command nor needs_input is a miss (text-only advice cannot be proven). Prints a patterns x versions table;
exits 1 on any miss, 0 otherwise (0 with a message when logsleuth is not installed).

Usage: verify_fixes.py [--versions V ...] [--only NAME ...] [--jobs N] [--cli "logsleuth"] [--no-rerun]
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

sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "oracle"))
from upgrade import oldest_at_or_after, upgrade_target  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "vllm"
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
    problems: list[str] = field(default_factory=list)
    fixes_passed: int = 0
    needs_input: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and self.fixes_passed > 0


def load_fixtures(versions: list[str], only: list[str] | None) -> list[Fixture]:
    found = []
    for version in versions:
        for meta_path in sorted((FIXTURES / version).glob("*.toml")):
            meta = tomllib.loads(meta_path.read_text())
            if not meta.get("expect_failure") or (only is not None and meta_path.stem not in only):
                continue
            found.append(Fixture(meta_path.stem, meta["engine_version"], meta_path.with_suffix(".log"),
                                 meta["command"], meta.get("expect_pattern", "")))
    return found


def default_cli() -> list[str] | None:
    """This checkout's logsleuth (the venv next to it), else one on PATH."""
    local = REPO / ".venv" / "bin" / "logsleuth"
    if local.exists():
        return [str(local)]
    script = shutil.which("logsleuth")
    return [script] if script else None


def diagnose(cli: list[str], fx: Fixture) -> dict[str, Any]:
    argv = [*cli, "diagnose", str(fx.log), "--cmd", fx.command, "--engine-version", fx.version, "--format", "json"]
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=CLI_TIMEOUT_S, check=False)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-2:]
        raise ValueError(f"CLI exit {proc.returncode}, no JSON: {' | '.join(tail)}") from None
    failures = report.get("failures") or []
    diagnosis = failures[0].get("diagnosis") if failures else None
    if not diagnosis:
        raise ValueError("no diagnosis for the first failure")
    return dict(diagnosis)


def fix_entries(diagnosis: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    fix = diagnosis.get("fix") or {}
    return [("fix", fix)] + [(f"alternative {i}", alt) for i, alt in enumerate(fix.get("alternatives") or [], 1)]


def verify(cli: list[str], fx: Fixture, rerun: bool) -> Verdict:
    verdict = Verdict(fx)
    if rerun and run_command_string(fx.version, fx.command).passed:
        verdict.problems.append("original command now PASSES (fixture is stale)")
        return verdict
    try:
        diagnosis = diagnose(cli, fx)
    except (ValueError, subprocess.TimeoutExpired) as exc:
        verdict.problems.append(f"diagnose: {exc}")
        return verdict
    if fx.expect_pattern and diagnosis.get("pattern") != fx.expect_pattern:
        verdict.problems.append(f"diagnosed as {diagnosis.get('pattern')!r}, expected {fx.expect_pattern!r}")
        return verdict
    for label, entry in fix_entries(diagnosis):
        if not fx.expect_pattern and upgrade_target(entry) is None:
            continue  # general guidance of an unpatterned failure: no command to prove
        check(fx, label, entry, verdict)
    return verdict


def check(fx: Fixture, label: str, entry: dict[str, Any], verdict: Verdict) -> None:
    """Run one fix or alternative on the oracle; its outcome goes into the verdict."""
    target = upgrade_target(entry)
    if target is not None:
        engine, release = target
        version = oldest_at_or_after(release, VERSIONS) if engine == "vllm" else None
        if version is None:
            verdict.problems.append(f"{label}: upgrade to {engine} {release} (no vLLM oracle release at or after it)")
            return
        run(version, fx.command, {}, f"{label} (upgrade to {release}, run on {version}) still fails", verdict)
        return
    env = {str(k): str(v) for k, v in (entry.get("env") or {}).items()}
    command = entry.get("command") or (fx.command if env else "")
    wanted = list(entry.get("needs_input") or [])
    if not command and wanted:
        verdict.needs_input.append(f"{label}: needs {', '.join(wanted)}")
        return
    if not command:
        verdict.problems.append(f"{label}: no command to run (text-only fix: {str(entry.get('summary'))[:80]})")
        return
    run(fx.version, command, env, f"{label} still fails", verdict)


def run(version: str, command: str, env: dict[str, str], failing: str, verdict: Verdict) -> None:
    result = run_command_string(version, command, extra_env=env)
    if result.passed:
        verdict.fixes_passed += 1
    else:
        last = [line for line in result.output.splitlines() if line.strip()][-1:] or ["(no output)"]
        verdict.problems.append(f"{failing}: {command}\n      -> {last[0][:200]}")


def upgrades_offered(cli: list[str], fx: Fixture) -> bool:
    """Whether an unpatterned fixture's diagnosis offers an upgrade (then verify() proves it)."""
    try:
        return any(upgrade_target(entry) is not None for _, entry in fix_entries(diagnose(cli, fx)))
    except (ValueError, subprocess.TimeoutExpired):
        return False


def print_table(verdicts: list[Verdict], versions: list[str]) -> None:
    cells: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for v in verdicts:
        cells[v.fixture.expect_pattern or "(no pattern: upgrade)"][v.fixture.version].append(v.ok)
    width = max([len("pattern"), *(len(p) for p in cells)])
    print(f"\n{'pattern':{width}}  " + "  ".join(f"{v:>15}" for v in versions))
    for pattern in sorted(cells):
        row = [f"{sum(o)}/{len(o)} fail->pass" if (o := cells[pattern].get(v, [])) else "-" for v in versions]
        print(f"{pattern:{width}}  " + "  ".join(f"{c:>15}" for c in row))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Verify logsleuth's vLLM fixes against the real vLLM.")
    parser.add_argument("--versions", nargs="*", default=list(VERSIONS))
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--cli", default=None, help="logsleuth command (default: this checkout's .venv/bin/logsleuth)")
    parser.add_argument("--no-rerun", action="store_true", help="skip step (a)")
    ns = parser.parse_args(argv)
    cli = shlex.split(ns.cli) if ns.cli else default_cli()
    if cli is None:
        print("verify-fixes (vLLM): SKIPPED: logsleuth is not installed (pip install -e .)")
        return 0
    missing = [v for v in ns.versions if not (venv_dir(v) / ".ready").exists()]
    if missing:
        print(f"verify-fixes (vLLM): oracle venvs missing for {missing}: run scripts/oracle_vllm/setup.sh", file=sys.stderr)
        return 2
    fixtures = load_fixtures(ns.versions, ns.only)
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, ns.jobs)) as pool:
        # An unpatterned fixture is verified when its diagnosis offers an upgrade past a relaxed check.
        offered = dict(zip(fixtures, pool.map(lambda fx: not fx.expect_pattern and upgrades_offered(cli, fx), fixtures),
                           strict=True))
        checked = [f for f in fixtures if f.expect_pattern or offered[f]]
        verdicts = list(pool.map(lambda fx: verify(cli, fx, not ns.no_rerun), checked))
    for v in verdicts:
        fx = v.fixture
        status = f"ok ({v.fixes_passed} fix command(s) pass)" if v.ok else "MISS"
        if v.needs_input:
            status += f"; needs user input: {'; '.join(v.needs_input)}"
        print(f"{fx.version:7} {fx.name:38} {fx.expect_pattern:34} {status}")
        for problem in v.problems:
            print(f"    - {problem}")
    print_table(verdicts, ns.versions)
    unpatterned = sorted({f.name for f in fixtures if not f.expect_pattern and not offered[f]})
    if unpatterned:
        print(f"\nunpatterned (not verified): {', '.join(unpatterned)}")
    misses = sum(not v.ok for v in verdicts)
    print(f"\nvLLM: {len(verdicts) - misses} verified fail->pass, {misses} missed, in {time.monotonic() - started:.0f}s")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
