"""Prove logsleuth's fixes against the REAL SGLang: each failing fixture must fail, be diagnosed as its
expected pattern, and every command logsleuth proposes must then pass SGLang's own validation.

For every ``tests/fixtures/sglang/<version>/<name>.toml`` with ``expect_failure = true``:
  (a) re-run ``command`` on that version             -> must fail (the fixture is still true)
  (b) ``logsleuth diagnose LOG --cmd COMMAND --engine-version V --format json``
                                                     -> failures[0].diagnosis.pattern == expect_pattern
  (c) run ``fix.command`` and each alternative's ``command`` on the same version -> must pass
Prints a patterns x versions table of fixtures that went fail -> pass; exits 1 on any miss, 0 otherwise,
and 0 with a clear message when logsleuth itself is not importable yet (nothing to verify against).
Fixtures with an empty expect_pattern are listed as "unpatterned" and not counted as misses, unless their
diagnosis offers an upgrade past a check a later release relaxed (logsleuth/facts/relaxed_checks.toml): then (a)
and that upgrade are checked (the rest of their advice is general guidance, not a command).

``--check without-cmd`` (or ``all``) checks the advice a user gets when logsleuth does NOT know the command,
the common case: for every failing fixture, patterned or not,
  (d) ``logsleuth diagnose LOG --format json`` on the log without its ``+ python -m ...`` line (bash -x
      prints the command there, and logsleuth would read it), no ``--cmd``, no ``--engine-version``
  (e) apply each fix's and alternative's flag operations (and env) to the fixture's own command, as the
      user would by hand (flagops.py) -> must pass the real validation, unless the fix lists what it
      needs from the user (``needs_input``)
Every fixture where that fails is listed; misses count towards the exit status like those of (a)-(c).  The
general checks of a failure no pattern or rule names (basis "general", shown as general guidance) change no flag
and are not run.

Usage: verify_fixes.py [--versions V ...] [--only NAME ...] [--jobs N] [--cli "python -m logsleuth"]
                       [--check cmd|without-cmd|all] [--no-rerun]
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from flagops import applied_command  # noqa: E402
from run import VERSIONS, Result, run_command_string, venv_dir  # noqa: E402
from upgrade import oldest_at_or_after, upgrade_target  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "sglang"
CLI_TIMEOUT_S = 120
CHECKS = ("cmd", "without-cmd", "all")


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
    """Run the CLI with the command and version given; failures[0].diagnosis (ValueError when unusable)."""
    report = run_cli(cli, fx.log, "--cmd", fx.command, "--engine-version", fx.version)
    return primary_diagnosis(report)


def run_cli(cli: list[str], log: Path, *options: str) -> dict[str, Any]:
    """`logsleuth diagnose LOG OPTIONS --format json`, parsed (ValueError with the CLI's last words when not JSON)."""
    argv = [*cli, "diagnose", str(log), *options, "--format", "json"]
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=CLI_TIMEOUT_S, check=False)
    try:
        report: dict[str, Any] = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise ValueError(f"CLI exit {proc.returncode}, no JSON ({exc.msg}): {' | '.join(tail)}") from None
    return report


def primary_diagnosis(report: dict[str, Any]) -> dict[str, Any]:
    failures = report.get("failures") or []
    if not failures:
        raise ValueError("CLI found no failure in the log")
    diagnosis: dict[str, Any] | None = failures[0].get("diagnosis")
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
    out = []
    for label, entry in fix_entries(diagnosis):
        env = fix_env(entry)
        command = entry.get("command") or (original if env else "")
        out.append((label, command, env, list(entry.get("needs_input") or [])))
    return out


