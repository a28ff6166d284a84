#!/usr/bin/env bash
# Run the DaemonSet of k8s-daemonset.yaml, gather each node's report with `kubectl logs`, merge them, and remove
# the DaemonSet (docs/at-scale.md).
#
#   examples/at-scale/k8s-collect.sh ./reports [MANIFEST]
#
# Exit status: the merge's (0 no failure on any node, 1 a failure found, 3 no report could be read).
set -euo pipefail
reports=${1:?usage: k8s-collect.sh REPORTS [MANIFEST]}
manifest=${2:-$(dirname "$0")/k8s-daemonset.yaml}
mkdir -p "$reports"
kubectl apply -f "$manifest"
trap 'kubectl delete -f "$manifest" --wait=false >/dev/null' EXIT
# Ready = the pod wrote its report (its readiness probe).
kubectl rollout status daemonset/logsleuth-diagnose --timeout=10m
for pod in $(kubectl get pods -l app=logsleuth-diagnose -o name); do
    node=$(kubectl get "$pod" -o jsonpath='{.spec.nodeName}')
    kubectl logs "$pod" > "$reports/$node.json"
done
set +e
logsleuth merge "$reports"
