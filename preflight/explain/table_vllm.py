"""vLLM's own launch errors as a code table, keyed by normalized template (``table_templates``): what vLLM raises or
logs when a server or an offline engine does not come up for a cluster, resource or configuration reason.

Mined from vLLM's source, not from user threads: the memory checks of the workers and of the KV cache
(``vllm/v1/worker/gpu_worker.py``, ``vllm/v1/core/kv_cache_utils.py``; V0's ``vllm/worker/worker.py``), the parallel
sizes against the model and the devices (``vllm/config`` ``verify_with_parallel_config``; V0's
``vllm/executor/multiproc_gpu_executor.py`` / ``mp_distributed_executor.py``; the V1 worker's local_world_size
check), Ray's placement (``vllm/v1/executor/ray_utils.py``, V0's ``vllm/executor/ray_utils.py`` and
``ray_distributed_executor.py``), the worker and engine processes (``vllm/v1/executor/multiproc_executor.py``,
``ray_executor_v2.py``, ``vllm/v1/engine/core.py`` / ``core_client.py`` / ``utils.py``, V0's
``multiproc_worker_utils.py``), the NCCL library (``vllm/distributed/device_communicators/pynccl_wrapper.py``), the
platform (``vllm/config`` ``DeviceConfig``), ``vllm/envs.py`` (VLLM_PORT) and the dtype check of V0's worker. Each
row keeps the wordings of the versions that changed it (V0 0.4-0.10, V1; ``model's`` / ``models's``).

Categories: memory for the KV cache or at startup ``oom``; more workers than visible GPUs, a Ray cluster or
placement group without the GPUs asked for, a driver node without one ``device-mapping``; heads / layers that a
parallel size does not divide, bfloat16 on a GPU older than sm_80, a VLLM_PORT that is not a number
``launch-args``; nodes that report the same IP to Ray ``wrong-interface``; a libnccl that does not load
``version-mismatch``; no platform found (no GPU or driver library visible to the process) ``driver``. A worker or
engine process dying, or failing to start, only reports the first cause in that process's own output (``unknown``,
not a root cause); so does a headless data-parallel engine that never hears from its front-end. vLLM has no
port-in-use check of its own: a taken port reaches the log as torch's or ZeroMQ's error (``table_c10d``, the
catalog).

>>> [d.code.category for d in TABLE.decode("ValueError: No available memory for the cache blocks. Try increasing "
...     "`gpu_memory_utilization` when initializing the engine.")]
['oom']
>>> [(d.code.category, d.code.root_cause) for d in TABLE.decode("(EngineCore_DP0 pid=812) ERROR 05-06 16:54:45 "
...     "[multiproc_executor.py:123] Worker proc VllmWorker-1 died unexpectedly, shutting down executor.")]
[('unknown', False)]
>>> [d.code.name for d in TABLE.decode("ValueError: Current node has no GPU available. current_node_resource={'CPU':"
...     " 32.0}. vLLM engine cannot start without GPU. Make sure you have at least 1 GPU available in a node "
...     "current_node_id='ab12' current_ip='10.0.0.5'.")]
['Ray: no GPU on this node']
"""

from __future__ import annotations

from preflight.explain.table_templates import Row, build

COMMIT = "0057add1b03e0d7e9f4c649967fda83346e61794"
SOURCE = f"https://github.com/vllm-project/vllm/tree/{COMMIT}/vllm"
VERSION = "vLLM main 0057add (V1 engine), with the V0 wordings of 0.4-0.10"

_GPU_MEMORY = ("gpu.devices.processes", "npu.processes")
_KV = ("Raise --gpu-memory-utilization, lower --max-model-len (or --max-num-seqs), free the GPU of other processes "
       "(`nvidia-smi`), use a quantized model or spread it over more GPUs (--tensor-parallel-size).")
_VISIBLE = ("Make --tensor-parallel-size x --pipeline-parallel-size (x data parallel size) match the GPUs the "
            "process sees (CUDA_VISIBLE_DEVICES, the container's --gpus / device requests), or expose more GPUs.")
_RAY = ("Check `ray status` / `ray list nodes`: every node must have joined the cluster with its GPUs (`ray start "
        "--num-gpus`), the engine must start on a node with a GPU, and the parallel sizes must not ask for more "
        "GPUs than the cluster has.")
_CHILD = ("Read the failing process's own output above this line (its `(VllmWorker rank=N pid=...)` / "
          "`(EngineCore_DP0 pid=...)` lines): the first traceback there is the cause.")

