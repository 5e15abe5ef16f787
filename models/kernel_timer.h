// KernelTimer: the time of one GEMM (or one prefill attention) on a GPU from a measured kernel
// table, for shapes and GPUs the table may not hold.
//
// The table was measured on GPU S (`source`); the kernel runs on GPU G (`target`), which is S
// itself or a GPU of the same architecture without a table of its own. For a GEMM of shape (N, K)
// at M tokens the timer takes the measured shape (N', K') nearest in (log N, log K) — the shape
// itself when measured — and transfers its efficiency against the ideal roofline:
//
//   t_G(M; N, K) = λ + (t_S(M; N', K') − λ) · ideal_G(M; N, K) / ideal_S(M; N', K')
//   ideal(M; N, K) = max(2·M·N·K / peak_dtype, bytes(M, N, K) / HBM bandwidth),  λ = min(t_S,
//   t_min)
// with t_min the fastest GEMM in the table (a latency no ratio shortens); so a measured shape on
// its own GPU is exact, memory-bound GEMMs scale with bandwidth, compute-bound ones with peak.
// (bytes: weights N·K·w + input M·K·w + output
// M·N·2, w = 2 for bf16, 1 for fp8 whose activations are quantized too, as in the table.)
//
// Contract: pure; exact for a measured shape when target == source; nullopt when the table has no
// shape of the dtype (the caller falls back to the roofline).
#ifndef SERVESIM_MODELS_KERNEL_TIMER_H_
#define SERVESIM_MODELS_KERNEL_TIMER_H_

#include <memory>
#include <optional>
#include <string>

#include "hardware/gpu_spec.h"
#include "hardware/kernel_profile.h"

namespace servesim::models {

// Where a step's linear-layer times come from (StepCost callers and result files report it).
struct KernelSource {
  std::shared_ptr<const hardware::KernelProfile> profile;  // null = the roofline
  hardware::GpuSpec measured_on;                           // the GPU the table was measured on
  std::string path;                                        // the file it was read from
  bool transferred = false;  // measured_on is not the deployment's GPU
  // "measured (PATH)", "transferred from GPU (PATH)" or "roofline".
  std::string label() const;
};

// The shipped kernel table for `gpu`: hardware/kernels/<gpu>.json when there is one (ConfigError
// when `gpu` has that name but not the figures of the catalog GPU it was measured on), else the
// table of the catalog GPU of the same architecture nearest in (log bf16 peak, log HBM
// bandwidth) that has one (transferred), else none (roofline). An explicit table (a --calibration
// profile with kernels, --kernel-table FILE) is the caller's to build: {profile, gpu, path}.
KernelSource find_kernel_source(const hardware::GpuSpec& gpu);

// --kernel-table FLAG for a deployment on `gpu`: "none" → the roofline; a path → that profile's
// kernels (ConfigError when it has none); "" → the calibration profile's kernels when it has
// some, else find_kernel_source(gpu). The table's GPU (its "gpu_identity", else the catalog GPU
// named by "gpu") decides (docs/cost_model.md §2.2): the GPU in use → measured; another GPU of
// the same architecture → transferred; the same name with other figures, another architecture,
// or a GPU outside the catalog without recorded figures → ConfigError naming the file.
KernelSource resolve_kernel_source(
    const std::string& flag, const hardware::GpuSpec& gpu,
    std::shared_ptr<const hardware::KernelProfile> calibration_kernels,
    const std::string& calibration_path);

class KernelTimer {
 public:
  KernelTimer(const hardware::GpuSpec& target, const KernelSource& source);

  // Time (s) of [tokens × k] · [k × n] in `dtype` (bf16 | fp8); nullopt when the table has no
  // GEMM of that dtype. `weight_bytes_per_param` > 0 (integer weights dequantized in a bf16 GEMM:
  // 0.52 for w4a16) carries the measured curve to those weight bytes by the ideal GEMM ratio
  // above the table's fixed latency, as for another shape or GPU (0: the dtype's own bytes).
  std::optional<double> linear_s(const std::string& dtype, double n, double k, double tokens,
                                 double weight_bytes_per_param = 0) const;
  // Whether linear_s(dtype, n, k, ·) reads the shape itself (not a nearest neighbour).
  bool has_exact_shape(const std::string& dtype, double n, double k) const;

  // Causal prefill attention of one sequence of `seq_len` tokens (q = kv = seq_len) per layer
  // per rank, from the table's nearest (q heads, kv heads) shape, scaled by the FLOP ratio and
  // the peak ratio; nullopt when the table has no prefill attention.
  std::optional<double> prefill_attention_s(double q_heads, double kv_heads, double head_dim,
                                            double seq_len) const;

  // One layer's elementwise chain (hardware::ElementwiseShape) at `tokens`, from the table's
  // nearest shape of the dtype: exact for a measured shape on its own GPU; otherwise, above the
  // measured curve's fastest point (its one-token latency λ, which no bandwidth ratio shortens),
  // scaled by the traffic ratio and the HBM bandwidth ratio (the chain is memory-bound):
  //   t = λ + (t_S(tokens) − λ) · bytes(shape) / bytes(S) · BW_S / BW_G.
  // nullopt when the table has no elementwise curve of the dtype.
  std::optional<double> elementwise_layer_s(const hardware::ElementwiseShape& shape,
                                            double tokens) const;

  // One projection of an MoE layer's routed experts (hardware::MoeShape: experts, top-k, per-rank
  // N × K) for `tokens` tokens, with expert weights of `weight_bytes_per_param` (2 bf16, 1 fp8,
  // 0.53 mxfp4) and GEMMs in `compute_dtype` (bf16 | fp8), from the table's nearest measured
  // grouped GEMM (bf16): exact for a measured bf16 shape on its own GPU; otherwise above the
  // table's fixed latency λ (its fastest GEMM) scaled by the ideal grouped-GEMM ratio
  //   t = λ + (t_S(tokens) − λ) · ideal_G / ideal_S,
  //   ideal = max(2·rows·N·K / peak, (touched·N·K·w + rows·(N + K)·2) / bandwidth),
  // rows = tokens·top_k, touched = expected_experts_touched(experts, top_k, tokens): the
  // measured kernel's efficiency carried to another weight format, shape or GPU.
  // nullopt when the table has no moe curve.
  std::optional<double> moe_gemm_s(const hardware::MoeShape& shape, double weight_bytes_per_param,
                                   const std::string& compute_dtype, double tokens) const;

  static double ideal_gemm_s(const hardware::GpuSpec& gpu, const std::string& dtype, double m,
                             double n, double k, double weight_bytes_per_param = 0);

 private:
  hardware::GpuSpec target_;
  KernelSource source_;
};

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_KERNEL_TIMER_H_
