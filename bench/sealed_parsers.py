"""Sealed evaluation of the command-output parsers: real outputs nobody tuned a parser to, scored by verdict.

    python3 bench/sealed_parsers.py [--tree PATH] [--set bench/sealed/parsers] [--out FILE] [--details]

Each sample (``bench/sealed/parsers/*.json``: url, format, command, stdout, stderr, exit_status, expected,
reason; optional ``devices_per_host``, ``transcript``) is fed to the check whose probe reads its format, in
the tree at ``--tree`` (imported from there, so any checkout can be scored: ``git worktree add /tmp/before REV``).
Only the sample's probe is given (with the ``tool`` probe that says where the tool is); the check's other probes
are left out, as parse fixtures may leave them out. Probes that print a batched script's framing (hccn_tool's
calls, the Xid awk summary) are produced by running the check's own probe command with a stand-in tool first
on PATH that prints the sample. The firewall check gets two hosts on 10.0.0.0/24 (addresses and port range
written here, the other firewall managers "not installed" as the probe prints it, and the "running" line that
``firewall-cmd --state`` prints before ``--list-all`` where a sample shows only the latter), every other check one
host and, where it judges by majority, also two hosts with the same output.

A verdict is taken from the findings of that format only: any fail or warn is ``faulty``, else any error (or no
finding at all) is ``unreadable``, else ``healthy``; an exception is ``crash``. Against the expected verdict:
right, false alarm (judged faulty, or garbage judged faulty), miss (a fault or garbage judged healthy),
could-not-read (a readable sample not read) or crash. ``--details`` prints each sample's verdict: for the one
running the evaluation only, never for a commit (the set stays sealed).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CLASSES = ("right", "false alarm", "miss", "could-not-read", "crash")

# format -> (check ident, probe key the sample is, accelerator, finding ids judged, 2-host majority run)
PLANS: dict[str, tuple[str, str, str, tuple[str, ...], bool]] = {
    "npu_info": ("npu", "info", "npu", ("npu.smi", "npu.count", "npu.chip", "npu.health", "npu.processes"), True),
    "npu_list": ("npu", "list", "npu", (), False),
    "hccn_ip": ("hccn.ip", "ip", "npu", ("hccn.ip",), False),
    "hccn_link": ("hccn.link", "link", "npu", ("hccn.link", "hccn.link.up"), True),
    "hccn_net_health": ("hccn.link", "net_health", "npu", ("hccn.link", "hccn.link.net_health"), True),
    "hccn_lldp": ("hccn.link", "lldp", "npu", ("hccn.link", "hccn.link.lldp"), True),
    "hccn_optical": ("hccn.link", "optical", "npu", ("hccn.link", "hccn.link.optical"), True),
    "hccn_tls": ("hccn.link", "tls", "npu", ("hccn.link", "hccn.link.tls"), True),
    "hccn_speed": ("hccn.link", "speed", "npu", ("hccn.link", "hccn.link.speed"), True),
    "hccn_link_stat": ("hccn.link", "link_stat", "npu", ("hccn.link", "hccn.link.flaps"), False),
    "nvsmi_q": ("gpu.pcie+gpu.fabricmanager", "query", "gpu", ("gpu.pcie.link", "gpu.fabricmanager.state"), False),
    "nvsmi_topo": ("gpu.devices", "topo", "gpu", (), False),
    "nvsmi_nvlink": ("gpu.devices", "nvlink", "gpu", ("gpu.devices.nvlink",), True),
    "nvsmi_csv": ("gpu.devices", "query", "gpu", ("gpu.devices.smi", "gpu.devices.count", "gpu.devices.driver",
                                                  "gpu.devices.ecc", "gpu.devices.rows", "gpu.devices.persistence"),
                  True),
    "ibstat": ("gpu.fabric", "ibstat", "gpu", ("gpu.fabric.ports", "gpu.fabric.link_layer", "gpu.fabric.rate"), True),
    "xid": ("gpu.xid", "klog", "gpu", ("gpu.xid.errors",), False),
    "chronyc": ("os.time", "chrony", "cpu", ("os.time",), False),
    "timesync": ("os.time", "timesync", "cpu", ("os.time",), False),
    "iptables": ("firewall", "iptables", "cpu", ("firewall.state", "firewall.rules"), False),
    "nft": ("firewall", "nft", "cpu", ("firewall.state", "firewall.rules"), False),
    "ufw": ("firewall", "ufw", "cpu", ("firewall.state", "firewall.rules"), False),
    "firewalld": ("firewall", "firewalld", "cpu", ("firewall.state", "firewall.rules"), False),
}
TOOL_PATHS = {"npu": "/usr/local/sbin/npu-smi", "gpu.devices": "/usr/bin/nvidia-smi", "gpu.pcie": "/usr/bin/nvidia-smi",
              "gpu.fabricmanager": "/usr/bin/nvidia-smi", "hccn.ip": "/usr/local/Ascend/driver/tools/hccn_tool"}
_ECHOED = re.compile(r"^\S*hccn_tool -i (\d+) -(\S+) -g\s*$")


class Tree:
    """The preflight of one checkout, imported from its path."""

    def __init__(self, path: Path) -> None:
        sys.path.insert(0, str(path))
        for name in [m for m in sys.modules if m == "preflight" or m.startswith("preflight.")]:
            del sys.modules[name]
        self.batch: Any = importlib.import_module("preflight.batch")
        self.inventory: Any = importlib.import_module("preflight.inventory")
        self.base: Any = importlib.import_module("preflight.checks.base")
        checks: Any = importlib.import_module("preflight.checks")
        self.checks: dict[str, Any] = {c.ident: c for c in checks.all_checks()}
        origin = Path(str(self.batch.__file__)).resolve()
        if path.resolve() not in origin.parents:
            raise SystemExit(f"preflight was imported from {origin}, not from {path}")

    def output(self, stdout: str, stderr: str = "", status: int | None = 0) -> Any:
        return self.batch.ProbeOutput(stdout, stderr, status)


def split_transcript(text: str) -> dict[int, str]:
    """A transcript of several ``hccn_tool -i N -OP -g`` calls, each echoed before its output -> device -> output."""
    found: dict[int, list[str]] = {}
    current: int | None = None
    for line in text.splitlines():
        echoed = _ECHOED.match(line.strip())
        if echoed:
            current = int(echoed[1])
            found[current] = []
        elif current is not None:
            found[current].append(line)
    return {dev: "\n".join(lines).strip("\n") + "\n" for dev, lines in found.items()}


def per_device(sample: Mapping[str, Any]) -> dict[int, str]:
    return split_transcript(sample["stdout"]) if sample.get("transcript") else {0: sample["stdout"]}


def _run_with(stand_ins: Mapping[str, str], command: str, data: Mapping[str, Any]) -> tuple[str, str, int]:
    """Run a probe command locally with stand-in tools (python scripts) first on PATH."""
    with tempfile.TemporaryDirectory(prefix="sealed-") as folder:
        Path(folder, "data.json").write_text(json.dumps(data))
        for name, body in stand_ins.items():
            script = Path(folder, name)
            data_file = str(Path(folder, "data.json"))
            script.write_text(f"#!{sys.executable}\nimport json, sys\nDATA = json.load(open({data_file!r}))\n" + body)
            script.chmod(0o755)
        env = {**os.environ, "PATH": f"{folder}:{os.environ.get('PATH', '/usr/bin:/bin')}", "LC_ALL": "C"}
        done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, env=env, timeout=60, check=False)
        return done.stdout, done.stderr, done.returncode


HCCN_TOOL = """args = sys.argv[1:]
dev = args[args.index("-i") + 1]
op = next(a[1:] for a in args if a.startswith("-") and a not in ("-i", "-g"))
if dev in DATA and op in DATA[dev]:
    sys.stdout.write(DATA[dev][op])
    sys.exit(0)
