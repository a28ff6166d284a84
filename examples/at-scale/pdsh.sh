#!/usr/bin/env bash
# Diagnose every host's own log where it lives with pdsh, then merge the reports (docs/at-scale.md).
#
#   examples/at-scale/pdsh.sh 'gpu[01-64]' /var/log/sglang.log ./reports
#
# Each host writes its report to a temporary file; rpdcp (pdsh's copy back) brings them here as
# REPORTS/logsleuth.json.<host>, and `logsleuth merge` reads them by name.  `{host}` in LOG is the host's name
# as pdsh knows it (%h).  PDSH_RCMD_TYPE=exec runs each "host" as a local command (how the test runs it).
# Exit status: the merge's (0 no failure on any host, 1 a failure found, 3 no report could be read).
set -uo pipefail
hosts=${1:?usage: pdsh.sh HOSTS LOG REPORTS} log=${2:?usage: pdsh.sh HOSTS LOG REPORTS} reports=${3:?usage: pdsh.sh HOSTS LOG REPORTS}
remote=${REMOTE_REPORT:-/tmp/logsleuth.json}
mkdir -p "$reports"
# diagnose exits 1 where it finds a failure: pdsh says so on stderr ("exited with exit code 1"); that is expected.
# (The command's words are given apart: ssh joins them for the remote shell, exec runs them as they are.)
pdsh -w "$hosts" logsleuth diagnose "${log//\{host\}/%h}" --host %h --format json -o "$remote.%h" || true
if [ "${PDSH_RCMD_TYPE:-}" = exec ]; then  # every "host" is this machine: the reports are here already
    pdsh -w "$hosts" cp "$remote.%h" "$reports/logsleuth.json.%h"
else
    rpdcp -w "$hosts" "$remote.%h" "$reports"  # REPORTS/logsleuth.json.<host>: rpdcp adds the host
fi
exec logsleuth merge "$reports"/logsleuth.json.*
