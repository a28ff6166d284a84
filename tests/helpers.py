"""Shared test helpers: run the real CLI, make real CPython tracebacks, load a test's own pattern."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import IO, Any

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.diagnosis.library import PatternSet
from logsleuth.models import Diagnosis

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpus"


def corpus_logs() -> list[Path]:
    """Every log of the shared corpus (when it is beside the checkout), the wild corpus, the engines' fixtures and
    the pattern fixtures: the logs issue 29's checks run over."""
    roots = [REPO / "tests/fixtures/wild", REPO / "tests/fixtures/sglang", REPO / "tests/fixtures/vllm",
             REPO / "tests/fixtures/patterns"]
    if CORPUS.is_dir():
        roots.insert(0, CORPUS)
    return [log for root in roots for log in sorted(root.rglob("*.log"))]


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def run_cli(*args: str, stdin: bytes | None = None) -> CliResult:
    """Run `logsleuth ARGS` in-process, as the console script would."""
    from logsleuth.__main__ import main

    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        sys.stdin = old_stdin
    return CliResult(code, out.getvalue(), err.getvalue())


def default_sigint() -> None:
    """A `preexec_fn`: the child starts with SIGINT's default action whatever the test run inherited.  A suite
    started with SIGINT ignored (`nohup make test &`, a background job of a non-interactive shell) passes the
    ignoring on through fork and exec; Python then installs no KeyboardInterrupt handler, and a Ctrl-C test's
    SIGINT would do nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def spawn(argv: list[str], **popen: Any) -> subprocess.Popen[Any]:
    """subprocess.Popen(argv, **popen) for a child a test may interrupt: its SIGINT is the default one
    (default_sigint).  Every test that sends SIGINT starts its child with this."""
    return subprocess.Popen(argv, preexec_fn=default_sigint, **popen)


def task_state_and_wait(proc: Path) -> tuple[str, str]:
    """A process's or thread's scheduler state (`S` asleep, `R` running) and kernel wait channel ("0" where the
    kernel hides it), from its /proc directory; OSError when it is gone."""
    state = (proc / "stat").read_text().rpartition(")")[2].split()[0]
    return state, (proc / "wchan").read_text()


def wait_until_reading_stdin(process: subprocess.Popen[Any], deadline: float = 120.0) -> None:
    """Return once `process` sleeps in a read of its standard input (a pipe): the kernel's wait channel names
    the pipe read, or, where the kernel hides it, the current system call is read(0, …) (x86-64 and arm64
    numbers).  A test that signals the process at that point does not race its interpreter's start-up, however
    loaded the machine; a fixed sleep does (a SIGINT before Python installs its handler kills with -2)."""
    read_calls = ("0 0x0 ", "63 0x0 ")  # read(2) on x86-64, on arm64; fd 0
    give_up = time.monotonic() + deadline  # only a child that never reads is this slow
    while process.poll() is None and time.monotonic() < give_up:
        try:
            state, wchan = task_state_and_wait(Path(f"/proc/{process.pid}"))
            syscall = Path(f"/proc/{process.pid}/syscall").read_text()
        except OSError:
            state, wchan, syscall = "?", "0", ""
        if state == "S" and ("pipe" in wchan or syscall.startswith(read_calls)):
            return
        time.sleep(0.01)


def run_cli_subprocess(*args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> CliResult:
    """Run the installed `logsleuth` command as a separate process (with the default SIGINT: default_sigint)."""
    command = [sys.executable, "-m", "logsleuth", *args]
    proc = subprocess.run(
        command, input=stdin, capture_output=True, timeout=120, env={**os.environ, **(env or {})},
        preexec_fn=default_sigint,
    )
    return CliResult(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))


@lru_cache(maxsize=64)
def real_traceback(code: str, filename: str = "app.py") -> str:
    """The traceback the real interpreter prints for `code`, run as the script `filename`
    from a temporary package tree (so paths look like an installed SGLang when asked)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / filename
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(code))
        proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60, cwd=tmp)
        assert proc.returncode != 0, "the snippet was meant to raise"
        # Keep the temp path out of fingerprints and assertions.
        return proc.stderr.replace(tmp + "/", "/srv/")


