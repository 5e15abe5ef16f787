#include "models/kernel_check.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace servesim::models {
namespace {

// The roofline attention of docs/cost_model.md §3.3 for one layer on one rank.
double roofline_attention_s(const RooflineOptions& o, const hardware::GpuSpec& gpu,
                            const hardware::KernelRow& r) {
  const double qh = static_cast<double>(r.q_heads), kvh = static_cast<double>(r.kv_heads);
  const double d = static_cast<double>(r.head_dim);
  const double kv_tok = 2.0 * kvh * d * 2.0;  // K and V, bf16
  const double qo_tok = 2.0 * qh * d * 2.0;   // Q read, O write
  double work = 0, kv_read = 0, tokens = 0;
  if (r.kind == "attn_prefill") {  // batch causal sequences, q = kv = L
    const double len = static_cast<double>(r.q_len);
    work = static_cast<double>(r.batch) * len * len / 2;
    kv_read = static_cast<double>(r.batch) * len;
    tokens = kv_read;
  } else {  // decode: one query token per sequence over kv_len cached tokens
    work = static_cast<double>(r.batch) * static_cast<double>(r.kv_len);
    kv_read = work;
    tokens = static_cast<double>(r.batch);
  }
  const double flops = 4.0 * qh * d * work;
  const double bytes = kv_tok * (kv_read + tokens) + qo_tok * tokens;
  return std::max(flops / (gpu.bf16_flops * o.compute_efficiency),
                  bytes / (gpu.hbm_bandwidth_bytes_per_s * o.memory_efficiency)) +
         o.op_latency_s;
}

double roofline_linear_s(const RooflineOptions& o, const hardware::GpuSpec& gpu,
                         const hardware::KernelRow& r) {
  const double n = static_cast<double>(r.n), k = static_cast<double>(r.k);
  const bool fp8 = r.dtype == "fp8";
  const double peak = fp8 && gpu.fp8_flops > 0 ? gpu.fp8_flops : gpu.bf16_flops;
  // As the cost model charges a dense op: weights in the row's dtype, activations 16-bit.
  return roofline_op_s(o, 2.0 * n * k, n * k * (fp8 ? 1.0 : 2.0), (n + k) * 2.0,
                       static_cast<double>(r.m_tokens), peak, gpu.hbm_bandwidth_bytes_per_s);
}

// One projection of the routed experts as the cost model's roofline charges them: one GEMM of
// tokens·top-k rows over the weights of the experts expected to be hit (in the row's dtype).
double roofline_moe_s(const RooflineOptions& o, const hardware::GpuSpec& gpu,
                      const hardware::KernelRow& r) {
  const double n = static_cast<double>(r.n), k = static_cast<double>(r.k);
  const double tokens = static_cast<double>(r.m_tokens);
  const double touched =
      expected_experts_touched(static_cast<double>(r.batch), static_cast<double>(r.q_len), tokens);
  const bool fp8 = r.dtype == "fp8";
  const double peak = fp8 && gpu.fp8_flops > 0 ? gpu.fp8_flops : gpu.bf16_flops;
  return roofline_op_s(o, 2.0 * n * k, touched * n * k * (fp8 ? 1.0 : 2.0), (n + k) * 2.0,
                       tokens * static_cast<double>(r.q_len), peak, gpu.hbm_bandwidth_bytes_per_s);
}

}  // namespace

