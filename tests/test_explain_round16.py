"""Issue 38, round 16 (written blind to the sealed eleventh set, from the libraries' and tools' own wordings, not from
any set's misses): the driver stack's versions, Kubernetes' OOMKilled and scheduling, the driver's tools and module
missing, options that cannot go together, launcher variables nothing set, transformers not knowing a model, NumPy
1.24's removed aliases, sshd's handshake. The lines are the tools' own messages (the NVIDIA driver's NVRM, kubelet,
modprobe, argparse-style validation, transformers' auto classes, NumPy, OpenSSH); the negative cases share words."""

from __future__ import annotations

from spent_sets import answer as _category  # the best match's category, ``unknown`` when nothing matched


def test_round16_classes() -> None:
    for text, category in (
            ("NVRM: API mismatch: the client has the version 535.104.05, but this kernel module has the version "
             "535.54.03.", "driver"),
            ("Last State: Terminated\n  Reason: OOMKilled", "oom"),
            ("bash: npu-smi: command not found", "driver"),
            ("modprobe: ERROR: could not insert 'nvidia': No such device", "driver"),
            ("Warning  FailedScheduling  0/4 nodes are available: 4 Insufficient nvidia.com/gpu.", "device-mapping"),
            ("ValueError: --fp16 and --bf16 are mutually exclusive", "launch-args"),
            ("    local_rank = int(os.environ['LOCAL_RANK'])\nKeyError: 'LOCAL_RANK'", "launch-args"),
            ("ValueError: The checkpoint you are trying to load has model type `qwen2` but Transformers does not "
             "recognize this architecture. This could be because of an issue with the checkpoint, or because your "
             "version of Transformers is out of date.", "version-mismatch"),
            ("AttributeError: module 'numpy' has no attribute 'float'.", "version-mismatch"),
            ("kex_exchange_identification: read: Connection reset by peer", "ssh")):
        assert _category(text) == category, text


def test_round16_adds_no_false_alarm() -> None:
    for text in ("AttributeError: module 'numpy' has no attribute 'my_helper'",  # the script's own name
                 "KeyError: 'learning_rate'",
                 "INFO: options --fp16 and --bf16 were checked",
                 "nvidia-smi found 8 GPUs"):
        assert _category(text) == "unknown", text
