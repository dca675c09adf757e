"""Issue 38, round 11 (written from the spent seventh set, measured on the eighth): the failure classes its misses
share with other tools' wordings. The lines are real (tests/fixtures/explain/frozen7, spent, and corpus.json keep their
sources); the negative cases are healthy lines and application bugs that share the words."""

from __future__ import annotations

from spent_sets import answer as _category  # the best match's category, ``unknown`` when nothing matched


def test_round11_classes() -> None:
    for text, category in (
            ("eth0: error fetching interface information: Device not found", "wrong-interface"),
            ("[ERROR] [ 26-05-21 10:47:56 ] can not get IP from eth0", "wrong-interface"),
            ("symbol cudaFreeAsync version libcudart.so.11.0 not defined in file libcudart.so.11.0 with link time "
             "reference", "version-mismatch"),
            ("Your compiler (g++ 4.8) may be ABI-incompatible with PyTorch!", "version-mismatch"),
            ("[libprotobuf ERROR descriptor_database.cc:644] File already exists in database: dvpp_tensor_shape.proto",
             "version-mismatch"),
            ("RuntimeError: Could not load libtorchcodec", "version-mismatch"),
            ("ValueError: Tokenizer class TokenizersBackend does not exist or is not currently imported.",
             "version-mismatch"),
            ("Sum of total mem_offset:_26496001536_ and var_mem_size:_11776003072_ is greater than memory manager "
             "malloc max size 33285996544", "oom"),
            ('Error: "Free memory is less than desired GPU memory utilization"', "oom"),
            ("The IP address XXXX and port XXXX have already been bound", "hccl-port"),
            ("AssertionError: Loading a checkpoint for MP=1 but world size is 4", "launch-args")):
        assert _category(text) == category, text


def test_round11_adds_no_false_alarm() -> None:
    for text in ("eth0: flags=4163<UP,BROADCAST,RUNNING,MULTICAST>  mtu 1500",
                 "INFO: using interface eth0 with IP 10.0.0.2",
                 "world_size=4 rank=0 local_rank=0",
                 "epoch 3: loaded 12 shards, world size 8",
                 "Free memory: 70.1 GiB, reserved 2.0 GiB",
                 "AttributeError: 'NoneType' object has no attribute 'load'"):
        assert _category(text) == "unknown", text
    assert _category("RuntimeError: Address already in use") == "port-in-use"  # the sockets' wording stays
