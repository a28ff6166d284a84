"""`logsleuth check HOST -- COMMAND`: the host's own SGLang argument validation, over SSH (docs/check.md).

Besides `launch`, the only command that runs a program on a host other than to read a log, so it is careful:
- it runs `PYTHON -c HOOK MODE ARGS…` (validation_hook.py): SGLang's argument handling up to the end of its
  validation, then a stop; no model load, no server, no GPU touched;
- every value is an argument of `/bin/sh -c SCRIPT` quoted by scripts.command_line, never script text; the hook's
  program is one of those arguments;
- nothing is written: Python is told not to write bytecode, and the hub is kept offline (HF_HUB_OFFLINE), unless
  the user agreed that a model named by its hub id may be fetched (validation reads the model's config.json);
- the probe that comes first only reads: which Python, which SGLang, which model paths are not local directories.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from logsleuth.check.model import CheckResult, Validation
from logsleuth.check.validation import MODEL_FLAGS, describe, hook_source, read_hook_result
from logsleuth.check.words import Command
from logsleuth.errors import SourceError, UsageError
from logsleuth.render.safety import clean
from logsleuth.sources.options import SSHOptions
from logsleuth.sources.spec import RemoteSpec, parse_remote_spec
from logsleuth.sources.ssh.scripts import _one_line

if TYPE_CHECKING:
    from logsleuth.sources.ssh.remote_command import HostScripts

# Which Python runs the command (for `sglang serve`, the one its script's #! names), its SGLang version, and the
# model paths that are not directories there.  Reads only.
_PROBE_LINES = r"""
m=$1; py=$2; shift 2;
printf '%s\n' "$m";
case ${py##*/} in python*) ;; *)
  s=$(command -v "$py" 2>/dev/null) && [ -r "$s" ] && IFS= read -r first <"$s";
  case $first in '#!/'*python*) py=${first#'#!'}; py=${py%% *} ;; *) py=python3 ;; esac ;; esac;
command -v "$py" >/dev/null 2>&1 || { printf 'nopython\t%s\0' "$py"; exit 0; };
printf 'python\t%s\0' "$py";
v=$(PYTHONDONTWRITEBYTECODE=1 "$py" -c 'from importlib.metadata import version; print(version("sglang"))' 2>/dev/null) || { printf 'nosglang\t%s\0' "$py"; exit 0; };
printf 'version\t%s\0' "$v";
for p in "$@"; do [ -d "$p" ] || printf 'hub\t%s\0' "$p"; done
"""

# Run the hook: "$@" is [NAME=value…] PYTHON -c HOOK MODE ARGS…, through env(1) so the command's own assignments
# hold.  Output and errors in one stream: the hook's last line is its result.
_VALIDATE_LINES = r"""
m=$1; offline=$2; shift 2;
printf '%s\n' "$m";
PYTHONDONTWRITEBYTECODE=1; export PYTHONDONTWRITEBYTECODE;
if [ "$offline" = 1 ]; then HF_HUB_OFFLINE=1; TRANSFORMERS_OFFLINE=1; export HF_HUB_OFFLINE TRANSFORMERS_OFFLINE; fi;
exec env "$@" 2>&1
"""

PROBE_SCRIPT = _one_line(_PROBE_LINES)
VALIDATE_SCRIPT = _one_line(_VALIDATE_LINES)

# A y/N question (launch.Confirm); None where nobody can answer.
Confirm = Callable[[str], bool]


@dataclass(frozen=True, slots=True)
class HostSGLang:
    """What the probe found on the host."""

    python: str
    version: str
    hub_models: tuple[str, ...]  # model values that are not directories there: validation would fetch them


def parse_host(host: str) -> RemoteSpec:
    """HOST, user@host or user@host:port; a source spec (`gpu7:/var/log/x.log`, `gpu7:docker:x`) is refused, not
    read as its host: check runs SGLang on a host, it reads no log or container."""
    remote = parse_remote_spec(f"{host}:.") if host and not host.startswith("-") else None
    if remote is None or remote.path != ".":
        raise UsageError(f"{host!r}: not a host (HOST, user@host or user@host:port; check takes no path, "
                         "container or unit after it)")
    return remote


def model_values(command: Command) -> tuple[str, ...]:
    """The values of the flags naming a model, as written (`--model-path X` and `--model-path=X`)."""
    args = list(command.args)
    values = [args[i + 1] for i, word in enumerate(args[:-1]) if word in MODEL_FLAGS]
    values += [word.partition("=")[2] for word in args if word.partition("=")[0] in MODEL_FLAGS and "=" in word]
    return tuple(dict.fromkeys(values))


def _records(body: bytes) -> list[tuple[str, str]]:
    """`kind TAB value NUL` records in order (scripts.parse_records keeps one per kind; a probe has several)."""
    pairs = [record.decode("utf-8", "surrogateescape").partition("\t") for record in body.split(b"\0")]
    return [(kind, value) for kind, _, value in pairs if kind]


def probe(host: str, scripts: HostScripts, command: Command) -> HostSGLang:
    records = _records(scripts.run(PROBE_SCRIPT, command.program or "python3", *model_values(command)))
    found = dict(records)
    # What the host printed is shown only inert (clean): a path or a version can hold escape sequences.
    if "nopython" in found:
        raise SourceError(f"{host}: no program '{clean(found['nopython'])}' on the PATH of a non-interactive shell there")
    if "nosglang" in found:
        raise SourceError(f"{host}: {clean(found['nosglang'])} has no SGLang (name the Python that has it: "
                          "logsleuth check HOST -- /path/to/venv/bin/python -m sglang.launch_server …)")
    if "version" not in found:
        raise SourceError(f"{host}: the probe reported nothing")
    hub = tuple(value for kind, value in records if kind == "hub")
    return HostSGLang(found["python"], clean(found["version"].strip(), 80), hub)


def validate_on_host(host: str, command: Command, ssh: SSHOptions, *, allow_download: bool,
                     confirm: Confirm | None) -> tuple[HostSGLang, Validation]:
    """Probe the host, ask before a validation that would fetch a model, then run it (one connection)."""
    from logsleuth.sources.ssh.remote_command import HostScripts

    if not command.literal:
        raise UsageError("the command holds shell expansions ($VAR, $(…)): give their values, the host's shell "
                         "does not expand them here")
    scripts = HostScripts(parse_host(host), ssh)
    try:
        found = probe(host, scripts, command)
        try:
            offline = _may_fetch(host, found, allow_download, confirm)
        except Declined as declined:
            declined.version = found.version
            raise
        mode = "serve" if command.entry == "serve" else "launch_server"
        words = [f"{name}={value}" for name, value in command.env]
        words += [found.python, "-c", hook_source(), mode, *command.args]
        output = scripts.run(VALIDATE_SCRIPT, int(offline), *words).decode("utf-8", "replace")
    finally:
        scripts.close()
    notes = () if offline else ("the hub was allowed: the model's config may have been downloaded to the host's cache",)
    return found, describe(read_hook_result(output), f"{host}: ", output, notes)


def _may_fetch(host: str, found: HostSGLang, allow_download: bool, confirm: Confirm | None) -> bool:
    """True: validate offline.  Asks first when a model would come from the hub; refuses without an answer."""
    if not found.hub_models:
        return True
    what = clean(", ".join(found.hub_models))  # echoed by the host
    question = (f"{host}: {what} is not a directory there, so SGLang's validation would download its config from "
                "the Hugging Face hub into the host's cache. Allow that?")
    if allow_download or (confirm is not None and confirm(question)):
        return False
    if confirm is None:
        raise UsageError(f"{host}: {what} is not a local directory there: validating it would download its config "
                         "from the hub; give --allow-download to allow that (no terminal to ask on)")
    raise Declined(f"not validated: downloading {what} was declined")


class Declined(Exception):
    """The user said no to a download: nothing runs, and the report says so."""

    version: str | None = None  # the SGLang version the probe found


def check_host(host: str, command: Command, version: str | None, ssh: SSHOptions, *, allow_download: bool,
               confirm: Confirm | None) -> CheckResult:
    """The host's own validation, and the flags checked against the catalog of the version it has (or `version`)."""
    from logsleuth.check.verify import check_command

    try:
        found, validation = validate_on_host(host, command, ssh, allow_download=allow_download, confirm=confirm)
    except Declined as declined:
        return replace(check_command(command, version or declined.version, validate=False),
                       validation=Validation("unavailable", f"{host}: ", str(declined)))
    result = check_command(command, version or found.version, validate=False)
    return replace(result, validation=validation)
