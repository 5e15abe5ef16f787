// Kernel check: the cost model's time for every row of a measured kernel table (kernels_<gpu>.csv),
// as `servesim kernel-check` prints it and docs/validation.md ("Kernel check") reports.
//
// A linear row is one GEMM [m × k]·[k × n] in its dtype; an attn_prefill row one causal sequence
// of q = kv = L tokens; an attn_decode row B sequences of one query token over L cached tokens,
// with the row's heads per GPU. The prediction is what the cost model charges for that kernel:
//   linear        KernelTimer::linear_s when the deployment has a table (exact shape, nearest
//                 shape, or transferred from another GPU), else the roofline op (§2, with the
//                 RooflineOptions given — a calibration's η_c, a, η_m, t0 or the catalog's)
//   attn_prefill  KernelTimer::prefill_attention_s, else the roofline attention (§3.3)
//   attn_decode   always the roofline attention: the table's decode rows are SDPA over contiguous
//                 K/V, not vLLM's paged kernel, so the cost model does not use them
//   elementwise   (op layer_compiled; layer_eager rows are skipped)
//   KernelTimer::elementwise_layer_s
//                 when the table has an elementwise curve of the dtype, else the allowance the
//                 step charges without one: 4 · t0 per layer
//   deltanet_chunked, deltanet_recurrent (scripts/profile_deltanet.py): skipped; the cost model
//                 prices a step's DeltaNet layers together (models/linear_attention.h)
// (The step's per-layer elementwise allowance and CUDA-graph padding are not part of a kernel.)
#ifndef SERVESIM_MODELS_KERNEL_CHECK_H_
#define SERVESIM_MODELS_KERNEL_CHECK_H_

#include <string>
#include <vector>

#include "hardware/gpu_spec.h"
#include "hardware/profiles.h"
#include "models/kernel_timer.h"
#include "models/roofline_cost_model.h"

namespace servesim::models {

struct KernelCheckOptions {
  RooflineOptions roofline;  // for ops the table does not time
  KernelSource kernels;      // profile null = roofline only
  // Score every GEMM row with its own (dtype, n, k) removed from the table, so that it is
  // predicted from the nearest other shape: how well the table covers a shape it lacks.
  bool leave_shape_out = false;
};

struct KernelCheckRow {
  hardware::KernelRow row;
  double predicted_s = 0;
  // "table", "table (nearest shape)", "transferred from X", "roofline", "allowance": no comma,
  // since the --output CSV writes it unquoted.
  std::string source;
  double error() const { return predicted_s / row.time_s - 1; }
};

std::vector<KernelCheckRow> check_kernels(const std::vector<hardware::KernelRow>& rows,
                                          const hardware::GpuSpec& gpu,
                                          const KernelCheckOptions& options);

// Median of |error| (0 for none).
double median_abs_error(const std::vector<KernelCheckRow>& rows);

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_KERNEL_CHECK_H_
