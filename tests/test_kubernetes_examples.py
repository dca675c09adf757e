"""examples/kubernetes: every manifest is valid for Kubernetes (the schemas kubernetes-validate bundles, offline),
and the per-node Jobs really put one Pod on each node with its devices (their commands run in
test_collect_cluster.py)."""

from __future__ import annotations

import copy
import socket
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from k8s_pods import EXAMPLES, config_map, manifests, pod_template

# The oldest Kubernetes the examples target (Indexed Jobs are stable since 1.24) and the newest bundled.
VERSIONS = ("1.27.0", kubernetes_validate.latest_version())
PER_NODE = {"preflight-facts-gpu": ("nvidia.com/gpu", "preflight-hosts-gpu"),
            "preflight-facts-npu": ("huawei.com/Ascend910", "preflight-hosts-npu"),
            "preflight-nodes": ("nvidia.com/gpu", None)}
ALL = manifests()


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


def test_collect_script_parses_and_judges_what_it_collected() -> None:
    """collect-and-judge.sh needs kubectl and a cluster (not run here): its shell is valid, it saves each Pod's
    log as NODE.json next to the ConfigMap's hosts.yaml and ends in `preflight judge` over that folder."""
    script = EXAMPLES / "collect-and-judge.sh"
    assert subprocess.run(["sh", "-n", str(script)], capture_output=True, check=False).returncode == 0
    text = script.read_text()
    assert 'kubectl logs "$pod" > "$out/$node.json"' in text
    assert text.rstrip().endswith('exec preflight judge "$out" --hosts "$out/hosts.yaml"')
