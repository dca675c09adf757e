"""The rows of ``table_megatron``: Megatron-LM's checks of its launch arguments and model config, one template each.

Each template is the message of an ``assert`` or a raised ``ValueError`` / ``RuntimeError`` / ``NotImplementedError``
in Megatron-LM's ``megatron/training/arguments.py`` (``megatron/arguments.py`` before core 0.6),
``megatron/core/transformer/transformer_config.py``, ``megatron/core/model_parallel_config.py`` and the size checks of
``megatron/core/parallel_state.py``, read at main d98e8a6 (2026-08-22) and at the tags core_r0.10.0, core_r0.8.0 and
23.04 (a wording an older version has and main no longer does is kept, tagged with its version); ``{}`` is a value.
Left out: messages of fewer than five words, checks of the GPU architecture, and parallel_state's "not initialized"
checks (a program's own order of calls). MindSpeed (Ascend) and NeMo run these same checks.

Category: a check that names a package and the version it needs (Transformer Engine, PyTorch, FlashInfer...) or a
package that is not installed is ``version-mismatch``; every other check is launch arguments or a model config that
do not fit together (``launch-args``).
"""

from __future__ import annotations

_MAIN = "main"

# (template, category, the newest version that words it so)
MEGATRON_CHECKS: tuple[tuple[str, str, str], ...] = (
    ('--account-for-embedding-in-pipeline-split should not be used with '
     '--hybrid-layer-pattern. Pipeline stage layout is defined by | separators in the '
     'pattern.', 'launch-args', _MAIN),
    ('--account-for-loss-in-pipeline-split should not be used with '
     '--hybrid-layer-pattern. Pipeline stage layout is defined by | separators in the '
     'pattern.', 'launch-args', _MAIN),
    ('--attention-backend local is only supported with --spec local', 'launch-args', _MAIN),
    ('--batch-size argument is no longer valid, use --micro-batch-size instead', 'launch-args', _MAIN),
    ('--ckpt-format fsdp_dtensor is only tested with Megatron FSDP.', 'launch-args', _MAIN),
    ('--ckpt-format torch_dcp is not tested with megatron pipeline parallelism.', 'launch-args', _MAIN),
    ('--ckpt-format torch_dcp is not tested with megatron tensor parallelism.', 'launch-args', _MAIN),
    ('--ckpt-format torch_dcp is only tested with FSDP.', 'launch-args', _MAIN),
    ('--ckpt-pg-tensors-cache-path requires --ckpt-fully-parallel-save-process-group '
     "and --ckpt-fully-parallel-load-process-group to be identical, but got save='{}' "
     "and load='{}'. The cache is keyed by the parallelization group, so mixing groups "
     'can read a distribution computed for a different layout.', 'launch-args', _MAIN),
    ('--cuda-graph-modules must be empty when --cuda-graph-impl=full_iteration.', 'launch-args', _MAIN),
    ('--cuda-graph-scope and --cuda-graph-modules cannot be used together.', 'launch-args', _MAIN),
    ('--distrib-optim-fully-reshardable-mem-efficient requires -enable-gloo-process-groups', 'launch-args', _MAIN),
    ('--enable-cuda-graph and --external-cuda-graph cannot be enabled at the same time.', 'launch-args', _MAIN),
    ('--enable-msc was passed but the multistorageclient package is not installed. '
     'Install it with `pip install multi-storage-client`.', 'version-mismatch', _MAIN),
    ('--fim-rate should be specified.', 'launch-args', _MAIN),
    ('--fim-spm-rate should be specified.', 'launch-args', _MAIN),
    ('--fp4-format and --fp8-format cannot be used simultaneously. Please choose one.', 'launch-args', _MAIN),
    ('--fp4-format requires Transformer Engine >= 2.7.0.dev0 for NVFP4BlockScaling '
     'support.', 'version-mismatch', _MAIN),
    ('--fp4-param-gather must be used together with --fp4-format.', 'launch-args', _MAIN),
    ('--fp8-param-gather only supported with distributed optimizer, torch fsdp2, '
     'megatron fsdp, or inference mode', 'launch-args', _MAIN),
    ('--gtp-remat-nccl-ub/--gtp-expert-remat-nccl-ub require symmetric window '
     'registration and cannot be combined with --disable-symmetric-registration.', 'launch-args', _MAIN),
    ('--hierarchical-context-parallel-sizes must be set when a2a+p2p is used in cp comm', 'launch-args', _MAIN),
    ('--hybrid-override-pattern and --hybrid-layer-pattern cannot both be specified. '
     '--hybrid-override-pattern is deprecated; use --hybrid-layer-pattern instead.', 'launch-args', _MAIN),
    ('--inference-batch-times-seqlen-threshold requires setting '
     '--pipeline-model-parallel-size > 1.', 'launch-args', _MAIN),
    ('--load-main-params-from-ckpt must be used with --no-load-optim.', 'launch-args', _MAIN),
    ('--log-max-attention-logit is only supported with TE >= 2.9.0.', 'version-mismatch', _MAIN),
    ('--logits-save-dir requires --async-save (and --use-persistent-ckpt-worker). '
     'Logits are flushed as an async request in the checkpoint queue.', 'launch-args', _MAIN),
    ('--logits-save-top-k is required when --logits-save-dir is set.', 'launch-args', _MAIN),
    ('--main-grads-dtype can only be fp32 when --accumulate-allreduce-grads-in-fp32 is set', 'launch-args', _MAIN),
    ('--megatron-fsdp-version 2 is not compatible with --use-distributed-optimizer', 'launch-args', _MAIN),
    ('--mla-down-proj-fusion requires --multi-latent-attention', 'launch-args', _MAIN),
    ('--model-parallel-size is no longer valid, use --tensor-model-parallel-size instead', 'launch-args', _MAIN),
    ('--mrope-section should be set when using --position-embedding-type mrope.', 'launch-args', _MAIN),
    ('--no-check-for-nan-in-loss-and-grad should be set with '
     '--cuda-graph-impl=full_iteration for training.', 'launch-args', _MAIN),
    ('--no-load-optim with --skip-train --perform-rl-step skips the optimizer; '
     '--rl-offload-optimizer-during-inference is incompatible (no optimizer to '
     'offload).', 'launch-args', _MAIN),
    ('--no-position-embedding is deprecated, use --position-embedding-type', 'launch-args', _MAIN),
    ('--num-layers-per-virtual-pipeline-stage should not be used with '
     '--hybrid-layer-pattern. To specify virtual pipelining, describe a number of '
     'pipeline segments in --hybrid-layer-pattern that is a multiple of '
     '--pipeline-model-parallel-size greater than 1', 'launch-args', _MAIN),
    ('--num-virtual-stages-per-pipeline-rank should not be used with '
     '--hybrid-layer-pattern. Virtual pipeline stages are derived from the number of | '
     'segments in the pattern.', 'launch-args', _MAIN),
    ('--overlap-param-gather only supported with distributed optimizer, megatron fsdp, '
     'or dist_muon', 'launch-args', _MAIN),
    ('--overlap-param-gather-with-optimizer-step not supported with distributed '
     'checkpointing yet', 'launch-args', _MAIN),
    ('--overlap-param-gather-with-optimizer-step only supported with distributed optimizer', 'launch-args', _MAIN),
    ('--overlap-param-gather-with-optimizer-step only supported with interleaved '
     'pipeline parallelism', 'launch-args', _MAIN),
    ('--pipeline-model-parallel-layout should not be used with --hybrid-layer-pattern. '
     'Pipeline stage layout is defined by | separators in the pattern.', 'launch-args', _MAIN),
    ('--qk-clip is only supported with TE >= 2.9.0.', 'version-mismatch', _MAIN),
    ('--qk-clip-alpha must be between 0.0 and 1.0 when using --qk-clip.', 'launch-args', _MAIN),
    ('--qk-clip-threshold must be greater than 0 when using --qk-clip.', 'launch-args', _MAIN),
    ("--replication requires args.non_persistent_ckpt_type == 'local', but got: {}", 'launch-args', _MAIN),
    ('--replication requires the value of --replication-jump!', 'launch-args', _MAIN),
    ('--rl-consumption-granularity R is not currently supported.', 'launch-args', _MAIN),
    ('--rl-generation-lag ({}) must be >= -1.', 'launch-args', _MAIN),
    ('--rl-generation-lag and --rl-max-inflight-requests are mutually exclusive.', 'launch-args', _MAIN),
    ('--rl-generation-lag requires --rl-partial-rollouts.', 'launch-args', _MAIN),
    ('--rl-kv-cache-management-mode=offload is incompatible with UVM', 'launch-args', _MAIN),
    ('--rl-kv-cache-management-mode=offload requires --rl-persist-cuda-graphs', 'launch-args', _MAIN),
    ('--rl-max-inflight-requests ({}) must be >= 1.', 'launch-args', _MAIN),
    ('--rl-max-inflight-requests above one training batch ({} requests) requires '
     '--rl-partial-rollouts.', 'launch-args', _MAIN),
    ('--rl-persist-cuda-graphs is set but no CUDA graphs are being built.', 'launch-args', _MAIN),
    ('--rl-submission-granularity B with --rl-consumption-granularity G is not supported.', 'launch-args', _MAIN),
    ('--rl-submission-granularity {} requires --rl-partial-rollouts.', 'launch-args', _MAIN),
    ('--rl-training-cuda-graphs is set but no CUDA graphs are being built.', 'launch-args', _MAIN),
    ('--use-checkpoint-args is not supported with --non_persistent_ckpt_type=local. '
     'Two-stage checkpoint loading is not implemented, and all arguments must be '
     'defined before initializing LocalCheckpointManager.', 'launch-args', _MAIN),
    ('--use-checkpoint-args requires --load or --pretrained-checkpoint argument', 'launch-args', _MAIN),
    ("--use-torch-fsdp2 is not supported with MCore's distributed optimizer", 'launch-args', _MAIN),
    ('--use-torch-fsdp2 is not supported with expert parallelism', 'launch-args', _MAIN),
    ('--use-torch-fsdp2 is not supported with gradient accumulation fusion', 'launch-args', _MAIN),
    ('--use-torch-fsdp2 is not supported with pipeline parallelism', 'launch-args', _MAIN),
    ('--use-torch-fsdp2 not supported with fp16 yet', 'launch-args', _MAIN),
    ('--use-torch-fsdp2 requires --ckpt-format torch_dist or torch_dcp', 'launch-args', _MAIN),
    ('--use-torch-fsdp2 requires --untie-embeddings-and-output-weights', 'launch-args', _MAIN),
    ('--warmup argument is no longer valid, use --lr-warmup-fraction instead', 'launch-args', _MAIN),
    ('A single data source must be provided in training mode, else None', 'launch-args', _MAIN),
    ('Arguments differ from heterogeneous config: {}', 'launch-args', _MAIN),
    ("CUDA graph with delay_wgrad_compute doesn't support attn bias for now.", 'launch-args', _MAIN),
    ('CUDA graph with delay_wgrad_compute requires TE version >= 2.12.0.', 'version-mismatch', _MAIN),
    ('CUDA graph with delay_wgrad_compute requires gradient_accumulation_fusion to be '
     'enabled. This is because the default gradient accumulation does not use static '
     'memory addresses, which breaks CUDA graph requirements.', 'launch-args', _MAIN),
    ('Cannot override checkpoint iteration together with finetune flag.', 'launch-args', _MAIN),
    ('Cannot recapture CUDA graphs while offloading KV cache.', 'launch-args', _MAIN),
    ('Cannot specify both --step-batch-size-schedule and --global-batch-size', 'launch-args', _MAIN),
    ('Currently only global and local checkpoints are supported', 'launch-args', _MAIN),
    ('Delaying wgrad compute is only supported with transformer_engine implementation', 'launch-args', _MAIN),
    ('Do not use --enable-cuda-graph or --external-cuda-graph with --cuda-graph-impl.', 'launch-args', _MAIN),
    ('Emerging optimizer does not support Megatron-FSDP for now.', 'launch-args', _MAIN),
    ('Emerging optimizer does not support Torch-FSDP2 for now.', 'launch-args', _MAIN),
    ('Emerging optimizer supports torch and torch_dist checkpoint format.', 'launch-args', _MAIN),
    ('FIM extra tokens should be specified.', 'launch-args', _MAIN),
    ('FSDP always requires CUDA_DEVICE_MAX_CONNECTIONS value large than one', 'launch-args', _MAIN),
    ('FSDP manual registration is only supported with --nccl-ub argument.', 'launch-args', _MAIN),
    ('FSDP manual registration is only supported with Megatron FSDP.', 'launch-args', _MAIN),
    ('FSDP requires CUDA_DEVICE_MAX_CONNECTIONS > 1 or unset.', 'launch-args', _MAIN),
    ('FSDP2 requires PyTorch >= 2.4.0 with FSDP 2 support.', 'version-mismatch', _MAIN),
    ('Fake process group is not supported with flex token dispatcher.', 'launch-args', _MAIN),
    ('Fine-grained activation offloading is only supported with transformer_engine '
     'implementation', 'launch-args', _MAIN),
    ('For fine-grained activation offloading with TE >= 2.10.0, NVTE_CPU_OFFLOAD_V1 '
     'should be set to 1 to avoid offloading weights.', 'version-mismatch', _MAIN),
    ('GTP (--tensor-parallel-num-weight-shards / '
     '--expert-tensor-parallel-num-weight-shards > 1) with --fp4-format requires '
     '--fp4-param-gather so NVFP4 weights are all-gathered as native NVFP4.', 'launch-args', _MAIN),
    ('GTP + mxfp8 + --fp8-param-gather requires --reuse-grad-buf-for-mxfp8-param-ag '
     '(MXFP8 params keep their own quantized storage; mapping them into the param '
     'buffer via replace_raw_data is unsupported).', 'launch-args', _MAIN),
    ('GTP + mxfp8 requires --fp8-param-gather (the optimizer maintains the fp8 shard; '
     'GTP does not keep or re-quantize a bf16 weight).', 'launch-args', _MAIN),
    ('GTP does not support the distributed-optimizer fully-reshardable + mem-efficient '
     'checkpoint mode. Disable --distrib-optim-fully-reshardable-mem-efficient (or '
     '--dist-ckpt-optim-fully-reshardable).', 'launch-args', _MAIN),
    ('GTP requires --ddp-average-in-collective off (the default); averaged collectives '
     'would need per-buffer 1/gtp_remat scaling.', 'launch-args', _MAIN),
    ("GTP supports only --ckpt-format 'torch' (legacy) or 'torch_dist', got '{}'.", 'launch-args', _MAIN),
    ('Group query attention is mutually exclusive with multi latent attention.', 'launch-args', _MAIN),
    ('Hybrid context parallelism must be used with --calculate-per-token-loss', 'launch-args', _MAIN),
    ('Hybrid context parallelism not supported with CUDA Graph', 'launch-args', _MAIN),
    ('Hybrid context parallelism not supported with Megatron FSDP', 'launch-args', _MAIN),
    ('Hybrid context parallelism not supported with pipeline parallelism', 'launch-args', _MAIN),
    ('Hybrid context parallelism only supported with single dataloader type', 'launch-args', _MAIN),
    ('If --hybrid-layer-pattern contains pipe separators, '
     '--decoder-first-pipeline-num-layers should not be specified as the pipeline '
     'layout is explicitly defined.', 'launch-args', _MAIN),
    ('If --hybrid-layer-pattern contains pipe separators, '
     '--decoder-last-pipeline-num-layers should not be specified as the pipeline '
     'layout is explicitly defined.', 'launch-args', _MAIN),
    ('Invalid inference CUDA graph scope {} for --cuda-graph-impl={}.', 'launch-args', _MAIN),
    ('Local transformer implementation currently does not support attention bias-based '
     'position embeddings.', 'launch-args', _MAIN),
    ('MXFP8 with inference optimized layers requires FlashInfer >= 0.6.4', 'version-mismatch', _MAIN),
    ('Megatron-FSDP does not currently support moe_single_grouped_weight or '
     'moe_single_grouped_bias. Disable single grouped MoE parameters or use the '
     'regular DDP/distributed optimizer path until Megatron-FSDP supports TE '
     'GroupedTensor param buffers.', 'launch-args', _MAIN),
    ('Megatron-FSDP does not support the {} optimizer yet.', 'launch-args', _MAIN),
    ('Megatron-FSDP requires the `fsdp_dtensor` checkpointing format.', 'launch-args', _MAIN),
    ('Meta device initialization (init_model_with_meta_device=True) is not supported '
     "or necessary for the 'no_shard' / 0 sharding strategy.", 'launch-args', _MAIN),
    ('MoE latent projection dimension has to be greater than zero.', 'launch-args', _MAIN),
    ('MoE latent projections are applicable only for MoE models.', 'launch-args', _MAIN),
    ('Mock dataset is not supported with FIM dataset.', 'launch-args', _MAIN),
    ("Multi-Token Prediction (MTP) is not supported with '{}' position embedding type. "
     'The supported position embedding types are: {}.', 'launch-args', _MAIN),
    ('Multi-Token Prediction (MTP) is not supported with {} position embedding '
     'type.The supported position embedding types are rope and none.', 'launch-args', _MAIN),
    ('Must use --overlap-param-gather with --overlap-grad-reduce', 'launch-args', _MAIN),
    ('Must use --overlap-param-gather-with-optimizer-step with --overlap-param-gather', 'launch-args', _MAIN),
    ('No more than one of the following arguments can be set at the same time: '
     '--num-layers-per-virtual-pipeline-stage, '
     '--num-virtual-stages-per-pipeline-rank,--pipeline-model-parallel-layout. '
     'args.num_layers_per_virtual_pipeline_stage={}, '
     'args.num_virtual_stages_per_pipeline_rank={}, '
     'args.pipeline_model_parallel_layout={}.', 'launch-args', _MAIN),
    ('Number of experts should be a multiple of expert model parallel_size.', 'launch-args', _MAIN),
    ('Number of layers should be divisible by the pipeline-model-parallel size', 'launch-args', _MAIN),
    ('Only --fp8-recipe=mxfp8 is supported with --inference-cuda-graph-scope=block', 'launch-args', _MAIN),
    ('Persisting CUDA graphs requires static KV cache memory. Use '
     '--rl-kv-cache-management-mode=persist, UVM, or install torch_memory_saver.', 'launch-args', _MAIN),
    ('Pipeline-parallel microbatched inference is incompatible with CUDA graphs', 'launch-args', _MAIN),
    ('Setting NCCL_GRAPH_REGISTER=0 to avoid illegal memory access when using CUDA '
     'Graph with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.', 'launch-args', _MAIN),
    ('Tensor parallel communication/GEMM overlap can happen only when sequence '
     'parallelism is enabled', 'launch-args', _MAIN),
    ('The length of pipeline_model_parallel_layout must be divisible by '
     'pipeline_model_parallel_size (num_stages={}, '
     'args.pipeline_model_parallel_size={})', 'launch-args', _MAIN),
    ('The number of hybrid pipeline segments described by --hybrid-layer-pattern must '
     'be evenly divisible by --pipeline-model-parallel-size. Got {} segments and {} '
     'pipeline parallel size.', 'launch-args', _MAIN),
    ('The optimizer cpu offload must be used in conjunction with '
     '`--use-precision-aware-optimizer`, as the hybrid device optimizer reuses the '
     'code path of this flag.', 'launch-args', _MAIN),
    ('To use --rl-offload-inference-model-weights-when-idle without UVM '
     '(--rl-inference-model-unified-memory-level=1), `torch_memory_saver` must be '
     'installed. See https://github.com/fzyzcjy/torch_memory_saver.', 'launch-args', _MAIN),
    ('Transformer Engine cross entropy loss fusion is disabled due to stability '
     'issues. Use --cross-entropy-fusion-impl native, or omit '
     '--cross-entropy-loss-fusion.', 'launch-args', _MAIN),
    ('Tried to use local checkpointing without specifying --local-ckpt-dir!', 'launch-args', _MAIN),
    ('Using tensor model parallelism or context parallelism require setting the '
     'environment variable CUDA_DEVICE_MAX_CONNECTIONS to 1', 'launch-args', _MAIN),
    ('When `--fp8-param-gather` is enabled, the optimizer cpu offload must be used in '
     'conjunction with `--fp8-recipe delayed`.', 'launch-args', _MAIN),
    ('When interleaved schedule is used and p2p communication overlap is disabled, '
     'pipeline-model-parallel size should be greater than 2 to avoid having multiple '
     'p2p sends and recvs between same 2 ranks per communication batch', 'launch-args', _MAIN),
    ('When interleaved schedule is used, pipeline-model-parallel size should be greater than 1', 'launch-args', _MAIN),
    ('When using upcycling, the --save option must be specified.', 'launch-args', _MAIN),
    ('can distribute recomputed activations only across tensor model parallel groups', 'launch-args', _MAIN),
    ('can only specify one of lr-warmup-fraction and lr-warmup-iters', 'launch-args', _MAIN),
    ('can only specify one of lr-warmup-fraction and lr-warmup-samples', 'launch-args', _MAIN),
    ('cannot have both num-layers and encoder-num-layers specified', 'launch-args', _MAIN),
    ('check_weight_hash_across_dp_replicas_interval is not supported with optim_grads_params', 'launch-args', _MAIN),
    ('disabling gradient_accumulation_fusion is only supported with TE >= 2.7.0 when '
     'enabling delay_wgrad_compute', 'version-mismatch', _MAIN),
    ('distributed recompute activations are supported for pytorch v1.10 and above '
     '(Nvidia Pytorch container >= 21.07). Current pytorch version is v{}.', 'version-mismatch', _MAIN),
    ('distributed recompute activations is only application to full recompute granularity', 'launch-args', _MAIN),
    ('either num-layers or encoder-num-layers should be specified', 'launch-args', _MAIN),
    ('eval_global_batch_size ({}) must be divisible by eval_micro_batch_size ({}) * '
     'data_parallel_size ({}) * gtp_weight_remat_size ({})', 'launch-args', _MAIN),
    ('exit_interval should be divisible by number of global batches per inference iteration.', 'launch-args', _MAIN),
    ('expected iteration-based learning rate decay', 'launch-args', _MAIN),
    ('expected iteration-based learning rate warmup', 'launch-args', _MAIN),
    ('expected sample-based learnig rate warmup', 'launch-args', _MAIN),
    ('expected sample-based learning rate decay', 'launch-args', _MAIN),
    ('for distributed recompute activations to work you need to use a recompute method', 'launch-args', _MAIN),
    ('fp8 with --inference-cuda-graph-scope=block is only supported with '
     '--transformer-impl=inference_optimized', 'launch-args', _MAIN),
    ('grpo_group_size * grpo_prompts_per_step * grpo_iterations should be divisible by '
     'global_batch_size', 'launch-args', _MAIN),
    ('hidden_act in heterogeneous config is {}, should be silu', 'launch-args', _MAIN),
    ('inference_dynamic_batching_num_cuda_graphs should be a positive integer or -1-1 '
     'means that we will automatically determine the number of CUDA graphs to capture '
     'based on the `max_requests` value.', 'launch-args', _MAIN),
    ('lm cross entropy in fp16 only support in fp16 mode.', 'launch-args', _MAIN),
    ('max_position_embeddings ({}) must be greater than or equal to seq_length ({}).', 'launch-args', _MAIN),
    ('micro_batch_size must be 1 when using sequence packing. To increase compute per '
     'micro batch increase the sequence length.', 'launch-args', _MAIN),
    ('num query head must be consistent across all layers', 'launch-args', _MAIN),
    ('num_experts must be non None to use expert model parallelism', 'launch-args', _MAIN),
    ('number of layers of the model must be divisible pipeline model parallel size', 'launch-args', _MAIN),
    ('number of layers per pipeline stage must be divisible number of layers per '
     'virtual pipeline stage', 'launch-args', _MAIN),
    ('nvidia_resiliency_ext is required for local checkpointing', 'launch-args', _MAIN),
    ('overlap_grad_reduce is only supported with TE >= 2.8.0 when enabling '
     'delay_wgrad_compute', 'version-mismatch', _MAIN),
    ('please use --num-virtual-stages-per-pipeline-rank to specify virtual pipeline '
     'parallel degree when enable uneven pipeline parallelism', 'launch-args', _MAIN),
    ('recompute method is not yet supported for selective recomputing granularity', 'launch-args', _MAIN),
    ('residual connection in fp32 only supported when using fp16 or bf16.', 'launch-args', _MAIN),
    ('save_interval should be divisible by number of global batches per inference iteration.', 'launch-args', _MAIN),
    ('seq-length should be a multiple of 2 * context-parallel-size if '
     'context-parallel-size > 1.', 'launch-args', _MAIN),
    ('world size ({}) is not divisible by total_model_size (total_model_size={})', 'launch-args', _MAIN),
    ('Cannot defer embedding wgrad compute when gradient accumulation fusion is not used', 'launch-args', _MAIN),
    ('Cannot defer embedding wgrad compute when pipeline model parallel is not used', 'launch-args', _MAIN),
    ('Cannot use sequence parallelism without tensor parallelism', 'launch-args', _MAIN),
    ('Pipeline parallel communication overlapping in warmup and flush is only '
     'compatible with overlap_p2p_comm but not batch_p2p_comm.', 'launch-args', _MAIN),
    ('Wgrad deferral limit should be greater than or equal to 0 when it is enabled!', 'launch-args', _MAIN),
    ('When using pipeline parallelism, pipeline_dtype must be specified', 'launch-args', _MAIN),
    ('"{}" backend for PP communication is currently not supported', 'launch-args', _MAIN),
    ('Data parallel size should be divisible by partial DistOpt shard factor', 'launch-args', _MAIN),
    ('Expert data parallel size should be divisible by partial DistOpt shard factor', 'launch-args', _MAIN),
    ('When not using pp-last rank ordering, the data parallel size of the attention '
     'and moe layers must be the same', 'launch-args', _MAIN),
    ("net_name ({}) is not supported.Accepted values: 'IB' or 'socket'.", 'launch-args', _MAIN),
    ('pipeline-model-parallel size should be greater than 1 with interleaved schedule', 'launch-args', _MAIN),
    ('vp_stage must be passed if virtual pipeline is enabled', 'launch-args', _MAIN),
    ('world_size ({}) is not divisible by expert_tensor_model_pipeline_parallel size ({})', 'launch-args', _MAIN),
    ('world_size ({}) is not divisible by {}', 'launch-args', _MAIN),
    ("'mhc' and 'mlp' in recompute_modules cannot be used together. They use different "
     'checkpoint mechanisms that may conflict.', 'launch-args', _MAIN),
    ("'mhc' in recompute_modules + fine_grained_activation_offloading is not yet "
     'supported. The mHC recompute hook currently fires before the offloading backward '
     'chunk is initialized, causing tensor_pop on a None chunk. Disable one of them.', 'launch-args', _MAIN),
    ("'mhc' in recompute_modules requires enable_mhc_connections=True.", 'launch-args', _MAIN),
    ('--inference-fuse-tp-communication is not supported for MoE models.', 'launch-args', _MAIN),
    ('--mup-base-hidden-size must be positive.', 'launch-args', _MAIN),
    ("--transformer-impl='inference_optimized' requires --moe-router-dtype=fp32 to "
     'avoid costly dtype conversions during decode.', 'launch-args', _MAIN),
    ("--transformer-impl='inference_optimized' supports gated linear units "
     '(SwiGLU/GeGLU) only with --inference-grouped-gemm-backend torch or vllm, got '
     "'{}'.", 'launch-args', _MAIN),
    ('A2A Overlap encounters hang issue with torch version < 2.6.0', 'version-mismatch', _MAIN),
    ('Batch invariant mode does not support attention dropout', 'launch-args', _MAIN),
    ('Batch invariant mode does not support context parallelism', 'launch-args', _MAIN),
    ('Batch invariant mode only supports FlashAttention (--attention-backend flash)', 'launch-args', _MAIN),
    ('Batch invariant mode requires --flash-attention-version 3 or 4 so the training '
     'and inference attention paths run the same batch-invariant FlashAttention kernel '
     '(got {}).', 'launch-args', _MAIN),
    ('Batch invariant mode supports BF16 model parameters only; got {}.', 'launch-args', _MAIN),
    ('Batch-invariant MoE is bf16-only. Disable fp8/fp4 to use it.', 'launch-args', _MAIN),
    ('Batch-invariant MoE requires the unfused permute/unpermute path so top-k '
     'reductions use the fixed batch-invariant add tree.', 'launch-args', _MAIN),
    ('Batch-invariant MoE supports dynamic dropless routing only. Disable MoE '
     'capacity/expert padding.', 'launch-args', _MAIN),
    ("Batch-invariant MoE training requires moe_token_dispatcher_type='alltoall'.", 'launch-args', _MAIN),
    ('Bias in Moe is only supported when ETP==1', 'launch-args', _MAIN),
    ('CPU offloading can be done only for layers less than {}', 'launch-args', _MAIN),
    ('CPU offloading does not work when activation recomputation is enabled', 'launch-args', _MAIN),
    ('CUDA graph scope on moe and mlp is not supported with overlap_moe_expert_parallel_comm', 'launch-args', _MAIN),
    ('CUDA graphs not supported with CPU offloading.', 'launch-args', _MAIN),
    ("Cannot offload {} while recomputing the entire MoE layer. 'moe' in "
     'recompute_modules wraps the full MoE forward in a checkpoint, so offloading '
     "activations inside it is redundant and will cause errors. Either remove 'moe' "
     'from --recompute-modules or remove {} from --offload-modules.', 'launch-args', _MAIN),
    ('Conflicting deprecated SM-count knobs {}; set a single '
     'moe_flex_dispatcher_num_sms instead.', 'launch-args', _MAIN),
    ('Currently there is no support for Pipeline parallelism with CPU offloading', 'launch-args', _MAIN),
    ('DSA uses AbsorbedMLASelfAttention, which requires add_bias_linear=False. Disable '
     'linear bias for DSA configs.', 'launch-args', _MAIN),
    ('DSAttention context parallelism currently supports cp_comm_type=allgather only.', 'launch-args', _MAIN),
    ('DeepEP backend is only supported with flex token dispatcher.', 'launch-args', _MAIN),
    ('Delayed scaling does not support first / last layer in BF16.', 'launch-args', _MAIN),
    ('Delayed scaling does not support moe_act and layernorm recompute for fp8.', 'launch-args', _MAIN),
    ('Do not set --moe-layer-recompute with full recompute granularity.', 'launch-args', _MAIN),
    ("Expert bias for aux-loss-free routing only supports 'sigmoid' and 'sqrtsoftplus' "
     "score functions. Please set --moe-router-score-function to 'sigmoid' or "
     "'sqrtsoftplus', or unset --moe-router-enable-expert-bias.", 'launch-args', _MAIN),
    ('FlashInfer is not compatible with MXFP8 quantization. Set '
     "inference_grouped_gemm_backend to 'torch'.", 'launch-args', _MAIN),
    ('Flex token dispatcher with deepep backend does not support '
     'moe_pad_expert_input_to_capacity', 'launch-args', _MAIN),
    ('GTP + local CUDA graphs that capture shared_experts (moe_router/moe scope) '
     'cannot recompute it under fp8/fp4: te_checkpoint requires .backward(), but the '
     "local fwd-graph warmup uses .grad(). Drop 'shared_experts' from "
     '--recompute-modules (GTP-shard + offload instead), or use --cuda-graph-impl '
     'full_iteration.', 'launch-args', _MAIN),
    ('If enabling EP A2A overlap, virtual_pipeline_model_parallel_size must be '
     'specified when pipeline_model_parallel_size > 1', 'launch-args', _MAIN),
    ('Inference-optimized MoE layers do not support padded routing map for quantization.', 'launch-args', _MAIN),
    ('Inference-optimized MoE layers does not support expert tensor parallelism.', 'launch-args', _MAIN),
    ('Inference-optimized MoE layers only support dropless MoE', 'launch-args', _MAIN),
    ('Invalid choices for gtp_remat_opt_in_modules: {}. Allowed modules are: {}', 'launch-args', _MAIN),
    ('Invalid choices for offload_modules: {}. Allowed modules are: {}', 'launch-args', _MAIN),
    ('Invalid choices for recompute_modules: {}. Allowed modules are: {}', 'launch-args', _MAIN),
    ('Length of cp_comm_type ({}) should equal to the total number of transformer layers ({})!', 'launch-args', _MAIN),
    ('Length of no_rope list ({}) must match the number of layers ({})', 'launch-args', _MAIN),
    ('MTP supports at most one layer when enabling overlap_moe_expert_parallel_comm.', 'launch-args', _MAIN),
    ('Mismatch: {} middle layers remaining but {} middle PP stages available.', 'launch-args', _MAIN),
    ('Must have at least TE version 2.3 or higher to use symmetric memory all reduce', 'version-mismatch', _MAIN),
    ('Must have at least torch version 2.7 or higher', 'version-mismatch', _MAIN),
    ('Only one backend is supported for flex token dispatcher.', 'launch-args', _MAIN),
    ('Only one of self.fp16: {} and self.bf16 {} should be True.', 'launch-args', _MAIN),
    ('Only transformer-engine>=1.11.0 supports FP8 grouped gemm, but your version is {}.', 'version-mismatch', _MAIN),
    ('Only transformer-engine>=1.7.0 supports MoE FP8 training, but your version is {}.', 'version-mismatch', _MAIN),
    ('Output gate is not supported for MLA yet.', 'launch-args', _MAIN),
    ('Pipeline model parallel size must be larger than 0 when enable '
     '--standalone-embedding-stage and --standalone-loss-stage', 'launch-args', _MAIN),
    ('Please use --moe-router-pre-softmax when topk is 1.', 'launch-args', _MAIN),
    ('RoPE fusion is not supported for DSAttention', 'launch-args', _MAIN),
    ('Rope Fusion is not compatible with caching latents', 'launch-args', _MAIN),
    ('Storing activation input in FP8 is supported only for SwiGLU.', 'launch-args', _MAIN),
    ('TE version >= 2.10.0 is required for delay_wgrad_compute with partial cuda graph', 'version-mismatch', _MAIN),
    ('TE version >= 2.3.0 is required for overlap_dispatch_backward_with_experts_wgrad', 'version-mismatch', _MAIN),
    ('Token dispatcher type: {} does not support variable sequence length, please use '
     'alltoall dispatcher instead.', 'launch-args', _MAIN),
    ('Token-drop MoE is temporarily not supported with activation offloading.', 'launch-args', _MAIN),
    ('TransformerEngine only support gelu, geglu, silu, swiglu, relu, reglu. If you '
     "don't want to use TransformerEngine activation function, set "
     'use_te_activation_func to False', 'launch-args', _MAIN),
    ('Unknown batch_invariant_backend {}; expected one of {}.', 'launch-args', _MAIN),
    ('Unsupported communication type for context parallelism!', 'launch-args', _MAIN),
    ('Using recompute_granularity: {} so recompute_method must be "block" or "uniform"', 'launch-args', _MAIN),
    ('When bias_activation_fusion is True and activation function is quick_gelu, '
     'gated_linear_unit must be True.', 'launch-args', _MAIN),
    ('When bias_activation_fusion is True and glu_linear_offset is non-zero, '
     'activation function must be quick_gelu.', 'launch-args', _MAIN),
    ('When bias_activation_fusion is True, activation function should be either gelu, '
     'swiglu, or quick_geglu', 'launch-args', _MAIN),
    ('When bias_activation_fusion is True, gated_linear_unit is False and activation '
     'function is gelu, add_bias_linear must also be True.', 'launch-args', _MAIN),
    ('When moe_paged_stash is enabled, offload_modules must not include expert_fc1, '
     'moe_act, or fused_group_mlp (paged stash covers those activations). Remove: {}', 'launch-args', _MAIN),
    ('When using group limited routing, moe_router_num_groups must be specified.', 'launch-args', _MAIN),
    ('When using recompute_granuarlity: {} must be "full"or "selective".', 'launch-args', _MAIN),
    ('When using recompute_granularity: {} recompute_num_layers must be None.', 'launch-args', _MAIN),
    ('When using recompute_granularity: {} recompute_num_layers must be between 1 and '
     'num_layers_per_pipeline_rank: {}', 'launch-args', _MAIN),
    ('activation_func_clamp_value for SwiGLU is only supported with MoE.', 'launch-args', _MAIN),
    ('activation_func_clamp_value for SwiGLU must be finite and greater than zero.', 'launch-args', _MAIN),
    ('activation_offload_fraction must be in range [0, 1].', 'launch-args', _MAIN),
    ('allgather and alltoall_seq dispatcher does not support '
     'moe_router_padding_for_quantization.', 'launch-args', _MAIN),
    ('apply_rope_fusion for MLA only works with YARN RoPE.', 'launch-args', _MAIN),
    ('apply_rope_fusion is not available. Please install TE >= 1.4.', 'version-mismatch', _MAIN),
    ('attention dropout is not supported with graphed attention recomputation.', 'launch-args', _MAIN),
    ('attn_proj cannot be set to offload_modules alone without core_attn because the '
     'input of attn_proj is the output of core_attn, which is needed in '
     'core_attn.backward().', 'launch-args', _MAIN),
    ("batch_invariant_mode requires inference_grouped_gemm_backend 'torch' or 'vllm'.", 'launch-args', _MAIN),
    ('batch_invariant_mode with inference-optimized MoE and expert parallelism '
     "requires inference_moe_token_dispatcher_type='nvls'.", 'launch-args', _MAIN),
    ('batch_invariant_mode=True with MoE requires DeepGEMM with bf16 grouped-GEMM '
     'bindings (m_grouped_bf16_gemm_nt_contiguous) for this backend combination. '
     'Install via `uv pip install -e .[batch_invariant]`.', 'version-mismatch', _MAIN),
    ('bias_activation_fusion and use_te_activation_func cannot be both true. If you '
     'use bias in MLP FC1, we recommend setting bias_activation_fusion to True and '
     'use_te_activation_func to False.', 'launch-args', _MAIN),
    ('cuda_graph_modules must be a list of CudaGraphModule, got {}.', 'launch-args', _MAIN),
    ('cuda_graph_modules must not contain both moe and moe_router.', 'launch-args', _MAIN),
    ('cuda_graph_scope and cuda_graph_modules cannot be set together.', 'launch-args', _MAIN),
    ('cuda_graph_warmup_steps must be greater than 0 when enabling fine-grained '
     'activation offloading.', 'launch-args', _MAIN),
    ('delay_wgrad_compute and overlap_dispatch_backward_with_experts_wgrad are '
     'mutually exclusive; use only one', 'launch-args', _MAIN),
    ('delta_offload_bytes_across_pp_ranks must be non-negative.', 'launch-args', _MAIN),
    ('disable full recomputation when enabling overlap_moe_expert_parallel_comm', 'launch-args', _MAIN),
    ('disable moe in recompute_modules when enabling overlap_moe_expert_parallel_comm', 'launch-args', _MAIN),
    ('disable moe_shared_expert_overlap when enabling overlap_moe_expert_parallel_comm', 'launch-args', _MAIN),
    ('disable recomputation method when enabling overlap_moe_expert_parallel_comm', 'launch-args', _MAIN),
    ('distribute_saved_activations: {} must be false when sequence parallel is enabled: {}', 'launch-args', _MAIN),
    ('dsa_indexer_skip_topk_offset must be non-negative, got {}.', 'launch-args', _MAIN),
    ('dsa_indexer_topk_freq must be positive, got {}.', 'launch-args', _MAIN),
    ('enable_mhc_connections does not support pipeline_model_parallel_size > 1 yet. '
     'Inter-stage activations are n-stream ([s, b, n*C]) while pipeline p2p buffers '
     'are sized from hidden_size, so the shapes disagree. Use '
     'pipeline_model_parallel_size=1 until mHC pipeline support lands.', 'launch-args', _MAIN),
    ('enable_mhc_connections is not compatible with Multi-Token Prediction (MTP). '
     'Please disable MTP (set mtp_num_layers=None) when using hyper connections.', 'launch-args', _MAIN),
    ('enable_mhc_connections is not compatible with fp32_residual_connection. The mHC '
     'residual is the n-stream tensor consumed by the H_res batched matmul, which must '
     'share the activation dtype.', 'launch-args', _MAIN),
    ('enable_mhc_connections is not compatible with inference_fuse_tp_communication. '
     'The fused inference TP path assumes single-stream residual tensors.', 'launch-args', _MAIN),
    ('enable_mhc_connections is not yet compatible with full activation recompute. Use '
     "selective recompute with 'mhc' in recompute_modules, or disable activation "
     'recompute.', 'launch-args', _MAIN),
    ('fine-grained activation offloading is only supported with transformer_engine '
     'CUDA graph implementation or local CUDA graph implementation with partial MoE '
     'offload. Local partial CUDA graphs are supported only for expert_fc1, moe_act, '
     'or fused_group_mlp offload when the full MoE module is not captured.', 'launch-args', _MAIN),
    ("fine-grained activation offloading with cuda_graph_impl='local' is not supported "
     'with whole-layer CUDA graph capture.', 'launch-args', _MAIN),
    ("fine-grained activation offloading with cuda_graph_impl='local' only supports "
     "offload_modules 'expert_fc1', 'moe_act', and 'fused_group_mlp'. Unsupported "
     'offload_modules: {}.', 'launch-args', _MAIN),
    ('fine_grained_activation_offloading cannot be enabled with cpu_offloading.', 'launch-args', _MAIN),
    ('fine_grained_offloading_max_inflight_offloads must be a non-negative integer '
     'when using fine-grained activation offloading with full-iteration CUDA graphs', 'launch-args', _MAIN),
    ('flash_attention_version must be one of 2, 3, or 4, got {}', 'launch-args', _MAIN),
    ('flash_decode cannot be used with no_rope.', 'launch-args', _MAIN),
    ('fp4 and fp8 cannot be used simultaneously. Please choose one.', 'launch-args', _MAIN),
    ('fp4_param must be used together with fp4 mode.', 'launch-args', _MAIN),
    ("fp4_quantizer_factory must be provided when fp4_recipe is 'custom'. Specify a "
     'Python import path (e.g., package.module.quantizer_factory) via '
     '--fp4-quantizer-factory.', 'launch-args', _MAIN),
    ('fp8/fp4 must be specified when moe_router_padding_for_quantization is True.', 'launch-args', _MAIN),
    ('fp8_output_proj must be used together with fp8 mode.', 'launch-args', _MAIN),
    ("fp8_output_proj requires fp8_recipe='mxfp8', got '{}'.", 'launch-args', _MAIN),
    ("fp8_param must be enabled when using --transformer-impl='inference_optimized' "
     "with --fp8-recipe='mxfp8'. Please set --fp8-param-gather.", 'launch-args', _MAIN),
    ('fp8_param must be used together with fp8 mode.', 'launch-args', _MAIN),
    ("fp8_quantizer_factory must be provided when fp8_recipe is 'custom'. Specify a "
     'Python import path (e.g., package.module.quantizer_factory) via '
     '--fp8-quantizer-factory.', 'launch-args', _MAIN),
    ('full recompute is only supported with full iteration CUDA graph.', 'launch-args', _MAIN),
    ('fused permutation is not available. Please install TE >= 2.1.0.', 'version-mismatch', _MAIN),
    ('fused_group_mlp offloads the whole fused grouped MLP and cannot be combined with '
     'expert_fc1 or moe_act. Remove: {}', 'launch-args', _MAIN),
    ('fused_residual_rmsnorm is only supported when normalization is RMSNorm.', 'launch-args', _MAIN),
    ('fused_single_qkv_rope does not support gated attention for now.', 'launch-args', _MAIN),
    ('gdn_norm_out in recompute_modules is only supported with '
     "experimental_attention_variant='gdn' or 'gdn2'.", 'launch-args', _MAIN),
    ('gdp_num_chunk_states_to_recompute must be in range [0, 64], got {}.', 'launch-args', _MAIN),
    ('gdp_num_householder must be positive, got {}.', 'launch-args', _MAIN),
    ('gdp_qkv cannot be set in offload_modules together with gdp_in_proj in '
     'recompute_modules, because gdp_in_proj discards the input of the causal conv and '
     'rematerializes it at the start of the mixer backward, leaving nothing for the '
     'gdp_qkv offload group to keep on the host.', 'launch-args', _MAIN),
    ('glu_linear_offset must be zero when activation_func_clamp_value is set for SwiGLU.', 'launch-args', _MAIN),
    ('hidden dropout is not supported with graphed MLP/MoE recomputation.', 'launch-args', _MAIN),
    ('inference_disable_triton_nvls_kernels is only supported for inference_optimized '
     'transformer implementation.', 'launch-args', _MAIN),
    ('inference_fuse_tp_communication is only supported for inference_optimized '
     'transformer implementation.', 'launch-args', _MAIN),
    ("inference_grouped_gemm_backend must be 'flashinfer', 'torch', or 'vllm', got '{}'", 'launch-args', _MAIN),
    ('linear_attention_freq must be set for linear gdn.', 'launch-args', _MAIN),
    ('linear_conv_kernel_dim must be set for gated delta net.', 'launch-args', _MAIN),
    ('linear_key_head_dim must be set for gated delta net.', 'launch-args', _MAIN),
    ('linear_num_key_heads must be set for gated delta net.', 'launch-args', _MAIN),
    ('linear_num_value_heads ({}) must be a multiple of linear_num_key_heads ({}).', 'launch-args', _MAIN),
    ('linear_num_value_heads must be set for gated delta net.', 'launch-args', _MAIN),
    ('linear_value_head_dim must be set for gated delta net.', 'launch-args', _MAIN),
    ('mhc_init_gating_factor must be non-negative, got {}.', 'launch-args', _MAIN),
    ("mhc_recompute_layer_num must be a positive integer when 'mhc' is in recompute_modules.", 'launch-args', _MAIN),
    ('mhc_sinkhorn_iterations must be >= 1; the Sinkhorn-Knopp backward assumes at '
     'least one row-normalization pass, got {}.', 'launch-args', _MAIN),
    ('min_offloaded_tensor_size must be non-negative.', 'launch-args', _MAIN),
    ('mla_up_proj in recompute_modules is only supported with multi_latent_attention.', 'launch-args', _MAIN),
    ('mlp cuda graph is only supported for dense layers, but not found in the model.', 'launch-args', _MAIN),
    ('moe cuda graph is only supported for MoE.', 'launch-args', _MAIN),
    ('moe cuda graph is only supported with drop-padding MoE.', 'launch-args', _MAIN),
    ('moe recompute is not supported with moe_router CUDA graph with:', 'launch-args', _MAIN),
    ('moe_act and layernorm recompute for fp8 needs transformer-engine>=2.6.0dev0, but '
     'your version is {}.', 'version-mismatch', _MAIN),
    ('moe_act in recompute_modules is only supported with moe_grouped_gemm.', 'launch-args', _MAIN),
    ('moe_aux_loss_coeff must be a list of the same length as moe_router_load_balancing_type', 'launch-args', _MAIN),
    ("moe_dispatch_fwd_dtype / moe_combine_bwd_dtype = 'mxfp8' require BOTH "
     'use_transformer_engine_op_fuser and moe_grouped_gemm: only the fused grouped '
     'GEMM path consumes the pre-quantized MXFP8 GroupedTensor payload.', 'launch-args', _MAIN),
    ("moe_dispatch_fwd_dtype / moe_combine_bwd_dtype require the 'ncclep' flex "
     'dispatcher backend.', 'launch-args', _MAIN),
    ('moe_expert_capacity_factor must be set to use moe_pad_expert_input_to_capacity', 'launch-args', _MAIN),
    ('moe_expert_capacity_factor only works with aux_loss, seq_aux_loss, '
     'global_aux_loss or none load balancing', 'launch-args', _MAIN),
    ('moe_expert_rank_capacity_factor requires moe_flex_dispatcher_backend to be '
     "'hybridep' or 'ncclep'.", 'launch-args', _MAIN),
    ("moe_expert_rank_capacity_factor with the 'hybridep' backend requires "
     'use_transformer_engine_op_fuser=True or moe_use_grouped_tensor=True.', 'launch-args', _MAIN),
    ('moe_ffn_hidden_size is set but num_moe_experts is None. Please set '
     'num_moe_experts or remove moe_ffn_hidden_size.', 'launch-args', _MAIN),
    ("moe_flex_dispatcher_backend='ncclep' requires moe_token_dispatcher_type='flex'.", 'launch-args', _MAIN),
    ('moe_input_jitter_eps is not supported with graphed moe recomputation.', 'launch-args', _MAIN),
    ('moe_paged_stash cannot be enabled with cpu_offloading.', 'launch-args', _MAIN),
    ('moe_paged_stash requires moe_expert_rank_capacity_factor to be set; there is no '
     'need to use paged stashing without it.', 'launch-args', _MAIN),
    ('moe_preprocess cuda graph is not supported when there are DtoH copies and '
     'synchronizations in the preprocess step.', 'launch-args', _MAIN),
    ('moe_preprocess cuda graph is only supported with moe_router cuda graph.', 'launch-args', _MAIN),
    ('moe_router_group_topk ({}) should be smaller than moe_router_num_groups ({}).', 'launch-args', _MAIN),
    ('moe_router_topk_limited_devices is deprecated and replaced by '
     'moe_router_group_topk and moe_router_num_groups.', 'launch-args', _MAIN),
    ('moe_shared_expert_intermediate_size must be num_shared_experts * '
     'ffn_size_of_each_shared_expert, but got {}', 'launch-args', _MAIN),
    ('moe_shared_expert_overlap only works with alltoall or flex token dispatcher.', 'launch-args', _MAIN),
    ('moe_single_grouped_weight and moe_single_grouped_bias require moe_grouped_gemm=True.', 'launch-args', _MAIN),
    ('moe_single_grouped_weight and moe_single_grouped_bias require '
     'transformer-engine>=2.14.0, but your version is {}.', 'version-mismatch', _MAIN),
    ('moe_single_grouped_weight is currently supported with high-precision primary '
     "weights, fp8_recipe='mxfp8', or fp4_recipe='nvfp4'.", 'launch-args', _MAIN),
    ('moe_single_grouped_weight with FP4 compute requires fp4_param=True '
     '(--fp4-param-gather). Without FP4 parameter gather, Transformer Engine uses a '
     'split-quantize fallback that is being deprecated.', 'launch-args', _MAIN),
    ('moe_use_grouped_tensor=True requires moe_grouped_gemm=True.', 'launch-args', _MAIN),
    ('moe_use_grouped_tensor=True without use_transformer_engine_op_fuser is not yet '
     'supported with the NCCL-EP dispatcher. Use the TE op-fuser path or select the '
     'alltoall, DeepEP, or HybridEP dispatcher.', 'launch-args', _MAIN),
    ('no_rope_freq={} should be divisible by num_layers={}.', 'launch-args', _MAIN),
    ('num_attention_heads ({}) must be a multiple of tensor_model_parallel_size ({}).', 'launch-args', _MAIN),
    ('num_layers: {} after enableaccount_for_embedding_in_pipeline_split or '
     'account_for_loss_in_pipeline_split must be divisibleby '
     'pipeline_model_parallel_size {}', 'launch-args', _MAIN),
    ('num_layers_at_end_in_bf16 ({}) must be between 0 and number of layers per '
     'pipeline stage ({}).', 'launch-args', _MAIN),
    ('num_layers_at_start_in_bf16 ({}) must be between 0 and number of layers per '
     'pipeline stage ({}).', 'launch-args', _MAIN),
    ('num_layers_in_first_pipeline_stage and num_layers_in_last_pipeline_stage cannot '
     'beset at the same time with account_for_embedding_in_pipeline_splitand '
     'account_for_loss_in_pipeline_split', 'launch-args', _MAIN),
    ('num_layers_in_first_pipeline_stage must be larger than 0', 'launch-args', _MAIN),
    ('num_layers_in_last_pipeline_stage must be larger than 0', 'launch-args', _MAIN),
    ('num_moe_experts ({}) should be divisible by moe_router_num_groups ({}).', 'launch-args', _MAIN),
    ('num_moe_experts must be non None to use expert-parallel.', 'launch-args', _MAIN),
    ('num_moe_experts must be non-negative.', 'launch-args', _MAIN),
    ('num_query_groups ({}) must be a multiple or divisor of tensor_model_parallel_size ({}).', 'launch-args', _MAIN),
    ('number of layers at first stage: {}must be divisible by virtual pipelineparallel '
     'degree {}', 'launch-args', _MAIN),
    ('number of layers at last stage: {}must be divisible by virtual pipelineparallel degree {}', 'launch-args', _MAIN),
    ('number of layers at middle stage: {} must be divisible bythe middle pipeline '
     'model parallel size {}', 'launch-args', _MAIN),
    ('number of layers on each middle pipeline rank:{} must be divisible by '
     'virtualpipeline parallel degree {}', 'launch-args', _MAIN),
    ('number of layers on each pipeline rank: {}(after enable '
     'account_for_embedding_in_pipeline_split or account_for_loss_in_pipeline_split) '
     'must be divisible byvirtual_pipeline_model_parallel_size{}', 'launch-args', _MAIN),
    ('number of middle layers: {} must be divisible by middle pipeline_model_parallel_size {}', 'launch-args', _MAIN),
    ('overlap_moe_expert_parallel_comm is only supported with bf16 or fp16 model', 'launch-args', _MAIN),
    ('overlap_moe_expert_parallel_comm is only supported with expert model parallelism', 'launch-args', _MAIN),
    ('overlap_moe_expert_parallel_comm is supported with alltoall/flex token dispatcher', 'launch-args', _MAIN),
    ('overlap_moe_expert_parallel_comm must be disabled when enabling '
     'overlap_dispatch_backward_with_experts_wgrad.', 'launch-args', _MAIN),
    ('overlap_moe_expert_parallel_comm must be enabled when enabling delay_wgrad_compute', 'launch-args', _MAIN),
    ('overlap_moe_expert_parallel_comm must be enabled when enabling '
     'ep_overlap_early_attn_memory_release', 'launch-args', _MAIN),
    ('overlap_moe_expert_parallel_comm with ncclep does not support offloading '
     "'expert_fc1': it forces expert FC1 to save the raw bf16 input, which the overlap "
     'path eagerly frees.', 'launch-args', _MAIN),
    ('packaging is not installed. Please install it with `pip install packaging`.', 'version-mismatch', _MAIN),
    ('pipeline_model_parallel_layout cannot be set with other pipeline layout '
     'arguments. self.num_layers_in_first_pipeline_stage={}, '
     'self.num_layers_in_last_pipeline_stage={}, '
     'self.account_for_embedding_in_pipeline_split={}, '
     'self.account_for_loss_in_pipeline_split={}.', 'launch-args', _MAIN),
    ('recompute_method: {} must be "block" or "uniform".', 'launch-args', _MAIN),
    ('recompute_num_layers must be None when enabling overlap_moe_expert_parallel_comm', 'launch-args', _MAIN),
    ('rotary_interleaved does not work with apply_rope_fusion for TE < 2.3.0. Please '
     'install TE >= 2.3.0', 'version-mismatch', _MAIN),
    ('rotary_interleaved does not work with multi_latent_attention.', 'launch-args', _MAIN),
    ('self.linear_num_key_heads={} must be a multiple of '
     '(self.tensor_model_parallel_size={} * self.context_parallel_size={}).', 'launch-args', _MAIN),
    ('self.linear_num_value_heads={} must be a multiple of '
     '(self.tensor_model_parallel_size={} * self.context_parallel_size={}).', 'launch-args', _MAIN),
    ('shared_experts recompute cannot work with --moe-shared-expert-overlap.', 'launch-args', _MAIN),
    ('use_te_activation_func must be False when activation_func_clamp_value is not '
     'None for SwiGLU', 'launch-args', _MAIN),
    ('vLLM Triton fused MoE only supports BF16. Set inference_grouped_gemm_backend to '
     "'torch' for MXFP8.", 'launch-args', _MAIN),
    ('virtual_pipeline_model_parallel_size conflicts with '
     'pipeline_model_parallel_layout, (self.virtual_pipeline_model_parallel_size={}, '
     'detected_vpp_size={})', 'launch-args', _MAIN),
    ('--decoupled-lr and --decoupled-min-lr is not supported in legacy models.', 'launch-args', 'core_r0.10.0'),
    ('--fp8-param-gather only supported with distributed optimizer', 'launch-args', 'core_r0.10.0'),
    ('--overlap-param-gather only supported with MCore models', 'launch-args', 'core_r0.10.0'),
    ('--overlap-param-gather only supported with distributed optimizer', 'launch-args', 'core_r0.10.0'),
    ('--rotary-interleaved does not work with rope_fusion.', 'launch-args', 'core_r0.10.0'),
    ('--rotary-interleaved is not supported in legacy models.', 'launch-args', 'core_r0.10.0'),
    ('--use-dist-ckpt is not supported in legacy models.', 'launch-args', 'core_r0.10.0'),
    ('--use-torch-fsdp2 requires --ckpt-format torch_dist', 'launch-args', 'core_r0.10.0'),
    ('Context parallelism is not supported in legacy models.', 'launch-args', 'core_r0.10.0'),
    ('Cross Entropy Fusion is currently not deterministic.', 'launch-args', 'core_r0.10.0'),
    ('Currently GroupedGEMM for MoE only supports bf16 dtype.', 'launch-args', 'core_r0.10.0'),
    ('Currently only global checkpoints are supported', 'launch-args', 'core_r0.10.0'),
    ('Expert parallelism is not supported with fp16 training.', 'launch-args', 'core_r0.10.0'),
    ('Flash attention can not be used in deterministic mode.', 'launch-args', 'core_r0.10.0'),
    ('If non-MOE encoder shares first decoder pipeline rank it must have the same TP '
     'as the decoder.', 'launch-args', 'core_r0.10.0'),
    ('Model Spec must be None when using MoEs', 'launch-args', 'core_r0.10.0'),
    ('NCCL_ALGO must be one of {}.', 'launch-args', 'core_r0.10.0'),
    ('Number of layers per pipeline stage must be divisible by number of layers per '
     'virtual pipeline stage', 'launch-args', 'core_r0.10.0'),
    ("Retro args must be prefixed with '--retro-*', for consistent styling. Please fix "
     "'{}'.", 'launch-args', 'core_r0.10.0'),
    ('Retro project dir missing config.json.', 'launch-args', 'core_r0.10.0'),
    ('Using async gradient all reduce requires setting the environment variable '
     'CUDA_DEVICE_MAX_CONNECTIONS to 1', 'launch-args', 'core_r0.10.0'),
    ('Using sequence parallelism requires setting the environment variable '
     'CUDA_DEVICE_MAX_CONNECTIONS to 1', 'launch-args', 'core_r0.10.0'),
    ('We do not support encoders with more TP than the decoder.', 'launch-args', 'core_r0.10.0'),
    ('Yaml config is not supported with legacy models.', 'launch-args', 'core_r0.10.0'),
    ('args.train_samples should be auto-loaded from the retro config.', 'launch-args', 'core_r0.10.0'),
    ("context_parallel and expert_model_parallel can't be used with tp-pp-dp mapping.", 'launch-args', 'core_r0.10.0'),
    ('expected no batch-size rampup for iteration-based training', 'launch-args', 'core_r0.10.0'),
    ('retro currently does not support pipeline parallelism.', 'launch-args', 'core_r0.10.0'),
    ('retro currently does not support sequence parallelism.', 'launch-args', 'core_r0.10.0'),
    ('world size ({}) is not divisible by total_model_size (encoder_model_size={} + '
     'decoder_model_size={})', 'launch-args', 'core_r0.10.0'),
    ('Can not use sequence paralllelism without tensor parallelism', 'launch-args', 'core_r0.10.0'),
    ('When using expert parallelism and tensor parallelism, sequence parallelism must '
     'be used', 'launch-args', 'core_r0.10.0'),
    ('decoder world_size ({}) is not divisible by '
     'expert_tensor_model_pipeline_parallel size ({})', 'launch-args', 'core_r0.10.0'),
    ('FP8 inference is currently not support with flash decoding.', 'launch-args', 'core_r0.10.0'),
    ('When bias_activation_fusion is True, activation function should be either gelu '
     'or swiglu', 'launch-args', 'core_r0.10.0'),
    ('alltoall_seq dispatcher not support different TP size for MoE and Dense layer.', 'launch-args', 'core_r0.10.0'),
    ('apply_rope_fusion is not available. Please install TE >= 1.4 or Apex.', 'version-mismatch', 'core_r0.10.0'),
    ('moe_expert_capacity_factor only works with alltoall token dispatcher', 'launch-args', 'core_r0.10.0'),
    ('moe_expert_capacity_factor only works with aux_loss or none load balancing', 'launch-args', 'core_r0.10.0'),
    ('moe_shared_expert_overlap only works with alltoall token dispatcher.', 'launch-args', 'core_r0.10.0'),
    ('num_layers: {} must be divisible by virtual_model_parallel_size {}', 'launch-args', 'core_r0.10.0'),
    ('num_query_groups ({}) must be a multiple of tensor_model_parallel_size ({}).', 'launch-args', 'core_r0.10.0'),
    ('rotary_interleaved does not work with apply_rope_fusion.', 'launch-args', 'core_r0.10.0'),
    ('--overlap-grad-reduce should be turned on when using --overlap-param-gather', 'launch-args', 'core_r0.8.0'),
    ('Distributed checkpointing does not work with decoupled LR yet.', 'launch-args', 'core_r0.8.0'),
    ('distributed recompute activations are supported for pytorch v1.10 and above '
     '(Nvidia Pytorch container >= 21.07). Current pytorch version is v{}.{}.', 'version-mismatch', 'core_r0.8.0'),
    ('number of layers should be divisible by the pipeline parallel size', 'launch-args', 'core_r0.8.0'),
    ('split rank needs to be less than pipeline model parallel size ({})', 'launch-args', 'core_r0.8.0'),
    ('world size ({}) is not divisible by tensor model parallel size ({})', 'launch-args', 'core_r0.8.0'),
    ('world size ({}) is not divisible by tensor parallel size ({}) times pipeline '
     'parallel size ({}) times context parallel size ({})', 'launch-args', 'core_r0.8.0'),
    ('Wgrad deferral limit should be greater than or equal to 0 when this optimization '
     'is enabled!', 'launch-args', 'core_r0.8.0'),
    ('The ep and dp must be adjacent in order ({}).', 'launch-args', 'core_r0.8.0'),
    ('data_parallel_size ({}) is not divisible by expert_model_parallel_size', 'launch-args', 'core_r0.8.0'),
    ('world_size ({}) is not divisible by tensor_model_parallel_size ({}) x '
     'pipeline_model_parallel_size ({}) x context_parallel_size ({})', 'launch-args', 'core_r0.8.0'),
    ('Moe extended TP parallelism only applies to allgather based token dispatcher.', 'launch-args', 'core_r0.8.0'),
    ('When using recompute_granuarlity: {} must be "full" or "selective".', 'launch-args', 'core_r0.8.0'),
    ('ffn_hidden_size: {} must be divisible by extended_tp_size {}', 'launch-args', 'core_r0.8.0'),
    ('cannot train with both fp8 e4m3 and hybrid formatting', 'launch-args', '23.04'),
    ('number of layers is not divisible by number of layers per virtual pipeline stage', 'launch-args', '23.04'),
    ('pipeline-model-parallel size should be greater than 2 with interleaved schedule', 'launch-args', '23.04'),
    ('transformer-engine not yet approved for fp16 training and inference', 'launch-args', '23.04'),
    ('transformer-engine required for fp8 training and inference', 'launch-args', '23.04'),
    ('world size is not divisible by tensor parallel size ({}) times pipeline parallel '
     'size ({})', 'launch-args', '23.04'),
    ('world_size ({}) is not divisible by tensor_model_parallel_size ({}) x '
     'pipeline_model_parallel_size ({})', 'launch-args', '23.04'),
)
