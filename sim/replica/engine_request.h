// EngineRequest: the `vllm serve` scheduler and cache flags as the user gave them (command line,
// --config file, --vary, Python keywords), and resolve_engine_config, which turns one into the
// EngineConfig a replica runs (sim/replica/engine_config.h) for a deployment, once.
//
// A flag whose vLLM default depends on the vLLM release, the GPU or the model is a std::optional:
// empty means "not given, take vLLM's default", so an explicit value equal to a default stays
// distinguishable from no value (the refusals below need that). Flags with one fixed default
// hold it. Where each default comes from (REFERENCE.md §1, vllm/engine/arg_utils.py):
//
//   async_scheduling        the release's row: on from 0.14, unavailable before 0.10; off with
//                           speculative decoding or pipeline stages (vllm_version.h)
//   enable_chunked_prefill  V1: on. V0 rows (0.6, 0.7): on only when max_model_len > 32,768
//                           (EngineArgs.create_engine_config, use_long_context)
//   enable_prefix_caching   V1 (0.8 on): on; V0 rows (0.6, 0.7): off (V0 EngineArgs'
//                           `enable_prefix_caching: bool = False`). Off in every release for a
//                           model with linear-attention (Mamba-like) layers: vLLM's EngineArgs
//                           defaults it off for hybrid models (`model_config.is_hybrid`, "the
//                           feature is still experimental")
//   max_num_seqs            V1 >= 0.9: 1024 on GPUs with >= 70 GiB whose name is not an A100,
//                           else 256; 0.8: 1024 on H100/H200 names; V0: 256
//                           (EngineArgs.get_batch_defaults, OPENAI_API_SERVER; batch_defaults())
//   max_num_batched_tokens  8192 / 2048 by the same rules; V0 without chunked prefill
//                           max(max_model_len, 2048) (V0 SchedulerConfig)
//   max_model_len           the model's max_position_embeddings (ModelConfig)
//   gpu_memory_utilization  the release's row (0.9 in every release modelled)
#ifndef SERVESIM_SIM_REPLICA_ENGINE_REQUEST_H_
#define SERVESIM_SIM_REPLICA_ENGINE_REQUEST_H_

#include <cstdint>
#include <optional>
#include <string>

#include "hardware/gpu_spec.h"
#include "models/deployment.h"
#include "models/model_spec.h"
#include "sim/replica/engine_config.h"
#include "sim/replica/lora_config.h"
#include "sim/replica/spec_decode.h"
#include "sim/replica/vllm_version.h"

namespace servesim::sim {

struct EngineRequest {
  // --vllm-version: the vLLM release whose defaults apply ("0.8.3" selects the 0.8 row).
  std::string vllm_version = kDefaultVllmVersion;
  std::optional<bool> async_scheduling;            // --async-scheduling / --no-async-scheduling
  std::optional<int> max_num_seqs;                 // --max-num-seqs
  std::optional<int> max_num_batched_tokens;       // --max-num-batched-tokens
  int block_size = 16;                             // --block-size (vLLM CUDA default)
  std::optional<double> gpu_memory_utilization;    // --gpu-memory-utilization
  std::optional<bool> enable_prefix_caching;       // --[no-]enable-prefix-caching
  int long_prefill_token_threshold = 0;            // --long-prefill-token-threshold; 0 = off
  std::optional<int> max_model_len;                // --max-model-len
  std::string scheduling_policy = "fcfs";          // --scheduling-policy: fcfs | priority
  std::optional<int64_t> num_gpu_blocks_override;  // --num-gpu-blocks-override; unset: from memory
  bool disable_hybrid_kv_cache_manager = false;    // --disable-hybrid-kv-cache-manager
  std::optional<bool> enable_chunked_prefill;      // --[no-]enable-chunked-prefill
  // --num-scheduler-steps: V0 multi-step scheduling; > 1 needs a V0 row with chunked prefill off.
  int num_scheduler_steps = 1;
  double kv_offloading_size = 0;      // --kv-offloading-size: GiB over the TP x PP ranks; 0 = off
  std::string kv_offloading_backend;  // --kv-offloading-backend: "native"; "" = native
  // --speculative-config (spec_decode.h); off by default. V1 rows only.
  SpecDecode spec;
  // --enable-lora and its flags (lora_config.h); the resolved-cost fields are not read here.
  LoraConfig lora;
};

// The engine `request` gives on deployment `d` (its model, GPU, parallelism and KV dtype; the
// memory plan is not needed): every optional filled with vLLM's default for the release, GPU and
// model, speculative decoding and LoRA resolved, the KV layout of sliding-window and
// linear-attention models, and pipeline stages' engines (no async scheduling, one KV group).
// Everything but the KV offloading tier, which needs the memory plan (resolve_kv_offload).
// Throws ConfigError naming the flag, its value and what was expected on nonsense
// (max-num-batched-tokens < max-num-seqs, utilisation outside (0, 1], an unknown version,
// --async-scheduling on a version without it) and on what servesim does not model, among them
// an explicit --enable-prefix-caching on a model with linear-attention layers.
EngineConfig resolve_engine_config(const EngineRequest& request, const models::Deployment& d);

// The same on a one-GPU deployment (TP = PP = 1, KV dtype auto) of `model` on `gpu`.
EngineConfig resolve_engine_config(const EngineRequest& request, const hardware::GpuSpec& gpu,
                                   const models::ModelSpec& model);

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_ENGINE_REQUEST_H_
