#include "hardware/profile_fit.h"

#include <algorithm>
#include <cmath>

#include "hardware/levenberg_marquardt.h"
#include "sim/base/error.h"

namespace servesim::hardware {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

double gemm_model_time_s(const GemmSample& s, const GemmModelParams& p, double peak_flops,
                         double bandwidth) {
  const double t = static_cast<double>(s.tokens);
  const double compute = 2.0 * s.in_dim * s.out_dim * (t + p.compute_ramp_tokens) /
                         (peak_flops * p.compute_efficiency);
  const double memory =
      (s.in_dim * s.out_dim + (s.in_dim + s.out_dim) * t) * 2.0 / (bandwidth * p.memory_efficiency);
  return std::max(compute, memory) + p.op_latency_s;
}

GemmFit fit_gemm(const std::vector<GemmSample>& samples, double peak_flops, double bandwidth) {
  SERVESIM_CHECK(peak_flops > 0 && bandwidth > 0, "fit_gemm: bad input");
  // Four model parameters: fewer timed GEMMs cannot determine them (and Levenberg-Marquardt
  // refuses fewer residuals than unknowns).
  if (samples.size() < 4) {
    throw ConfigError("GEMM profile fit: " + std::to_string(samples.size()) +
                      " timed GEMM(s); the four parameters (compute and memory efficiency, compute "
                      "ramp, per-op latency) need at least 4 rows of GEMM profiles");
  }
  auto unpack = [](const Eigen::VectorXd& x) {
    GemmModelParams p;
    p.compute_efficiency = x[0];
    p.compute_ramp_tokens = x[1];
    p.memory_efficiency = x[2];
    p.op_latency_s = x[3] * 1e-6;  // fitted in µs to keep the parameters on similar scales
    return p;
  };
  auto residuals = [&](const Eigen::VectorXd& x) {
    const GemmModelParams p = unpack(x);
    Eigen::VectorXd r(static_cast<Eigen::Index>(samples.size()));
    for (size_t i = 0; i < samples.size(); ++i) {
      r[static_cast<Eigen::Index>(i)] =
          std::log(gemm_model_time_s(samples[i], p, peak_flops, bandwidth) / samples[i].time_s);
    }
    return r;
  };
  Eigen::VectorXd x0(4), lo(4), hi(4);
  x0 << 0.7, 128, 0.8, 6;
  lo << 0.05, 0, 0.05, 0;
  hi << 1.0, 4096, 1.0, 100;
  const LmResult fit = levenberg_marquardt(residuals, x0, lo, hi);
  GemmFit out;
  out.params = unpack(fit.x);
  out.std_error = unpack(fit.std_error);
  out.samples = static_cast<int>(samples.size());
  out.iterations = fit.iterations;
  out.rms_log_error = std::sqrt(fit.residuals.squaredNorm() / static_cast<double>(samples.size()));
  std::vector<double> rel;
  rel.reserve(samples.size());
  for (Eigen::Index i = 0; i < fit.residuals.size(); ++i) {
    rel.push_back(std::fabs(std::exp(fit.residuals[i]) - 1));
  }
  out.median_abs_rel_error = median(rel);
  return out;
}

LinkFit fit_collective(const std::vector<CollectiveSample>& samples, const std::string& collective,
                       int num_workers, int devices_per_node) {
  std::vector<const CollectiveSample*> sel;
  for (const auto& s : samples) {
    if (s.collective == collective && s.num_workers == num_workers &&
        (devices_per_node < 0 || s.devices_per_node == devices_per_node)) {
      sel.push_back(&s);
    }
  }
  if (sel.size() < 3) {
    throw ConfigError("fit_collective: fewer than 3 " + collective + " samples with " +
                      std::to_string(num_workers) + " workers");
  }
  const double factor = collective == "all_reduce" ? 2.0 * (num_workers - 1) / num_workers : 1.0;
  // Weighted least squares on relative error: rows divided by the measured time.
  Eigen::MatrixXd A(static_cast<Eigen::Index>(sel.size()), 2);
  Eigen::VectorXd b(static_cast<Eigen::Index>(sel.size()));
  for (size_t i = 0; i < sel.size(); ++i) {
    const auto k = static_cast<Eigen::Index>(i);
    const double w = 1.0 / sel[i]->time_s;
    A(k, 0) = w;
    A(k, 1) = factor * sel[i]->bytes * w;
    b[k] = 1.0;
  }
  const Eigen::VectorXd x = A.colPivHouseholderQr().solve(b);
  LinkFit f;
  f.num_workers = num_workers;
  f.latency_s = std::max(0.0, x[0]);
  f.bandwidth_bytes_per_s = x[1] > 0 ? 1.0 / x[1] : 0;
  f.samples = static_cast<int>(sel.size());
  const Eigen::VectorXd r = A * x - b;
  const double sigma2 = r.squaredNorm() / std::max<double>(1, static_cast<double>(sel.size()) - 2);
  const Eigen::MatrixXd cov = (A.transpose() * A).inverse() * sigma2;
  f.latency_std_error = std::sqrt(std::max(0.0, cov(0, 0)));
  std::vector<double> rel;
  for (Eigen::Index k = 0; k < r.size(); ++k) rel.push_back(std::fabs(r[k]));
  f.median_abs_rel_error = median(rel);
  return f;
}

}  // namespace servesim::hardware