def fix_entries(diagnosis: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """("fix", the fix) and ("alternative N", each alternative), in the report's order."""
    fix = diagnosis.get("fix") or {}
    alternatives = fix.get("alternatives") or []
    return [("fix", fix)] + [(f"alternative {i}", alt) for i, alt in enumerate(alternatives, start=1)]


def fix_env(entry: dict[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in (entry.get("env") or {}).items()}


def upgrade_release(entry: dict[str, Any]) -> str | None:
    """The SGLang release an upgrade alternative points to (`pip install --upgrade "sglang>=0.5.19"`, no flag or
    env change): the same command is to pass there, not on the fixture's release."""
    target = upgrade_target(entry)
    return target[1] if target is not None and target[0] == "sglang" else None


def judge_upgrade(release: str, fx: Fixture, label: str, problems: list[str]) -> bool:
    """Run the fixture's own command on the oldest oracle release at or after `release`: an upgrade is verified
    only where a real release of that range accepts the same command."""
    oldest = oldest_at_or_after(release, VERSIONS)
    if oldest is None:
        problems.append(f"{label}: upgrade to {release} (no oracle release at or after it to run it on)")
        return False
    return judge(oldest, fx.command, {}, f"{label} (upgrade to {release}, run on {oldest}) still fails", problems)


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
    if fx.expect_pattern and diagnosis.get("pattern") != fx.expect_pattern:
        verdict.problems.append(f"diagnosed as {diagnosis.get('pattern')!r}, expected {fx.expect_pattern!r}")
        return verdict
    entries = zip(fix_entries(diagnosis), proposed_commands(diagnosis, fx.command), strict=True)
    for (label, entry), (_, command, env, wanted) in entries:
        if not fx.expect_pattern and upgrade_release(entry) is None:
            continue  # general guidance of an unpatterned failure: no command to prove
        if (release := upgrade_release(entry)) is not None:
            verdict.fixes_checked += judge_upgrade(release, fx, label, verdict.problems)
            continue
        if not command and wanted:
            # The fix needs a value only the user knows (e.g. which model to serve): nothing to run.
            verdict.needs_input.append(f"{label}: needs {', '.join(wanted)}")
            continue
        if not command:
            verdict.problems.append(f"{label}: no command")
            continue
        verdict.fixes_checked += judge(fx.version, command, env, f"{label} still fails", verdict.problems)
    verdict.ok = not verdict.problems
    return verdict


def judge(version: str, command: str, env: dict[str, str], failing: str, problems: list[str]) -> bool:
    """Run `command` on the oracle; a problem (`failing: command -> SGLang's last line`) when it does not
    pass validation. True when it ran."""
    try:
        result = run_once(version, command, env)
    except ValueError as exc:
        problems.append(f"{failing} (not run: {exc})")
        return False
    if not result.passed:
        problems.append(f"{failing}: {_shown(command, env)}\n      -> {_last_line(result)}")
    return True


_RUNS: dict[tuple[str, str, tuple[tuple[str, str], ...]], Result] = {}
_RUNS_LOCK = threading.Lock()


def run_once(version: str, command: str, env: dict[str, str]) -> Result:
    """The oracle's verdict on a command, run once per (version, command, env) in a verify run: the same
    corrected command often comes out of both checks and of several fixtures."""
    key = (version, command, tuple(sorted(env.items())))
    with _RUNS_LOCK:
        cached = _RUNS.get(key)
    if cached is None:
        cached = run_command_string(version, command, extra_env=env)
        with _RUNS_LOCK:
            _RUNS[key] = cached
    return cached


def _last_line(result: Result) -> str:
    last = [line for line in result.output.splitlines() if line.strip()][-1:] or ["(no output)"]
    return last[0][:200]


def _shown(command: str, env: dict[str, str]) -> str:
    return " ".join([*(f"{k}={v}" for k, v in env.items()), command])


# -- (d)/(e): the advice without the command ------------------------------------------------------


@dataclass
class BlindVerdict:
    fixture: Fixture
    pattern: str | None = None  # what logsleuth diagnosed without the command
    seen_command: str | None = None  # a launch command logsleuth still found in the log (should be None)
    problems: list[str] = field(default_factory=list)
    fixes_checked: int = 0
    needs_input: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def log_without_command(fx: Fixture, directory: Path) -> Path:
    """A copy of the fixture log without the `+ python -m sglang.launch_server ...` line(s) of bash -x."""
    kept = [line for line in fx.log.read_text().splitlines(keepends=True) if not line.startswith("+ ")]
    out = directory / f"{fx.version}-{fx.name}.log"
    out.write_text("".join(kept))
    return out


def verify_without_cmd(cli: list[str], fx: Fixture, directory: Path) -> BlindVerdict:
    verdict = BlindVerdict(fx)
    try:
        report = run_cli(cli, log_without_command(fx, directory))
        diagnosis = primary_diagnosis(report)
    except (ValueError, subprocess.TimeoutExpired) as exc:
        verdict.problems.append(f"diagnose without --cmd: {exc}")
        return verdict
    verdict.pattern = diagnosis.get("pattern")
    verdict.seen_command = (report.get("launch") or {}).get("command")
    for label, entry in fix_entries(diagnosis):
        wanted = list(entry.get("needs_input") or [])
        if wanted:
            verdict.needs_input.append(f"{label}: needs {', '.join(wanted)}")
            continue
        if (release := upgrade_release(entry)) is not None:
            verdict.fixes_checked += judge_upgrade(release, fx, label, verdict.problems)
            continue
        ops, env = list(entry.get("flags") or []), fix_env(entry)
        if not ops and not env and diagnosis.get("basis") == "general":
            continue  # general checks, shown as general guidance (no pattern or rule): no command to prove
        if not ops and not env:
            verdict.problems.append(f"{label}: no flag operation or env to apply ({entry.get('summary', '')[:100]})")
            continue
        try:
            command = applied_command(fx.command, ops, fx.version)
        except ValueError as exc:
            verdict.problems.append(f"{label}: {exc}")
            continue
        shown_ops = ", ".join(_op_text(op) for op in ops) or "no flag change"
        verdict.fixes_checked += judge(fx.version, command, env, f"{label} [{shown_ops}] fails", verdict.problems)
    return verdict


def _op_text(op: dict[str, Any]) -> str:
    text = f"{op['op']} {op['flag']}"
    if op.get("to"):
        text += f" -> {op['to']}"
    if op.get("value") is not None:
        text += f" {op['value']!r}"
    return text


def report_without_cmd(verdicts: list[BlindVerdict]) -> None:
    print("\n== advice WITHOUT the command: each fix's flag operations applied to the fixture's command")
    for v in verdicts:
        fx = v.fixture
        status = f"ok ({v.fixes_checked} applied command(s) pass)" if v.ok else "UNSAFE"
        if v.needs_input:
            status += f"; needs user input: {'; '.join(v.needs_input)}"
        if v.pattern != fx.expect_pattern:
            status += f"; diagnosed as {v.pattern!r} (with the command: {fx.expect_pattern or 'none'!r})"
        if v.seen_command:
            status += f"; command still read from the log: {v.seen_command[:80]!r}"
        print(f"{fx.version:13} {fx.name:45} {str(v.pattern):34} {status}")
        for problem in v.problems:
            print(f"    - {problem}")
    unsafe = [v for v in verdicts if not v.ok]
    print(f"\nwithout the command: {len(verdicts) - len(unsafe)} safe, {len(unsafe)} unsafe")
    for v in unsafe:
        print(f"  UNSAFE {v.fixture.version} {v.fixture.name} ({v.pattern})")


def print_table(verdicts: list[Verdict], versions: list[str]) -> None:
    cells: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for v in verdicts:
        cells[v.fixture.expect_pattern or "(no pattern: upgrade)"][v.fixture.version].append(v.ok)
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
    parser.add_argument(
        "--check",
        choices=CHECKS,
        default="cmd",
        help="cmd: steps (a)-(c), logsleuth given the command; without-cmd: steps (d)-(e); all: both",
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
    started = time.monotonic()
    misses = 0
    if ns.check in ("cmd", "all"):
        misses += check_with_cmd(cli, fixtures, ns)
    if ns.check in ("without-cmd", "all"):
        with tempfile.TemporaryDirectory(prefix="verify-without-cmd-") as tmp, ThreadPoolExecutor(
            max_workers=max(1, ns.jobs)
        ) as pool:
            blind = list(pool.map(lambda fx: verify_without_cmd(cli, fx, Path(tmp)), fixtures))
        report_without_cmd(blind)
        misses += sum(not v.ok for v in blind)
    print(f"\n{misses} miss(es) in {time.monotonic() - started:.0f}s")
    return 1 if misses else 0


def upgrades_offered(cli: list[str], fx: Fixture) -> bool:
    """Whether an unpatterned fixture's diagnosis offers an upgrade (then verify() proves it)."""
    try:
        return any(upgrade_release(entry) is not None for _, entry in fix_entries(diagnose(cli, fx)))
    except (ValueError, subprocess.TimeoutExpired):
        return False


def check_with_cmd(cli: list[str], fixtures: list[Fixture], ns: argparse.Namespace) -> int:
    """Steps (a)-(c) for the fixtures with an expected pattern, and for the unpatterned failing fixtures whose
    diagnosis offers an upgrade past a relaxed check; the number of misses."""
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, ns.jobs)) as pool:
        offered = dict(zip(fixtures, pool.map(
            lambda fx: not fx.expect_pattern and upgrades_offered(cli, fx), fixtures), strict=True))
        patterned = [f for f in fixtures if f.expect_pattern or offered[f]]
        verdicts = list(pool.map(lambda fx: verify(cli, fx, not ns.no_rerun), patterned))
    unpatterned = [f for f in fixtures if not f.expect_pattern and not offered[f]]

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
    return misses


if __name__ == "__main__":
    sys.exit(main())
