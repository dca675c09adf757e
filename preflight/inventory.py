"""hosts.yaml: parse, validate (errors name the line) and expand into a list of hosts.

Scheduler and launcher host lists (``--hosts slurm``, hostfiles, ``nodes:RANGE``) are expanded by
``preflight.hostlists`` (the layer below) and built here into an Inventory, with the same validation.

>>> inv = parse_inventory("hosts:\\n  - name: n[1-2]\\n", Path("hosts.yaml"))
>>> [h.name for h in inv.hosts], inv.cluster.master
(['n1', 'n2'], 'n1')
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml
from ClusterShell.NodeSet import NodeSet, NodeSetParseError

from preflight import hostlists
from preflight.hostlists import MAX_HOSTS, HostList, InventoryError
from preflight.ssh_config import SSHConfigLookup, cert_authority_in, expand_proxy_command, local_user

__all__ = ["ACCELERATORS", "MAX_HOSTS", "ClusterSpec", "Host", "Inventory", "InventoryError", "inventory_of",
           "load_inventory", "local_inventory", "parse_hostfile", "parse_inventory", "slurm_inventory"]

ACCELERATORS = ("npu", "gpu", "cpu")


@dataclass(frozen=True)
class Host:
    """One node as preflight reaches it."""

    name: str
    address: str
    user: str = "root"
    port: int = 22
    identity_file: str | None = None
    known_hosts: str | None = None
    python: str = "python3"
    proxy_jump: str | None = None  # the whole chain, each hop resolved: "user@addr:port,user@addr:port"
    proxy_command: str | None = None  # tokens expanded (preflight.ssh_config.expand_proxy_command)
    # Why only the system ssh client can reach this host (e.g. "@cert-authority in ~/.ssh/known_hosts"), or None.
    openssh_reason: str | None = None
    ssh_config: str | None = None  # hosts.yaml defaults.ssh_config, for the openssh transport's -F
    # Job environment as the training launch will see it (NCCL_SOCKET_IFNAME, HCCL_IF_BASE_PORT, ...).
    env: Mapping[str, str] = field(default_factory=dict)
    # Shell lines run before every python-level probe and worker (preflight.job_env), e.g. sourcing set_env.sh.
    setup: tuple[str, ...] = ()
    # Who named the job's interpreter (``python``/``setup``): "hosts.yaml", "--python", "PREFLIGHT_SETUP", ...;
    # "" when nobody did and ``python3`` on the login PATH is a guess (versions then blames no node for it).
    interpreter_from: str = ""
    # The switch (or rack) the host hangs off, hosts.yaml ``switch:``: --bisect keeps groups whole switches and
    # names the path between two when only groups spanning them are slow (preflight.allreduce.bisect).
    switch: str | None = None


@dataclass(frozen=True)
class ClusterSpec:
    """What the job expects of the cluster as a whole."""

    accelerator: str = "cpu"
    devices_per_host: int = 1
    master: str = ""
    master_port: int = 29500
    accelerator_reason: str = ""  # how the accelerator was chosen, for the report ("--accelerator gpu", ...)
    # The job's rank count when it is not hosts x devices_per_host (preflight.ranks): `preflight node` sets it
    # from --ranks or Slurm's variables, 0 when it does not know; None: count the hosts.
    ranks: int | None = None
    ranks_reason: str = ""  # how it was known ("--ranks 512", "SLURM_NTASKS=512")


@dataclass(frozen=True)
class Inventory:
    hosts: list[Host]
    cluster: ClusterSpec
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    path: Path | None = None
    ssh_source: str = ""  # who read the ssh config ("ssh -G (...)", or paramiko's parser and why)

    def host(self, name: str) -> Host:
        for host in self.hosts:
            if host.name == name:
                return host
        raise KeyError(name)


def local_inventory() -> Inventory:
    """The inventory of ``preflight run`` without ``--hosts``: this machine alone."""
    name = os.uname().nodename
    return Inventory(hosts=[Host(name=name, address="localhost")], cluster=ClusterSpec(master=name))


# --- schema -----------------------------------------------------------------------------------

_DEFAULT_KEYS: dict[str, type | tuple[type, ...] | None] = {
    "user": str, "port": int, "identity_file": str, "known_hosts": str, "python": str,
    "proxy_jump": str, "ssh_config": str, "env": None, "setup": None, "switch": str,
}
_HOST_KEYS: dict[str, type | tuple[type, ...] | None] = {
    "name": str, "address": str, "user": str, "port": int, "identity_file": str,
    "known_hosts": str, "python": str, "proxy_jump": str, "env": None, "setup": None, "switch": str,
}
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CLUSTER_KEYS: dict[str, type | tuple[type, ...]] = {
    "accelerator": str, "devices_per_host": int, "master": str, "master_port": int,
}
_TOP_KEYS = ("defaults", "cluster", "hosts", "checks")


def load_inventory(path: Path, known_params: Mapping[str, Mapping[str, Any]] | None = None) -> Inventory:
    """Read and validate a hosts file; raises InventoryError naming the line.

    Also ``slurm``, ``hostfile:PATH``, ``nodes:RANGE`` and MPI/DeepSpeed hostfiles (preflight.hostlists).
    """
    if hostlists.is_special(str(path)):
        return inventory_of(hostlists.special_hosts(str(path)), known_params)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InventoryError(path, None, f"cannot read: {exc}") from exc
    if hostlists.looks_like_hostfile(text):
        return parse_hostfile(text, path, known_params)
    return parse_inventory(text, path, known_params)


def parse_hostfile(text: str, path: Path | None, known_params: Mapping[str, Mapping[str, Any]] | None = None
                   ) -> Inventory:
    """An MPI / DeepSpeed hostfile -> Inventory; errors name the line.

    >>> inv = parse_hostfile("# workers\\nworker-1 slots=4\\n\\nworker-2 slots=4\\n", None)
    >>> [h.name for h in inv.hosts], inv.cluster.devices_per_host
    (['worker-1', 'worker-2'], 4)
    """
    return inventory_of(hostlists.read_hostfile(text, path), known_params)


def slurm_inventory(environ: Mapping[str, str], known_params: Mapping[str, Mapping[str, Any]] | None = None
                    ) -> Inventory:
    """The nodes of the current Slurm allocation, in Slurm's order.

    >>> [h.name for h in slurm_inventory({"SLURM_JOB_NODELIST": "gpu[01-02],cpu7"}).hosts]
    ['cpu7', 'gpu01', 'gpu02']
    """
    return inventory_of(hostlists.slurm_hosts(environ), known_params)


def inventory_of(found: HostList, known_params: Mapping[str, Mapping[str, Any]] | None = None) -> Inventory:
    """Build through parse_inventory (same validation, ~/.ssh/config lookup) from a generated document."""
    doc: dict[str, Any] = {"hosts": found.names}
    if found.defaults:
        doc["defaults"] = found.defaults
    if found.cluster:
        doc["cluster"] = found.cluster
    return parse_inventory(yaml.safe_dump(doc, sort_keys=False), found.path, known_params)


# A host name or address that ClusterShell would return unchanged (letters, digits, ``.``, ``_``, ``:``, ``-``):
# expanding it through NodeSet cost ~50 us a name, half of reading a 10,000-host file.
PLAIN_NAME = re.compile(r"[A-Za-z0-9._:-]+")

# libyaml's loader where PyYAML was built with it (its wheels are): the same events, nodes and marks, parsed
# ~13x faster (16 hosts: 0.3 ms instead of 3.6; a 10,000-host file: parse_inventory 2.0 -> 0.5 s).
SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_inventory(
    text: str, path: Path | None = None, known_params: Mapping[str, Mapping[str, Any]] | None = None
) -> Inventory:
    try:
        for event in yaml.parse(text, Loader=SAFE_LOADER):
            # Aliases are what YAML bombs are made of, and a hosts file never needs them.
            if isinstance(event, yaml.AliasEvent):
                raise InventoryError(path, event.start_mark.line + 1 if event.start_mark else None,
                                     "YAML anchors/aliases are not supported in hosts files")
        root = yaml.compose(text, Loader=SAFE_LOADER)
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise InventoryError(path, line, f"invalid YAML: {exc.problem}") from exc
    except yaml.YAMLError as exc:
        raise InventoryError(path, None, f"invalid YAML: {exc}") from exc
    if root is None:
        raise InventoryError(path, 1, "the file is empty: expected a 'hosts:' list")
    return _Reader(path).inventory(root, known_params or {})


class _Reader:
    """Walks the YAML node tree so every error can name its line."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.seen: set[int] = set()
        self.constructor = yaml.constructor.SafeConstructor()

    def construct(self, node: yaml.Node) -> Any:
        return self.constructor.construct_object(node, deep=True)

    def error(self, node: yaml.Node, message: str) -> InventoryError:
        return InventoryError(self.path, node.start_mark.line + 1, message)

    def visit(self, node: yaml.Node) -> None:
        # Aliases were refused while parsing; a node seen twice would be one (defence in depth).
        if id(node) in self.seen:
            raise self.error(node, "YAML anchors/aliases are not supported in hosts files")
        self.seen.add(id(node))

    def mapping(self, node: yaml.Node, what: str, allowed: Mapping[str, Any]) -> dict[str, tuple[Any, yaml.Node]]:
        self.visit(node)
        if not isinstance(node, yaml.MappingNode):
            raise self.error(node, f"{what} must be a mapping")
        out: dict[str, tuple[Any, yaml.Node]] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if not isinstance(key, str) or key not in allowed:
                known = ", ".join(allowed)
                raise self.error(key_node, f"unknown key {key!r} in {what} (expected one of: {known})")
            if key in out:
                raise self.error(key_node, f"duplicate key {key!r} in {what}")
            if allowed[key] is not None:  # nested nodes are visited by the reader that walks them
                self.visit(value_node)
            out[key] = (self.scalar(value_node, f"{what}.{key}", allowed[key]), value_node)
        return out

    def scalar(self, node: yaml.Node, what: str, expected: Any) -> Any:
        if expected is None:  # a nested structure, read by the caller
            return node
        if not isinstance(node, yaml.ScalarNode):
            raise self.error(node, f"{what} must be a single value, not a {type(node).__name__[:-4].lower()}")
        value = self.construct(node)
        if expected is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise self.error(node, f"{what} must be an integer, got {node.value!r}")
        if expected is str:
            if value is None or isinstance(value, (list, dict)):
                raise self.error(node, f"{what} must be a string")
            value = str(node.value)
        return value

    def inventory(self, root: yaml.Node, known_params: Mapping[str, Mapping[str, Any]]) -> Inventory:
        if isinstance(root, yaml.SequenceNode):  # a bare list of names
            top: dict[str, tuple[Any, yaml.Node]] = {"hosts": (root, root)}
        else:
            top = self.mapping(root, "the top level", {k: None for k in _TOP_KEYS})
        defaults = self.entry(top["defaults"][1], "defaults", _DEFAULT_KEYS) if "defaults" in top else {}
        if "hosts" not in top:
            raise self.error(root, "missing 'hosts:' (a list of host names or mappings)")
        ssh_config = defaults.pop("ssh_config", None)
        ssh_lookup = SSHConfigLookup(ssh_config)
        hosts = self.hosts(top["hosts"][1], defaults, ssh_lookup)
        if ssh_config:
            hosts = [replace(h, ssh_config=os.path.expanduser(ssh_config)) for h in hosts]
        cluster = self.cluster(top["cluster"][1] if "cluster" in top else None, hosts)
        params = self.params(top["checks"][1], known_params) if "checks" in top else {}
        return Inventory(hosts=hosts, cluster=cluster, params=params, path=self.path, ssh_source=ssh_lookup.source)

    def entry(self, node: yaml.Node, what: str, allowed: Mapping[str, Any]) -> dict[str, Any]:
        """A defaults or host mapping; ``env`` becomes a dict of strings."""
        values = self.mapping(node, what, allowed)
        entry = {k: v for k, (v, _) in values.items() if k not in ("env", "setup")}
        if "setup" in values:
            entry["setup"] = self.setup(values["setup"][0], f"{what}.setup")
        if "env" in values:
            env_node = values["env"][1]
            entry["env"] = {}
            for key, (value, key_line) in self.mapping(env_node, f"{what}.env", _AnyKey()).items():
                if not _ENV_NAME.match(key):
                    raise self.error(key_line, f"{what}.env: {key!r} is not a valid environment variable name")
                entry["env"][key] = value
        return entry

    def setup(self, node: yaml.Node, what: str) -> tuple[str, ...]:
        """``setup:``: one shell line (or block) or a list of them, run before every python-level probe."""
        self.visit(node)
        items = node.value if isinstance(node, yaml.SequenceNode) else [node]
        lines = []
        for item in items:
            if item is not node:
                self.visit(item)
            if not isinstance(item, yaml.ScalarNode) or not str(item.value).strip() or item.tag.endswith(":null"):
                raise self.error(item, f"{what} must be a shell line or a list of shell lines, e.g. "
                                       "setup: [source /usr/local/Ascend/ascend-toolkit/set_env.sh]")
            lines.append(str(item.value))
        return tuple(lines)

    def hosts(self, node: yaml.Node, defaults: dict[str, Any], ssh_lookup: SSHConfigLookup) -> list[Host]:
        self.visit(node)
        if not isinstance(node, yaml.SequenceNode) or not node.value:
            raise self.error(node, "hosts must be a non-empty list")
        items: list[tuple[yaml.Node, dict[str, Any], list[str]]] = []
        where: dict[str, int] = {}
        count = 0
        for item in node.value:
            if isinstance(item, yaml.ScalarNode):
                self.visit(item)
                entry: dict[str, Any] = {"name": str(item.value)}
            else:
                entry = self.entry(item, "a host entry", _HOST_KEYS)
                if "name" not in entry:
                    raise self.error(item, "a host entry needs 'name'")
            names = self.expand(item, entry["name"])
            if len(names) > 1 and "address" in entry:
                raise self.error(item, f"'address' cannot be given for a range of hosts ({entry['name']})")
            for name in names:
                if name in where:
                    raise self.error(item, f"duplicate host {name!r} (first on line {where[name]})")
                where[name] = item.start_mark.line + 1
            count += len(names)
            if count > MAX_HOSTS:
                raise self.error(item, f"more than {MAX_HOSTS} hosts")
            items.append((item, entry, names))
        try:
            ssh_lookup.prefetch(name for _, _, names in items for name in names)  # all hosts' `ssh -G` at once
            hosts = [self.host(item, name, entry, defaults, ssh_lookup(name))
                     for item, entry, names in items for name in names]
            hops = [hop for h in hosts if h.proxy_jump for hop in _hop_names(h.proxy_jump)]
            ssh_lookup.prefetch(hops)
        except ValueError as exc:
            raise InventoryError(self.path, None, str(exc)) from exc
        if any(h.switch for h in hosts):
            lines = [item for item, _, names in items for _ in names]  # hosts[i] came from lines[i]
            bare = next((lines[i] for i, h in enumerate(hosts) if not h.switch), None)
            if bare is not None:
                raise self.error(bare, "switch: is given for some hosts but not this one: give every host "
                                       "(or defaults) a switch, or none")
        return [replace(h, proxy_jump=_resolve_jump(h.proxy_jump, ssh_lookup)) if h.proxy_jump else h for h in hosts]

    def expand(self, node: yaml.Node, pattern: str) -> list[str]:
        if PLAIN_NAME.fullmatch(pattern):  # no range, set operator, group or glob: NodeSet gives it back as is
            return [pattern]
        if not pattern.strip():
            raise self.error(node, "empty host name")
        if _range_size(pattern) > MAX_HOSTS:  # checked before expanding: NodeSet would build them all
            raise self.error(node, f"host range {pattern!r} expands to more than {MAX_HOSTS} hosts")
        try:
            return list(NodeSet(pattern))
        except (NodeSetParseError, ValueError) as exc:
            raise self.error(node, f"bad host name or range {pattern!r}: {exc}") from exc

    def host(self, node: yaml.Node, name: str, entry: dict[str, Any], defaults: dict[str, Any],
             ssh: dict[str, Any]) -> Host:
        # Precedence: the host's own entry, then what ~/.ssh/config sets for that name, then defaults.
        known_files: tuple[str, ...] = ssh.pop("known_hosts_files", ())
        reason = ssh.pop("openssh_reason", None)
        merged: dict[str, Any] = {**defaults, **ssh, **{k: v for k, v in entry.items() if k != "name"}}
        merged["env"] = {**defaults.get("env", {}), **entry.get("env", {})}
        port = merged.get("port", 22)
        if "switch" in merged and not str(merged["switch"]).strip():
            raise self.error(node, "switch must be a name (the switch or rack the host is on), not empty")
        if not 1 <= int(port) <= 65535:
            raise self.error(node, f"port {port} out of range 1-65535")
        address, user = merged.get("address") or name, merged.get("user") or local_user()
        known_hosts = _expand_path(merged.get("known_hosts"))
        ports = [address, name] if int(port) == 22 else [f"[{address}]:{port}", f"[{name}]:{port}"]
        marked = cert_authority_in([*([known_hosts] if known_hosts else []), *known_files], ports)
        if marked and not reason:
            reason = marked
        command = merged.get("proxy_command")
        return Host(
            name=name,
            address=address,
            user=user,
            port=int(port),
            identity_file=_expand_path(merged.get("identity_file")),
            known_hosts=known_hosts,
            python=merged.get("python", "python3"),
            proxy_jump=merged.get("proxy_jump"),
            proxy_command=expand_proxy_command(command, address, int(port), user) if command else None,
            openssh_reason=reason,
            env=merged["env"],
            setup=tuple(merged.get("setup", ())),
            interpreter_from="hosts.yaml" if "python" in merged or "setup" in merged else "",
            switch=str(merged["switch"]).strip() if "switch" in merged else None,
        )

    def cluster(self, node: yaml.Node | None, hosts: list[Host]) -> ClusterSpec:
        spec = ClusterSpec(master=hosts[0].name,
                           accelerator_reason="hosts.yaml sets no cluster.accelerator: cpu (set npu or gpu)")
        if node is None:
            return spec
        values = self.mapping(node, "cluster", _CLUSTER_KEYS)
        for key, (value, value_node) in values.items():
            if key == "accelerator" and value not in ACCELERATORS:
                raise self.error(value_node, f"cluster.accelerator must be one of {', '.join(ACCELERATORS)}")
            if key == "master" and value not in {h.name for h in hosts}:
                raise self.error(value_node, f"cluster.master {value!r} is not one of the hosts")
            if key == "master_port" and not 1 <= value <= 65535:
                raise self.error(value_node, f"cluster.master_port {value} out of range 1-65535")
            if key == "devices_per_host" and value < 0:
                raise self.error(value_node, "cluster.devices_per_host must be >= 0")
            spec = replace(spec, **{key: value})
            if key == "accelerator":
                spec = replace(spec, accelerator_reason="hosts.yaml cluster.accelerator")
        return spec

    def params(self, node: yaml.Node, known: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for family, (family_node, _) in self.mapping(node, "checks", {k: None for k in known}).items():
            allowed = known[family]
            values = self.mapping(family_node, f"checks.{family}", {k: None for k in allowed})
            out[family] = {}
            for key, (value_node, _) in values.items():
                value = self.construct(value_node)
                default = allowed[key]
                if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
                    value = float(value)  # `3` where `3.0` is the default
                if default is not None and (not isinstance(value, type(default))
                                            or isinstance(value, bool) != isinstance(default, bool)):
                    raise self.error(value_node, f"checks.{family}.{key} must be {type(default).__name__}")
                out[family][key] = value
        return out


def _hop_names(spec: str) -> list[str]:
    """The host names of a ProxyJump chain.

    >>> _hop_names("admin@bastion:2222,hop2")
    ['bastion', 'hop2']
    """
    return [hop.strip().rpartition("@")[2].partition(":")[0] for hop in spec.split(",") if hop.strip()]


def _resolve_jump(spec: str, ssh_lookup: Callable[[str], dict[str, Any]]) -> str:
    """``[user@]host[:port],...`` with every hop's alias resolved through the ssh config.

    >>> _resolve_jump("admin@bastion:2222,other", lambda name: {"address": "10.1.1.1", "user": "x"})
    'admin@10.1.1.1:2222,x@10.1.1.1'
    """
    hops = []
    for hop in spec.split(","):
        if not hop.strip():
            continue
        user, _, hostport = hop.strip().rpartition("@")
        name, _, port = hostport.partition(":")
        found = ssh_lookup(name)
        user = user or str(found.get("user", ""))
        port = port or str(found.get("port", ""))
        address = str(found.get("address", name))
        hops.append((f"{user}@" if user else "") + address + (f":{port}" if port else ""))
    return ",".join(hops)


def _range_size(pattern: str) -> int:
    """Upper bound of the names a ClusterShell pattern expands to.

    >>> _range_size("n[01-10,20]-ib[0-1],x")
    23
    """
    total = 0
    for part in re.split(r",(?![^\[]*\])", pattern):
        size = 1
        for group in re.findall(r"\[([^\]]*)\]", part):
            count = 0
            for item in group.split(","):
                low, _, high = item.partition("/")[0].partition("-")
                if low.strip().isdigit() and high.strip().isdigit():
                    count += abs(int(high) - int(low)) + 1
                else:
                    count += 1
            size *= max(count, 1)
        total += size
    return total


class _AnyKey(dict[str, Any]):
    """``allowed`` for a mapping whose keys are free (env names): every key maps to str."""

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str)

    def __getitem__(self, key: str) -> Any:
        return str


def _expand_path(value: str | None) -> str | None:
    return os.path.expanduser(value) if value else None
