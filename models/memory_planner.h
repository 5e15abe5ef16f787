// MemoryPlanner: how much of a GPU the KV cache gets, in blocks (DESIGN.md §3, REFERENCE.md §1.2).
//
// budget = memory * gpu_memory_utilization; KV = budget - weights/rank - LoRA slots/rank -
// activation peak of the profiling run (grows with max_num_batched_tokens) - non-torch memory;
// blocks = floor(KV / (block_size * kv_bytes_per_token_per_rank)). Per rank: every rank of a TP
// group holds the same.
#ifndef SERVESIM_MODELS_MEMORY_PLANNER_H_
#define SERVESIM_MODELS_MEMORY_PLANNER_H_

#include <cstdint>

#include "models/deployment.h"

namespace servesim::models {

struct MemoryPlan {
  double device_bytes = 0;      // GPU memory
  double budget_bytes = 0;      // device_bytes * gpu_memory_utilization
  double weight_bytes = 0;      // per rank
  double activation_bytes = 0;  // profiling-run activation peak, per rank
  double non_torch_bytes = 0;   // per rank
  double lora_bytes = 0;        // per rank, the LoRA slots' stacked buffers (models/lora_shapes.h)
  double kv_bytes = 0;          // per rank, what is left for the KV cache
  int64_t kv_bytes_per_token = 0;  // per rank
  int64_t num_blocks = 0;
  int64_t kv_tokens = 0;  // num_blocks / kv_cache_groups * block_size
};

struct MemoryPlanOptions {
  double gpu_memory_utilization = 0.9;
  int block_size = 16;
  int max_num_batched_tokens = 8192;
  int max_num_seqs = 1024;
  // If > 0, overrides the computed block count (like vLLM's --num-gpu-blocks-override).
  int64_t num_gpu_blocks_override = 0;
  // Hybrid KV cache (sim/replica/engine_config.h): layers per block (0 = all the stage's layers)
  // and KV cache groups sharing the pool (1 + sliding groups). vLLM reports the cache as
  // num_blocks / groups · block_size tokens (kv_cache_utils, "GPU KV cache size").
  int64_t kv_layers_per_block = 0;
  int kv_cache_groups = 1;
  // --enable-lora: max_loras slots of max_lora_rank, allocated with the weights before the KV
  // cache is sized (models/lora_shapes.h). 0 slots: LoRA off.
  int lora_slots = 0;
  int lora_rank = 0;
  // MLA models: each layer's cache entry (kv_lora_rank + qk_rope_head_dim elements) rounded up
  // to a multiple of this many bytes; 0 = unpadded. vLLM's V0 CacheEngine aligned it to 256 B
  // (VLLM_MLA_CUDA_MEM_ALIGN_KV_CACHE, default on: 576 bf16 elements = 1,152 B held in 1,280 B)
  // until PR #14842 (vLLM 0.8) removed the alignment.
  int mla_entry_align_bytes = 0;
  // MLA models: the decode weights vLLM 0.7's V0 MLA backend built by matrix absorption and kept
  // beside the raw ones (vllm/attention/backends/mla/utils.py, process_weights_after_loading;
  // "we end up with absorbed weights for decode and another copy of raw weights for prefill").
  // Per layer and rank, H = heads / TP, q_in = q_lora_rank (hidden without query compression):
  //   W_QR   q_in × H·rope          in the model dtype ("small, we don't bother requantizing")
  //   W_Q_UK q_in × H·kv_lora_rank  1 byte under fp8 weights (requantized), else the model dtype
  //   W_UV_O H·kv_lora_rank × hidden, likewise
  //   and, under fp8, the dequantized kv_b_proj (H·(nope + v) × kv_lora_rank, model dtype) that
  //   W_UK and W_UV stay views of — held with or without this flag: every release's MLA backend
  //   dequantizes it after loading (get_and_maybe_dequant_weights; bf16 weights stay views).
  //   Their fp8 scales (one float per 128 × 128 block, under 20 KB a layer) are not counted.
  bool mla_absorbed_weights = false;
  // MoE models: vLLM's fused-MoE workspace (fused_experts_impl, fused_marlin_moe) for the
  // profiling run's tokens, per routed token of N = 2·I_part (gate_up) and K = hidden elements:
  // cache1 (N) and cache3 (K) share one buffer of max(N, K) since PR #13625 (vLLM 0.8), cache2
  // (N/2) apart; before it the three were separate (N + N/2 + K). See memory_planner.cpp.
  bool fused_moe_separate_caches = false;
  // MoE models with unquantized (16-bit) experts: the Triton experts run through the modular
  // kernel (vLLM PR #31052, from 0.14: TritonExperts.workspace_shapes), whose two workspaces hold
  // max(N/2, K) and max(N, K) elements per routed token instead.
  bool fused_moe_modular_workspace = false;
};

// The bytes one rank of an MLA model holds per layer beside its checkpoint weights (0 for other
// models): under fp8 weights the dequantized kv_b_proj (H·(nope + v) × kv_lora_rank in the model
// dtype, H = heads / tp) that W_UK and W_UV are views of — every release's MLA backend makes it
// once after loading (get_and_maybe_dequant_weights in process_weights_after_loading: "we just
// store fp16/bf16 copies"; under bf16 weights they are views of kv_b_proj) — plus, with
// `absorbed_weights`, vLLM 0.7's absorbed decode weights (MemoryPlanOptions::mla_absorbed_weights).
double mla_extra_weight_bytes_per_layer(const Deployment& d, int tp, bool absorbed_weights);

// Throws ConfigError when the model does not fit: the message says how much memory is missing and
// the smallest tensor-parallel size that fits (or that none up to 8 does).
MemoryPlan plan_memory(const Deployment& d, const MemoryPlanOptions& opts);

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_MEMORY_PLANNER_H_
