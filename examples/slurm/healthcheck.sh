#!/bin/sh
# Slurm HealthCheckProgram (slurm.conf):
#   HealthCheckProgram=/etc/slurm/preflight-healthcheck.sh
#   HealthCheckInterval=300
#   HealthCheckNodeState=IDLE        # only idle nodes: the checks never compete with a job
#
# Drains this node with preflight's one-line verdict as the reason when a node check fails and
# resumes it when a later run passes (only if preflight was the one that drained it).
# Name the jobs' interpreter as for the prolog (PREFLIGHT_PYTHON / PREFLIGHT_SETUP, or --hosts in
# PREFLIGHT_NODE_ARGS): a python3 without torch is otherwise a skip, never a drain.
PREFLIGHT=${PREFLIGHT:-preflight}
node=${SLURMD_NODENAME:-$(hostname -s)}
# shellcheck disable=SC2086
out=$($PREFLIGHT node --timeout "${PREFLIGHT_TIMEOUT:-30}" ${PREFLIGHT_NODE_ARGS:-} 2>&1)
rc=$?
if [ "$rc" -eq 1 ]; then
  scontrol update NodeName="$node" State=DRAIN Reason="$(printf '%s' "$out" | head -n 1 | cut -c1-200)"
elif [ "$rc" -eq 0 ] && scontrol show node "$node" | grep -q 'Reason=preflight node'; then
  scontrol update NodeName="$node" State=RESUME
fi
exit 0
