#include "sim/calibration/profile_sources.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <memory>
#include <set>
#include <sstream>

#include "hardware/gpu_identity.h"
#include "hardware/kernel_profile.h"
#include "hardware/profile_fit.h"
#include "models/model_spec.h"
#include "sim/base/error.h"
#include "sim/base/input_files.h"

namespace servesim::calibration {
namespace {

// A GEMM sample the fit can use: positive finite sizes and time (a NaN or header-only table once
// reached the fit's internal checks).
void check_samples(const std::vector<hardware::GemmSample>& some, const std::string& f) {
  for (const auto& g : some) {
    if (!(g.tokens >= 1 && g.in_dim > 0 && g.out_dim > 0 && g.time_s > 0) ||
        !std::isfinite(g.in_dim * g.out_dim * g.time_s)) {
      throw ConfigError(f + ": a " + g.op + " GEMM row has tokens " + std::to_string(g.tokens) +
                        ", time " + std::to_string(g.time_s) +
                        " s; expected positive finite sizes and times");
    }
  }
  if (some.empty()) {
    throw ConfigError(f + ": no GEMM rows; expected a profile table with data rows");
  }
}

}  // namespace

std::string portable_source(const std::string& path) {
  const auto at = path.rfind("/realdata/");
  return at == std::string::npos ? path : path.substr(at + 1);
}

std::string fit_gemm_profiles(const GemmSources& sources, const hardware::GpuSpec& gpu,
                              Calibration& cal, std::map<std::string, std::string>& origin) {
  std::vector<hardware::GemmSample> samples;
  for (const std::string& f : sources.vidur_mlp) {
    auto some = hardware::read_vidur_mlp(f);
    check_samples(some, f);
    samples.insert(samples.end(), some.begin(), some.end());
    cal.fit_set.push_back(portable_source(f));
  }
  if (!sources.llmservingsim_layers.empty()) {
    if (sources.layers_model.empty()) {
      throw ConfigError("--llmservingsim-layers: give the tables' model with --layers-model");
    }
    const models::ModelSpec m = models::load_model(sources.layers_model);
    hardware::LayerDims dims;
    dims.hidden = static_cast<double>(m.hidden_size);
    dims.heads = static_cast<double>(m.num_heads);
    dims.kv_heads = static_cast<double>(m.num_kv_heads);
    dims.head_dim = static_cast<double>(m.head_dim);
    dims.intermediate = static_cast<double>(m.intermediate_size);
    dims.vocab = static_cast<double>(m.vocab_size);
    for (const std::string& f : sources.llmservingsim_layers) {
      auto some = hardware::gemm_samples_from_layers(hardware::read_llmservingsim_layers(f), dims);
      check_samples(some, f);
      samples.insert(samples.end(), some.begin(), some.end());
      cal.fit_set.push_back(portable_source(f));
    }
  }
  const hardware::GemmFit g =
      hardware::fit_gemm(samples, gpu.bf16_flops, gpu.hbm_bandwidth_bytes_per_s);
  using T = CalibrationTerms;
  cal.terms.compute_efficiency = {g.params.compute_efficiency, g.std_error.compute_efficiency};
  cal.terms.compute_ramp_tokens = {g.params.compute_ramp_tokens, g.std_error.compute_ramp_tokens};
  cal.terms.memory_efficiency = {g.params.memory_efficiency, g.std_error.memory_efficiency};
  cal.terms.op_latency_s = {g.params.op_latency_s, g.std_error.op_latency_s};
  for (auto member :
       {&T::compute_efficiency, &T::compute_ramp_tokens, &T::memory_efficiency, &T::op_latency_s}) {
    origin[std::string(term_name(member))] = "GEMM profiles";
  }
  const size_t files = sources.vidur_mlp.size() + sources.llmservingsim_layers.size();
  cal.fit_info["profile_fit"] = {
      {"method", "Levenberg-Marquardt on log time, hardware/profile_fit.h"},
      {"files", files},
      {"samples", g.samples},
      {"iterations", g.iterations},
      {"rms_log_error", g.rms_log_error},
      {"median_abs_relative_error", g.median_abs_rel_error}};
  std::ostringstream out;
  out << "GEMM profile fit: " << g.samples << " samples from " << files << " files, median |error| "
      << std::fixed << std::setprecision(1) << 100 * g.median_abs_rel_error << "%, rms log error "
      << std::setprecision(3) << g.rms_log_error << "\n";
  return out.str();
}

std::string fit_allreduce_profile(const std::string& vidur_allreduce, Calibration& cal,
                                  std::map<std::string, std::string>& origin) {
  const auto samples = hardware::read_vidur_collective(vidur_allreduce);
  std::set<int> workers;
  for (const auto& c : samples) {
    if (c.collective == "all_reduce" && c.devices_per_node == c.num_workers) {
      workers.insert(c.num_workers);
    }
  }
  if (workers.empty()) {
    throw ConfigError(vidur_allreduce + ": no single-node all_reduce rows");
  }
  nlohmann::json fits = nlohmann::json::array();
  hardware::LinkFit widest;
  for (int n : workers) {
    const hardware::LinkFit f = hardware::fit_collective(samples, "all_reduce", n, n);
    fits.push_back({{"num_workers", n},
                    {"latency_s", f.latency_s},
                    {"latency_std_error_s", f.latency_std_error},
                    {"bus_bandwidth_bytes_per_s", f.bandwidth_bytes_per_s},
                    {"samples", f.samples},
                    {"median_abs_relative_error", f.median_abs_rel_error}});
    widest = f;
  }
  cal.terms.link_bandwidth_bytes_per_s = {widest.bandwidth_bytes_per_s, 0};
  origin[std::string(term_name(&CalibrationTerms::link_bandwidth_bytes_per_s))] =
      "all-reduce profile (" + std::to_string(widest.num_workers) + " GPUs)";
  cal.fit_set.push_back(portable_source(vidur_allreduce));
  cal.fit_info["collective_fit"] = {
      {"method", "weighted linear least squares t = alpha + 2(p-1)/p*bytes/bw per worker count"},
      {"file", portable_source(vidur_allreduce)},
      {"fits", fits}};
  std::ostringstream out;
  out << "All-reduce profile fit: " << workers.size() << " worker counts; " << widest.num_workers
      << " GPUs: bus bandwidth " << std::fixed << std::setprecision(0)
      << widest.bandwidth_bytes_per_s / 1e9 << " GB/s, eager NCCL alpha " << std::setprecision(1)
      << widest.latency_s * 1e6 << " us (not applied)\n";
  return out.str();
}

std::string read_kernel_tables(const std::vector<std::string>& files, const hardware::GpuSpec& gpu,
                               Calibration& cal) {
  // Every file's rows (kernel table CSV, or a Vidur mlp.csv's four GEMMs per row) become one
  // KernelProfile for the GPU.
  std::vector<hardware::KernelRow> rows;
  for (const std::string& f : files) {
    check_input_file(f, "--kernels", kMaxDataFileBytes);
    std::ifstream in(f);
    std::string header;
    if (!in || !std::getline(in, header)) throw ConfigError("--kernels: " + f + ": cannot read");
    std::vector<hardware::KernelRow> some;
    if (header.find("time_us") != std::string::npos) {
      some = hardware::read_kernel_csv(f);
      hardware::check_rows_measured_on(some, gpu, "--kernels", f);
    } else if (header.find("time_stats.attn_pre_proj.median") != std::string::npos) {
      some = hardware::kernel_rows_from_gemms(hardware::read_vidur_mlp(f), gpu.name);
    } else {
      throw ConfigError("--kernels: " + f +
                        ": expected a kernel table (columns of kernels_h100.csv, with time_us) "
                        "or a Vidur mlp.csv (time_stats.attn_pre_proj.median)");
    }
    rows.insert(rows.end(), some.begin(), some.end());
    cal.fit_set.push_back(portable_source(f));
  }
  auto profile =
      std::make_shared<hardware::KernelProfile>(hardware::KernelProfile::from_rows(rows, gpu.name));
  profile->set_identity(hardware::GpuIdentity::of(gpu));
  // How far the monotone (isotonic) curves moved from the measured medians.
  int moved = 0, points = 0;
  double worst = 0;
  for (const hardware::KernelRow& r : rows) {
    if (r.kind != "linear") continue;
    const double t = *profile->linear_time_s({r.dtype, r.n, r.k}, static_cast<double>(r.m_tokens));
    const double e = std::fabs(t / r.time_s - 1);
    ++points;
    if (e > 1e-9) ++moved;
    worst = std::max(worst, e);
  }
  int bf16 = 0, fp8 = 0;
  for (const auto& [shape, curve] : profile->linear()) (shape.dtype == "fp8" ? fp8 : bf16)++;
  cal.fit_info["kernel_tables"] = {
      {"method", "per-shape isotonic regression of log time, hardware/kernel_profile.h"},
      {"rows", rows.size()},
      {"linear_shapes_bf16", bf16},
      {"linear_shapes_fp8", fp8},
      {"prefill_attention_shapes", profile->prefill_attention().size()},
      {"linear_rows_moved_by_monotone_fit", moved},
      {"max_abs_relative_change", worst}};
  if (!profile->elementwise().empty()) {
    cal.fit_info["kernel_tables"]["elementwise_shapes"] = profile->elementwise().size();
  }
  if (!profile->moe().empty()) {
    cal.fit_info["kernel_tables"]["moe_shapes"] = profile->moe().size();
  }
  std::ostringstream out;
  out << "Kernel tables: " << rows.size() << " rows from " << files.size() << " files: " << bf16
      << " bf16 and " << fp8 << " fp8 GEMM shapes, " << profile->prefill_attention().size()
      << " prefill-attention shapes"
      << (profile->elementwise().empty()
              ? std::string()
              : ", " + std::to_string(profile->elementwise().size()) + " elementwise shapes")
      << (profile->moe().empty()
              ? std::string()
              : ", " + std::to_string(profile->moe().size()) + " MoE expert shapes")
      << "; the monotone fit moved " << moved << " of " << points << " GEMM rows, by at most "
      << std::fixed << std::setprecision(1) << 100 * worst << "%\n";
  cal.kernels = std::move(profile);
  return out.str();
}

}  // namespace servesim::calibration
