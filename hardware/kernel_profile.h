// KernelProfile: measured kernel times of one GPU — dense GEMMs by (dtype, N, K) against the
// number of tokens, causal prefill attention by (q heads, kv heads, head dim) against the
// sequence length, one layer's elementwise chain by model shape per rank against the tokens, and
// MoE routed-expert grouped GEMMs by (experts, top-k, N, K) against the tokens —
// as monotone curves interpolated in log–log space.
//
// Built from rows in the column layout of data/realdata/gpu_kernels_h100_h200/kernels_h100.csv
// (what scripts/profile_gpu.py writes) or from Vidur mlp.csv operator profiles. Each series is
// made monotone (non-decreasing time in tokens) by isotonic regression of log time — a larger
// GEMM measured faster than a smaller one is timer noise or a tile-selection artefact, and a
// step-time model must never get cheaper with more work — so it is exact at every measured
// point where the measurements were already monotone. Between points: log-linear in log tokens;
// beyond the last point: proportional to tokens (the compute-bound regime); before the first:
// the first point's time.
//
// Contract: interpolate() is exact at the (isotonic) points, non-decreasing in x, and O(log n) in
// the series length; a profile is immutable once built; to_json → from_json → to_json is stable
// (times are stored to the nanosecond).
#ifndef SERVESIM_HARDWARE_KERNEL_PROFILE_H_
#define SERVESIM_HARDWARE_KERNEL_PROFILE_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "hardware/gpu_identity.h"
#include "hardware/profiles.h"

namespace servesim::hardware {

// Rows from GEMM samples of another profiler (Vidur mlp.csv, LLMServingSim layers; see
// hardware/profiles.h): kind linear, dtype bf16, n = out_dim, k = in_dim.
std::vector<KernelRow> kernel_rows_from_gemms(const std::vector<GemmSample>& samples,
                                              const std::string& gpu);

// Refuses (ConfigError) rows measured on another GPU: each row's gpu column must name `gpu`
// (label_names_gpu) or be empty. The message names `flag`, `file`, the row's label and `gpu`.
void check_rows_measured_on(const std::vector<KernelRow>& rows, const GpuSpec& gpu,
                            const std::string& flag, const std::string& file);

// A monotone curve y(x) > 0 on x > 0, interpolated in log–log space.
struct MonotoneCurve {
  std::vector<double> x;  // ascending, distinct, > 0
  std::vector<double> y;  // non-decreasing, > 0

  // Builds the curve from samples (any order, repeated x allowed: their log y is averaged), then
  // isotonic regression (pool-adjacent-violators) of log y. REQUIRES: every x, y > 0.
  static MonotoneCurve fit(std::vector<std::pair<double, double>> samples);
  // y at x: exact at the points, log-linear between, y_last·x/x_last after, y_0 before.
  double at(double x) const;
  bool empty() const { return x.empty(); }
};

struct LinearShape {
  std::string dtype;  // bf16 | fp8
  long long n = 0, k = 0;
  bool operator<(const LinearShape& o) const {
    return std::tie(dtype, n, k) < std::tie(o.dtype, o.n, o.k);
  }
};

struct AttentionShape {
  long long q_heads = 0, kv_heads = 0, head_dim = 0;
  bool operator<(const AttentionShape& o) const {
    return std::tie(q_heads, kv_heads, head_dim) < std::tie(o.q_heads, o.kv_heads, o.head_dim);
  }
};

// One layer's elementwise chain (the kernels between its GEMMs: residual add + RMSNorm twice,
// RoPE, the KV-cache write, SiLU·mul, fp8 quantisation of GEMM inputs under fp8) as vLLM V1 runs
// them compiled, for one model shape per rank; x = tokens.
struct ElementwiseShape {
  std::string dtype;  // bf16 | fp8 (the GEMMs' input dtype: fp8 adds the quantisation)
  long long hidden = 0, width = 0;  // width: SwiGLU outputs per token per rank (× top-k for MoE;
                                    // 0 where the SwiGLU is fused into a GEMM)
  long long q_heads = 0, kv_heads = 0, head_dim = 0;  // per rank
  bool operator<(const ElementwiseShape& o) const {
    return std::tie(dtype, hidden, width, q_heads, kv_heads, head_dim) <
           std::tie(o.dtype, o.hidden, o.width, o.q_heads, o.kv_heads, o.head_dim);
  }
};

// One projection (gate_up or down) of an MoE layer's routed experts, run as one grouped GEMM over
// the experts a step's tokens were routed to; per rank, bf16 weights; x = tokens (each sent to
// top_k experts).
struct MoeShape {
  std::string dtype;  // bf16
  long long experts = 0, top_k = 0, n = 0, k = 0;
  bool operator<(const MoeShape& o) const {
    return std::tie(dtype, experts, top_k, n, k) < std::tie(o.dtype, o.experts, o.top_k, o.n, o.k);
  }
};

class KernelProfile {
 public:
  KernelProfile() = default;
  // Linear rows → GEMM curves (x = tokens); attn_prefill rows → curves over the sequence length;
  // attn_decode rows are kept out (SDPA over contiguous K/V is not vLLM's paged kernel);
  // elementwise rows of op layer_compiled → curves over the tokens (layer_eager rows are kept out:
  // vLLM V1 runs these ops compiled); bf16 moe rows → one curve per projection over the tokens
  // (fp8 moe rows are kept out: they check the transfer of the bf16 curves to other weight
  // formats, KernelTimer::moe_gemm_s).
  static KernelProfile from_rows(const std::vector<KernelRow>& rows, const std::string& gpu);

