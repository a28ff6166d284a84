#!/usr/bin/env bash
#SBATCH --job-name=logsleuth
#SBATCH --ntasks-per-node=1
#SBATCH --time=00:10:00
# Diagnose every node's own log where it lives, one Slurm task per node, then merge the reports into one fleet
# report (docs/at-scale.md).
#
#   sbatch --nodes=64 examples/at-scale/slurm.sh /var/log/sglang.log /shared/logsleuth/run-42
#   NODES=4 examples/at-scale/slurm.sh /var/log/sglang.log /shared/logsleuth/run-42     (srun allocates)
#
# LOG is the log's path on every node; `{node}` in it is the node's Slurm name (logs kept per node on a shared
# file system: /shared/logs/{node}/sglang.log).  REPORTS must be on a file system every node writes to.
# Exit status: the merge's (0 no failure on any node, 1 a failure found, 3 no report could be read).
set -uo pipefail
export LOG=${1:?usage: slurm.sh LOG REPORTS} REPORTS=${2:?usage: slurm.sh LOG REPORTS}
nodes=${SLURM_JOB_NUM_NODES:-${NODES:?set NODES, or run it with sbatch --nodes=N}}
mkdir -p "$REPORTS"

# Each task writes $REPORTS/<node>.json.  (srun expands %N only in its own --output pattern, and there as the
# host name: the command's own arguments get it from $SLURMD_NODENAME.)
srun --nodes "$nodes" --ntasks-per-node 1 bash -c \
    'exec logsleuth diagnose "${LOG//\{node\}/$SLURMD_NODENAME}" --host "$SLURMD_NODENAME" --format json -o "$REPORTS/$SLURMD_NODENAME.json"'
status=$?
# diagnose exits 1 on a node where it finds a failure, and srun passes the highest status on: only more is an error.
[ "$status" -le 1 ] || exit "$status"
exec logsleuth merge "$REPORTS"
