#!/bin/bash
# preflight as a pre-job hook on a real GPU node (issue 35): `preflight node` in a prolog's bare environment
# (PATH=/usr/sbin:/usr/bin:/sbin:/bin, so python3 is the system's) on a node whose torch lives in a venv, with
# and without the job's interpreter named; the verdict word against the exit code; output that cannot be
# delivered. A checkout of an older commit in .old/ (git archive REV preflight checks | tar -x -C .old) runs
# the same bare `node` for comparison.
#   OUT=/tmp/out VENV=/opt/torch/.venv bash bench/gpu_hook.sh      # results in $OUT/hook.txt, $OUT/*.json
# A node without network: put the wheels preflight needs (paramiko, ClusterShell and theirs) in .whl/.
set -u
cd "$(dirname "$0")/.."
: "${OUT:?set OUT to a folder for the results}"
VENV=${VENV:-/opt/torch/.venv}
PY=$(python3 -c "import sys; print(sys.executable)")  # the tool's own interpreter (a pipx-like install), no shim
mkdir -p "$OUT"; log=$OUT/hook.txt; : > "$log"
if [ -d .whl ] && [ -z "${NO_WHL:-}" ]; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    >> "$log" 2>&1 || { echo pip failed; cat "$log"; exit 3; }
fi
BARE=(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root PYTHONPATH=/tmp/site:$PWD)
pf() { "${BARE[@]}" "$@"; }
{
  date -u; nvidia-smi -L; echo "tool python: $PY"; ls -l /usr/bin/python3 "$VENV/bin/python3"
  echo "system python3 torch: $(/usr/bin/python3 -c 'import torch; print(torch.__version__)' 2>&1 | tail -1)"
  echo "venv torch: $("$VENV/bin/python3" -c 'import torch; print(torch.__version__, torch.version.cuda)' 2>&1 | tail -1)"
} >> "$log" 2>&1
run() {  # NAME CMD...: the exit code, the header/verdict line, the versions findings
  local name=$1; shift
  pf "$@" > "$OUT/$name.json" 2> "$OUT/$name.err"; local rc=$?
  echo "== $name: rc=$rc" >> "$log"
  "$PY" - "$OUT/$name.json" >> "$log" 2>&1 <<'PYEOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as exc:
    print("  no JSON:", exc); sys.exit()
print("  verdict", d.get("verdict"), "exit_code", d.get("exit_code"), d.get("summary"))
for f in d["findings"]:
    if f["check"].startswith("versions.") or f["status"] in ("fail", "error"):
        print("  ", f["check"], f["status"], "|", f["message"][:160])
PYEOF
}
run bare_old "$PY" -c "import sys; sys.path.insert(0, '$PWD/.old'); from preflight.cli import console_main; sys.argv[0] = 'preflight'; console_main()" node --json
run bare "$PY" -m preflight node --json
run named_env env PREFLIGHT_PYTHON="$VENV/bin/python3" "$PY" -m preflight node --json
run named_flag "$PY" -m preflight node --json --python "$VENV/bin/python3"
run setup_activate "$PY" -m preflight node --json --setup "source $VENV/bin/activate"
run run_local "$PY" -m preflight run --json --report-dir /tmp/rd --python "$VENV/bin/python3"
{
  echo "== node line (bare):"; pf "$PY" -m preflight node; echo "rc=$?"
  echo "== node line (named):"; pf "$PY" -m preflight node --python "$VENV/bin/python3"; echo "rc=$?"
  echo "== node >&-:"; pf "$PY" -m preflight node >&-; echo "rc=$?"
  echo "== node >/dev/full:"; pf "$PY" -m preflight node >/dev/full; echo "rc=$?"
  echo "== node --checks bogus 2>&-:"; pf "$PY" -m preflight node --checks bogus 2>&-; echo "rc=$?"
  echo "== run | head -1:"; pf "$PY" -m preflight run --report-dir /tmp/rd2 | head -1; echo "rc=${PIPESTATUS[0]}"
  echo "== node --prometheus /proc/x.prom:"; pf "$PY" -m preflight node --prometheus /proc/x.prom; echo "rc=$?"
} >> "$log" 2>&1
echo done >> "$log"
