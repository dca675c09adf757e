#!/bin/sh
# Slurm Prolog (slurm.conf: Prolog=/etc/slurm/prolog.d/preflight.sh, PrologFlags=Alloc recommended).
#
# Runs `preflight node` (this node's checks, no SSH, well under a second) before a job starts here.
# A failing node check -> exit 1: Slurm drains the node ("Prolog error", reason set below) and
# requeues the job elsewhere. preflight's own trouble (usage error, missing binary) never drains.
#
# Settings (environment of slurmd, or edit here):
#   PREFLIGHT          command to run              (default: preflight)
#   PREFLIGHT_TIMEOUT  hard bound in seconds        (default: 8; Slurm's MessageTimeout is 10 s)
#   PREFLIGHT_NODE_ARGS extra arguments, e.g. "--checks sysctl,os --accelerator gpu --devices-per-host 8"
#   PREFLIGHT_NODE_SET check parameters, e.g. "sysctl.min_somaxconn=4096"
PREFLIGHT=${PREFLIGHT:-preflight}
node=${SLURMD_NODENAME:-$(hostname)}
# shellcheck disable=SC2086  # word splitting of the argument lists is intended
out=$($PREFLIGHT node --timeout "${PREFLIGHT_TIMEOUT:-8}" ${PREFLIGHT_NODE_ARGS:-} 2>&1)
rc=$?
log() { command -v logger >/dev/null 2>&1 && logger -t preflight-prolog "$1"; echo "$1" >&2; }
case $rc in
  0) exit 0 ;;
  1)
    log "job ${SLURM_JOB_ID:-?} on $node: $out"
    reason=$(printf '%s' "$out" | head -n 1 | cut -c1-200)
    scontrol update NodeName="$node" State=DRAIN Reason="$reason" >/dev/null 2>&1 || true
    exit 1 ;;
  *)
    log "preflight itself failed (exit $rc), node left in service: $out"
    exit 0 ;;
esac
