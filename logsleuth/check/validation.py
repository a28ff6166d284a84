"""Running SGLang's own argument validation: the program that does it (validation_hook.py, package data), what it
reports, and the local run in an oracle venv (scripts/oracle/setup.sh builds them; nothing is downloaded here).

The oracle has no GPU and only two stand-in models (config.json only), so a command is run as close to the user's
as it can be and every change is said: a model path that is not a local directory becomes the tiny Llama (the draft
model the tiny EAGLE-3 draft), and `--device cpu` is added.  Checks that depend on the model (its context length,
its architecture) or on a GPU are then those of the stand-in, not of the user's.

A command from a log or a pasted answer is text someone else wrote, so the run never loads code it points at: every
local model directory it names becomes a stand-in too (a directory's config can name Python files of its own),
`--trust-remote-code` is dropped, its environment is kept only for SGLang's own variables (not PYTHONPATH, not the
hub's), and Python starts in an empty directory.  Only a directory the user typed on `check`'s command line is read,
and then only without `--trust-remote-code`.  The hook itself refuses a model's own code as well.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from logsleuth.check.model import Validation
from logsleuth.check.words import Command
from logsleuth.redact import redact_command, redact_secrets
from logsleuth.render.safety import clean

HOOK = Path(__file__).resolve().with_name("validation_hook.py")
RESULT_TAG = "LOGSLEUTH-CHECK "  # validation_hook.RESULT_TAG (that file is run by other Pythons, not imported)
LOCAL_TIMEOUT_SECONDS = 180.0
# Flags whose value is a model on the hub or a local directory: validation reads its config.json.
MODEL_FLAGS = ("--model-path", "--model", "--tokenizer-path", "--speculative-draft-model-path")
_DRAFT_FLAGS = ("--speculative-draft-model-path",)
TRUST_REMOTE_CODE = "--trust-remote-code"
# The command's own NAME=value words that reach the run: SGLang's settings.  Others (PYTHONPATH, LD_PRELOAD, the
# hub's offline switches and cache paths) could load code or fetch from the network.
_KEPT_ENV_PREFIXES = ("SGLANG_", "SGL_")


def hook_source() -> str:
    return HOOK.read_text(encoding="utf-8")


def oracle_home() -> Path:
    """Where scripts/oracle/setup.sh puts the venvs (the same rule as scripts/oracle/run.py)."""
    configured = os.environ.get("LOGSLEUTH_ORACLE_HOME")
    return Path(configured) if configured else Path.home() / ".cache" / "logsleuth" / "oracle"


def oracle_python(version: str) -> Path | None:
    venv = oracle_home() / f"sglang-{version}"
    return venv / "bin" / "python" if (venv / ".ready").exists() else None


@dataclass(frozen=True, slots=True)
class HookResult:
    """What validation_hook.py reported (its last `LOGSLEUTH-CHECK {json}` line)."""

    outcome: str  # passed | usage | error | exited | no-sglang
    version: str
    type: str = ""
    message: str = ""
    where: str = ""
    source: str = ""


def read_hook_result(output: str) -> HookResult | None:
    for line in reversed(output.splitlines()):
        if line.startswith(RESULT_TAG):
            try:
                data = json.loads(line[len(RESULT_TAG) :])
            except ValueError:
                return None
            # The Python that printed it may be a host's: its text reaches a terminal only inert.
            fields = {key: clean(str(data.get(key) or "")) for key in ("type", "message", "where", "source")}
            return HookResult(str(data.get("outcome", "")), clean(str(data.get("version", ""))), **fields)
    return None


def describe(result: HookResult | None, where: str, output: str, notes: tuple[str, ...] = (),
             command: str | None = None) -> Validation:
    """The one line a report gives for a run of the hook."""
    label = f"SGLang {result.version}" if result is not None and result.version else "SGLang"
    if result is None:
        last = next((line for line in reversed(output.splitlines()) if line.strip()), "no output")
        last = clean(redact_secrets(last.strip()), 200)
        return Validation("unavailable", where, f"not validated: the validation did not finish ({last})", notes, command)
    if result.outcome == "passed":
        return Validation("validated", f"{where}{label}", f"validated on {label}", notes, command)
    if result.outcome == "no-sglang":
        return Validation("unavailable", where, "not validated: no SGLang in that Python", notes, command)
    if result.outcome == "usage":
        return Validation("rejected", f"{where}{label}", f"{label} rejects it: {redact_secrets(result.message)}", notes, command)
    detail = result.message or (f"`{result.source}`" if result.source else "")
    at = f" at {result.where}" if result.where else ""
    text = f"{label} raised {result.type}{at}" + (f": {detail}" if detail else "")
    return Validation("rejected", f"{where}{label}", redact_secrets(text), notes, command)


def local_arguments(command: Command, home: Path, *, user_named: bool = False) -> tuple[list[str], tuple[str, ...]]:
    """The arguments to run in the oracle, and what was changed to run them here.  `user_named`: the user typed the
    command on `check`'s command line, so a local model directory in it may be read (never its code)."""
    models = home / "models"
    args, notes = _without_remote_code(list(command.args))
    read_local = user_named and not notes  # a directory that needs its own code is never read
    seen_model = False
    for index, word in enumerate(args[:-1]):
        if word in MODEL_FLAGS:
            seen_model = seen_model or word in ("--model-path", "--model")
            value = args[index + 1]
            stand_in = models / ("tiny-eagle3" if word in _DRAFT_FLAGS else "tiny-llama")
            if _is_oracle_model(value, models) or (read_local and _is_model_directory(value)):
                continue
            args[index + 1] = str(stand_in)
            notes.append(f"{word} {value} ran as the oracle's {stand_in.name} (config.json only): model-dependent "
                         "checks are the stand-in's" + ("" if user_named else "; a directory a log or a pasted "
                                                        "command names is never read"))
    if not seen_model and not any(word.startswith(("--model-path=", "--model=")) for word in args):
        args += ["--model-path", str(models / "tiny-llama")]
        notes.append("no --model-path given: ran with the oracle's tiny-llama")
    device = next((i for i, word in enumerate(args) if word == "--device"), None)
    if device is None:
        args += ["--device", "cpu"]
        notes.append("ran with --device cpu (no GPU here): GPU-dependent checks did not run")
    elif device + 1 < len(args) and args[device + 1] != "cpu":
        notes.append(f"ran with --device cpu instead of {args[device + 1]} (no GPU here)")
        args[device + 1] = "cpu"
    return args, tuple(notes)


