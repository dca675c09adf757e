#!/bin/sh
# Collect the facts the Pods of a preflight facts Job printed (kubectl logs) and judge them together.
# Usage: collect-and-judge.sh JOB CONFIGMAP [FOLDER]   e.g. collect-and-judge.sh preflight-facts-gpu preflight-hosts-gpu
# It waits (wait-job.sh, at most PREFLIGHT_WAIT seconds, default 960) until every Pod has finished or failed,
# then saves each Pod's log as FOLDER/NODE.json and judges the files of this Job's run (its uid, which the
# Pods wrote into their facts as PREFLIGHT_RUN_ID). A Pod that failed or never started is named on stderr;
# the judge reports its node as missing or unreadable.
# Exit code: preflight judge's (0 healthy, 1 a check failed, 4 could not tell; docs/exit-codes.md).
set -eu
job=$1
config=$2
out=${3:-facts}
mkdir -p "$out"
"$(dirname "$0")/wait-job.sh" "$job" "${PREFLIGHT_WAIT:-960}" \
    || echo "collect-and-judge: job/$job did not complete; judging the facts that came back" >&2
kubectl get configmap "$config" -o jsonpath='{.data.hosts\.yaml}' > "$out/hosts.yaml"
run=$(kubectl get "job/$job" -o jsonpath='{.metadata.uid}') || run=""
kubectl get pods -l "job-name=$job" -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' |
    while read -r pod node; do
        if [ -z "$node" ]; then
            echo "collect-and-judge: $pod was never scheduled" >&2
        elif kubectl logs "$pod" > "$out/$node.json.part"; then
            mv "$out/$node.json.part" "$out/$node.json"
        else
            rm -f "$out/$node.json.part"
            echo "collect-and-judge: no log from $pod on $node" >&2
        fi
    done
exec preflight judge "$out" --hosts "$out/hosts.yaml" ${run:+--run-id "$run"}
