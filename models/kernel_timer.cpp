#include "models/kernel_timer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>

#include "hardware/gpu_identity.h"
#include "models/roofline_cost_model.h"
#include "sim/base/error.h"
#include "sim/calibration/profile.h"

namespace servesim::models {

std::string KernelSource::label() const {
  if (!profile) return "roofline";
  return (transferred ? "transferred from " + measured_on.name : std::string("measured")) + " (" +
         path + ")";
}

namespace {

// Tables are immutable: each file is parsed once per process (plan and sweep prepare many
// deployments, from several threads).
std::shared_ptr<const hardware::KernelProfile> cached_table(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const hardware::KernelProfile>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(path);
  if (it == cache.end())
    it = cache.emplace(path, calibration::load_calibration(path).kernels).first;
  return it->second;
}

// t_min of the header: the fastest GEMM of the table (curves are monotone: each one's first point
// is its fastest).
double fastest_gemm_s(const hardware::KernelProfile& profile) {
  double t = std::numeric_limits<double>::infinity();
  for (const auto& [shape, curve] : profile.linear()) {
    if (!curve.empty()) t = std::min(t, curve.y.front());
  }
  return t;
}

}  // namespace

KernelSource find_kernel_source(const hardware::GpuSpec& gpu) {
  KernelSource src;
  auto load = [&](const hardware::GpuSpec& on, const std::string& path) {
    src.profile = cached_table(path);
    src.measured_on = on;
    // Recorded from "hardware/" on, so that labels do not depend on where the tree lives.
    const auto at = path.rfind("hardware/kernels/");
    src.path = at == std::string::npos ? path : path.substr(at);
    src.transferred = on.name != gpu.name;
  };
  if (auto own = calibration::default_kernel_table_path(gpu.name)) {
    // The shipped table of this name, measured on the catalog GPU of this name: a GPU JSON that
    // borrows the name with other figures is refused rather than timed by another chip's table.
    load(gpu, *own);
    const auto on = hardware::measured_identity(
        src.profile->identity(), src.profile->gpu().empty() ? gpu.name : src.profile->gpu());
    if (on) {
      hardware::refuse_same_name_other_figures(
          *on, gpu, src.path, "kernel table",
          "the GPU it was measured on: give the GPU JSON its own name (the table of the nearest "
          "GPU of its architecture is then transferred, labelled in the prediction basis) or "
          "pass --kernel-table none (the roofline)");
    }
    return src;
  }
  if (gpu.architecture.empty()) return src;
  // Nearest catalog GPU of the same architecture with a table (ties: catalog order, sorted).
  double best = std::numeric_limits<double>::infinity();
  for (const std::string& name : hardware::gpu_catalog_names()) {
    const auto path = calibration::default_kernel_table_path(name);
    if (!path) continue;
    const hardware::GpuSpec other = hardware::load_gpu(name);
    if (other.architecture != gpu.architecture) continue;
    const double df = std::log(other.bf16_flops / gpu.bf16_flops);
    const double db = std::log(other.hbm_bandwidth_bytes_per_s / gpu.hbm_bandwidth_bytes_per_s);
    const double d = df * df + db * db;
    if (d < best) {
      best = d;
      load(other, *path);
    }
  }
  return src;
}

KernelSource resolve_kernel_source(
    const std::string& flag, const hardware::GpuSpec& gpu,
    std::shared_ptr<const hardware::KernelProfile> calibration_kernels,
    const std::string& calibration_path) {
  if (flag == "none") return {};
  auto from_profile = [&](std::shared_ptr<const hardware::KernelProfile> profile,
                          const std::string& path) {
    KernelSource src;
    src.profile = std::move(profile);
    src.path = path;
    src.measured_on = gpu;
    const std::string& name = src.profile->gpu();
    if (name.empty() && !src.profile->identity()) return src;  // says nothing: this GPU's
    const auto on = hardware::measured_identity(src.profile->identity(), name);
    if (!on) {
      throw ConfigError(path + ": kernel table measured on '" + name +
                        "', which is not in the GPU catalog, and the file records no "
                        "gpu_identity (its figures); expected a table written by servesim "
                        "calibrate --gpu <GPU JSON> --kernels (it records them) or --kernel-table "
                        "none");
    }
    const std::string remedy =
        "a table measured on " + gpu.name +
        " (servesim calibrate --gpu <its JSON> --kernels <its CSV>) or --kernel-table none (the "
        "roofline)";
    hardware::refuse_same_name_other_figures(*on, gpu, path, "kernel table", remedy);
    if (on->name == gpu.name) return src;
    // A table measured on another GPU is transferred to this one (KernelTimer scales it by the
    // ideal roofline of each), but only within one architecture: across chip generations the
    // efficiency of a kernel says nothing about the other chip's.
    if (on->architecture.empty() || on->architecture != gpu.architecture) {
      auto arch = [](const std::string& a) { return a.empty() ? std::string("unknown") : a; };
      throw ConfigError(path + ": kernel table measured on " + hardware::describe(*on) +
                        ", architecture " + arch(on->architecture) + "; the GPU in use, " +
                        gpu.name + ", is " + arch(gpu.architecture) +
                        ": tables are transferred only between GPUs of one architecture; "
                        "expected " +
                        remedy);
    }
    src.measured_on = hardware::spec_of(*on);
    src.transferred = true;
    return src;
  };
  if (!flag.empty()) {
    auto profile = calibration::load_calibration(flag).kernels;
    if (!profile) {
      throw ConfigError("--kernel-table: " + flag +
                        " has no 'kernels' object; expected a profile written by servesim "
                        "calibrate --kernels (or none)");
    }
    return from_profile(std::move(profile), flag);
  }
  if (calibration_kernels) return from_profile(std::move(calibration_kernels), calibration_path);
  return find_kernel_source(gpu);
}

KernelTimer::KernelTimer(const hardware::GpuSpec& target, const KernelSource& source)
    : target_(target), source_(source) {}

double KernelTimer::ideal_gemm_s(const hardware::GpuSpec& gpu, const std::string& dtype, double m,
                                 double n, double k, double weight_bytes_per_param) {
  const bool fp8 = dtype == "fp8" && gpu.fp8_flops > 0;
  const double peak = fp8 ? gpu.fp8_flops : gpu.bf16_flops;
  const double a = dtype == "fp8" ? 1.0 : 2.0;  // activation bytes
  const double w = weight_bytes_per_param > 0 ? weight_bytes_per_param : a;
  const double bytes = n * k * w + m * k * a + m * n * 2.0;
  return std::max(2.0 * m * n * k / peak, bytes / gpu.hbm_bandwidth_bytes_per_s);
}

bool KernelTimer::has_exact_shape(const std::string& dtype, double n, double k) const {
  if (!source_.profile) return false;
  const hardware::LinearShape s{dtype, std::llround(n), std::llround(k)};
  return source_.profile->linear().count(s) > 0;
}

std::optional<double> KernelTimer::linear_s(const std::string& dtype, double n, double k,
                                            double tokens, double weight_bytes_per_param) const {
  if (!source_.profile || tokens <= 0) return std::nullopt;
  const hardware::LinearShape want{dtype, std::llround(n), std::llround(k)};
  const auto near = source_.profile->nearest_linear_shape(want);
  if (!near) return std::nullopt;
  const double measured = *source_.profile->linear_time_s(*near, tokens);
  if (near->n == want.n && near->k == want.k && !source_.transferred &&
      weight_bytes_per_param <= 0) {
    return measured;
  }
  // Efficiency transfer against the ideal roofline (header), except for a fixed latency that no
  // bandwidth or peak ratio shortens: the fastest GEMM the table measured on its GPU (4.6 µs on
  // the H100: launch and tail of the smallest kernel). Without it, small GEMMs on an H200 came out
  // up to 38 % too fast (docs/validation.md §4a).
  const double latency = std::min(measured, fastest_gemm_s(*source_.profile));
  return latency + (measured - latency) *
                       ideal_gemm_s(target_, dtype, tokens, n, k, weight_bytes_per_param) /
                       ideal_gemm_s(source_.measured_on, dtype, tokens,
                                    static_cast<double>(near->n), static_cast<double>(near->k));
}

namespace {

double ideal_moe_s(const hardware::GpuSpec& gpu, const std::string& compute_dtype,
                   double weight_bytes_per_param, const hardware::MoeShape& s, double tokens) {
  const double experts = static_cast<double>(s.experts), top_k = static_cast<double>(s.top_k);
  const double n = static_cast<double>(s.n), k = static_cast<double>(s.k);
  const double rows = tokens * top_k;
  const double touched = expected_experts_touched(experts, top_k, tokens);
  const double peak = compute_dtype == "fp8" && gpu.fp8_flops > 0 ? gpu.fp8_flops : gpu.bf16_flops;
  const double bytes = touched * n * k * weight_bytes_per_param + rows * (n + k) * 2.0;
  return std::max(2.0 * rows * n * k / peak, bytes / gpu.hbm_bandwidth_bytes_per_s);
}

}  // namespace

std::optional<double> KernelTimer::moe_gemm_s(const hardware::MoeShape& shape,
                                              double weight_bytes_per_param,
                                              const std::string& compute_dtype,
                                              double tokens) const {
  if (!source_.profile || tokens <= 0) return std::nullopt;
  const auto near = source_.profile->nearest_moe_shape(shape);
  if (!near) return std::nullopt;
  const double measured = source_.profile->moe().at(*near).at(tokens);
  const bool same_shape = near->experts == shape.experts && near->top_k == shape.top_k &&
                          near->n == shape.n && near->k == shape.k;
  if (same_shape && !source_.transferred && weight_bytes_per_param == 2.0 &&
      compute_dtype == "bf16") {
    return measured;
  }
  const double latency = std::min(measured, fastest_gemm_s(*source_.profile));
  return latency + (measured - latency) *
                       ideal_moe_s(target_, compute_dtype, weight_bytes_per_param, shape, tokens) /
                       ideal_moe_s(source_.measured_on, "bf16", 2.0, *near, tokens);
}

std::optional<double> KernelTimer::elementwise_layer_s(const hardware::ElementwiseShape& shape,
                                                       double tokens) const {
  if (!source_.profile || tokens <= 0) return std::nullopt;
  const auto near = source_.profile->nearest_elementwise_shape(shape);
  if (!near) return std::nullopt;
  const hardware::MonotoneCurve& c = source_.profile->elementwise().at(*near);
  const double measured = c.at(tokens);
  if (!(*near < shape) && !(shape < *near) && !source_.transferred) return measured;
  const double latency = std::min(measured, c.y.front());
  return latency + (measured - latency) * hardware::elementwise_bytes_per_token(shape) /
                       hardware::elementwise_bytes_per_token(*near) *
                       source_.measured_on.hbm_bandwidth_bytes_per_s /
                       target_.hbm_bandwidth_bytes_per_s;
}

std::optional<double> KernelTimer::prefill_attention_s(double q_heads, double kv_heads,
                                                       double head_dim, double seq_len) const {
  if (!source_.profile || seq_len <= 0) return std::nullopt;
  const hardware::AttentionShape want{std::llround(q_heads), std::llround(kv_heads),
                                      std::llround(head_dim)};
  const auto near = source_.profile->nearest_attention_shape(want);
  if (!near) return std::nullopt;
  const hardware::MonotoneCurve& c = source_.profile->prefill_attention().at(*near);
  // Below the shortest measured sequence the time scales with the work (∝ L²) rather than
  // staying at the shortest one's: inside a step the prefill rows share one kernel with the
  // decodes, whose fixed latency the cost model charges once.
  double t = seq_len >= c.x.front()
                 ? c.at(seq_len)
                 : c.y.front() * (seq_len / c.x.front()) * (seq_len / c.x.front());
  // FLOPs ∝ q heads · head_dim; compute-bound, so the bf16 peak ratio carries it across GPUs.
  t *= (q_heads * head_dim) / static_cast<double>(near->q_heads * near->head_dim);
  t *= source_.measured_on.bf16_flops / target_.bf16_flops;
  return t;
}

}  // namespace servesim::models
