"""Issue 38, round 15 (written from the spent tenth set): the wordings its misses share with other tools. The positive
lines are real (tests/fixtures/explain/frozen10 and corpus.json keep their sources); the negative cases are healthy
lines, or other causes, that share the words."""

from __future__ import annotations

from spent_sets import answer as _category  # the best match's category, ``unknown`` when nothing matched


def test_round15_classes() -> None:
    for text, category in (
            ("AssertionError: FP8 block scaled GEMM requires Hopper and CUDA >= 12.9.", "version-mismatch"),
            ("RuntimeError: module compiled against API version 0x10 but this version of numpy is 0xd",
             "version-mismatch"),
            ("[TensorRT-LLM][WARNING] Device 2 peer access Device 5 is not available.", "p2p"),
            ("AssertionError: Engine world size (2) != Runtime world size (1)", "launch-args"),
            ("ValueError: `num_heads` must be divisible by `num_shards` (got `num_heads`: 71 and `num_shards`: 2",
             "launch-args"),
            ("MPID_nem_tcp_init(379)..................: gethostbyname failed, HW-AI-LC-1-1 (errno 2)",
             "name-resolution"),
            ("The authenticity of host '<hostname> (<ip address>)' can't be established.\nAre you sure you want to "
             "continue connecting (yes/no)?", "ssh"),
            ("mlx5_core 0000:65:01.0: mlx5_cmd_out_err:829:(pid 3958462): CREATE_MKEY(0x200) op_mod(0x0) failed, "
             "status no resources(0xf), syndrome (0x2aac7c), err(-11)", "rdma"),
            ("RuntimeError: ({'errCode': 'E80012', 'op_name': 'reduce_sum_d', 'param_name': 'x'}, 'In op, the num of "
             "dimensions of input/output[x] should be in the range of [0, 8], but actually is [10].')", "app-fault"),
            ("aclrtSetDevice failed, ret = 107001, deviceId=0\n[ERROR] RUNTIME: Failed to get phy dev id by logic dev "
             "id, driver may not be loaded", "driver"),
            ("10: Last error: 10: socketStartConnect: Connect to 127.0.0.1<45069> failed : Software caused connection "
             "abort", "wrong-interface")):
        assert _category(text) == category, text


def test_round15_adds_no_false_alarm() -> None:
    for text in ("[TensorRT-LLM][INFO] Device 0 peer access Device 1 is enabled.",
                 "INFO: building for CUDA >= 12.9 and torch 2.8",
                 "known_hosts: added host key for node2",
                 "ValueError: batch size 10 is not divisible by 4 in my_dataset.py"):
        assert _category(text) == "unknown", text
    # a c10d client timing out on a docker-bridge address is left to the master: two threads found two causes
    assert _category("torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying "
                     "to connect to (172.17.0.9, 46229).") == "master-unreachable"
