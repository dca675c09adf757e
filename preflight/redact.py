"""Secrets out of reports: every report the engine builds goes through :func:`redact_report` (one place).

A variable is secret when its name contains TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL or AUTH (but not
only as AUTHOR), or a ``_``-separated part of it is or ends with KEY/KEYS (API_KEY, SSHKEY, AWS_ACCESS_KEY_ID;
not KEYBOARD or KEYMAP). Two things are replaced by ``***`` in every text of a report:

- the value after a secret name written as an assignment (``NAME=value``, ``NAME: value``, ``"NAME": "v"``);
- every literal value of a secret variable known to the run (the hosts' ``env`` and this process's environment),
  wherever it appears (e.g. echoed back by a probe).

>>> redact_text("HF_TOKEN=hf_abc123 and api_key: 42 KEYBOARD=us", {})
'HF_TOKEN=*** and api_key: *** KEYBOARD=us'
>>> redact_text("got s3cr3tvalue back", {"DB_PASSWORD": "s3cr3tvalue"})
'got *** back'
>>> redact_text("echo 'bob ALL=(root) NOPASSWD: ALL' | sudo tee /etc/sudoers.d/preflight", {})
"echo 'bob ALL=(root) NOPASSWD: ALL' | sudo tee /etc/sudoers.d/preflight"
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from preflight.model import Finding, Report

MASK = "***"
_SUBSTRINGS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL")
_NOT_SECRET = {"NOPASSWD"}  # the sudoers tag ("alice ALL=(root) NOPASSWD: ALL"), not variables
_MIN_LITERAL = 6  # shorter values ("1", "true") would blank out ordinary words everywhere
_NAME_SEP = re.compile(r"(?<![A-Za-z0-9_.\-])(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)[\"']?[ \t]*[=:][ \t]*[\"']?")
_VALUE = re.compile(r"[^\s\"',;]+")


def is_secret_name(name: str) -> bool:
    """True for variable names whose values must never be shown.

    >>> [is_secret_name(n) for n in ("GITHUB_TOKEN", "api_key", "AWS_ACCESS_KEY_ID", "KEYBOARD", "GIT_AUTHOR_NAME",
    ...                              "NCCL_SOCKET_IFNAME", "HTTP_AUTHORIZATION", "SSHKEY", "OAUTH")]
    [True, True, True, False, False, False, True, True, True]
    """
    upper = name.upper()
    if upper in _NOT_SECRET:
        return False
    if any(word in upper for word in _SUBSTRINGS):
        return True
    if re.search(r"AUTH(?!ORS?(?:$|[^A-Z]))", upper):
        return True
    return any(part.endswith(("KEY", "KEYS")) for part in re.split(r"[^A-Z0-9]+", upper))


def secret_values(envs: Iterable[Mapping[str, str]]) -> dict[str, str]:
    """name -> value of every secret variable in ``envs`` (later ones win), values long enough to match safely.

    >>> secret_values([{"A_TOKEN": "abcdefgh", "PATH": "/bin", "PASSWORD": "x"}])
    {'A_TOKEN': 'abcdefgh'}
    """
    found: dict[str, str] = {}
    for env in envs:
        for name, value in env.items():
            if isinstance(value, str) and len(value) >= _MIN_LITERAL and is_secret_name(name):
                found[name] = value
    return found


def redact_text(text: str, secrets: Mapping[str, str]) -> str:
    """``text`` with secret assignments and known secret values masked."""
    for value in sorted(set(secrets.values()), key=len, reverse=True):
        text = text.replace(value, MASK)
    parts: list[str] = []
    pos = 0
    for match in _NAME_SEP.finditer(text):
        if match.start() < pos or not is_secret_name(match["name"]):
            continue
        found = _VALUE.match(text, match.end())
        if found is None or found[0] == MASK:
            continue
        parts += [text[pos:match.end()], MASK]
        pos = found.end()
    return "".join(parts) + text[pos:]


def _walk(value: Any, secrets: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, dict):
        return {k: (MASK if isinstance(k, str) and is_secret_name(k) and isinstance(v, str) else _walk(v, secrets))
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_walk(v, secrets) for v in value)
    return value


def redact_finding(finding: Finding, secrets: Mapping[str, str]) -> Finding:
    """A copy of ``finding`` with its texts redacted."""
    def clean(text: str | None) -> str | None:
        return None if text is None else redact_text(text, secrets)

    return replace(finding, message=redact_text(finding.message, secrets), observed=clean(finding.observed),
                   expected=clean(finding.expected), remedy=clean(finding.remedy))


def redact_report(report: Report, envs: Iterable[Mapping[str, str]] = ()) -> Report:
    """A copy of ``report`` safe to print or save: secrets of ``envs`` and of ``os.environ`` masked.

    >>> from preflight.model import Status
    >>> r = Report([], [Finding("net.env", "n1", Status.WARN, "net.env: MY_SECRET=hunter22 set")], [], "", 0.0)
    >>> redact_report(r).findings[0].message
    'net.env: MY_SECRET=*** set'
    """
    secrets = secret_values([dict(os.environ), *envs])
    hosts = [replace(h, error=redact_text(h.error, secrets)) if h.error else h for h in report.hosts]
    return replace(report, hosts=hosts,
                   findings=[redact_finding(f, secrets) for f in report.findings],
                   extra=_walk(report.extra, secrets))