def argparse_error_line(prog: str, argv: list[str]) -> str:
    """The error line CPython's argparse prints for argv (`prog: error: …`), from a parser with only --model-path."""
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--model-path")
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.suppress(SystemExit):
        parser.parse_args(argv)
    return stderr.getvalue().strip().splitlines()[-1]


def traceback_of_installed(tmp_path: Path, files: dict[str, str], script: str, *, python: str = "python3.11",
                           script_name: str = "app.py") -> subprocess.CompletedProcess[str]:
    """Run `script` (from `tmp_path`) with a site-packages tree of `files` (path under site-packages -> source) on
    its path, every directory on the way a package; the finished process (its stderr: real CPython's traceback)."""
    root = tmp_path / "venv" / "lib" / python / "site-packages"
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        for package in path.relative_to(root).parents:
            if package != Path(".") and not (root / package / "__init__.py").exists():
                (root / package / "__init__.py").touch()
        path.write_text(source, encoding="utf-8")
    app = tmp_path / script_name
    app.write_text(f"import sys\nsys.path.insert(0, {str(root)!r})\n{script}", encoding="utf-8")
    return subprocess.run([sys.executable, str(app)], capture_output=True, text=True, cwd=tmp_path, timeout=60)


def install_module(tmp_path: Path, module: str, source: str) -> tuple[Path, str]:
    """Write `module` (a path such as `verl/workers/x.py`) with `source` under a site-packages tree in `tmp_path`,
    every directory on the way a package; its site-packages root and its dotted name."""
    root = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    path = root / module
    path.parent.mkdir(parents=True)
    for package in path.relative_to(root).parents:
        if package != Path("."):
            (root / package / "__init__.py").touch()
    path.write_text(source, encoding="utf-8")
    return root, module.removesuffix(".py").replace("/", ".")


def traceback_in_package(tmp_path: Path, module: str, body: str) -> str:
    """Real CPython's traceback of a script calling `run()` in `module` (a path such as `verl/workers/x.py`) installed
    under a site-packages tree in `tmp_path`; `run`'s body is `body` (indented by four spaces, its first line)."""
    root, dotted = install_module(tmp_path, module, f"def run():\n    {body}\n")
    script = tmp_path / "app.py"
    script.write_text(f"import sys\nsys.path.insert(0, {str(root)!r})\nfrom {dotted} import run\nrun()\n", encoding="utf-8")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert run.returncode == 1 and f"site-packages/{module}" in run.stderr
    return run.stderr


