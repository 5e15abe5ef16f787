// EngineConfig: the `vllm serve` scheduler and cache flags that shape one replica's behaviour.
//
// Fields left at 0 mean "vLLM's default", resolved by resolve_engine_config() from the GPU as vLLM
// V1 does (REFERENCE.md §1). The resolved config is a separate value; nothing writes back into the
// user's config.
#ifndef SERVESIM_SIM_REPLICA_ENGINE_CONFIG_H_
#define SERVESIM_SIM_REPLICA_ENGINE_CONFIG_H_

#include <cstdint>
#include <limits>
#include <string>

#include "hardware/gpu_spec.h"
#include "models/model_spec.h"
#include "sim/replica/lora_config.h"
#include "sim/replica/spec_decode.h"

namespace servesim::sim {

struct EngineConfig {
  // --vllm-version: the vLLM release whose defaults apply (sim/replica/vllm_version.h). The
  // defaults below marked "version" come from its row.
  std::string vllm_version = "0.19";
  // --async-scheduling / --no-async-scheduling: overlap the host work of step k+1 with the GPU
  // work of step k (vLLM's AsyncScheduler). -1 = the version's default; resolved to 0 or 1.
  int async_scheduling = -1;
  // --max-num-seqs: cap on running requests. 0 = the version's default; vLLM V1 >= 0.9: 1024 on
  // GPUs with >= 70 GiB whose name is not an A100, else 256 (EngineArgs.get_batch_defaults,
  // OPENAI_API_SERVER).
  int max_num_seqs = 0;
  // --max-num-batched-tokens: per-step token budget. 0 = 8192 on >= 70 GiB non-A100 GPUs, else
  // 2048 (same source).
  int max_num_batched_tokens = 0;
  // --block-size: tokens per KV block. vLLM CUDA default 16.
  int block_size = 16;
  // --gpu-memory-utilization: fraction of device memory vLLM may use. NaN = not given: the
  // version's default (0.9 in every release modelled); an explicit 0 is refused like any value
  // outside (0, 1].
  double gpu_memory_utilization = std::numeric_limits<double>::quiet_NaN();
  // --enable-prefix-caching / --no-enable-prefix-caching. V1 default on.
  bool enable_prefix_caching = true;
  // --long-prefill-token-threshold: per-request per-step chunk cap. 0 = off.
  int long_prefill_token_threshold = 0;
  // --max-model-len: longest prompt + output accepted. 0 = the model's max_position_embeddings.
  int max_model_len = 0;
  // --scheduling-policy: "fcfs" or "priority" (lower value first, ties by arrival).
  std::string scheduling_policy = "fcfs";
  // --num-gpu-blocks-override: force the KV block count (0 = computed from memory).
  int64_t num_gpu_blocks_override = 0;
  // --disable-hybrid-kv-cache-manager: sliding-window layers keep blocks for every token, as
  // vLLM does with this flag (and before 0.9).
  bool disable_hybrid_kv_cache_manager = false;
  // --enable-chunked-prefill / --no-enable-chunked-prefill. -1 = the version's default: on for
  // V1; on V0 rows (0.6, 0.7) only when max_model_len > 32,768 (EngineArgs.create_engine_config,
  // use_long_context). Off is modelled on V0 rows only, where it selects V0's prefill-first
  // scheduler (docs/semantics.md, "V0 scheduler"). Resolved to 0 or 1.
  int enable_chunked_prefill = -1;
  // --num-scheduler-steps: V0 multi-step scheduling (vLLM 0.6-0.7; gone in V1): the scheduler runs
  // once per this many decode steps. 1 = off; > 1 needs a V0 row with chunked prefill off.
  int num_scheduler_steps = 1;
  // --kv-offloading-size: GiB of host memory for vLLM's native KV offloading, the total over the
  // TP x PP ranks (sim/replica/kv_offload.h). 0 = off.
  double kv_offloading_size = 0;
  // --kv-offloading-backend: "native" (vLLM's OffloadingConnector); "" = native.
  std::string kv_offloading_backend;
  // --speculative-config: speculative decoding (sim/replica/spec_decode.h); off by default.
  // Resolved with the model's defaults (resolve_spec_decode). V1 rows only; with it on, async
  // scheduling is off unless asked for, and asking for it is refused (not modelled together).
  SpecDecode spec;
  // --enable-lora and its flags (sim/replica/lora_config.h); resolved by resolve_lora_config.
  LoraConfig lora;

  // Resolved, not flags: the KV cache layout of vLLM's hybrid KV cache manager for a model with
  // sliding-window layers (vllm/v1/core/kv_cache_utils.py, docs.vllm.ai design/
  // hybrid_kv_cache_manager). The layers are grouped `kv_layers_per_block` at a time (the number
  // of full-attention layers); one block of the shared pool holds block_size tokens of one group;
  // a request holds one block per block_size tokens for the full-attention group and, for each
  // of the `kv_sliding_groups` sliding groups, blocks for its last `kv_sliding_window` tokens
  // only. 0 / 0 / 0: every layer in every block (no sliding layers, a version without the
  // hybrid manager, more full than sliding layers, or pipeline parallelism; docs/semantics.md).
  int64_t kv_layers_per_block = 0;
  int kv_sliding_groups = 0;
  int64_t kv_sliding_window = 0;
  // Resolved, not a flag: the attention window W of the model's sliding-window layers
  // (ModelSpec::attention_window(); 0: none), whatever the KV layout. The replica fills each
  // step's windowed BatchShape sums with it.
  int64_t attention_window = 0;
  // Resolved, not a flag (sim/replica/linear_state_config.h): the groups of Gated DeltaNet layers
  // of vLLM's hybrid KV-cache manager. Every running request holds one block of the pool per
  // group (its state page, padded to the attention page) from its admission until it finishes
  // or is preempted. 0: no linear-attention layers.
  int kv_mamba_groups = 0;
  // Resolved by resolve_kv_offload (sim/replica/kv_offload.h): the CPU tier's blocks (0 = no
  // offloading), the bytes of one block on one GPU, and the GPU's host link.
  int64_t kv_offload_blocks = 0;
  double kv_offload_block_bytes = 0;
  hardware::LinkSpec kv_offload_link;
};

// Fills the defaults of config.vllm_version and checks every value; throws ConfigError naming the
// flag on nonsense (e.g. max-num-batched-tokens < max-num-seqs, utilisation outside (0, 1], an
// unknown version, --async-scheduling on a version without it).
EngineConfig resolve_engine_config(const EngineConfig& config, const hardware::GpuSpec& gpu,
                                   const models::ModelSpec& model);

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_ENGINE_CONFIG_H_
