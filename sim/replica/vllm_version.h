// vLLM versions: every behaviour servesim models that changed between vLLM releases, in one table.
//
// `--vllm-version X.Y` picks a row; the row's defaults apply wherever the user left a flag unset
// (resolve_engine_config, the benchmark client's rules in run_simulation). Each row cites the vLLM
// source it comes from; docs/semantics.md prints the same table. Versions are matched on
// major.minor ("0.8.3" selects the 0.8 row); a version older than the oldest row or newer than
// the newest is an error, not a guess.
//
// What a row does NOT change by itself: a V0 row runs V0's prefill-first scheduler only when
// chunked prefill is off (EngineConfig::enable_chunked_prefill, its default up to 32K context;
// sim/replica/replica.h), else V1's step loop; pipeline-parallel replicas always run V0's virtual
// engines (sim/replica/pipeline.h).
#ifndef SERVESIM_SIM_REPLICA_VLLM_VERSION_H_
#define SERVESIM_SIM_REPLICA_VLLM_VERSION_H_

#include <string>
#include <vector>

#include "models/deployment.h"

namespace servesim::sim {

// The newest release modelled: the default of --vllm-version.
inline constexpr const char* kDefaultVllmVersion = "0.19";

enum class EngineGeneration { kV0, kV1 };

// Which GPUs get the large max-num-seqs / max-num-batched-tokens defaults.
enum class BatchDefaultsRule {
  kV0,            // 256 / 2048 everywhere (V0 EngineArgs, chunked prefill on for long contexts)
  kV1DeviceName,  // "h100" or "h200" in the device name (v0.8 _set_default_args_v1)
  kV1Memory,      // >= 70 GiB and not an A100 (EngineArgs.get_batch_defaults, PR #17885)
};

struct VllmVersionInfo {
  std::string version;  // "0.11"
  EngineGeneration engine = EngineGeneration::kV1;
  BatchDefaultsRule batch_defaults = BatchDefaultsRule::kV1Memory;
  bool prefix_caching_default = true;   // V0 False, V1 True
  double gpu_memory_utilization = 0.9;  // --gpu-memory-utilization default
  models::CudaGraphSizesRule cuda_graphs = models::CudaGraphSizesRule::kV1Sparse;
  bool async_scheduling_available = true;  // --async-scheduling exists (V1 >= 0.10)
  bool async_scheduling_default = false;   // ... and is on by default
  // The hybrid KV cache manager: sliding-window layers keep blocks for their window only
  // (vllm/v1/core/single_type_kv_cache_manager.py SlidingWindowManager; without it they are
  // allocated like full attention — FullAttentionSpec.sliding_window's docstring).
  bool hybrid_kv_cache = false;
  // MLA's latent KV cache (DeepSeek-V2/V3, Kimi-K2): none before 0.7 (vLLM 0.6 cached those
  // models as multi-head K/V, which servesim does not model: refused), and V0's CacheEngine
  // aligned each layer's entry to 256 bytes until 0.8 (PR #14842): mla_entry_align_bytes.
  bool mla_cache = true;
  int mla_entry_align_bytes = 0;
  // V0's MLA backend (vllm/attention/backends/mla/utils.py, 0.7) kept matrix-absorbed decode
  // weights next to the raw ones (MemoryPlanOptions::mla_absorbed_weights); 0.8 dropped the
  // absorbed matrices (the dequantized kv_b_proj every release keeps under fp8 weights stays).
  bool mla_absorbed_weights = false;
  // The fused-MoE workspace before vLLM PR #13625 (0.8): intermediate caches 1, 2 and 3 each
  // allocated (MemoryPlanOptions::fused_moe_separate_caches), from 0.8 caches 1 and 3 share one.
  bool fused_moe_separate_caches = false;
  // From 0.14 (PR #31052, merged after 0.13.0) unquantized MoE experts run the modular kernel's
  // TritonExperts, with its own workspace (MemoryPlanOptions::fused_moe_modular_workspace).
  bool fused_moe_modular_workspace = false;
  // Benchmark client of the same release (benchmark_serving.py / vllm bench serve):
  bool legacy_random_lengths =
      false;  // random dataset lengths on [int(L·r), L] (else [L(1−r), L(1+r)])
  bool rescale_arrivals = true;  // delays cumulated then rescaled so the last is at n/rate
  std::string sources;           // the vLLM files / PRs this row is read from
};

// Every row, oldest first.
const std::vector<VllmVersionInfo>& vllm_version_table();

// The row for "X.Y" or "X.Y.Z" (matched on X.Y). Throws ConfigError naming `flag` (e.g.
// "--vllm-version" or a file) with the versions modelled when there is none.
const VllmVersionInfo& vllm_version(const std::string& version,
                                    const std::string& flag = "--vllm-version");

// "0.8.3" -> "0.8"; "v0.11.0" -> "0.11"; "0.8.3 (V0 engine)" -> "0.8"; "" when the text does not
// start with X.Y.
std::string vllm_minor_version(const std::string& version);

// The max-num-seqs and max-num-batched-tokens defaults of `info` for `gpu` (vLLM's
// OPENAI_API_SERVER usage context).
struct BatchDefaults {
  int max_num_seqs = 256;
  int max_num_batched_tokens = 2048;
};
BatchDefaults batch_defaults(const VllmVersionInfo& info, const hardware::GpuSpec& gpu);

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_VLLM_VERSION_H_