std::vector<KernelCheckRow> check_kernels(const std::vector<hardware::KernelRow>& rows,
                                          const hardware::GpuSpec& gpu,
                                          const KernelCheckOptions& options) {
  const KernelTimer timer(gpu, options.kernels);
  const std::string table_label = options.kernels.transferred
                                      ? "transferred from " + options.kernels.measured_on.name
                                      : std::string("table");
  // Leave-one-shape-out: one timer per left-out shape, built on first use.
  std::map<hardware::LinearShape, KernelSource> left_out;
  std::vector<KernelCheckRow> out;
  for (const hardware::KernelRow& r : rows) {
    // The unfused reference chain is not what vLLM V1 runs, nor what the cost model charges.
    if (r.kind == "elementwise" && r.op != "layer_compiled") continue;
    // Gated DeltaNet rows (scripts/profile_deltanet.py) are read, not predicted: the cost
    // model prices a whole step's DeltaNet layers (models/linear_attention.h), not one kernel.
    if (r.kind == "deltanet_chunked" || r.kind == "deltanet_recurrent") continue;
    KernelCheckRow c;
    c.row = r;
    std::optional<double> t;
    if (r.kind == "linear" && options.kernels.profile) {
      const hardware::LinearShape shape{r.dtype, r.n, r.k};
      const double m = static_cast<double>(r.m_tokens);
      if (options.leave_shape_out) {
        auto it = left_out.find(shape);
        if (it == left_out.end()) {
          KernelSource s = options.kernels;
          s.profile = std::make_shared<hardware::KernelProfile>(s.profile->without(shape));
          it = left_out.emplace(shape, std::move(s)).first;
        }
        t = KernelTimer(gpu, it->second)
                .linear_s(r.dtype, static_cast<double>(r.n), static_cast<double>(r.k), m);
        c.source = table_label + " (nearest shape)";
      } else {
        t = timer.linear_s(r.dtype, static_cast<double>(r.n), static_cast<double>(r.k), m);
        c.source =
            timer.has_exact_shape(r.dtype, static_cast<double>(r.n), static_cast<double>(r.k))
                ? table_label
                : table_label + " (nearest shape)";
      }
    } else if (r.kind == "attn_prefill" && options.kernels.profile && r.batch == 1) {
      t = timer.prefill_attention_s(static_cast<double>(r.q_heads), static_cast<double>(r.kv_heads),
                                    static_cast<double>(r.head_dim), static_cast<double>(r.q_len));
      c.source = table_label;
    } else if (r.kind == "elementwise" && options.kernels.profile) {
      const hardware::ElementwiseShape shape{r.dtype, r.n, r.k, r.q_heads, r.kv_heads, r.head_dim};
      t = timer.elementwise_layer_s(shape, static_cast<double>(r.m_tokens));
      c.source = options.kernels.profile->elementwise().count(shape) > 0
                     ? table_label
                     : table_label + " (nearest shape)";
    } else if (r.kind == "moe" && options.kernels.profile) {
      // The table holds bf16 curves; an fp8 row is predicted by their transfer (1-byte weights,
      // the fp8 peak), as the cost model charges fp8 experts.
      const hardware::MoeShape shape{"bf16", r.batch, r.q_len, r.n, r.k};
      const bool fp8 = r.dtype == "fp8";
      t = timer.moe_gemm_s(shape, fp8 ? 1.0 : 2.0, r.dtype, static_cast<double>(r.m_tokens));
      c.source = options.kernels.profile->moe().count(shape) > 0 ? table_label
                                                                 : table_label + " (nearest shape)";
      if (fp8) c.source += " (bf16 curve to fp8)";
    }
    if (t) {
      c.predicted_s = *t;
    } else if (r.kind == "elementwise") {
      // Without a curve the cost model charges one t0 per GEMM of the layer (QKV, O, gate_up,
      // down) for the chain, whatever the tokens.
      c.predicted_s = 4 * options.roofline.op_latency_s;
      c.source = "allowance";
    } else {
      c.predicted_s = r.kind == "linear" ? roofline_linear_s(options.roofline, gpu, r)
                      : r.kind == "moe"  ? roofline_moe_s(options.roofline, gpu, r)
                                         : roofline_attention_s(options.roofline, gpu, r);
      c.source = "roofline";
    }
    out.push_back(std::move(c));
  }
  return out;
}

double median_abs_error(const std::vector<KernelCheckRow>& rows) {
  if (rows.empty()) return 0;
  std::vector<double> e;
  for (const auto& r : rows) e.push_back(std::fabs(r.error()));
  const size_t mid = e.size() / 2;
  std::nth_element(e.begin(), e.begin() + static_cast<long>(mid), e.end());
  if (e.size() % 2 == 1) return e[mid];
  const double hi = e[mid];
  return (*std::max_element(e.begin(), e.begin() + static_cast<long>(mid)) + hi) / 2;
}

}  // namespace servesim::models
