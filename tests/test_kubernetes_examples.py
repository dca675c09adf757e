"""examples/kubernetes: every manifest is valid for Kubernetes (the schemas kubernetes-validate bundles, offline),
and read as a scheduler and a kubelet would, it does its job on real GPU and Ascend NPU nodes: each container that
checks devices asks for them and tolerates those nodes' taints (tests/fixtures/kubernetes/nodes.json: what the
device plugins register and the nodes carry, with sources), every hostPath is a real node path that cannot keep
the Pod from starting where it may be absent, one node's failure keeps the other Pods (and their facts), the
trainer gets its rendezvous from the Job, and collect-and-judge.sh returns once the Job has ended. Each Pod's
command runs on the namespace nodes in test_collect_cluster.py."""

from __future__ import annotations

import copy
import json
import os
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from k8s_pods import EXAMPLES, config_map, container_command, containers, job, manifests, pod_template

# The oldest Kubernetes the examples target: 1.29, the first where backoffLimitPerIndex (a failed Pod fails its own
# index, the others run on) is on by default (beta; GA in 1.33); and the newest bundled.
VERSIONS = ("1.29.0", kubernetes_validate.latest_version())
PER_NODE = {"preflight-facts-gpu": ("nvidia.com/gpu", "preflight-hosts-gpu"),
            "preflight-facts-npu": ("huawei.com/Ascend910", "preflight-hosts-npu"),
            "preflight-nodes": ("nvidia.com/gpu", None)}
ALL = manifests()
NODES = json.loads((Path(__file__).parent / "fixtures" / "kubernetes" / "nodes.json").read_text())
RESOURCES: dict[str, set[str]] = {acc: {r["name"] for r in rows} for acc, rows in NODES["device_resources"].items()}
TAINTS: dict[str, list[dict[str, str]]] = NODES["taints"]


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No network: a schema fetched from the internet would fail here."""
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("kubernetes-validate tried the network")
    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_every_example_file_is_read() -> None:
    names = {path.name for path, _, _ in ALL}
    assert names >= {"facts-gpu.yaml", "facts-npu.yaml", "judge-npu.yaml", "cluster-check-job.yaml"}
    kinds = [doc["kind"] for _, _, doc in ALL]
    assert kinds.count("Job") >= 4 and "ConfigMap" in kinds


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(("path", "position", "doc"), ALL, ids=[f"{p.name}#{i}" for p, i, _ in ALL])
def test_manifest_is_valid_for_kubernetes(offline: None, path: Path, position: int, doc: dict[str, Any],
                                          version: str) -> None:
    assert kubernetes_validate.validate(doc, version, strict=True) == version.rsplit(".", 1)[0]


def test_the_validator_refuses_a_broken_manifest(offline: None) -> None:
    """Proof the validation above can fail: a misspelt field and a wrong type are refused."""
    doc = copy.deepcopy(next(d for _, _, d in ALL if d["metadata"]["name"] == "preflight-facts-gpu"))
    pod_template(doc)["tolerations"][0]["efect"] = "NoSchedule"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(doc, VERSIONS[1], strict=True)
    doc = copy.deepcopy(next(d for _, _, d in ALL if d["metadata"]["name"] == "preflight-facts-gpu"))
    doc["spec"]["completions"] = "four"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(doc, VERSIONS[1], strict=True)


@pytest.mark.parametrize("name", sorted(PER_NODE))
def test_per_node_job_puts_one_pod_on_each_node_with_its_devices(name: str) -> None:
    doc = next(d for _, _, d in ALL if d["kind"] == "Job" and d["metadata"]["name"] == name)
    device, hosts_map = PER_NODE[name]
    spec, labels = pod_template(doc), doc["spec"]["template"]["metadata"]["labels"]
    assert doc["spec"]["completions"] == doc["spec"]["parallelism"]
    if hosts_map is not None:  # completions = the nodes listed in hosts.yaml
        assert len(yaml.safe_load(config_map(hosts_map)["hosts.yaml"])["hosts"]) == doc["spec"]["completions"]
        assert doc["spec"]["completionMode"] == "Indexed"
    rule, = spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert rule["topologyKey"] == "kubernetes.io/hostname"
    assert rule["labelSelector"]["matchLabels"].items() <= labels.items()
    assert {"key": device, "operator": "Exists", "effect": "NoSchedule"} in spec["tolerations"]
    assert spec["hostNetwork"] is True, "the node's network, as NCCL/HCCL see it"
    container, = spec["containers"]
    assert container["resources"]["limits"][device] == 8
    assert container["command"][0] == "preflight"



# --- read as data: what a scheduler and a kubelet do with the manifests ----------------------------------------


def jobs() -> list[tuple[str, dict[str, Any]]]:
    return [(path.name, doc) for path, _, doc in ALL if doc["kind"] == "Job"]


def node_checks() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(file, Job, container) of every container that runs `preflight node` (it checks this node's devices)."""
    return [(name, doc, c) for name, doc in jobs() for c in containers(doc) if c.get("command", [])[:2] ==
            ["preflight", "node"]]


