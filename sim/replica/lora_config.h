// LoraConfig: vLLM's LoRA serving flags (--enable-lora, --max-loras, --max-lora-rank,
// --max-cpu-loras; vllm/config/lora.py LoRAConfig) and the two bandwidths servesim times adapter
// loads with (not vLLM flags: properties of the host, assumed unless the user measures them).
// docs/deployment-modes.md, "LoRA".
#ifndef SERVESIM_SIM_REPLICA_LORA_CONFIG_H_
#define SERVESIM_SIM_REPLICA_LORA_CONFIG_H_

#include <string>

#include "models/deployment.h"
#include "models/lora_shapes.h"

namespace servesim::sim {

// The values the two bandwidths default to (what "assumed" refers to in results).
inline constexpr double kDefaultLoraLoadGbps = 2.0;
inline constexpr double kDefaultLoraH2dGbps = 25.0;

struct LoraConfig {
  bool enable_lora = false;  // --enable-lora
  int max_loras = 1;         // --max-loras: distinct adapters in one batch (GPU slots) [1]
  int max_lora_rank = 16;    // --max-lora-rank: 1, 8, 16, 32, 64, 128, 256, 320 or 512 [16]
  int max_cpu_loras = 0;     // --max-cpu-loras: adapters kept in CPU memory; 0 = max_loras
  // --lora-load-bandwidth: GB/s (1e9 B/s) at which a worker reads an adapter that is not in its
  // CPU cache (disk or remote storage into host memory). Assumed, not measured.
  double load_gbps = kDefaultLoraLoadGbps;
  // --lora-h2d-bandwidth: GB/s at which a worker copies a cached adapter into a GPU slot.
  // Assumed, not measured.
  double h2d_gbps = kDefaultLoraH2dGbps;

  // Resolved, not flags (resolve_lora_config): what one engine's adapter loads and LoRA kernels
  // cost on the deployment, every adapter taken at max_lora_rank (models/lora_shapes.h).
  double storage_load_s = 0;  // one adapter read from storage into the CPU cache
  double slot_copy_s = 0;     // one cached adapter copied into a GPU slot
  models::LoraStepCost step;  // Punica shrink/expand roofline
};

// Fills max_cpu_loras (vLLM: max_loras when unset) and checks every value against vLLM's rules
// and what servesim models; throws ConfigError naming the flag, the value and what was expected.
// LoRA with pipeline stages, MoE or MLA layers is not modelled. Fills the resolved costs for
// the deployment `d` (its model, GPU and tensor-parallel size). No-op when LoRA is off
// and no LoRA flag was changed; a LoRA flag without --enable-lora is refused (vLLM ignores it,
// which would hide a typo in a capacity study).
LoraConfig resolve_lora_config(const LoraConfig& config, const models::Deployment& d);

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_LORA_CONFIG_H_
