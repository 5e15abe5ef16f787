#include "sim/cluster/lora_report.h"

#include <algorithm>

#include "sim/replica/replica_stats_merge.h"

namespace servesim::sim {

void add_lora_summary(const SimulationConfig& config, const PreparedDeployment& prepared,
                      const SimulationResult& result, nlohmann::json& summary) {
  const LoraConfig& l = prepared.engine.lora;
  if (!l.enable_lora) return;
  const workloads::WorkloadConfig& w = config.workload;
  nlohmann::json& cfg = summary["config"];
  cfg["enable_lora"] = true;
  cfg["max_loras"] = l.max_loras;
  cfg["max_lora_rank"] = l.max_lora_rank;
  cfg["max_cpu_loras"] = l.max_cpu_loras;
  cfg["lora_load_bandwidth"] = l.load_gbps;
  cfg["lora_h2d_bandwidth"] = l.h2d_gbps;
  if (w.num_lora_adapters > 0) {
    cfg["num_lora_adapters"] = w.num_lora_adapters;
    cfg["lora_popularity"] = w.lora_popularity;
    cfg["lora_zipf_exponent"] = w.lora_zipf_exponent;
    cfg["lora_request_fraction"] = w.lora_request_fraction;
  }
  constexpr double kGiB = double(1ull << 30);
  summary["kv_cache"]["lora_slots_gib_per_gpu"] = prepared.memory.lora_bytes / kGiB;

  const LoraStats t = total_replica_stats(result.replica_stats).lora;
  const auto ms = [](int64_t ns) { return static_cast<double>(ns) * 1e-6; };
  const bool assumed_load = l.load_gbps == kDefaultLoraLoadGbps;
  const bool assumed_h2d = l.h2d_gbps == kDefaultLoraH2dGbps;
  summary["lora"] = {
      {"requests_with_adapter", t.requests},
      {"slot_loads", t.slot_loads},
      {"storage_loads", t.storage_loads},
      // Of the adapters copied into a GPU slot, the share already in the CPU cache.
      {"cpu_cache_hit_rate",
       t.slot_loads > 0
           ? static_cast<double>(t.slot_loads - t.storage_loads) / static_cast<double>(t.slot_loads)
           : 0.0},
      {"cpu_cache_evictions", t.cpu_evictions},
      {"adapter_load_time_s", t.load_s},
      {"storage_load_ms", l.storage_load_s * 1e3},
      {"slot_copy_ms", l.slot_copy_s * 1e3},
      {"waited_requests", t.waited_requests},
      {"mean_slot_wait_ms",
       t.waited_requests > 0 ? ms(t.wait_ns) / static_cast<double>(t.waited_requests) : 0.0},
      {"max_slot_wait_ms", ms(t.max_wait_ns)},
      // Where each parameter comes from (docs/deployment-modes.md, "LoRA").
      {"basis",
       {{"adapter_shapes", "every linear module of every layer at max_lora_rank: assumed"},
        {"slot_memory", "vLLM's stacked buffers from the model shapes"},
        {"kernel_cost", "roofline (no measured LoRA kernel table)"},
        {"load_bandwidth", assumed_load ? "assumed" : "given"},
        {"h2d_bandwidth", assumed_h2d ? "assumed" : "given"},
        {"validation", "none yet"}}},
  };
}

}  // namespace servesim::sim
