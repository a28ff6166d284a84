"""A warm launcher for the oracles: import the engine once, then fork one child per validation run.

Why: a validation run of SGLang or vLLM spends ~90 % of its 10-20 s importing the engine (torch, transformers,
the engine's own modules). ``make verify-fixes`` and ``make test-oracle`` make several hundred runs, which
was most of CI's 90 minutes. Forking a process that has already imported the engine skips that cost; what
runs in the child is the same engine code with the same argv, environment and working directory as a cold
``python -m sglang.launch_server ...`` or ``vllm serve ...``.

What would make a warm run differ from a cold one, and how it is avoided:
- A variable read at import time: the server is started with the run's own environment (``oracle_env``), and
  a run with extra variables (``extra_env``) goes cold (``WarmPool.run`` returns None for it).
- Module state left behind by an earlier run: every run is a fresh fork of the never-run server.
- ``sys.path[0]``: ``python -m`` puts the working directory there; the server does the same before the
  preload, so this script's folder never shadows a module.
- A traceback has two more frames at its top (this file's ``_run_target``, ``runpy.run_module``): the verdict,
  the status and the message are the same, but output that is committed as a fixture is made cold
  (``run_launch(..., warm=False)``).
Cold runs stay the reference: ``LOGSLEUTH_ORACLE_WARM=0`` turns this off, and tests/check/test_warm_oracle.py
compares warm and cold verdicts and messages on real runs.

Two halves:
- ``serve`` (run by the venv's python: ``python warm.py serve SOCKET KIND TARGET PRELOAD...``) imports the
  PRELOAD modules, prints ``ready`` and forks a child per connection on the Unix socket SOCKET. KIND is
  ``module`` (TARGET runs as ``python -m TARGET``) or ``entry`` (TARGET is ``pkg.mod:func``, a console script's
  entry point). It exits when its stdin closes, i.e. when the client process is gone.
- ``WarmPool`` (used by run.py): one server per venv, started on first use, shared by all threads.

Only the standard library is used on both halves (the server runs before anything else is imported).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

READY = "ready"
# Variables that change from run to run and that no engine reads while importing: a server started under one
# value serves runs under another (each child gets the run's own environment, these included).
# XDG_CONFIG_HOME: the tests give each test its own; vLLM reads it in vllm/envs.py's lazy getters, at use.
IMPORT_NEUTRAL = frozenset({"PYTEST_CURRENT_TEST", "XDG_CONFIG_HOME"})
START_TIMEOUT_S = 600.0  # the first import of torch + the engine, on a cold disk cache
WARM_ENV = "LOGSLEUTH_ORACLE_WARM"


# ----------------------------------------------------------------------------------------- server (in the venv)


def _exit_status(exc: BaseException | None) -> int:
    """The exit status CPython gives a program that ended with ``exc`` (None: it returned)."""
    if exc is None:
        return 0
    if isinstance(exc, SystemExit):
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code & 0xFF
        print(code, file=sys.stderr)  # sys.exit("message") prints the message and exits 1
        return 1
    sys.excepthook(type(exc), exc, exc.__traceback__)
    return 1


def _run_target(kind: str, target: str, argv: list[str]) -> int:
    import atexit
    import runpy

    outcome: BaseException | None = None
    sys.argv = list(argv)
    try:
        if kind == "module":
            runpy.run_module(target, run_name="__main__", alter_sys=True)  # argv[0] becomes its file, as with -m
        else:
            module_name, func_name = target.split(":")
            module = __import__(module_name, fromlist=[func_name])
            raise SystemExit(getattr(module, func_name)())
    except BaseException as exc:  # noqa: BLE001 -- every ending is reported as CPython would
        outcome = exc
    status = _exit_status(outcome)
    atexit._run_exitfuncs()  # what the interpreter runs at exit (SGLang registers its own)
    return status


def _child(conn: socket.socket, kind: str, target: str) -> None:
    """In the forked child: read the request, run it with its output in the given file, report the status."""
    status = 1
    try:
        request = json.loads(conn.makefile("r").readline())
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the server ignores it; the engine waits for its children
        conn.sendall(f"{os.getpid()}\n".encode())
        out = os.open(request["output"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.chdir(request["cwd"])
        sys.path[0] = _first_path_entry(kind, request["argv"][0], request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        status = _run_target(kind, target, request["argv"])
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        try:
            conn.sendall(f"{status}\n".encode())
        finally:
            os._exit(status)


def _first_path_entry(kind: str, argv0: str, cwd: str) -> str:
    """``sys.path[0]`` as CPython sets it: the working directory for ``-m``, the script's folder otherwise."""
    return cwd if kind == "module" else os.path.dirname(os.path.abspath(argv0))


