#!/usr/bin/env bash
# A throwaway single-machine Slurm cluster on 127.0.0.1 (munge, slurmctld, one slurmd per "node" n1..nN via
# `slurmd -N`), the at-scale recipe run on it for real, then the merge (docs/at-scale.md, issue 31).
#
#   scripts/at_scale/slurm_local.sh WORKDIR LOGDIR NODES [LOGSLEUTH]
#
# WORKDIR: where the cluster lives (its config, keys, state, daemon logs) and where the reports go
# (WORKDIR/reports/nN.json); it is created, and the daemons are stopped on exit, by their pids.
# LOGDIR: each node's log, LOGDIR/nN.log (on a real cluster every node has its own log at one path; the nodes
# here share one file system, so each reads its own file: the recipe's LOG is LOGDIR/{node}.log).  LOGSLEUTH:
# the logsleuth command (default: logsleuth on PATH).  Exit status: the merge's (0 no failure, 1 a failure found, 3 no report read), or 77 when a Slurm
# daemon cannot start here (the reason on stderr: the slow test skips with it).
set -euo pipefail

workdir=$(realpath -m "$1")
logdir=$(realpath "$2")
nodes=$3
logsleuth=${4:-logsleuth}
cannot() { echo "slurm_local: $*" >&2; exit 77; }

for tool in munged slurmctld slurmd srun sinfo; do
    command -v "$tool" >/dev/null || cannot "$tool is not installed (apt-get install slurm-wlm munge)"
done
mkdir -p "$workdir"/{state,spool,log,reports,run}
pids=()
stop() {
    # Only the daemons this script started, by pid.
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    done
}
trap stop EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# munge: a fresh key, its own socket (never the machine's /run/munge).
dd if=/dev/urandom of="$workdir/munge.key" bs=1024 count=1 status=none
chmod 0400 "$workdir/munge.key"
munge_socket="$workdir/run/munge.socket"
munged --force --foreground --key-file="$workdir/munge.key" --socket="$munge_socket" \
    --pid-file="$workdir/run/munged.pid" --log-file="$workdir/log/munged.log" \
    --seed-file="$workdir/run/munged.seed" 2>>"$workdir/log/munged.err" &
pids+=($!)
for _ in $(seq 100); do [ -S "$munge_socket" ] && break; sleep 0.1; done
[ -S "$munge_socket" ] || cannot "munged did not start: $(tail -n 3 "$workdir/log/munged.log" "$workdir/log/munged.err" 2>/dev/null | tr '\n' ' ')"

ctld_port=$(free_port)
node_lines=""
for i in $(seq "$nodes"); do
    node_lines+="NodeName=n$i NodeHostname=localhost NodeAddr=127.0.0.1 Port=$(free_port) CPUs=1 State=UNKNOWN"$'\n'
done
user=$(id -un)
cat > "$workdir/slurm.conf" <<CONF
ClusterName=logsleuth
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
AuthInfo=socket=$munge_socket
CredType=cred/munge
StateSaveLocation=$workdir/state
SlurmdSpoolDir=$workdir/spool/%n
SlurmctldPidFile=$workdir/run/slurmctld.pid
SlurmdPidFile=$workdir/run/slurmd-%n.pid
SlurmctldLogFile=$workdir/log/slurmctld.log
SlurmdLogFile=$workdir/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdTimeout=30
${node_lines}PartitionName=debug Nodes=n[1-$nodes] Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$workdir/slurm.conf"

slurmctld -D -i -f "$SLURM_CONF" >>"$workdir/log/slurmctld.out" 2>&1 &
pids+=($!)
for i in $(seq "$nodes"); do
    slurmd -D -N "n$i" -f "$SLURM_CONF" >>"$workdir/log/slurmd-n$i.out" 2>&1 &
    pids+=($!)
done
# Ready when every node is idle (a deadline, not a duration: a loaded machine takes longer).
for _ in $(seq 300); do
    idle=$(sinfo -h -N -t idle -o '%N' 2>/dev/null | sort -u | wc -l || true)
    [ "$idle" -ge "$nodes" ] && break
    for pid in "${pids[@]}"; do
        kill -0 "$pid" 2>/dev/null || cannot "a Slurm daemon exited: $(tail -n 3 "$workdir"/log/*.log 2>/dev/null | tr '\n' ' ')"
    done
    sleep 0.2
done
[ "$idle" -ge "$nodes" ] || cannot "the nodes never became idle: $(sinfo -N 2>&1 | tr '\n' ' ')"

# The recipe as written (examples/at-scale/slurm.sh, docs/at-scale.md): one srun task per node, each diagnosing
# its own log into REPORTS/<node>.json, then the merge; its exit status is the merge's.
export PATH="$(dirname "$(command -v "$logsleuth")"):$PATH"
set +e
NODES=$nodes bash "$(dirname "$0")/../../examples/at-scale/slurm.sh" "$logdir/{node}.log" "$workdir/reports"
