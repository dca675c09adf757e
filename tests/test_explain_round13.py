"""Issue 38, round 13 (written blind to the sealed ninth set, from the vendors' and libraries' own wordings): operators
that reject their inputs, the parallel layout's divisibility, the launch command's options, a library API of another
release, and ATB's status codes (``table_atb``). The positive lines are real: the spent sets' (their sources are in
tests/fixtures/explain/frozen5 and frozen7), ATB's log templates at the table's commit, CPython's and argparse's own
messages; the negative cases are healthy or application lines that share the words."""

from __future__ import annotations

from spent_sets import answer as _category  # the best match's category, ``unknown`` when nothing matched


def test_round13_operator_rejections_are_the_jobs_own() -> None:
    for text in (
            # MindIE-LLM on ATB (spent frozen7): the graph's shape inference, then ATB's status 8 (tensor dimensions)
            "[standard_model.py:188] : [Model] >>> global rank-2 Execute type:1, Exception:Qwen25VL_VIT_graph nodes[1] "
            "infershape  fail, enable log: export ASDOPS_LOG_LEVEL=ERROR, export ASDOPS_LOG_TO_STDOUT=1",
            "[error] [1256320] [operation_base.cpp:273] Qwen25VL_VIT_layer_0_graph infer shape fail, error code: 8",
            # GE preparing a MindSpore graph (spent frozen5)
            "[ERROR] GE(45311,python):2024-05-24-21:17:48.149.129 [graph_prepare.cc:1769]45311 FormatAndShapeProcess: "
            "ErrorNo: 1343242270(Prepare Graph infershape failed) [COMP][PRE_OPT][Call][InferShapeForPreprocess] "
            "Prepare Graph infershape failed",
            # ATB's setup check (operation_base.cpp's template) with status 13: the tensors fail the op's ini check
            "[error] [4021] [operation_base.cpp:647] LinearOperation invalid param, setup check fail, error code: 13"):
        assert _category(text) == "app-fault", text


def test_round13_atb_memory_and_generic_statuses() -> None:
    assert _category("[error] [77] [graph_runner.cpp:292] node[3] SetupNodeRunners fail, error code:26") == "oom"
    # status 4 (a runtime call failed) only reports another failure: nothing is claimed from it alone
    assert _category("[error] [77] [operation_base.cpp:1124] Launch fail, error code: 4") == "unknown"


def test_round13_launch_layout_and_options() -> None:
    for text in (
            "ValueError: Total number of attention heads (40) must be divisible by pipeline parallel size (3).",
            "AssertionError: world size (12) is not divisible by tensor model parallel size (8) times pipeline model "
            "parallel size (1)",
            "hydra.errors.OverrideParseException: LexerNoViableAltException: ++end_reasoning_string=\\</think\\>",
            "train.py: error: unrecognized arguments: --deepspeed_config ds.json",
            "pretrain_gpt.py: error: the following arguments are required: --num-layers"):
        assert _category(text) == "launch-args", text


def test_round13_api_of_another_release() -> None:
    for text in ("TypeError: LlamaForCausalLM.__init__() got an unexpected keyword argument 'attn_implementation'",
                 "ValueError: `low_cpu_mem_usage` is not supported in this version, please upgrade accelerate"):
        assert _category(text) == "version-mismatch", text


def test_round13_adds_no_false_alarm() -> None:
    for text in ("[info] [4021] [operation_base.cpp:340] LinearOperation infer shape start",
                 "ValueError: The last dimension of input tensor should be divisible by 32",  # a tensor: the model's
                 "ValueError: batch size 10 is not divisible by 4 in my_dataset.py",
                 "Please update the config file path in run.sh before training",
                 "socket setup fail, error code: 111",  # not one of ATB's templates
                 "usage: train.py [-h] [--epochs EPOCHS] [--local-rank LOCAL_RANK]"):
        assert _category(text) == "unknown", text
    assert _category("RuntimeError: The NVIDIA driver on your system is too old (found version 10010). Please update "
                     "your GPU driver") == "driver"