  const std::string& gpu() const { return gpu_; }
  // The GPU the table was measured on with its figures, when the file records it
  // ("gpu_identity", which servesim calibrate writes); nullopt for a table that records only
  // gpu() (then its identity is the catalog GPU of that name: identity_for_name).
  const std::optional<GpuIdentity>& identity() const { return identity_; }
  void set_identity(GpuIdentity g) { identity_ = std::move(g); }
  const std::map<LinearShape, MonotoneCurve>& linear() const { return linear_; }
  const std::map<AttentionShape, MonotoneCurve>& prefill_attention() const { return prefill_; }
  const std::map<ElementwiseShape, MonotoneCurve>& elementwise() const { return elementwise_; }
  const std::map<MoeShape, MonotoneCurve>& moe() const { return moe_; }
  bool empty() const {
    return linear_.empty() && prefill_.empty() && elementwise_.empty() && moe_.empty();
  }

  // Measured time (s) of a GEMM of this exact shape at `tokens` rows; nullopt when not measured.
  std::optional<double> linear_time_s(const LinearShape& shape, double tokens) const;
  // The measured shape of the same dtype nearest to `shape` in (log N, log K); nullopt when the
  // profile has none of that dtype.
  std::optional<LinearShape> nearest_linear_shape(const LinearShape& shape) const;
  // The measured attention shape nearest in (log q heads, log kv heads), same head_dim first.
  std::optional<AttentionShape> nearest_attention_shape(const AttentionShape& shape) const;

  // The measured elementwise shape of the same dtype nearest to `shape` in (log bytes per token,
  // log hidden) (KernelTimer::elementwise_bytes_per_token); nullopt when none of that dtype.
  std::optional<ElementwiseShape> nearest_elementwise_shape(const ElementwiseShape& shape) const;

  // The measured routed-expert GEMM nearest to `shape` in (log N, log K), among those with the
  // same experts and top-k first; nullopt when the profile has none.
  std::optional<MoeShape> nearest_moe_shape(const MoeShape& shape) const;

  // A copy without the linear shape `leave_out` (for leave-one-shape-out checks).
  KernelProfile without(const LinearShape& leave_out) const;

  nlohmann::ordered_json to_json() const;
  // REQUIRES a "kernels" object as to_json() writes; throws ConfigError naming `where`.
  static KernelProfile from_json(const nlohmann::json& j, const std::string& where);

 private:
  std::string gpu_;
  std::optional<GpuIdentity> identity_;
  std::map<LinearShape, MonotoneCurve> linear_;
  std::map<AttentionShape, MonotoneCurve> prefill_;
  std::map<ElementwiseShape, MonotoneCurve> elementwise_;
  std::map<MoeShape, MonotoneCurve> moe_;
};

// Bytes one token moves through a layer's elementwise chain (the ideal traffic; the same formula
// as scripts/profile_gpu.py's elementwise_bytes, which writes it as the gbps column): two fused
// residual-add + RMSNorms (read x and the residual, write the residual and the normed output, in
// fp8 when the GEMMs take fp8), RoPE on q and k (read + write), the KV-cache write (read k and v,
// write them), SiLU·mul (read gate and up, write the product) and, under fp8, the quantisation of
// the attention output before o_proj. Activations in 2 bytes.
double elementwise_bytes_per_token(const ElementwiseShape& shape);

}  // namespace servesim::hardware

#endif  // SERVESIM_HARDWARE_KERNEL_PROFILE_H_
