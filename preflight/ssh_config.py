"""What the user's OpenSSH setup says about each host: ``ssh -G``'s effective settings, else paramiko's parser.

``ssh -G NAME`` prints the settings OpenSSH would use for NAME, with ``Include``, ``Match``, tokens and its own
defaults resolved exactly as the user's ``ssh`` does. Only what the *config* sets may override hosts.yaml's
``defaults``: OpenSSH's own defaults (what ``ssh -G -F /dev/null`` prints) are told apart and dropped.

>>> base = {"hostname": ["x"], "user": ["me"], "port": ["22"], "identityfile": ["~/.ssh/id_rsa"]}
>>> got = {"hostname": ["10.0.0.5"], "user": ["me"], "port": ["2222"], "identityfile": ["/k"],
...        "proxyjump": ["bastion"], "gssapiauthentication": ["yes"]}
>>> sorted(config_sets(got, base, "n1").items())  # doctest: +NORMALIZE_WHITESPACE
[('address', '10.0.0.5'), ('identity_file', '/k'), ('openssh_reason', 'GSSAPIAuthentication yes'),
 ('port', 2222), ('proxy_jump', 'bastion')]
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

Settings = dict[str, list[str]]  # ssh -G key (lower case) -> its values, in order (identityfile repeats)

DEFAULT_CONFIG = "~/.ssh/config"
_PARALLEL = 16


def parse_ssh_g(text: str) -> Settings:
    """``ssh -G`` output -> settings.

    >>> parse_ssh_g("user root\\nidentityfile ~/.ssh/id_rsa\\nidentityfile /k\\nproxycommand nc %h %p\\n")
    {'user': ['root'], 'identityfile': ['~/.ssh/id_rsa', '/k'], 'proxycommand': ['nc %h %p']}
    """
    settings: Settings = {}
    for line in text.splitlines():
        key, _, value = line.strip().partition(" ")
        if key:
            settings.setdefault(key.lower(), []).append(value.strip())
    return settings


def _first(settings: Settings, key: str) -> str | None:
    values = settings.get(key)
    return values[0] if values else None


def openssh_only(settings: Settings, base: Settings) -> str | None:
    """Why paramiko cannot honour these settings (OpenSSH-only features), or None.

    >>> openssh_only({"pkcs11provider": ["/usr/lib/opensc-pkcs11.so"]}, {"pkcs11provider": ["none"]})
    'PKCS11Provider /usr/lib/opensc-pkcs11.so'
    """
    reasons = []
    if (_first(settings, "gssapiauthentication") or "no") == "yes":
        reasons.append("GSSAPIAuthentication yes")
    for key, name in (("pkcs11provider", "PKCS11Provider"), ("securitykeyprovider", "SecurityKeyProvider"),
                      ("revokedhostkeys", "RevokedHostKeys")):
        value = _first(settings, key)
        if value and value != "none" and value != _first(base, key):
            reasons.append(f"{name} {value}")
    return "; ".join(reasons) or None


def config_sets(settings: Settings, base: Settings, name: str) -> dict[str, Any]:
    """The hosts.yaml keys whose values the config sets for ``name`` (not OpenSSH's defaults, from ``base``)."""
    found: dict[str, Any] = {}

    def differs(key: str) -> str | None:
        value = _first(settings, key)
        return value if value is not None and settings.get(key) != base.get(key) else None

    hostname = _first(settings, "hostname")
    if hostname and hostname.lower() != name.lower():
        found["address"] = hostname
    for key, out in (("user", "user"), ("identityfile", "identity_file"), ("userknownhostsfile", "known_hosts"),
                     ("proxyjump", "proxy_jump"), ("proxycommand", "proxy_command")):
        value = differs(key)
        if value is not None and value != "none":
            found[out] = value.split()[0] if key == "userknownhostsfile" else value
    port = differs("port")
    if port is not None:
        found["port"] = int(port)
    reason = openssh_only(settings, base)
    if reason:
        found["openssh_reason"] = reason
    known = [*settings.get("userknownhostsfile", [""])[0].split(),
             *settings.get("globalknownhostsfile", [""])[0].split()]
    if known:
        found["known_hosts_files"] = tuple(known)
    return found


class SSHConfigLookup:
    """Host name -> the hosts.yaml keys the user's ssh config sets for it; ``ssh -G`` once per name, cached.

    ``source`` says which parser answered (for the report).
    """

    def __init__(self, path: str | None = None, ssh: str | None = None) -> None:
        self.explicit = path is not None
        self.path = Path(os.path.expanduser(path or DEFAULT_CONFIG))
        self.exists = self.path.is_file()
        self.ssh = ssh if ssh is not None else shutil.which("ssh")
        self._cache: dict[str, dict[str, Any]] = {}
        self._base: Settings | None = None
        self._paramiko: Any = None
        if not self.exists:
            self.source = ""
        elif self.ssh:
            self.source = f"ssh -G (OpenSSH's own reading of {self.path})"
        else:
            self.source = (f"paramiko's parser for {self.path}: no OpenSSH client installed, so Include and "
                           "some Match forms are not honoured")

    def _argv(self, name: str, config: str | None) -> list[str]:
        assert self.ssh is not None
        argv = [self.ssh, "-G"]
        if config is not None:
            argv += ["-F", config]
        return [*argv, "--", name]

    def _run(self, name: str, config: str | None) -> Settings:
        done = subprocess.run(self._argv(name, config), capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              timeout=30, check=False)
        if done.returncode != 0:
            raise ValueError(f"`ssh -G {name}` failed: {done.stderr.strip()[:300]}")
        return parse_ssh_g(done.stdout)

    def prefetch(self, names: Iterable[str]) -> None:
        """Ask ``ssh -G`` about every name not asked yet, in parallel (one baseline run for the defaults)."""
        if not self.exists or not self.ssh:
            return
        todo = [n for n in dict.fromkeys(names) if n not in self._cache]
        if not todo:
            return
        config = str(self.path) if self.explicit else None
        with ThreadPoolExecutor(min(_PARALLEL, len(todo) + 1)) as pool:
            base = pool.submit(self._run, "preflight-baseline.invalid", "/dev/null") if self._base is None else None
            results = list(pool.map(lambda n: self._run(n, config), todo))
            if base is not None:
                self._base = base.result()
        assert self._base is not None
        for name, settings in zip(todo, results, strict=True):
            self._cache[name] = config_sets(settings, self._base, name)

    def __call__(self, name: str) -> dict[str, Any]:
        if not self.exists:
            return {}
        if not self.ssh:
            return self._paramiko_lookup(name)
        self.prefetch([name])
        return dict(self._cache[name])

    def _paramiko_lookup(self, name: str) -> dict[str, Any]:
        if self._paramiko is None:
            from preflight.transport import defer_import

            defer_import("invoke")  # importing preflight.transport did it already; the call pins the order
            import paramiko  # only here: `preflight node` never needs it

            self._paramiko = paramiko.SSHConfig.from_path(str(self.path))
        entry = self._paramiko.lookup(name)
        found: dict[str, Any] = {}
        if entry.get("hostname") and entry["hostname"] != name:
            found["address"] = entry["hostname"]
        for key, out in (("user", "user"), ("proxyjump", "proxy_jump"), ("proxycommand", "proxy_command")):
            if key in entry:
                found[out] = entry[key]
        if "port" in entry:
            found["port"] = int(entry["port"])
        if entry.get("identityfile"):
            found["identity_file"] = entry["identityfile"][0]
        if entry.get("userknownhostsfile"):
            found["known_hosts"] = entry["userknownhostsfile"].split()[0]
        return found


def expand_proxy_command(command: str, address: str, port: int, user: str) -> str:
    """OpenSSH's tokens in a ProxyCommand (``ssh -G`` prints them unexpanded).

    >>> expand_proxy_command("nc -q0 %h %p # %r %%", "10.0.0.1", 22, "me")
    'nc -q0 10.0.0.1 22 # me %'
    """
    out, i = [], 0
    while i < len(command):
        if command[i] == "%" and i + 1 < len(command):
            token = command[i + 1]
            out.append({"h": address, "p": str(port), "r": user, "n": address, "%": "%"}.get(token, "%" + token))
            i += 2
        else:
            out.append(command[i])
            i += 1
    return "".join(out)


_MARKERS = ("@cert-authority", "@revoked")  # known_hosts markers paramiko skips
_MARKED: dict[tuple[str, int, int], list[tuple[str, list[str]]]] = {}


def _marked_patterns(path: str) -> list[tuple[str, list[str]]]:
    """(marker, host patterns) of each ``@cert-authority`` / ``@revoked`` line of a known_hosts file (cached by
    size and mtime)."""
    info = os.stat(path)
    stamp = (path, info.st_size, info.st_mtime_ns)
    if stamp not in _MARKED:
        with open(path, encoding="utf-8", errors="replace") as handle:
            fields = (line.split() for line in handle if line.lstrip().startswith(_MARKERS))
            _MARKED[stamp] = [(f[0], f[1].split(",")) for f in fields if len(f) > 1 and f[0] in _MARKERS]
    return _MARKED[stamp]


def _matches(patterns: list[str], names: Iterable[str]) -> bool:
    """known_hosts host patterns (``*``, ``?``, ``!negation``) against any of ``names``.

    >>> patterns = ["*.cluster", "!bad.cluster"]
    >>> _matches(patterns, ["n1.cluster"]), _matches(patterns, ["bad.cluster"])
    (True, False)
    """
    from fnmatch import fnmatchcase

    hit = False
    for name in names:
        for pattern in patterns:
            if pattern.startswith("!") and fnmatchcase(name, pattern[1:]):
                return False
            hit = hit or fnmatchcase(name, pattern)
    return hit


def cert_authority_in(paths: Iterable[str], names: Iterable[str]) -> str | None:
    """"MARKER in FILE" for the first ``@cert-authority`` or ``@revoked`` line among the known_hosts ``paths``
    that applies to one of ``names`` (host certificates and revocations, which paramiko skips), else None.

    >>> cert_authority_in(["/nonexistent"], ["n1"]) is None
    True
    """
    wanted = list(names)
    for path in dict.fromkeys(os.path.expanduser(p) for p in paths):
        try:
            for marker, patterns in _marked_patterns(path):
                if _matches(patterns, wanted):
                    return f"{marker} in {path}"
        except OSError:
            continue
    return None


def local_user() -> str:
    """The user OpenSSH logs in as when nothing names one: this process's real user (``getpwuid(getuid())``, as
    ssh.c; not $USER)."""
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:  # a uid with no passwd entry (a container): what OpenSSH would refuse to run as
        return str(os.getuid())
