#include "hardware/gpu_identity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/base/error.h"
#include "sim/base/json_file.h"

namespace servesim::hardware {

GpuIdentity GpuIdentity::of(const GpuSpec& gpu) {
  return {gpu.name,
          gpu.architecture,
          gpu.bf16_flops,
          gpu.fp8_flops,
          gpu.hbm_bandwidth_bytes_per_s,
          gpu.memory_bytes};
}

nlohmann::ordered_json GpuIdentity::to_json() const {
  nlohmann::ordered_json j;
  j["name"] = name;
  j["architecture"] = architecture;
  j["bf16_flops"] = bf16_flops;
  j["fp8_flops"] = fp8_flops;
  j["hbm_bandwidth_bytes_per_s"] = hbm_bandwidth_bytes_per_s;
  j["memory_bytes"] = memory_bytes;
  return j;
}

GpuIdentity GpuIdentity::from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw ConfigError(where + ": 'gpu_identity' must be an object");
  const std::string at = where + ": gpu_identity";
  GpuIdentity g;
  g.name = require_field<std::string>(j, "name", at);
  g.architecture = optional_field<std::string>(j, "architecture", at, "");
  for (auto [key, member] :
       {std::pair{"bf16_flops", &GpuIdentity::bf16_flops},
        std::pair{"hbm_bandwidth_bytes_per_s", &GpuIdentity::hbm_bandwidth_bytes_per_s},
        std::pair{"memory_bytes", &GpuIdentity::memory_bytes}}) {
    const double v = require_field<double>(j, key, at);
    if (!(v > 0) || !std::isfinite(v)) {
      throw ConfigError(at + "." + key + " = " + std::to_string(v) +
                        "; expected a positive finite number");
    }
    g.*member = v;
  }
  g.fp8_flops = optional_field<double>(j, "fp8_flops", at, 0.0);
  if (!(g.fp8_flops >= 0) || !std::isfinite(g.fp8_flops)) {
    throw ConfigError(at + ".fp8_flops = " + std::to_string(g.fp8_flops) +
                      "; expected 0 (no fp8 tensor cores) or a positive finite number");
  }
  return g;
}

std::optional<GpuIdentity> identity_for_name(const std::string& name) {
  if (name.empty()) return std::nullopt;
  const auto names = gpu_catalog_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) return std::nullopt;
  return GpuIdentity::of(load_gpu(name));
}

bool label_names_gpu(const std::string& label, const GpuSpec& gpu) {
  if (label.empty()) return false;
  return label == gpu.name || gpu.name.rfind(label + "-", 0) == 0;
}

std::optional<GpuIdentity> measured_identity(const std::optional<GpuIdentity>& recorded,
                                             const std::string& name) {
  if (recorded) return recorded;
  return identity_for_name(name);
}

GpuSpec spec_of(const GpuIdentity& g) {
  if (auto catalog = identity_for_name(g.name); catalog && differing_figure(*catalog, g).empty()) {
    return load_gpu(g.name);
  }
  GpuSpec s;
  s.name = g.name;
  s.architecture = g.architecture;
  s.bf16_flops = g.bf16_flops;
  s.fp8_flops = g.fp8_flops;
  s.hbm_bandwidth_bytes_per_s = g.hbm_bandwidth_bytes_per_s;
  s.memory_bytes = g.memory_bytes;
  return s;
}

void refuse_same_name_other_figures(const GpuIdentity& on, const GpuSpec& in_use,
                                    const std::string& file, const std::string& what,
                                    const std::string& remedy) {
  if (on.name != in_use.name) return;
  const std::string diff = differing_figure(on, GpuIdentity::of(in_use));
  if (diff.empty()) return;
  throw ConfigError(
      file + ": " + what + " measured on " + describe(on) + "; the GPU in use is also named " +
      in_use.name + " but differs: " + diff + " (more than " +
      std::to_string(static_cast<int>(kGpuFigureRelTolerance * 100)) + "%); expected " + remedy);
}

namespace {

std::string figure(double v, double unit, const char* suffix) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g %s", v / unit, suffix);
  return buf;
}

}  // namespace

std::string differing_figure(const GpuIdentity& a, const GpuIdentity& b) {
  struct Fig {
    const char* what;
    double GpuIdentity::*member;
    double unit;
    const char* suffix;
  };
  for (const Fig& f : {Fig{"dense bf16 peak", &GpuIdentity::bf16_flops, 1e12, "TFLOP/s"},
                       Fig{"dense fp8 peak", &GpuIdentity::fp8_flops, 1e12, "TFLOP/s"},
                       Fig{"HBM bandwidth", &GpuIdentity::hbm_bandwidth_bytes_per_s, 1e12, "TB/s"},
                       Fig{"memory", &GpuIdentity::memory_bytes, 1073741824.0, "GiB"}}) {
    const double x = a.*f.member, y = b.*f.member;
    if (!(std::fabs(x - y) <= kGpuFigureRelTolerance * std::fabs(x))) {
      return std::string(f.what) + " " + figure(x, f.unit, f.suffix) + " vs " +
             figure(y, f.unit, f.suffix);
    }
  }
  return "";
}

std::string describe(const GpuIdentity& g) {
  return g.name + " (bf16 " + figure(g.bf16_flops, 1e12, "TFLOP/s") + ", HBM " +
         figure(g.hbm_bandwidth_bytes_per_s, 1e12, "TB/s") + ", " +
         figure(g.memory_bytes, 1073741824.0, "GiB") + ")";
}

}  // namespace servesim::hardware