def option(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def checked_devices(doc: dict[str, Any], container: dict[str, Any]) -> tuple[str, int]:
    """(accelerator, devices per host) the container checks: its options, else the hosts.yaml it reads (a
    ConfigMap mounted at the folder of its --hosts)."""
    argv = container["command"]
    accelerator, count = option(argv, "--accelerator"), option(argv, "--devices-per-host")
    hosts = option(argv, "--hosts")
    if hosts is not None:
        mount = next(m for m in container["volumeMounts"] if hosts.startswith(m["mountPath"] + "/"))
        volume = next(v for v in pod_template(doc)["volumes"] if v["name"] == mount["name"])
        cluster = yaml.safe_load(config_map(volume["configMap"]["name"])["hosts.yaml"])["cluster"]
        accelerator = accelerator or cluster["accelerator"]
        count = count or str(cluster["devices_per_host"])
    assert accelerator in RESOURCES and count is not None, (container["name"], "checks no named devices")
    return accelerator, int(count)


@pytest.mark.parametrize(("name", "doc", "container"), node_checks(),
                         ids=[f"{n}:{c['name']}" for n, _, c in node_checks()])
def test_a_checking_container_asks_for_the_devices_it_checks(name: str, doc: dict[str, Any],
                                                             container: dict[str, Any]) -> None:
    """The device plugins expose devices only to a container that requests them (an init container too): gpu ->
    nvidia.com/gpu, npu -> a name Ascend's device plugin registers, as many as it expects on the node."""
    accelerator, count = checked_devices(doc, container)
    resources = container.get("resources", {})
    asked = {k: v for k, v in resources.get("limits", {}).items() if any(k in names for names in RESOURCES.values())}
    assert len(asked) == 1 and next(iter(asked)) in RESOURCES[accelerator], (asked, accelerator)
    assert next(iter(asked.values())) == count
    requested = {k: v for k, v in resources.get("requests", {}).items() if k in asked}
    assert requested in ({}, asked), "extended resources: requests equal limits"


def device_pods() -> list[tuple[str, dict[str, Any], str]]:
    """(file, Job, accelerator) of every Job with a container asking for devices."""
    found = []
    for name, doc in jobs():
        asked = {k for c in containers(doc) for k in c.get("resources", {}).get("limits", {})}
        for accelerator, names in RESOURCES.items():
            if asked & names:
                found.append((name, doc, accelerator))
    return found


@pytest.mark.parametrize(("name", "doc", "accelerator"), device_pods(),
                         ids=[f"{n}:{d['metadata']['name']}" for n, d, _ in device_pods()])
def test_a_device_pod_tolerates_its_nodes_taints(name: str, doc: dict[str, Any], accelerator: str) -> None:
    """The taint named after the device resource (what device plugins and managed clusters put on accelerator
    nodes), and no toleration of a taint those nodes are not known to carry."""
    tolerations = pod_template(doc)["tolerations"]
    asked = {k for c in containers(doc) for k in c.get("resources", {}).get("limits", {})} & RESOURCES[accelerator]
    known = [{"key": t["key"], "effect": t["effect"], **({"value": t["value"]} if "value" in t else {})}
             for t in TAINTS[accelerator]]
    for resource in asked:
        assert {"key": resource, "operator": "Exists", "effect": "NoSchedule"} in tolerations
    for toleration in tolerations:
        shape = {k: v for k, v in toleration.items() if k in ("key", "value", "effect")}
        assert shape in known, f"{toleration}: not a taint of {accelerator} nodes in nodes.json"


def host_paths() -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """(file, Job, hostPath volume, its mount) of every hostPath volume mounted in an example."""
    found = []
    for name, doc in jobs():
        volumes = {v["name"]: v for v in pod_template(doc).get("volumes", []) if "hostPath" in v}
        for container in containers(doc):
            for mount in container.get("volumeMounts", []):
                if mount["name"] in volumes:
                    found.append((name, doc["metadata"]["name"], volumes[mount["name"]], mount))
    return found


def test_host_paths_are_read() -> None:
    assert {v["hostPath"]["path"] for _, _, v, _ in host_paths()} >= {"/usr/local/Ascend/driver", "/etc/hccn.conf"}


@pytest.mark.parametrize(("name", "job_name", "volume", "mount"), host_paths(),
                         ids=[f"{n}:{v['hostPath']['path']}" for n, _, v, _ in host_paths()])
def test_a_host_path_is_a_real_node_path_that_cannot_block_the_pod(name: str, job_name: str, volume: dict[str, Any],
                                                                   mount: dict[str, Any]) -> None:
    """Every hostPath is a path real nodes have (nodes.json, with its sources), mounted where the tools look for
    it. A type that must exist (File, Directory) only for a path every such node has; a folder that may be absent
    is DirectoryOrCreate; never FileOrCreate or no type (they write the node: an empty file, or a folder where a
    file belongs)."""
    path, kind = volume["hostPath"]["path"], volume["hostPath"].get("type", "")
    real = NODES["host_paths"].get(path)
    assert real is not None, f"{path}: not a node path in tests/fixtures/kubernetes/nodes.json"
    assert mount["mountPath"] == path and mount.get("readOnly") is True
    if kind in ("File", "Directory"):
        assert real["kind"] == kind.lower(), (path, kind)
        assert real["exists"] != "maybe", f"{path} is absent on some nodes: a {kind} hostPath keeps the Pod out"
    else:
        assert kind == "DirectoryOrCreate" and real["kind"] == "directory", (path, kind)


def mounted(container: dict[str, Any], doc: dict[str, Any], path: str) -> bool:
    """Whether ``path`` on the node is at ``path`` in the container (its own mount or a folder above it)."""
    volumes = {v["name"]: v["hostPath"]["path"] for v in pod_template(doc).get("volumes", []) if "hostPath" in v}
    for mount in container.get("volumeMounts", []):
        host = volumes.get(mount["name"])
        if host is not None and mount["mountPath"] == host and (path == host or path.startswith(host + "/")):
            return True
    return False


NPU_CHECKS = [(n, d, c) for n, d, c in node_checks() if checked_devices(d, c)[0] == "npu"]


@pytest.mark.parametrize(("name", "doc", "container"), NPU_CHECKS, ids=[n for n, _, _ in NPU_CHECKS])
def test_an_npu_pod_has_its_tools_on_every_layout(name: str, doc: dict[str, Any], container: dict[str, Any]) -> None:
    """npu-smi in the driver's tools, /usr/local/sbin or /usr/local/bin: each is mounted, or (/usr/local/bin) put
    in by Ascend Docker Runtime where it exists (no hostPath can mount a file only where it exists); hccn_tool,
    DCMI and the driver files the tools read are mounted."""
    runtime = set(NODES["runtime_mounts"]["paths"])
    for path in NODES["npu_smi_layouts"]:
        assert mounted(container, doc, path) or path in runtime, f"npu-smi at {path} is not seen"
    for path in NODES["npu_tool_files"]:
        assert mounted(container, doc, path), f"{path} is not mounted"


def on_pod_failure(spec: dict[str, Any], container: str, exit_code: int) -> str:
    """What the Job controller does when one Pod's ``container`` exits ``exit_code`` while the others run (batch/v1
    JobSpec and PodFailurePolicyRule, as documented): "stop all" (the Job fails, its running Pods are terminated),
    "retry" (a new Pod for the index) or "fail index" (that index fails, the other Pods run on)."""
    action = "Count"
    for rule in spec.get("podFailurePolicy", {}).get("rules", []):
        codes = rule.get("onExitCodes")
        if codes and codes.get("containerName", container) == container and \
                (exit_code in codes["values"]) == (codes["operator"] == "In"):
            action = rule["action"]
            break
    if action == "FailJob":
        return "stop all"
    if action == "Ignore":
        return "retry"
    if action == "FailIndex":
        assert "backoffLimitPerIndex" in spec, "FailIndex needs backoffLimitPerIndex"
        return "fail index"
    if "backoffLimitPerIndex" in spec:
        assert spec.get("completionMode") == "Indexed"
        if spec["backoffLimitPerIndex"] > 0:
            return "retry"
        return "stop all" if spec.get("maxFailedIndexes") == 0 else "fail index"
    return "retry" if spec.get("backoffLimit", 6) > 0 else "stop all"


@pytest.mark.parametrize("name", sorted(PER_NODE))
def test_one_failed_pod_keeps_the_other_pods(name: str) -> None:
    """A Pod that fails (preflight's verdicts 1/2/4, a crash or OOM kill) fails its own index: the others run on
    and keep their facts, and it is not run again on whatever node is free. The Job still ends: a Pod that cannot
    start is bounded by activeDeadlineSeconds."""
    doc = job(name)
    spec = doc["spec"]
    template = pod_template(doc)
    assert template["restartPolicy"] == "Never", "podFailurePolicy and backoffLimitPerIndex need it"
    container, = template["containers"]
    for rule in spec.get("podFailurePolicy", {}).get("rules", []):
        assert rule.get("onExitCodes", {}).get("containerName", container["name"]) == container["name"]
    for code in (1, 2, 4, 137):
        assert on_pod_failure(spec, container["name"], code) == "fail index", (name, code)
    assert 0 < spec["activeDeadlineSeconds"] <= 3600


def test_the_failure_model_reads_the_old_policy_as_stopping_the_others() -> None:
    """Proof the model can fail: backoffLimit 0 (the examples before issue 36) stops every other Pod."""
    old = {"completionMode": "Indexed", "backoffLimit": 0}
    assert on_pod_failure(old, "preflight", 4) == "stop all"
    assert on_pod_failure({**old, "backoffLimit": 3}, "preflight", 4) == "retry"


def test_the_trainer_gets_its_rendezvous_from_the_job() -> None:
    """init-container.yaml: Pod i of the Indexed Job is train-i, the headless Service gives it a DNS name
    (train-0.train, resolvable while the Pods are still initialising), torchrun gets --nnodes = completions,
    --node-rank = the completion index and --master-addr = Pod 0; hostNetwork Pods need ClusterFirstWithHostNet
    to resolve it. The init container's --ranks is the job's rank count."""
    doc = job("train")
    spec, template = doc["spec"], pod_template(doc)
    assert spec["completionMode"] == "Indexed"
    service = next(d for p, _, d in ALL if p.name == "init-container.yaml" and d["kind"] == "Service")
    assert service["metadata"]["name"] == template["subdomain"]
    assert service["spec"]["clusterIP"] == "None" and service["spec"]["publishNotReadyAddresses"] is True
    assert service["spec"]["selector"] == {"job-name": doc["metadata"]["name"]}, "the label the Job puts on its Pods"
    assert template["hostNetwork"] is True and template["dnsPolicy"] == "ClusterFirstWithHostNet"
    for index in (0, 2):
        argv = container_command(doc, f"gpu-node-0{index + 1}", {}, name="trainer", index=index).argv
        assert argv[0] == "torchrun"
        assert option(argv, "--nnodes") == str(spec["completions"]) == str(spec["parallelism"])
        assert option(argv, "--node-rank") == str(index)
        assert option(argv, "--master-addr") == f"{doc['metadata']['name']}-0.{service['metadata']['name']}"
        assert option(argv, "--master-port") == str(service["spec"]["ports"][0]["port"])
        ranks = int(option(argv, "--nnodes") or 0) * int(option(argv, "--nproc-per-node") or 0)
    preflight = container_command(doc, "gpu-node-01", {}, name="preflight").argv
    assert option(preflight, "--ranks") == str(ranks)


# --- collect-and-judge.sh and wait-job.sh, against a stand-in kubectl ----------------------------------------------

FAKE_KUBECTL = r'''
import json, os, sys, time
args = sys.argv[1:]
state = json.loads(open(os.environ["FAKE_STATE"]).read())
with open(os.environ["FAKE_STATE"] + ".calls", "a") as log:
    log.write(json.dumps(args) + "\n")
if args[0] == "wait":            # as the real one: a condition that never comes waits out the timeout
    if "--for=condition=complete" in args and "Complete" not in state["conditions"]:
        time.sleep(3600)
    sys.exit(0)
if args[:2] == ["get", "job/" + state["job"]]:
    path = args[-1]
    if "metadata.uid" in path:
        print(state["uid"], end="")
    elif "@.status" in path:
        print("".join(c + " " for c in state["conditions"]), end="")
    else:
        print("FailedIndexes (failed indexes: 1)", end="")
elif args[:2] == ["get", "configmap"]:
    print("hosts: [n1, n2, n3]")
elif args[:2] == ["get", "pods"]:
    print("p0 n1\np1 n2\np2 ")
elif args[0] == "logs":
    if args[1] == "p1":
        print("Error from server: container not found", file=sys.stderr)
        sys.exit(1)
    print('{"facts": "' + args[1] + '"}')
'''


@pytest.fixture
def kubectl(tmp_path: Path) -> Iterator[tuple[dict[str, str], Path]]:
    """A kubectl and a preflight on PATH that play a Job and record their calls: (environment, state file)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "kubectl").write_text(f"#!{sys.executable}\n{FAKE_KUBECTL}")
    (bin_dir / "preflight").write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {shlex.quote(str(tmp_path / 'judged'))}\n")
    for tool in ("kubectl", "preflight"):
        (bin_dir / tool).chmod(0o755)
    state = tmp_path / "state.json"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_STATE": str(state),
           "PREFLIGHT_WAIT_INTERVAL": "0.2"}
    yield env, state


def test_collect_script_judges_at_once_when_a_pod_failed(kubectl: tuple[dict[str, str], Path],
                                                         tmp_path: Path) -> None:
    """One Pod failed, so the Job is Failed, never Complete: the script goes on at once (a `kubectl wait
    --for=condition=complete` would sit out its 15 minutes), saves each log as NODE.json (none for a Pod without
    a log or a node) and judges this Job's run."""
    env, state = kubectl
    state.write_text(json.dumps({"job": "facts", "uid": "uid-7", "conditions": ["FailureTarget", "Failed"]}))
    started = time.monotonic()
    proc = subprocess.run(["sh", str(EXAMPLES / "collect-and-judge.sh"), "facts", "hosts-cm", str(tmp_path / "out")],
                          env=env, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - started < 20
    assert "job/facts failed: FailedIndexes (failed indexes: 1)" in proc.stderr
    assert "no log from p1 on n2" in proc.stderr and "p2 was never scheduled" in proc.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["hosts.yaml", "n1.json"]
    assert json.loads((tmp_path / "out" / "n1.json").read_text()) == {"facts": "p0"}
    assert (tmp_path / "judged").read_text().split("\n")[:-1] == \
        ["judge", str(tmp_path / "out"), "--hosts", str(tmp_path / "out" / "hosts.yaml"), "--run-id", "uid-7"]


def test_collect_script_waits_a_bounded_time(kubectl: tuple[dict[str, str], Path], tmp_path: Path) -> None:
    """A Job that does not end (a Pod that never starts, where no deadline is set): PREFLIGHT_WAIT seconds, then
    the facts that came back are judged."""
    env, state = kubectl
    state.write_text(json.dumps({"job": "facts", "uid": "uid-8", "conditions": []}))
    started = time.monotonic()
    proc = subprocess.run(["sh", str(EXAMPLES / "collect-and-judge.sh"), "facts", "hosts-cm", str(tmp_path / "out")],
                          env={**env, "PREFLIGHT_WAIT": "1"}, capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - started < 20
    assert "job/facts still running after 1s" in proc.stderr
    assert (tmp_path / "judged").exists()


@pytest.mark.parametrize(("conditions", "code"), [(["SuccessCriteriaMet", "Complete"], 0), (["Failed"], 1),
                                                  (["FailureTarget"], 124)])
def test_wait_job_ends_on_complete_or_failed(kubectl: tuple[dict[str, str], Path], conditions: list[str],
                                             code: int) -> None:
    """FailureTarget alone: the Pods are still being stopped, so not yet."""
    env, state = kubectl
    state.write_text(json.dumps({"job": "facts", "uid": "u", "conditions": conditions}))
    proc = subprocess.run(["sh", str(EXAMPLES / "wait-job.sh"), "facts", "1"], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == code, proc.stderr


def test_shell_scripts_parse() -> None:
    for script in ("collect-and-judge.sh", "wait-job.sh"):
        path = EXAMPLES / script
        assert os.access(path, os.X_OK), script
        assert subprocess.run(["sh", "-n", str(path)], capture_output=True, check=False).returncode == 0


def test_every_node_fact_has_a_source() -> None:
    rows = [*NODES["device_resources"]["gpu"], *NODES["device_resources"]["npu"], *TAINTS["gpu"], *TAINTS["npu"],
            *NODES["host_paths"].values(), NODES["runtime_mounts"], NODES["gpu_files"]]
    for row in rows:
        assert row["sources"] and all(s.startswith("https://") for s in row["sources"]), row
    assert set(NODES["npu_smi_layouts"]) | set(NODES["npu_tool_files"]) <= set(NODES["host_paths"])
