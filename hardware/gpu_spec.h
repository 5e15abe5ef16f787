// GpuSpec: one GPU's datasheet peaks, memory, scale-up link, default efficiencies and price.
//
// Loaded from hardware/catalog/<name>.json or from any JSON file with the same fields. Every
// default efficiency and overhead in the catalog carries a "sources" entry saying where it comes
// from. The spec is immutable once loaded; calibration produces a separate profile, never edits it.
#ifndef SERVESIM_HARDWARE_GPU_SPEC_H_
#define SERVESIM_HARDWARE_GPU_SPEC_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace servesim::hardware {

// A point-to-point or switched link, α–β model: time(bytes) = latency_s + bytes / bandwidth.
struct LinkSpec {
  std::string kind;                  // "nvlink", "pcie", "infinity-fabric", "infiniband", ...
  double bandwidth_bytes_per_s = 0;  // per GPU, one direction
  double latency_s = 0;              // per message (α)
};

struct GpuSpec {
  std::string name;          // catalog name, e.g. "h100-sxm"
  std::string display_name;  // e.g. "NVIDIA H100 80GB HBM3 (SXM)"
  // Chip generation ("hopper", "ampere", "ada", "blackwell", "cdna3"; "" = unknown). A GPU with
  // no measured kernel table borrows the nearest table of the same architecture (docs/cost_model.md
  // §2.1); GPUs of different architectures never share one.
  std::string architecture;
  double memory_bytes = 0;               // total device memory as the framework sees it
  double hbm_bandwidth_bytes_per_s = 0;  // datasheet peak
  double bf16_flops = 0;                 // dense peak, FLOP/s (no sparsity)
  double fp8_flops = 0;                  // dense peak; 0 = no FP8 tensor cores (falls back to bf16)
  LinkSpec scale_up;                     // the intra-node GPU link used by tensor parallelism
  // The link between this GPU and host memory (kind "pcie"; bandwidth per GPU, one direction),
  // used by KV offloading (sim/replica/kv_offload.h). Optional: kind "" = not in the catalog.
  LinkSpec host_link;

  // Default achievable fractions of peak and fixed overheads (the "uncalibrated" model).
  double compute_efficiency = 1.0;  // fraction of peak FLOP/s a large GEMM reaches
  double memory_efficiency = 1.0;   // fraction of peak bandwidth a large stream reaches
  double step_overhead_s = 0;       // per engine step: scheduler, launch, sampling
  double per_seq_overhead_s = 0;    // per scheduled sequence per step (input prep, sampling)
  double non_torch_memory_bytes =
      0;  // CUDA context, NCCL buffers, cuda graphs (not KV, not weights)

  double price_per_hour_usd = 0;  // on-demand price of one GPU, for cost views
  nlohmann::json sources;         // field -> where the number comes from
};

// Loads a GPU by catalog name (hardware/catalog/<name>.json; any case: "H100-SXM" is h100-sxm,
// and the spec carries the catalog name) or by path to a JSON file. Throws ConfigError naming the
// file and field on bad input; for an unknown name, listing the entries it is the family of
// ("h100": h100-nvl, h100-pcie, h100-sxm — which one is not guessed), else every known name.
GpuSpec load_gpu(const std::string& name_or_path);

// Names of all GPUs in the catalog, sorted.
std::vector<std::string> gpu_catalog_names();

}  // namespace servesim::hardware

#endif  // SERVESIM_HARDWARE_GPU_SPEC_H_
