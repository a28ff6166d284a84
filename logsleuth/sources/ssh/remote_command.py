"""Run one small remote script on a host, with whichever SSH backend `sources/ssh/open.py` would choose for it: the
write side of logsleuth (`logsleuth launch`), which starts and stops a server rather than reading a log.

Written like the read scripts (scripts.py): every value is a positional argument of `/bin/sh -c SCRIPT`, quoted
by `scripts.command_line`, never pasted into script text; the first line printed is the marker that ends a login
shell's noise (run.py); records are `kind TAB value NUL` (scripts.parse_records).

Starting and stopping use a connection each (`run_remote_script`): they are minutes apart, and a fresh connection
then is more robust than one kept through a long launch.  The checks made while watching share one
(`HostScripts`), opened again when it is lost.
"""

from __future__ import annotations

from logsleuth.errors import UsageError
from logsleuth.sources.options import SSH_BACKENDS, SSHOptions
from logsleuth.sources.spec import RemoteError, RemoteSpec
from logsleuth.sources.ssh.run import NoShell, Runner
from logsleuth.sources.ssh.scripts import _one_line, parse_records

# Start COMMAND ("$@" after seven values) detached: checks first (each failure is one record, nothing written),
# then the log's first line (the command, as `sh -x` writes it: the log says what it is the log of), then the
# server.  umask 077: the log's first line holds the command, tokens included, so the log, the pid file and any
# directory made for them are the account's alone; `private` = 1 (logsleuth's default directory, not one the user
# named) also takes group and others' access away from that directory when it already exists.  `set -C`
# (noclobber) makes "never overwrite" hold even against a launch racing us, and --overwrite removes the old files
# first, so what is written is always a new private file (never written through a link).  `$!` is the server's
# pid and process group: a background job of a non-interactive sh is no group leader, so setsid(1) calls setsid()
# and execs rather than forking.  dash's kill takes no `--`: `kill -0 -G` tests a group.  A pid file's group still
# running is reported with what confirms it is the launch (records `owned`, `leader`: its leader's argv with \1
# between words, `recorded`: the log's first line); a group below 2 is never one (0 and 1 mean "every process").
_LAUNCH_LINES = r"""
m=$1; log=$2; pidfile=$3; overwrite=$4; program=$5; header=$6; private=$7; shift 7;
printf '%s\n' "$m";
umask 077;
for c in setsid nohup; do command -v "$c" >/dev/null 2>&1 || { printf 'nocmd\t%s\0' "$c"; exit 0; }; done;
command -v "$program" >/dev/null 2>&1 || { printf 'noprogram\t%s\0' "$program"; exit 0; };
case $log in */*) d=${log%/*}; d=${d:-/} ;; *) d=. ;; esac;
mkdir -p -- "$d" 2>/dev/null && [ -d "$d" ] && [ -w "$d" ] || { printf 'nodir\t%s\0' "$d"; exit 0; };
if [ "$private" = 1 ]; then chmod go-rwx -- "$d" 2>/dev/null; fi;
if [ -s "$pidfile" ]; then g=$(head -c 32 -- "$pidfile" 2>/dev/null);
  case $g in ''|0*|*[!0-9]*) ;; *) if [ "$g" -ge 2 ] 2>/dev/null && kill -0 "-$g" 2>/dev/null; then
    printf 'running\t%s\0' "$g";
    [ -O "/proc/$g" ] && printf 'owned\t%s\0' "$g";
    [ -r "/proc/$g/cmdline" ] && printf 'leader\t%s\0' "$(tr '\000' '\001' <"/proc/$g/cmdline" 2>/dev/null)";
    printf 'recorded\t%s\0' "$(head -c 65536 -- "$log" 2>/dev/null | head -n 1)";
    exit 0; fi ;; esac; fi;
if [ "$overwrite" = 1 ]; then rm -f -- "$log" "$pidfile" 2>/dev/null;
else for f in "$log" "$pidfile"; do if [ -e "$f" ] || [ -L "$f" ]; then printf 'exists\t%s\0' "$f"; exit 0; fi; done; fi;
set -C;
{ printf '%s\n' "$header" >"$log"; } 2>/dev/null || { printf 'nolog\t%s\0' "$log"; exit 0; };
setsid nohup "$@" >>"$log" 2>&1 </dev/null &
g=$!;
{ printf '%s\n' "$g" >"$pidfile"; } 2>/dev/null || printf 'nopidfile\t%s\0' "$pidfile";
case $log in /*) a=$log ;; *) a=$(pwd -P)/$log ;; esac;
printf 'pid\t%s\0log\t%s\0' "$g" "$a"
"""