def append_later(path: Path, pieces: list[str] | list[bytes], delay: float) -> threading.Thread:
    """Append each piece to `path` after `delay` seconds, in a thread: a server writing its log (watch)."""

    def run() -> None:
        for piece in pieces:
            time.sleep(delay)
            with path.open("ab") as handle:
                handle.write(piece.encode() if isinstance(piece, str) else piece)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def append_as_read(path: Path, pieces: list[str], deadline: float = 60.0) -> threading.Thread:
    """Append each piece to `path` once the main thread, following it, has read the file to its end and sleeps
    for more (its read position in /proc/self/fdinfo, its kernel wait in /proc/.../wchan), in a thread: each
    piece then reaches the follower as a read of its own however loaded the machine.  (append_later's fixed
    delay lets a slow reader take several at once, and so does a buffered read that loops on the file while
    the next piece lands.)"""
    main = threading.main_thread().native_id

    def waits_at_the_end() -> bool:
        try:
            state, wchan = task_state_and_wait(Path(f"/proc/self/task/{main}"))
        except OSError:
            state, wchan = "S", "0"
        if state != "S":
            return False  # running: it may be about to read again, and would take the next piece with this one
        # wchan "0" while asleep: a kernel that hides it; the read position alone must do
        if wchan != "0" and not wchan.startswith(("poll_schedule_timeout", "do_select", "do_nanosleep", "hrtimer")):
            return False  # busy, or asleep on something else (the GIL): not yet waiting for the file
        size = path.stat().st_size
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/self/fd/{fd}") == str(path):
                    with open(f"/proc/self/fdinfo/{fd}") as info:
                        if int(info.readline().split()[1]) == size:  # "pos:\tN"
                            return True
        return False

    def run() -> None:
        for piece in pieces:
            give_up = time.monotonic() + deadline  # only a follower that hangs is this slow
            while not waits_at_the_end() and time.monotonic() < give_up:
                time.sleep(0.005)
            with path.open("a") as handle:
                handle.write(piece)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def lines_until(stream: IO[str], marker: str) -> list[str]:
    """Lines read from `stream` up to and including the first one containing `marker` (all of it if none does):
    a test waits on what the program says it is doing, not on a guess of how long it takes."""
    lines = [stream.readline()]
    while lines[-1] and marker not in lines[-1]:
        lines.append(stream.readline())
    return lines


def offsets_of(data: bytes, anchors: tuple[bytes, ...]) -> list[int]:
    """Every offset where one of the anchors starts, sorted: what `find_anchors` must return."""
    found = set()
    for anchor in anchors:
        index = data.find(anchor)
        while index >= 0:
            found.add(index)
            index = data.find(anchor, index + 1)
    return sorted(found)


def load_test_pattern(tmp_path: Path, name: str, text: str) -> PatternSet:
    """The patterns of one pattern file written to `tmp_path/patterns/NAME.toml`, loaded strictly (a
    mistake in the test's own pattern fails the test instead of being skipped with a warning)."""
    from logsleuth.diagnosis.library import load_patterns

    directory = tmp_path / "patterns"
    directory.mkdir(exist_ok=True)
    (directory / f"{name}.toml").write_text(text)
    return load_patterns([directory], include_user=False, strict=True)


def diagnose_without_patterns(text: str, **options: Any) -> Diagnosis:
    """The first failure's diagnosis of `text` with no pattern at all: the reasoning rules and the honest category
    alone (`options`: more DiagnoseOptions, such as engine_version)."""
    report = diagnose_text(text, DiagnoseOptions(include_user_patterns=False, **options),
                           patterns=PatternSet(patterns=[], errors=[]))
    found = report.failures[0].diagnosis
    assert found is not None
    return found


def diagnose_with_patterns(text: str) -> Diagnosis:
    """The first failure's diagnosis of `text` with the project's own patterns (no user's)."""
    report = diagnose_text(text, DiagnoseOptions(include_user_patterns=False))
    found = report.failures[0].diagnosis
    assert found is not None
    return found


def check_texts(found: Diagnosis) -> str:
    """The diagnosis's fix steps, one a line."""
    return "\n".join(found.fix.steps) if found.fix else ""


def without_exception_line(printed: str) -> str:
    """The traceback cut right after the raising statement (its carets kept): no exception line."""
    lines = printed.strip().splitlines()
    return "\n".join(lines[:-1]) + "\n"


def frames_without_file_wording(printed: str) -> str:
    """Each `  File "<path>", line N, in <f>` as `  <path>, in <f>` (a paste that kept only paths and functions)."""
    return re.sub(r'^(\s*)File "([^"]+)", line \d+, in (\S+)$', r"\1\2, in \3", printed, flags=re.M)


def load_oracle(package: str):  # type: ignore[no-untyped-def]
    """scripts/<package>/run.py: both oracles' modules are named run.py, so each is loaded under its own name."""
    import importlib.util

    name = f"_cross_engine_{package}_run"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / package / "run.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]
