"""Secrets out of every output: the texts, of any kind. A report is redacted once, by building its
``preflight.model.RedactedReport`` (the only kind a renderer or writer takes); ``--record`` fixtures, facts
files, crash logs and explain mask their texts with :func:`redact_data` / :func:`redact_text`.

A variable is secret when its name (camelCase split like ``_``) contains SECRET, PASSWORD, PASSWD, PASSPHRASE,
CREDENTIAL or AUTH (but not only as AUTHOR); or a ``_``/``-``/``.``-separated part of it ends with TOKEN, KEY,
KEYS or JWT (HF_TOKEN, API_KEY, SSHKEY, AWS_ACCESS_KEY_ID, SLURM_JWT; not TOKENIZERS_PARALLELISM, MAX_TOKENS,
KEYBOARD); or its last part is PASS, PWD, PW or SSHPASS (MY_DB_PASS, MYSQL_PWD, DB_PW, ``--db-pass``; not PWD
and OLDPWD, the working directories, nor PASS_THROUGH). These are replaced by ``***`` in every text of an output:

- the value after a secret name written as an assignment (``NAME=value``, ``NAME: value``, ``"NAME": "v"``,
  ``--api-key=value``) or as a command-line option (``--api-key value``, or ``["--token", "v"]`` in an argv);
- every literal value of a secret variable known to the run (hosts.yaml ``env``, the launch line's
  environment, this process's environment), and the password of a URL in any variable, wherever it appears
  (e.g. echoed back by a probe);
- the userinfo of a URL, ``scheme://user:password@host`` -> ``scheme://***@host`` (the host, port and path
  stay): the user name goes too, since it is the token in ``https://TOKEN@github.com`` or
  ``https://TOKEN:x-oauth-basic@...``; only a bare login of an ssh URL (``ssh://alice@node1``) is kept.

>>> redact_text("HF_TOKEN=hf_abc123 and api_key: 42 KEYBOARD=us", {})
'HF_TOKEN=*** and api_key: *** KEYBOARD=us'
>>> redact_text("train.py --api-key=zzzsecret --hf-token abc123 --lr 0.1", {})
'train.py --api-key=*** --hf-token *** --lr 0.1'
>>> redact_text("got s3cr3tvalue back", {"DB_PASSWORD": "s3cr3tvalue"})
'got *** back'
>>> redact_text("echo 'bob ALL=(root) NOPASSWD: ALL' | sudo tee /etc/sudoers.d/preflight", {})
"echo 'bob ALL=(root) NOPASSWD: ALL' | sudo tee /etc/sudoers.d/preflight"
>>> redact_text("pip install -i https://__token__:glpat42@git.example.com/simple x; MY_DB_PASS=hunter2", {})
'pip install -i https://***@git.example.com/simple x; MY_DB_PASS=***'
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

MASK = "***"
_SUBSTRINGS = ("SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL")
_PART_ENDS = ("TOKEN", "KEY", "KEYS", "JWT")  # a part ending so: HF_TOKEN, HFTOKEN, API_KEY, SLURM_JWT
_LAST_PARTS = {"PASS", "PWD", "PW", "SSHPASS"}  # only as the last part: MY_DB_PASS, MYSQL_PWD, DB_PW (sshpass)
# the sudoers tag ("alice ALL=(root) NOPASSWD: ALL") and the shell's working directories, not secrets
_NOT_SECRET = {"NOPASSWD", "PWD", "OLDPWD"}
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")  # dbPass -> db_Pass, apiKey -> api_Key
_MIN_LITERAL = 6  # shorter values ("1", "true") would blank out ordinary words everywhere
_NAME_SEP = re.compile(r"(?<![A-Za-z0-9_.\-])-{0,2}(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)[\"']?[ \t]*[=:][ \t]*[\"']?")
# ``--api-key value``: an option whose value is the next word (only with leading dashes: ``KEY value`` is prose)
_OPTION = re.compile(r"(?<![A-Za-z0-9_.\-])--?(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)[ \t]+(?=[^\s-])")
_OPTION_WORD = re.compile(r"--?(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)")
_VALUE = re.compile(r"[^\s\"',;]+")
# Every secret name holds one of these (is_secret_name): a text without any has no secret name in it.
_NAME_HINTS = ("TOKEN", "SECRET", "PASS", "PW", "CREDENTIAL", "AUTH", "KEY", "JWT")
# scheme://userinfo@: the userinfo runs to the last @ before the host (a password may hold an unquoted @)
_URL_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*)://(?P<userinfo>[^\s/?#\"'<>]+)@")
_LOGIN_SCHEMES = {"ssh", "sftp", "scp", "rsync", "git+ssh", "ssh+git"}  # a bare user name there is a login


def is_secret_name(name: str) -> bool:
    """True for variable names whose values must never be shown.

    >>> [is_secret_name(n) for n in ("GITHUB_TOKEN", "api_key", "AWS_ACCESS_KEY_ID", "KEYBOARD", "GIT_AUTHOR_NAME",
    ...                              "NCCL_SOCKET_IFNAME", "HTTP_AUTHORIZATION", "SSHKEY", "OAUTH")]
    [True, True, True, False, False, False, True, True, True]
    >>> [is_secret_name(n) for n in ("MY_DB_PASS", "MYSQL_PWD", "dbPass", "PWD", "OLDPWD", "TOKENIZERS_PARALLELISM")]
    [True, True, True, False, False, False]
    """
    upper = name.upper()
    if upper in _NOT_SECRET:
        return False
    if any(word in upper for word in _SUBSTRINGS):
        return True
    if re.search(r"AUTH(?!ORS?(?:$|[^A-Z]))", upper):
        return True
    parts = [part for part in re.split(r"[^A-Z0-9]+", _CAMEL.sub(r"\1_\2", name).upper()) if part]
    return bool(parts) and (parts[-1] in _LAST_PARTS or any(part.endswith(_PART_ENDS) for part in parts))


def mask_urls(text: str) -> str:
    """``text`` with the userinfo of every URL masked (the host stays); a bare ssh login is kept.

    >>> mask_urls("postgres://dbuser:p@ss@db.internal:5432/runs and ssh://alice@node1 and https://node1:8080/")
    'postgres://***@db.internal:5432/runs and ssh://alice@node1 and https://node1:8080/'
    """
    if "://" not in text:
        return text

    def mask(match: re.Match[str]) -> str:
        if match["scheme"].lower() in _LOGIN_SCHEMES and ":" not in match["userinfo"]:
            return match[0]
        return f"{match['scheme']}://{MASK}@"
    return _URL_USERINFO.sub(mask, text)


def url_passwords(text: str) -> list[str]:
    """The passwords of the URLs in ``text`` (``scheme://user:password@``).

    >>> url_passwords("DATABASE_URL=postgres://u:dbPassw0rd9@db/x https://host/ ssh://bob@n1")
    ['dbPassw0rd9']
    """
    return [m["userinfo"].partition(":")[2] for m in _URL_USERINFO.finditer(text) if ":" in m["userinfo"]]


def secret_values(envs: Iterable[Mapping[str, str]]) -> dict[str, str]:
    """name -> value of every secret variable in ``envs`` (later ones win), values long enough to match safely;
    the password of a URL in any variable as ``NAME (url)``.

    >>> secret_values([{"A_TOKEN": "abcdefgh", "PATH": "/bin", "PASSWORD": "x", "DB_URL": "mysql://u:pw0rd42@db/x"}])
    {'A_TOKEN': 'abcdefgh', 'DB_URL (url)': 'pw0rd42'}
    """
    found: dict[str, str] = {}
    for env in envs:
        for name, value in env.items():
            if not isinstance(value, str) or len(value) < _MIN_LITERAL:
                continue
            if is_secret_name(name):
                found[name] = value
            for password in url_passwords(value):
                if len(password) >= _MIN_LITERAL:
                    found[f"{name} (url)"] = password
    return found


def redact_text(text: str, secrets: Mapping[str, str] | Iterable[str]) -> str:
    """``text`` with secret assignments, secret options and known secret values (``secrets``) masked."""
    values = secrets.values() if isinstance(secrets, Mapping) else secrets
    for value in sorted(set(values), key=len, reverse=True):
        if value:
            text = text.replace(value, MASK)
    text = mask_urls(text)
    upper = text.upper()
    if not any(hint in upper for hint in _NAME_HINTS):  # no secret name in it (most texts): nothing more to do
        return text
    for pattern in (_NAME_SEP, _OPTION):
        parts: list[str] = []
        pos = 0
        for match in pattern.finditer(text):
            if match.start() < pos or not is_secret_name(match["name"]):
                continue
            found = _VALUE.match(text, match.end())
            if found is None or found[0] == MASK:
                continue
            parts += [text[pos:match.end()], MASK]
            pos = found.end()
        text = "".join(parts) + text[pos:]
    return text


def redact_data(value: Any, secrets: Iterable[str]) -> Any:
    """JSON-like ``value`` with every text redacted, a secret-named key's text value masked, and in a list of
    words (an argv) the word after a secret option (``["--token", "abc"]``) masked.

    >>> redact_data({"argv": ["t.py", "--api-key", "zz9", "--lr", "1"], "HF_TOKEN": "x"}, [])
    {'argv': ['t.py', '--api-key', '***', '--lr', '1'], 'HF_TOKEN': '***'}
    """
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, Mapping):
        return {k: (MASK if isinstance(k, str) and is_secret_name(k) and isinstance(v, str) else
                    redact_data(v, secrets)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        items = [redact_data(v, secrets) for v in value]
        for i, word in enumerate(value[:-1]):
            option = _OPTION_WORD.fullmatch(word) if isinstance(word, str) else None
            if option and is_secret_name(option["name"]) and isinstance(items[i + 1], str):
                items[i + 1] = MASK
        return type(value)(items)
    return value


def known_secrets(envs: Iterable[Mapping[str, str]] = ()) -> frozenset[str]:
    """The literal values to mask: secret variables of ``envs`` and of this process's environment.

    >>> sorted(known_secrets([{"A_TOKEN": "abcdefgh", "PATH": "/bin"}]) - known_secrets())
    ['abcdefgh']
    """
    return frozenset(secret_values([dict(os.environ), *envs]).values())