print("The command is not supported on this product.")
sys.exit(13)
"""
DMESG = """if "-T" in sys.argv[1:] or len(sys.argv) == 1:
    sys.stdout.write(DATA["log"])
    sys.exit(0)
sys.exit(1)
"""
JOURNALCTL = "sys.exit(1)\n"


def hccn_outputs(tree: Tree, check: Any, host: Any, cluster: Any, op: str, sample: Mapping[str, Any]) -> dict[str, Any]:
    """hccn.link's batched script run with a stand-in hccn_tool: the sample for its op and device(s), "not supported"
    for every other call (hccn.link judges a port's history only for devices its main probe read)."""
    data = {str(dev): {op: text} for dev, text in per_device(sample).items()}
    found = {}
    for key in ("link", "link_stat") if op == "link_stat" else ("link",):
        probe = next(p for p in check.probes(host, cluster) if p.key == key)
        out, err, rc = _run_with({"hccn_tool": HCCN_TOOL}, probe.command, data)
        found[key] = tree.output(out, err, rc)
    return found


FIREWALL_TOOLS = {"iptables": "iptables", "ip6tables": "ip6tables", "nft": "nft", "ufw": "ufw",
                  "firewalld": "firewall-cmd"}


def firewall_extra(tree: Tree, key: str, host_number: int) -> dict[str, Any]:
    """What the samples do not show and the firewall check needs, written as its evaluate fixtures write it: the
    other managers not installed (the probe's own "TOOL: not installed", exit 127), no legacy tables, the host's
    addresses and the port range."""
    found = {other: tree.output("", f"{tool}: not installed\n", 127) for other, tool in FIREWALL_TOOLS.items()
             if other != key}
    found.update(iptables_legacy=tree.output(""), ip6tables_legacy=tree.output(""))
    addresses = ("1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever\n"
                 f"2: eth0    inet 10.0.0.{host_number}/24 brd 10.0.0.255 scope global eth0\\       "
                 "valid_lft forever preferred_lft forever\n")
    return {**found, "addresses": tree.output(addresses), "port_range": tree.output("32768\t60999\n")}


def outputs_for(tree: Tree, ident: str, sample: Mapping[str, Any], host: Any, cluster: Any,
                host_number: int) -> dict[str, Any]:
    """The probe outputs one host of the sample hands the check ``ident``."""
    fmt = sample["format"]
    key = PLANS[fmt][1]
    check = tree.checks[ident]
    main = tree.output(sample["stdout"], sample.get("stderr", ""), sample.get("exit_status", 0))
    if fmt == "hccn_ip":
        return {"tool": tree.output(TOOL_PATHS["hccn.ip"] + "\n"),
                **{f"ip_{dev}": tree.output(text) for dev, text in per_device(sample).items()}}
    if fmt.startswith("hccn_"):
        return hccn_outputs(tree, check, host, cluster, key, sample)
    if fmt == "xid":
        probe = next(p for p in check.probes(host, cluster) if p.key == "klog")
        out, err, rc = _run_with({"dmesg": DMESG, "journalctl": JOURNALCTL}, probe.command, {"log": sample["stdout"]})
        return {"klog": tree.output(out, err, rc)}
    if ident == "firewall" and key == "firewalld" and not sample["stdout"].startswith("running"):
        # the probe runs `firewall-cmd --list-all` only after `firewall-cmd --state` printed "running"
        main = tree.output("running\n" + sample["stdout"], sample.get("stderr", ""), sample.get("exit_status", 0))
    if ident == "firewall":
        return {**firewall_extra(tree, key, host_number), key: main}
    if ident == "gpu.fabric":
        return {"ibstat_tool": tree.output("/usr/sbin/ibstat\n"), "ibstat": main,
                "devinfo_tool": tree.output("", "", 127)}
    found = {key: main}
    if ident in TOOL_PATHS:
        found["tool"] = tree.output(TOOL_PATHS[ident] + "\n")
    return found


def judge(tree: Tree, sample: Mapping[str, Any], hosts: int) -> tuple[str, str]:
    """(verdict, why) for the sample on ``hosts`` hosts with the same output."""
    fmt = sample["format"]
    idents, _, accelerator, ids, _ = PLANS[fmt]
    names = [f"n{i}" for i in range(1, hosts + 1)]
    devices = int(sample.get("devices_per_host", 1))
    cluster = tree.inventory.ClusterSpec(accelerator=accelerator, devices_per_host=devices, master=names[0])
    host_list = [tree.inventory.Host(name=n, address=n) for n in names]
    findings: list[Any] = []
    for ident in idents.split("+"):
        check = tree.checks[ident]
        facts = {h.name: check.parse(outputs_for(tree, ident, sample, h, cluster, i + 1))
                 for i, h in enumerate(host_list)}
        if fmt == "nvsmi_topo":
            return topo_verdict(facts["n1"])
        if fmt == "npu_list":
            return list_verdict(facts["n1"])
        if fmt == "nvsmi_q" and ident == "gpu.pcie" and facts["n1"].get("error"):
            return "unreadable", f"gpu.pcie facts: {facts['n1']['error']}"
        ctx = tree.base.EvalContext(cluster, host_list, dict(check.params), {})
        findings += [f for f in check.evaluate(facts, ctx) if f.check in ids]
    if fmt == "hccn_ip":
        return hccn_ip_verdict(findings)
    return verdict(findings)


def hccn_ip_verdict(findings: list[Any]) -> tuple[str, str]:
    """No sample shows /etc/hccn.conf: its "not found" warning is not the sample's verdict. hccn.ip writes a pass only
    for hosts without any finding, so when that warning is all there is, the devices were judged and passed."""
    conf = [f for f in findings if f.device is None and "hccn.conf" in f.message and f.status.value == "warn"]
    rest = [f for f in findings if f not in conf]
    return verdict(rest) if rest or not conf else ("healthy", "only the missing /etc/hccn.conf warned")


def topo_verdict(facts: Mapping[str, Any]) -> tuple[str, str]:
    """topo -m is recorded, not judged: read (a GPU row) is healthy, an error or nothing read is unreadable."""
    topology = facts.get("topology") or {}
    rows = [r for r in (topology.get("rows") or {}) if str(r).startswith("GPU")]
    if facts.get("topo_error"):
        return "unreadable", str(facts["topo_error"])
    return ("healthy", f"{len(rows)} GPU rows read") if rows else ("unreadable", "no GPU row read")


def list_verdict(facts: Mapping[str, Any]) -> tuple[str, str]:
    """npu-smi info -l alone (npu.count compares it with npu-smi info): read when it gives a Total Count that matches
    the NPU ids it lists, faulty when they disagree, unreadable otherwise."""
    total, ids = facts.get("total_count"), facts.get("list_ids") or []
    if facts.get("list_error") or total is None:
        return "unreadable", str(facts.get("list_error") or "no Total Count read")
    return ("healthy", f"Total Count {total}") if total == len(ids) else (
        "faulty", f"Total Count {total}, {len(ids)} NPU ids listed")


def verdict(findings: list[Any]) -> tuple[str, str]:
    statuses = Counter(f.status.value for f in findings)
    worst = next((f for f in findings if f.status.value in ("fail", "warn")), None) or next(
        (f for f in findings if f.status.value == "error"), None)
    why = f"{worst.check}: {worst.status.value}" if worst is not None else f"{dict(statuses)}"
    if statuses["fail"] or statuses["warn"]:
        return "faulty", why
    if statuses["error"] or not findings:
        return "unreadable", why if findings else "no finding"
    return "healthy", why


def run_sample(tree: Tree, sample: Mapping[str, Any]) -> tuple[str, str]:
    runs = [1, 2] if PLANS[sample["format"]][4] else [1]
    results = []
    for hosts in runs:
        try:
            results.append(judge(tree, sample, hosts))
        except Exception as exc:  # noqa: BLE001 - a crashing parser or evaluator is what is measured
            results.append(("crash", f"{type(exc).__name__}: {exc}"[:200]))
    for wanted in ("crash", "faulty", "unreadable", "healthy"):
        for result in results:
            if result[0] == wanted:
                return result
    return results[0]


def score(expected: str, got: str) -> str:
    want = expected.split(":")[0]
    if got == "crash":
        return "crash"
    if got == want:
        return "right"
    if got == "faulty":
        return "false alarm"
    if got == "healthy":
        return "miss"
    return "could-not-read"


def table(rows: list[tuple[str, str]]) -> str:
    """rows: (format, class) -> a table per format and totals."""
    formats = sorted({f for f, _ in rows})
    width = max([len(f) for f in formats] + [6])
    lines = [f"{'format':<{width}}  {'n':>3}  " + "  ".join(f"{c:>14}" for c in CLASSES)]
    for name in [*formats, "total"]:
        mine = Counter(c for f, c in rows if f == name or name == "total")
        lines.append(f"{name:<{width}}  {sum(mine.values()):>3}  " + "  ".join(f"{mine[c]:>14}" for c in CLASSES))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", type=Path, default=HERE.parent, help="the checkout whose preflight is scored")
    parser.add_argument("--set", type=Path, default=HERE / "sealed" / "parsers", help="the sealed samples")
    parser.add_argument("--out", type=Path, help="also write the table here")
    parser.add_argument("--label", default="", help="a name for the tree in the table's title")
    parser.add_argument("--details", action="store_true", help="each sample's verdict (do not commit it)")
    args = parser.parse_args(argv)
    tree = Tree(args.tree)
    rows: list[tuple[str, str]] = []
    detail: list[str] = []
    for path in sorted(args.set.glob("*.json")):
        sample = json.loads(path.read_text(encoding="utf-8"))
        got, why = run_sample(tree, sample)
        klass = score(sample["expected"], got)
        rows.append((sample["format"], klass))
        detail.append(f"{path.stem}: expected {sample['expected']}, got {got} ({why}) -> {klass}")
    title = f"sealed parser evaluation: {len(rows)} samples, tree {args.label or args.tree}"
    text = f"{title}\n{table(rows)}\n"
    print(text + ("\n" + "\n".join(detail) if args.details else ""))
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
