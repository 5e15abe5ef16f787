// EngineConfig: the engine one replica runs, every `vllm serve` scheduler and cache setting with
// its value decided. It is what resolve_engine_config (sim/replica/engine_request.h) makes of an
// EngineRequest, the flags the user gave, for one deployment; the replica, the memory planner and
// the result file read it, and nothing edits it after resolution except resolve_kv_offload
// (sim/replica/kv_offload.h), which needs the memory plan made from it.
//
// No field has an "unset" value. The member defaults describe a small valid engine (vLLM 0.19's
// resolution on a GPU under 70 GiB: 256 sequences, 2048 tokens per step) for tests and tools
// that build one by hand; a replica built from a config should take it from the resolution.
#ifndef SERVESIM_SIM_REPLICA_ENGINE_CONFIG_H_
#define SERVESIM_SIM_REPLICA_ENGINE_CONFIG_H_

#include <cstdint>
#include <string>

#include "hardware/gpu_spec.h"
#include "sim/replica/lora_config.h"
#include "sim/replica/spec_decode.h"

namespace servesim::sim {

struct EngineConfig {
  // The vLLM release whose behaviour applies, as its version table names it ("0.19").
  std::string vllm_version = "0.19";
  // Host work of step k+1 overlapped with the GPU work of step k (vLLM's AsyncScheduler).
  bool async_scheduling = false;
  int max_num_seqs = 256;               // cap on running requests
  int max_num_batched_tokens = 2048;    // per-step token budget
  int block_size = 16;                  // tokens per KV block (a hybrid model's page: larger)
  double gpu_memory_utilization = 0.9;  // fraction of device memory vLLM may use, in (0, 1]
  bool enable_prefix_caching = true;
  int long_prefill_token_threshold = 0;    // per-request per-step chunk cap; 0 = no cap
  int max_model_len = 131072;              // longest prompt + output accepted
  std::string scheduling_policy = "fcfs";  // "fcfs" or "priority" (lower value first)
  int64_t num_gpu_blocks_override = 0;     // KV blocks forced by the user; 0 = from memory
  // Sliding-window layers keep blocks for every token, as vLLM does with this flag (and before
  // 0.9).
  bool disable_hybrid_kv_cache_manager = false;
  // Chunked prefill. Off only on V0 rows, where it selects V0's prefill-first scheduler
  // (docs/semantics.md, "V0 scheduler").
  bool enable_chunked_prefill = true;
  // V0 multi-step scheduling: the scheduler runs once per this many decode steps; 1 = off.
  int num_scheduler_steps = 1;
  // vLLM's native KV offloading: GiB of host memory over the TP x PP ranks (0 = off) and the
  // backend ("" = native); the tier itself is the kv_offload_* fields below.
  double kv_offloading_size = 0;
  std::string kv_offloading_backend;
  SpecDecode spec;  // speculative decoding, resolved with the model's defaults (spec_decode.h)
  LoraConfig lora;  // LoRA serving, resolved for the deployment (lora_config.h)

  // The KV cache layout of vLLM's hybrid KV cache manager for a model with sliding-window layers
  // (vllm/v1/core/kv_cache_utils.py, docs.vllm.ai design/hybrid_kv_cache_manager). The layers are
  // grouped `kv_layers_per_block` at a time (the number of full-attention layers); one block of
  // the shared pool holds block_size tokens of one group; a request holds one block per
  // block_size tokens for the full-attention group and, for each of the `kv_sliding_groups`
  // sliding groups, blocks for its last `kv_sliding_window` tokens only. 0 / 0 / 0: every layer
  // in every block (no sliding layers, a version without the hybrid manager, more full than
  // sliding layers, or pipeline parallelism; docs/semantics.md).
  int64_t kv_layers_per_block = 0;
  int kv_sliding_groups = 0;
  int64_t kv_sliding_window = 0;
  // The attention window W of the model's sliding-window layers (ModelSpec::attention_window();
  // 0: none), whatever the KV layout. The replica fills each step's windowed BatchShape sums
  // with it.
  int64_t attention_window = 0;
  // The groups of Gated DeltaNet layers of vLLM's hybrid KV-cache manager
  // (sim/replica/linear_state_config.h). Every running request holds one block of the pool per
  // group (its state page, padded to the attention page) from its admission until it finishes
  // or is preempted. 0: no linear-attention layers.
  int kv_mamba_groups = 0;
  // The CPU tier of KV offloading (resolve_kv_offload, sim/replica/kv_offload.h): its blocks
  // (0 = no offloading), the bytes of one block on one GPU, and the GPU's host link.
  int64_t kv_offload_blocks = 0;
  double kv_offload_block_bytes = 0;
  hardware::LinkSpec kv_offload_link;
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_ENGINE_CONFIG_H_
