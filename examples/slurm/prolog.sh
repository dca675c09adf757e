#!/bin/sh
# Slurm Prolog (slurm.conf: Prolog=/etc/slurm/prolog.d/preflight.sh, PrologFlags=Alloc recommended).
#
# Runs `preflight node` (this node's checks, no SSH, well under a second) before a job starts here.
# Slurm runs prologs with no search path: every command below is an absolute path.
#
# Exit codes of `preflight node` (docs/exit-codes.md) and what this prolog does with them:
#   0  healthy                         -> exit 0: the job starts
#   1  a check failed: the node is bad -> exit 1: Slurm itself drains the node ("Prolog error") and
#                                         requeues the job; the requeued job is HELD unless slurm.conf has
#                                         SchedulerParameters=nohold_on_prolog_fail (recommended with this hook)
#   4  a check could not tell (a tool timed out, preflight did not finish in time)
#   6  fails the drain policy holds back (PREFLIGHT_NODE_ARGS="--drain-after 3/5": too few fails yet, or a
#      flapping finding; docs/history.md)
#   2  usage/configuration error, 70 preflight crashed, anything else
#                                      -> exit 0: the node stays in service, the reason goes to syslog
# No `scontrol` here: Slurm's prolog guide says not to call Slurm commands from a prolog (they may hang on
# the controller and block the job launch); Slurm sets the drain itself when the prolog fails.
#
# Settings (environment of slurmd, or edit here):
#   PREFLIGHT           absolute path of the command (default: /usr/local/bin/preflight)
#   PREFLIGHT_TIMEOUT   hard bound in seconds (default: 8; Slurm's PrologEpilogTimeout / MessageTimeout)
#   PREFLIGHT_NODE_ARGS extra arguments, e.g. "--checks sysctl,os --accelerator gpu --devices-per-host 8"
#   PREFLIGHT_NODE_SET  check parameters, e.g. "sysctl.min_somaxconn=4096"
#   PREFLIGHT_PYTHON    the job's interpreter, e.g. /opt/venv/bin/python (a prolog's python3 is the system's;
#                       without it a torch missing there is a skip, never a drain: docs/scheduler.md)
#   PREFLIGHT_SETUP     shell lines that activate it, e.g. "source /opt/conda/bin/activate train"
#   (or put them in hosts.yaml and add "--hosts /etc/preflight/hosts.yaml" to PREFLIGHT_NODE_ARGS)
PREFLIGHT=${PREFLIGHT:-/usr/local/bin/preflight}
# The job's interpreter (edit here, or set them in slurmd's environment); preflight reads them itself.
export PREFLIGHT_PYTHON=${PREFLIGHT_PYTHON:-}   # e.g. /opt/venv/bin/python
export PREFLIGHT_SETUP=${PREFLIGHT_SETUP:-}     # e.g. "source /opt/conda/bin/activate train"
node=${SLURMD_NODENAME:-$(/bin/hostname)}
log() {
  [ -x /usr/bin/logger ] && /usr/bin/logger -t preflight-prolog "$1"
  echo "$1" >&2
}
if [ ! -x "$PREFLIGHT" ]; then
  log "job ${SLURM_JOB_ID:-?} on $node: $PREFLIGHT not found or not executable, node left in service"
  exit 0
fi
# shellcheck disable=SC2086  # word splitting of the argument list is intended
out=$("$PREFLIGHT" node --timeout "${PREFLIGHT_TIMEOUT:-8}" ${PREFLIGHT_NODE_ARGS:-} 2>&1)
rc=$?
case $rc in
  0) exit 0 ;;
  1)
    log "job ${SLURM_JOB_ID:-?} on $node: node check failed, Slurm drains the node: $out"
    exit 1 ;;
  4)
    log "job ${SLURM_JOB_ID:-?} on $node: a check could not tell (exit 4), node left in service: $out"
    exit 0 ;;
  6)
    log "job ${SLURM_JOB_ID:-?} on $node: a fail held back by the drain policy (exit 6), node left in service: $out"
    exit 0 ;;
  *)
    log "job ${SLURM_JOB_ID:-?} on $node: preflight itself failed (exit $rc), node left in service: $out"
    exit 0 ;;
esac
