"""Sources of the sealed explain sets (issue 38), as keys two citations of one source share: a GitHub thread as
``owner/repo#N``, a repository document as ``owner/repo:path``, any other page as its address. The frozen sets'
tests use them to check that no source of a sealed set is cited anywhere else in the project.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

_THREAD = re.compile(r"github\.com/([\w.-]+)/([\w.-]+)/(?:issues|pull|discussions)/(\d+)", re.IGNORECASE)
_SHORT = re.compile(r"\b([A-Za-z0-9][\w.-]*)/([\w.-]+)#(\d+)")
_BLOB = re.compile(r"github\.com/([\w.-]+)/([\w.-]+)/(?:blob|tree|raw)/[^/\s]+/([^\s#?\"'<>)\]`]+)", re.IGNORECASE)
_GITCODE = re.compile(r"(?:gitee\.com|gitcode\.com)/([\w.-]+)/([\w.-]+)/(?:blob|tree|raw)/[^/\s]+/([^\s#?\"'<>)\]`]+)",
                      re.IGNORECASE)
_RENAMED = {"microsoft/deepspeed": "deepspeedai/deepspeed", "hiyouga/llama-factory": "hiyouga/llamafactory",
            "volcengine/verl": "verl-project/verl", "pytorch/torchtune": "meta-pytorch/torchtune",
            "inclusionai/areal": "areal-project/areal"}
# The documents the catalog's Ascend signatures were written from: not drawn from even at another address.
SIGNATURE_DOCUMENTS = ("hcclug", "fault_diagnosis", "cann_error_cases")

def _repo(owner: str, name: str) -> str:
    repo = f"{owner}/{name}".lower()
    return _RENAMED.get(repo, repo)


def thread_keys(text: str) -> set[str]:
    """Every GitHub thread a text names, as ``owner/repo#N`` (lower case, renamed repositories folded).

    >>> sorted(thread_keys("see https://github.com/microsoft/DeepSpeed/issues/12 and NVIDIA/nccl#7"))
    ['deepspeedai/deepspeed#12', 'nvidia/nccl#7']
    """
    matches = [*_THREAD.finditer(text), *_SHORT.finditer(text)]
    return {f"{_repo(m.group(1), m.group(2))}#{int(m.group(3))}" for m in matches}


def document_keys(text: str) -> set[str]:
    """Every repository document a text names, as ``owner/repo:path`` (commit and fragment dropped, lower case).

    >>> sorted(document_keys("https://github.com/Ascend/pytorch/blob/0a1b/docs/zh/A%20B.md#x and "
    ...                      "https://gitcode.com/Ascend/pytorch/blob/v2.7.1/docs/zh/A%20B.md"))
    ['ascend/pytorch:docs/zh/a b.md']
    """
    keys = set()
    for pattern in (_BLOB, _GITCODE):
        for m in pattern.finditer(text):
            keys.add(f"{_repo(m.group(1), m.group(2))}:{unquote(m.group(3)).lower()}")
    return keys


def page_key(url: str) -> str:
    """A page that is neither a GitHub thread nor a repository document: its URL without scheme, a leading
    ``www.``, query and fragment, lower case (a substring of every way the project could cite it).

    >>> page_key("https://www.Example.com/a/B.html?x=1#case-2")
    'example.com/a/b.html'
    """
    parts = urlsplit(url)
    host = parts.netloc.lower().removeprefix("www.")
    return f"{host}{parts.path}".lower()


def is_page(source: str) -> bool:
    return not thread_keys(source) and not document_keys(source)