ROWS: tuple[Row, ...] = (
    # --- GPU memory --------------------------------------------------------------------------------------------
    Row("no memory for the KV cache", "oom",
        "After the weights and the profiling run nothing was left for the KV cache within --gpu-memory-utilization "
        "(the model alone fills the budget, or another process holds part of the GPU).", _KV,
        ("No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
         "the engine.", "No available memory for the cache blocks"), checks=_GPU_MEMORY),
    Row("max model len larger than the KV cache", "oom",
        "The KV cache vLLM could allocate cannot hold one request of --max-model-len tokens (the model's own "
        "maximum when not given).", _KV,
        ("To serve at least one request with the model's max seq len ({}), ({} GiB KV cache is needed, which is "
         "larger than the available KV cache memory ({} GiB).",
         "To serve at least one request with the models's max seq len ({}), ({} GiB KV cache is needed, which is "
         "larger than the available KV cache memory ({} GiB).",
         "The model's max seq len ({}) is larger than the maximum number of tokens that can be stored in KV cache "
         "({}). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the "
         "engine."), checks=_GPU_MEMORY),
    Row("free memory below gpu_memory_utilization", "oom",
        "At startup the GPU had less free memory than --gpu-memory-utilization asks for: another process (a "
        "previous server, another vLLM on the same GPU, a training job) holds part of it.",
        "Free the GPU (`nvidia-smi`: a leftover server), lower --gpu-memory-utilization to what is free, or give "
        "each vLLM instance its own GPU.",
        ("Free memory on device ({}/{} GiB) on startup is less than desired GPU memory utilization ({}, {} GiB).",),
        checks=_GPU_MEMORY),
    Row("memory profiling disturbed", "oom",
        "Free GPU memory rose while vLLM profiled the model: another process on the same GPU released memory "
        "meanwhile (or memory of a previous instance was not cleaned up), so the KV cache size cannot be trusted.",
        "Run vLLM alone on its GPUs (its own container), start it after the other process settled, or set "
        "--kv-cache-memory-bytes to skip the profiling.",
        ("Error in memory profiling. Initial free memory {}, current free memory {}.",), checks=_GPU_MEMORY),
    # --- parallel sizes against the model and the devices ------------------------------------------------------
    Row("attention heads not divisible by TP", "launch-args",
        "--tensor-parallel-size does not divide the model's attention heads, so the heads cannot be split.",
        "Choose a tensor parallel size that divides the head count (config.json num_attention_heads) and use the "
        "other GPUs for pipeline or data parallelism.",
        ("Total number of attention heads ({}) must be divisible by tensor parallel size ({}).",), checks=()),
    Row("layers not divisible by PP", "launch-args",
        "--pipeline-parallel-size does not divide the model's hidden layers (vLLM before uneven pipeline "
        "partitions).", "Choose a pipeline parallel size that divides num_hidden_layers, or set "
        "VLLM_PP_LAYER_PARTITION on a vLLM that has it.",
        ("Total number of hidden layers ({}) must be divisible by pipeline parallel size ({}).",), checks=()),
    Row("bfloat16 on a GPU before sm_80", "launch-args",
        "The model's dtype is bfloat16 and this GPU (Volta, Turing: compute capability below 8.0) has no "
        "bfloat16.", "Pass --dtype half (float16), or run on an Ampere or newer GPU.",
        ("Bfloat16 is only supported on GPUs with compute capability of at least 8.0.",),
        checks=("gpu.devices.count",)),
    Row("VLLM_PORT not a number", "launch-args",
        "VLLM_PORT is not a port number; a URI there is what Kubernetes injects for a Service named `vllm` "
        "(VLLM_PORT=tcp://10.0.0.1:8000).", "Rename the Service (not `vllm`), set enableServiceLinks: false, or "
        "set VLLM_PORT to a number.",
        ("VLLM_PORT '{}' appears to be a URI.", "VLLM_PORT '{}' must be a valid integer"), checks=()),
    Row("more workers than local GPUs", "device-mapping",
        "The tensor (x pipeline) parallel size asks for more worker processes on this node than GPUs the process "
        "sees.", _VISIBLE,
        ("please set tensor_parallel_size ({}) to less than max local gpu count ({})",
         "please ensure that world_size ({}) is less than than max local gpu count ({})",
         "please set tensor_parallel_size to less than max local gpu count",
         "local_world_size ({}) must be less than or equal to the number of visible devices ({}).",
         "DP adjusted local rank {} is out of bounds."), checks=("gpu.devices.count", "nccl.visible_devices")),
    # --- Ray placement -------------------------------------------------------------------------------------------
    Row("Ray: fewer GPUs than the world size", "device-mapping",
        "The Ray cluster or the placement group vLLM was given has fewer GPU bundles than the world size "
        "(tensor x pipeline parallel size).", _RAY,
        ("The number of required {} exceeds the total number of available {} in the placement group.",),
        checks=("gpu.devices.count",)),
    Row("Ray: placement group not ready", "device-mapping",
        "Ray could not reserve the GPUs of the placement group in time: the cluster has fewer free GPUs than asked "
        "for (nodes not joined, GPUs held by other actors), or the nodes' IPs do not match VLLM_HOST_IP.", _RAY,
        ("Cannot provide a placement group requiring {} GPUs (placement_group_specs={}) within {} seconds.",
         "Cannot provide a placement group of placement_group_specs={} within {} seconds."),
        checks=("gpu.devices.count",)),
    Row("Ray: no GPU on this node", "device-mapping",
        "The node the engine runs on offers Ray no free GPU, and vLLM needs one there for its first worker.", _RAY,
        ("Current node has no {} available. current_node_resource={}. vLLM engine cannot start without {}.",),
        checks=("gpu.devices.count",)),
    Row("Ray: driver node not in the placement group", "device-mapping",
        "The placement group has no bundle on the node the engine runs on (its GPUs are all elsewhere).", _RAY,
        ("driver node id {} is not included in a placement group {}.",), checks=("gpu.devices.count",)),
    Row("Ray: world size above local GPUs (warning)", "device-mapping",
        "The world size is larger than the GPUs this node sees; right on a multi-node Ray cluster, a mistake on one "
        "node.", _VISIBLE, ("Total GPU requirement (world_size={}) exceeds locally visible GPUs ({}).",),
        root_cause=False, checks=("gpu.devices.count",)),
    Row("Ray: nodes share an IP", "wrong-interface",
        "Ray's workers reported fewer distinct IP addresses than nodes: VLLM_HOST_IP set to the same address on "
        "every node, or the nodes' detected addresses (containers on a bridge network, a host name mapped to "
        "loopback) are not their own.",
        "Start every node's `ray start` with its own routable --node-ip-address and set VLLM_HOST_IP on each node to "
        "that node's address (not copied from the head).",
        ("Every node should have a unique IP address. Got {} nodes with node ids {} and {} unique IP addresses {}.",),
        checks=("net.interface", "net.hostname")),
    # --- libraries and the platform -------------------------------------------------------------------------------
    Row("NCCL library not loaded", "version-mismatch",
        "vLLM's own NCCL wrapper could not load libnccl (missing, corrupt, or built for another CUDA / platform).",
        "Install the NCCL that matches torch's CUDA (the nvidia-nccl-cu12 wheel torch pins), or point "
        "VLLM_NCCL_SO_PATH at a libnccl.so.2 that loads (`python -c 'import ctypes; ctypes.CDLL(PATH)'`).",
        ("Failed to load NCCL library from {}",), checks=("versions", "versions.nccl")),
    Row("no device platform", "driver",
        "vLLM found no usable accelerator platform: no GPU or driver library is visible to the process (a container "
        "without --gpus or the NVIDIA runtime, LD_LIBRARY_PATH without the driver's libraries), a vLLM build for "
        "another device, or the device's torch plugin failing to import (read the lines above).",
        "Check `nvidia-smi` and `python -c 'import torch; print(torch.cuda.is_available())'` in the same "
        "environment; run the container with the GPU runtime; on NPUs check that torch_npu imports.",
        ("Failed to infer device type",), checks=("gpu.devices.driver", "gpu.devices.count")),
    # --- worker and engine processes: symptoms -------------------------------------------------------------------
    Row("worker process died", "unknown",
        "A worker process exited while the executor ran; its own output holds the cause (a crash, an OOM kill, an "
        "NCCL error).", _CHILD,
        ("Worker proc {} died unexpectedly, shutting down executor.",
         "RayWorkerProc rank={} died unexpectedly, shutting down executor.",
         "Worker {} pid {} died, exit code: {}"), root_cause=False, checks=()),
    Row("worker failed to start", "unknown",
        "A worker process raised while it initialised its device, distributed group or model.", _CHILD,
        ("WorkerProc initialization failed due to an exception in a background process. See stack trace for root "
         "cause.", "WorkerProc failed to start."), root_cause=False, checks=()),
    Row("worker call failed", "unknown", "A call on the workers failed; the worker's traceback is above.", _CHILD,
        ("Worker failed with error '{}', please check the stack trace above for the root cause",),
        root_cause=False, checks=()),
    Row("engine core failed to start", "unknown",
        "The engine core process failed while it set up the executor, the KV cache or the model.", _CHILD,
        ("Engine core initialization failed. See root cause above.", "EngineCore failed to start."),
        root_cause=False, checks=()),
    Row("engine core died", "unknown",
        "The engine core process exited while the front-end ran (a crash, an OOM or SIGBUS kill).", _CHILD,
        ("Engine core proc {} died unexpectedly, shutting down client.",), root_cause=False, checks=()),
    Row("front-end handshake timed out", "master-unreachable",
        "A data-parallel engine got no answer from its front-end (API server) within the handshake timeout: the "
        "front-end's address is not reachable from this node, or the front-end or another engine failed or is "
        "still loading.",
        "Check that --data-parallel-address / --data-parallel-rpc-port reach the head node from this one, then "
        "read the head's and the other engines' logs for their first error.",
        ("Did not receive response from front-end process within {} minutes",), root_cause=False),
)

TABLE = build("vllm", SOURCE, VERSION, ROWS)