def serve(socket_path: str, kind: str, target: str, preload: list[str]) -> int:
    # Never this script's folder (it holds run.py and friends); the venv's bin holds only console scripts.
    sys.path[0] = _first_path_entry(kind, os.path.join(os.path.dirname(sys.executable), "-"), os.getcwd())
    ready_channel = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # what the imports print (vLLM logs to stdout) goes to the server's log, not to the client
    for name in preload:
        __import__(name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(16)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    print(READY, file=ready_channel, flush=True)
    while True:
        readable, _, _ = select.select([listener, sys.stdin], [], [])
        if sys.stdin in readable and not sys.stdin.buffer.read1(1):
            return 0  # the client is gone
        if listener in readable:
            conn, _ = listener.accept()
            if os.fork() == 0:
                listener.close()
                _child(conn, kind, target)
            conn.close()


# ----------------------------------------------------------------------------------------- client (in run.py)


class WarmServer:
    """One warm server process for one venv, with its environment fixed at start."""

    def __init__(self, python: Path, kind: str, target: str, preload: list[str], env: dict[str, str]):
        self.env = env
        self._dir = tempfile.TemporaryDirectory(prefix="logsleuth-warm-")
        self.socket_path = os.path.join(self._dir.name, "s")
        server_log = Path(self._dir.name) / "server.log"
        with server_log.open("w") as log:
            self.proc = subprocess.Popen(
                [str(python), __file__, "serve", self.socket_path, kind, target, *preload],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env, text=True,
            )
        ready = _readline_within(self.proc.stdout, START_TIMEOUT_S)
        if ready.strip() != READY:
            self.proc.kill()
            last = (server_log.read_text(errors="replace").strip().splitlines() or ["no output"])[-1]
            self._dir.cleanup()
            raise RuntimeError(f"warm oracle server did not start: {last}")

    def run(self, argv: list[str], env: dict[str, str], timeout: float) -> tuple[int, str]:
        """Run in a fresh fork; (exit status, combined stdout+stderr). TimeoutExpired past ``timeout``.

        ``argv`` is the program's ``sys.argv``: ``["-m", ARGS...]`` for a module, ``[SCRIPT, ARGS...]`` for an entry.
        """
        with tempfile.NamedTemporaryFile(dir=self._dir.name, suffix=".out", delete=False) as out_file:
            output_path = out_file.name
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(timeout)
        child_pid = 0
        try:
            conn.connect(self.socket_path)
            request = {"argv": argv, "env": env, "cwd": os.getcwd(), "output": output_path}
            conn.sendall((json.dumps(request) + "\n").encode())
            replies = conn.makefile("r")
            child_pid = int(replies.readline() or 0)
            status_line = replies.readline()
            status = int(status_line) if status_line.strip() else -signal.SIGKILL  # died without a word
        except TimeoutError:
            if child_pid:
                _kill(child_pid)
            raise subprocess.TimeoutExpired(argv, timeout) from None
        finally:
            conn.close()
        output = Path(output_path).read_text(errors="replace")
        os.unlink(output_path)
        return status, output

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()  # type: ignore[union-attr]
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self._dir.cleanup()


class WarmPool:
    """Warm servers by venv, started on first use; ``run`` returns None where a cold run must be used."""

    def __init__(self, kind: str, target: str, preload: list[str]):
        self.kind, self.target, self.preload = kind, target, preload
        self._servers: dict[str, WarmServer | None] = {}
        self._lock = threading.Lock()

    @staticmethod
    def enabled() -> bool:
        return os.environ.get(WARM_ENV, "1") != "0"

    def run(
        self, venv: Path, argv: list[str], env: dict[str, str], extra_env: dict[str, str] | None, timeout: float
    ) -> tuple[int, str] | None:
        if extra_env or not self.enabled():
            return None  # a variable the engine may read at import: only a cold run is sure to see it
        server = self._server(venv, env)
        return None if server is None else server.run(argv, env, timeout)

    def _server(self, venv: Path, env: dict[str, str]) -> WarmServer | None:
        key = str(venv)
        with self._lock:
            if key not in self._servers:
                try:
                    self._servers[key] = WarmServer(
                        venv / "bin" / "python", self.kind, self.target, self.preload, env
                    )
                except (OSError, RuntimeError) as exc:
                    print(f"warm oracle unavailable for {venv.name}, running cold: {exc}", file=sys.stderr)
                    self._servers[key] = None
            server = self._servers[key]
        if server is not None and _import_relevant(server.env) != _import_relevant(env):
            return None  # started with another environment: the imports may have read it
        return server

    def close(self) -> None:
        with self._lock:
            for server in self._servers.values():
                if server is not None:
                    server.close()
            self._servers.clear()


def _import_relevant(env: dict[str, str]) -> dict[str, str]:
    return {name: value for name, value in env.items() if name not in IMPORT_NEUTRAL}


def _readline_within(stream, timeout: float) -> str:  # type: ignore[no-untyped-def]
    readable, _, _ = select.select([stream], [], [], timeout)
    return stream.readline() if readable else ""


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # it ended on its own meanwhile
        os.kill(pid, signal.SIGKILL)


if __name__ == "__main__" and sys.argv[1:2] == ["serve"]:
    sys.exit(serve(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]))
