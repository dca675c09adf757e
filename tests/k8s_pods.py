"""The Kubernetes examples as data: every manifest, and a Pod's command as the kubelet would run it.

A container's command is what Kubernetes starts: ``command`` + ``args``, ``$(VAR)`` replaced by the container's
``env`` (``$$`` is a literal ``$``; an unknown name stays as written), the downward API's ``spec.nodeName``
given as the node, the Job controller's uid label as ``JOB_UID`` and its completion index annotation as the
index. Paths under a volume's ``mountPath`` are moved under a folder of the test (what the volume is there);
hostPath and emptyDir volumes keep their path (the node's own, as on a real node).

>>> expand("/facts/$(NODE).json $$(NODE) $(OTHER)", {"NODE": "n1"})
'/facts/n1.json $(NODE) $(OTHER)'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "kubernetes"
JOB_UID = "0d6f3c2e-36aa-4c1e-9b1e-5a7f2f1e0b36"  # what `metadata.labels['batch.kubernetes.io/controller-uid']` reads


def manifests() -> list[tuple[Path, int, dict[str, Any]]]:
    """(file, position, document) of every YAML document under examples/kubernetes."""
    found = []
    for path in sorted(EXAMPLES.glob("*.yaml")):
        for position, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if doc is not None:
                found.append((path, position, doc))
    return found


def expand(text: str, env: Mapping[str, str]) -> str:
    """Kubernetes' ``$(VAR)`` expansion of a command item."""
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)",
                  lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)), text)


@dataclass(frozen=True)
class PodCommand:
    """One container of a manifest, ready to run on ``node``: argv, env and the mounts moved under the test."""

    argv: list[str]
    env: dict[str, str]
    mounts: dict[str, Path]  # mountPath -> the folder standing for the volume


def pod_template(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The Pod spec of a Job or DaemonSet."""
    spec: dict[str, Any] = doc["spec"]["template"]["spec"]
    return spec


def containers(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every container of a Job's Pod, init containers first."""
    spec = pod_template(doc)
    return [*spec.get("initContainers", []), *spec["containers"]]


def container_command(doc: Mapping[str, Any], node: str, volumes: Mapping[str, Path], name: str | None = None,
                      index: int = 0) -> PodCommand:
    """The container ``name`` (default: the first app container) of a Job's Pod ``index``, for ``node``;
    ``volumes``: volume name -> its folder here (configMap and persistentVolumeClaim volumes must be given;
    hostPath and emptyDir keep the node's path)."""
    spec = pod_template(doc)
    container = spec["containers"][0] if name is None else next(c for c in containers(doc) if c["name"] == name)
    fields = {"spec.nodeName": node, "metadata.labels['batch.kubernetes.io/controller-uid']": JOB_UID,
              "metadata.annotations['batch.kubernetes.io/job-completion-index']": str(index)}
    env: dict[str, str] = {}
    for item in container.get("env", []):
        field = item.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
        if "value" in item:
            env[item["name"]] = expand(str(item["value"]), env)
        elif field in fields:
            env[item["name"]] = fields[field]
        else:
            raise ValueError(f"env {item['name']}: not emulated here")
    kinds = {v["name"]: v for v in spec.get("volumes", [])}
    mounts: dict[str, Path] = {}
    for mount in container.get("volumeMounts", []):
        volume = kinds[mount["name"]]
        if "configMap" in volume or "persistentVolumeClaim" in volume:
            mounts[mount["mountPath"]] = volumes[mount["name"]]
    argv = []
    for item in [*container.get("command", []), *container.get("args", [])]:
        word = expand(str(item), env)
        for path, folder in mounts.items():
            if word == path or word.startswith(path + "/"):
                word = str(folder) + word[len(path):]
        argv.append(word)
    return PodCommand(argv, env, mounts)


def config_map(name: str) -> dict[str, str]:
    """The data of the ConfigMap ``name`` among the examples."""
    for _, _, doc in manifests():
        if doc.get("kind") == "ConfigMap" and doc["metadata"]["name"] == name:
            data: dict[str, str] = doc["data"]
            return data
    raise KeyError(name)


def job(name: str) -> dict[str, Any]:
    for _, _, doc in manifests():
        if doc.get("kind") == "Job" and doc["metadata"]["name"] == name:
            return doc
    raise KeyError(name)
