#!/bin/sh
# Collect the facts the Pods of a preflight facts Job printed (kubectl logs) and judge them together.
# Usage: collect-and-judge.sh JOB CONFIGMAP [FOLDER]   e.g. collect-and-judge.sh preflight-facts-gpu preflight-hosts-gpu
# Exit code: preflight judge's (0 healthy, 1 a check failed, 4 could not tell; docs/exit-codes.md).
set -eu
job=$1
config=$2
out=${3:-facts}
mkdir -p "$out"
kubectl wait --for=condition=complete --timeout=15m "job/$job" \
    || echo "collect-and-judge: job/$job did not complete; judging the facts that came back" >&2
kubectl get configmap "$config" -o jsonpath='{.data.hosts\.yaml}' > "$out/hosts.yaml"
kubectl get pods -l "job-name=$job" -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' |
    while read -r pod node; do
        kubectl logs "$pod" > "$out/$node.json" || echo "collect-and-judge: no log from $pod on $node" >&2
    done
exec preflight judge "$out" --hosts "$out/hosts.yaml"
