"""The rows of ``table_megatron`` from Megatron Core's checks of the model and parallel config: the message of every
``assert`` and raised ``ValueError`` / ``RuntimeError`` / ``NotImplementedError`` in
``megatron/core/transformer/transformer_config.py`` and ``megatron/core/model_parallel_config.py``, and the size
checks of ``megatron/core/parallel_state.py``, read at main d98e8a6 (2026-08-22) and at the tags core_r0.10.0,
core_r0.8.0 and 23.04 (a wording an older version has and main no longer does is kept, tagged with its version);
``{}`` is a value. Left out: messages of fewer than five words, checks of the GPU architecture and parallel_state's
"not initialized" checks (a program's own order of calls). The argument checks are ``table_megatron_rows``.

Category: a check that names a package and the version it needs (Transformer Engine, PyTorch...) is
``version-mismatch``; every other check is a model or parallel config that does not fit together (``launch-args``).
"""

from __future__ import annotations

_MAIN = "main"

# (template, category, the newest version that words it so)
CONFIG_CHECKS: tuple[tuple[str, str, str], ...] = (
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
    ('Moe extended TP parallelism only applies to allgather based token dispatcher.', 'launch-args', 'core_r0.8.0'),
    ('When using recompute_granuarlity: {} must be "full" or "selective".', 'launch-args', 'core_r0.8.0'),
    ('ffn_hidden_size: {} must be divisible by extended_tp_size {}', 'launch-args', 'core_r0.8.0'),
    ('Cannot defer embedding wgrad compute when gradient accumulation fusion is not used', 'launch-args', _MAIN),
    ('Cannot defer embedding wgrad compute when pipeline model parallel is not used', 'launch-args', _MAIN),
    ('Cannot use sequence parallelism without tensor parallelism', 'launch-args', _MAIN),
    ('Pipeline parallel communication overlapping in warmup and flush is only '
     'compatible with overlap_p2p_comm but not batch_p2p_comm.', 'launch-args', _MAIN),
    ('Wgrad deferral limit should be greater than or equal to 0 when it is enabled!', 'launch-args', _MAIN),
    ('When using pipeline parallelism, pipeline_dtype must be specified', 'launch-args', _MAIN),
    ('Can not use sequence paralllelism without tensor parallelism', 'launch-args', 'core_r0.10.0'),
    ('When using expert parallelism and tensor parallelism, sequence parallelism must '
     'be used', 'launch-args', 'core_r0.10.0'),
    ('Wgrad deferral limit should be greater than or equal to 0 when this optimization '
     'is enabled!', 'launch-args', 'core_r0.8.0'),
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
    ('decoder world_size ({}) is not divisible by '
     'expert_tensor_model_pipeline_parallel size ({})', 'launch-args', 'core_r0.10.0'),
    ('The ep and dp must be adjacent in order ({}).', 'launch-args', 'core_r0.8.0'),
    ('data_parallel_size ({}) is not divisible by expert_model_parallel_size', 'launch-args', 'core_r0.8.0'),
    ('world_size ({}) is not divisible by tensor_model_parallel_size ({}) x '
     'pipeline_model_parallel_size ({}) x context_parallel_size ({})', 'launch-args', 'core_r0.8.0'),
    ('world_size ({}) is not divisible by tensor_model_parallel_size ({}) x '
     'pipeline_model_parallel_size ({})', 'launch-args', '23.04'),
)