def _without_remote_code(args: list[str]) -> tuple[list[str], list[str]]:
    """The arguments without `--trust-remote-code` (any spelling), and a note when it was there."""
    kept = [word for word in args if word.partition("=")[0] != TRUST_REMOTE_CODE]
    if len(kept) == len(args):
        return args, []
    return kept, [f"ran without {TRUST_REMOTE_CODE}: validation never runs a model's own code"]


def _is_oracle_model(value: str, models: Path) -> bool:
    """One of the oracle's own stand-ins (the shipped examples name them)."""
    try:
        return Path(value).resolve().parent == models.resolve() and _is_model_directory(value)
    except (OSError, ValueError):
        return False


def _is_model_directory(value: str) -> bool:
    try:
        return Path(value).is_dir() and (Path(value) / "config.json").is_file()
    except (OSError, ValueError):
        return False


def local_environment(command: Command, python: Path) -> tuple[dict[str, str], tuple[str, ...]]:
    """The run's environment: ours without PYTHONPATH, offline, and only the command's SGLang settings."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    kept = {name: value for name, value in command.env if name.startswith(_KEPT_ENV_PREFIXES)}
    env.update(kept)
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1",
               TOKENIZERS_PARALLELISM="false", VIRTUAL_ENV=str(python.parent.parent))
    dropped = [name for name, _value in command.env if name not in kept]
    notes = (f"ran without the command's {', '.join(dict.fromkeys(dropped))}: only SGLANG_ settings are passed on",)
    return env, notes if dropped else ()


def validate_locally(command: Command, version: str | None, timeout: float = LOCAL_TIMEOUT_SECONDS, *,
                     user_named: bool = False) -> Validation:
    """The command through SGLang `version`'s validation in its oracle venv, or why it could not run.
    `user_named`: the user typed the command (local_arguments)."""
    if version is None:
        return Validation("unavailable", "", "not validated: no SGLang version given (--engine-version)")
    python = oracle_python(version)
    if python is None:
        return Validation("unavailable", "", f"not validated: no SGLang {version} here (make oracle-setup)")
    if not command.literal:
        return Validation("unavailable", "", "not validated: the command holds shell expansions ($VAR, $(…)) "
                          "whose values are not known here")
    args, notes = local_arguments(command, oracle_home(), user_named=user_named)
    env, env_notes = local_environment(command, python)
    notes += env_notes
    mode = "serve" if command.entry == "serve" else "launch_server"
    shown = redact_command(shlex.join(["python", "-m", "sglang.launch_server", *args]))
    try:
        # An empty working directory: `python -c` puts it first on sys.path.
        with tempfile.TemporaryDirectory(prefix="logsleuth-check-") as empty:
            proc = subprocess.run([str(python), "-c", hook_source(), mode, *args], env=env, cwd=empty,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                                  timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return Validation("unavailable", "", f"not validated: SGLang {version} took more than {timeout:.0f} s", notes, shown)
    except OSError as exc:
        return Validation("unavailable", "", f"not validated: cannot run {python}: {exc.strerror or exc}", notes, shown)
    return describe(read_hook_result(proc.stdout), "", proc.stdout, notes, shown)
