"""The rows of ``table_megatron`` from Megatron-LM's checks of its launch arguments: the message of every ``assert``
and raised ``ValueError`` / ``RuntimeError`` / ``NotImplementedError`` in ``megatron/training/arguments.py``
(``megatron/arguments.py`` before core 0.6), read at main d98e8a6 (2026-08-22) and at the tags core_r0.10.0,
core_r0.8.0 and 23.04 (a wording an older version has and main no longer does is kept, tagged with its version);
``{}`` is a value. Left out: messages of fewer than five words and checks of the GPU architecture. Megatron Core's
config checks are ``table_megatron_core_rows``.

Category: a check that names a package and the version it needs (Transformer Engine, PyTorch, FlashInfer...) or a
package that is not installed is ``version-mismatch``; every other check is launch arguments that do not fit
together (``launch-args``).
"""

from __future__ import annotations

_MAIN = "main"

# (template, category, the newest version that words it so)
ARGUMENT_CHECKS: tuple[tuple[str, str, str], ...] = (
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
    ('--overlap-grad-reduce should be turned on when using --overlap-param-gather', 'launch-args', 'core_r0.8.0'),
    ('Distributed checkpointing does not work with decoupled LR yet.', 'launch-args', 'core_r0.8.0'),
    ('distributed recompute activations are supported for pytorch v1.10 and above '
     '(Nvidia Pytorch container >= 21.07). Current pytorch version is v{}.{}.', 'version-mismatch', 'core_r0.8.0'),
    ('number of layers should be divisible by the pipeline parallel size', 'launch-args', 'core_r0.8.0'),
    ('split rank needs to be less than pipeline model parallel size ({})', 'launch-args', 'core_r0.8.0'),
    ('world size ({}) is not divisible by tensor model parallel size ({})', 'launch-args', 'core_r0.8.0'),
    ('world size ({}) is not divisible by tensor parallel size ({}) times pipeline '
     'parallel size ({}) times context parallel size ({})', 'launch-args', 'core_r0.8.0'),
    ('cannot train with both fp8 e4m3 and hybrid formatting', 'launch-args', '23.04'),
    ('number of layers is not divisible by number of layers per virtual pipeline stage', 'launch-args', '23.04'),
    ('pipeline-model-parallel size should be greater than 2 with interleaved schedule', 'launch-args', '23.04'),
    ('transformer-engine not yet approved for fp16 training and inference', 'launch-args', '23.04'),
    ('transformer-engine required for fp8 training and inference', 'launch-args', '23.04'),
    ('world size is not divisible by tensor parallel size ({}) times pipeline parallel '
     'size ({})', 'launch-args', '23.04'),
)
