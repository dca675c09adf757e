#!/bin/sh
# Wait until a Job has finished: Complete (every Pod succeeded) or Failed (an index failed, or the Job's
# activeDeadlineSeconds passed), and no longer than SECONDS. `kubectl wait --for=condition=complete` alone
# would wait out its whole timeout for a Job that failed, though every Pod has long finished.
# Usage: wait-job.sh JOB [SECONDS]     (default 960: the examples' activeDeadlineSeconds and a minute)
# Exit code: 0 Complete, 1 Failed, 124 still running after SECONDS, 2 the Job cannot be read.
# PREFLIGHT_WAIT_INTERVAL: seconds between two looks (default 5).
set -eu
job=$1
limit=${2:-960}
interval=${PREFLIGHT_WAIT_INTERVAL:-5}
start=$(date +%s)
while :; do
    # The conditions that hold, e.g. "FailureTarget Failed " (Kubernetes sets Failed once the Pods have ended).
    held=$(kubectl get "job/$job" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{" "}{end}') \
        || { echo "wait-job: cannot read job/$job" >&2; exit 2; }
    case " $held " in
        *" Complete "*) echo "wait-job: job/$job complete" >&2; exit 0 ;;
        *" Failed "*)
            why=$(kubectl get "job/$job" -o jsonpath='{.status.conditions[?(@.type=="Failed")].reason} (failed indexes: {.status.failedIndexes})') || why=""
            echo "wait-job: job/$job failed: $why" >&2
            exit 1 ;;
    esac
    if [ $(( $(date +%s) - start )) -ge "$limit" ]; then
        echo "wait-job: job/$job still running after ${limit}s" >&2
        exit 124
    fi
    sleep "$interval"
done