# Stop a process group with SIGTERM and wait up to $3 seconds for it to be gone.
_STOP_LINES = r"""
m=$1; g=$2; wait=$3;
printf '%s\n' "$m";
kill -0 "-$g" 2>/dev/null || { printf 'gone\t%s\0' "$g"; exit 0; };
kill -TERM "-$g" 2>/dev/null || { printf 'denied\t%s\0' "$g"; exit 0; };
i=0; while kill -0 "-$g" 2>/dev/null; do
  i=$((i+1)); [ "$i" -gt $((wait*5)) ] && { printf 'running\t%s\0' "$g"; exit 0; };
  sleep 0.2 2>/dev/null || sleep 1; done;
printf 'stopped\t%s\0' "$g"
"""

# Whether a process group still has a process, and the end of a log (for a server that exited silently).
_ALIVE_LINES = r"""
m=$1; g=$2;
printf '%s\n' "$m";
if kill -0 "-$g" 2>/dev/null; then printf 'running\t%s\0' "$g"; else printf 'gone\t%s\0' "$g"; fi
"""
_TAIL_LINES = r"""
m=$1; f=$2; n=$3;
printf '%s\n' "$m";
tail -n "$n" -- "$f" 2>/dev/null
"""


LAUNCH_SCRIPT = _one_line(_LAUNCH_LINES)
STOP_SCRIPT = _one_line(_STOP_LINES)
ALIVE_SCRIPT = _one_line(_ALIVE_LINES)
TAIL_SCRIPT = _one_line(_TAIL_LINES)


def run_remote_script(remote: RemoteSpec, options: SSHOptions, script: str, *args: str | int) -> dict[str, str]:
    """Run `script` with `args` on the host of `remote`, over a connection of its own, and return its records."""
    host = HostScripts(remote, options)
    try:
        return parse_records(host.run(script, *args))
    finally:
        host.close()


class HostScripts:
    """Runs scripts on one host over one connection, opened at the first run (and again after one is lost)."""

    def __init__(self, remote: RemoteSpec, options: SSHOptions) -> None:
        self.remote = remote
        self.options = options
        self._runner: Runner | None = None

    def run(self, script: str, *args: str | int) -> bytes:
        """What `script` printed after its marker.  Raises RemoteError when the host cannot be reached or the
        account has no usable shell (starting a process needs one: SFTP cannot)."""
        if self._runner is None:
            self._runner = open_runner(self.remote, self.options)
        try:
            return self._runner.run(script, *args).collect()
        except NoShell:
            raise RemoteError(
                f"{self.remote.host}: the account has no usable shell, so nothing can be started there"
            ) from None
        except RemoteError:
            self.close()  # lost: the next run connects again
            raise

    def close(self) -> None:
        if self._runner is not None:
            self._runner.release()
            self._runner = None


def open_runner(remote: RemoteSpec, options: SSHOptions) -> Runner:
    """A connected runner for the host, chosen as `open.open_ssh_sources` chooses (options.backend, and for
    "auto" what the host's config needs).  The caller releases it."""
    if options.backend not in SSH_BACKENDS:
        raise UsageError(f"ssh backend must be one of {', '.join(SSH_BACKENDS)}, not {options.backend!r}")
    if options.backend == "openssh":
        return _openssh_runner(remote, options, None)
    from logsleuth.sources.ssh.importing import load_paramiko

    load_paramiko(options)
    from logsleuth.sources.ssh.config import config_text, parse_config
    from logsleuth.sources.ssh.open import _needs_openssh

    text = config_text(options)
    config = parse_config(text)
    reason = _needs_openssh(text, config, remote, options) if options.backend == "auto" else None
    if reason is not None:
        return _openssh_runner(remote, options, reason)
    from logsleuth.sources.ssh.connect import connect
    from logsleuth.sources.ssh.shared import SharedConnection

    connection = connect(remote.host, options, config, user=remote.user, port=remote.port, progress=options.progress)
    return SharedConnection(connection, remote.host).acquire()


def _openssh_runner(remote: RemoteSpec, options: SSHOptions, reason: str | None) -> Runner:
    from logsleuth.sources.ssh.openssh import OpenSSHTarget, find_ssh, resolve

    ssh = find_ssh()
    if ssh is None:
        raise RemoteError(f"{remote.host}: the openssh backend needs OpenSSH's ssh client, and none is on PATH")
    return OpenSSHTarget(ssh, remote, options, resolve(ssh, remote, options), reason=reason).acquire()
