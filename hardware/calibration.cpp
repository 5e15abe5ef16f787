#include "hardware/calibration.h"

#include <cmath>
#include <filesystem>

#include "sim/base/error.h"
#include "sim/base/json_file.h"

namespace servesim::hardware {
namespace {

struct Range {
  double lo, hi;
};
// Physically meaningful ranges: a value outside is a broken file, not a fit.
const std::map<std::string, Range>& ranges() {
  static const std::map<std::string, Range> r = {
      {"compute_efficiency", {1e-3, 1.0}},
      {"memory_efficiency", {1e-3, 1.0}},
      {"compute_ramp_tokens", {0, 1e5}},
      {"op_latency_s", {0, 1e-2}},
      {"step_overhead_s", {0, 1.0}},
      {"per_seq_overhead_s", {0, 1e-1}},
      {"link_latency_s", {0, 1e-2}},
      {"link_bandwidth_bytes_per_s", {1e6, 1e14}},
      {"client_ttft_overhead_s", {0, 10.0}},
      {"host_step_s", {0, 1.0}},
      {"host_per_seq_s", {0, 1e-2}},
      {"host_per_prefill_token_s", {0, 1e-3}},
      {"host_per_sampled_token_s", {0, 1e-2}},
      {"frontend_per_request_s", {0, 1.0}},
      {"frontend_per_prompt_token_s", {0, 1e-3}},
      {"frontend_per_output_token_s", {0, 1e-3}},
  };
  return r;
}

}  // namespace

std::optional<double> Calibration::get(const std::string& name) const {
  auto it = parameters.find(name);
  if (it == parameters.end()) return std::nullopt;
  return it->second.value;
}

const std::vector<std::string>& Calibration::parameter_names() {
  static const std::vector<std::string> names = {
      "compute_efficiency", "memory_efficiency",  "compute_ramp_tokens",
      "op_latency_s",       "step_overhead_s",    "per_seq_overhead_s",
      "link_latency_s",     "link_bandwidth_bytes_per_s", "client_ttft_overhead_s",
      "host_step_s",        "host_per_seq_s",     "host_per_prefill_token_s",
      "host_per_sampled_token_s", "frontend_per_request_s", "frontend_per_prompt_token_s",
      "frontend_per_output_token_s"};
  return names;
}

nlohmann::ordered_json to_json(const Calibration& c) {
  nlohmann::ordered_json j;
  j["servesim_calibration"] = 1;
  j["gpu"] = c.gpu;
  j["description"] = c.description;
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  for (const std::string& name : Calibration::parameter_names()) {
    auto it = c.parameters.find(name);
    if (it == c.parameters.end()) continue;
    params[name] = {{"value", it->second.value}, {"std_error", it->second.std_error}};
  }
  j["parameters"] = params;
  j["fit_set"] = c.fit_set;
  j["fit_info"] = c.fit_info.is_null() ? nlohmann::json::object() : c.fit_info;
  j["residuals"] = c.residuals.is_null() ? nlohmann::json::array() : c.residuals;
  if (c.kernels) j["kernels"] = c.kernels->to_json();
  return j;
}

Calibration calibration_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("servesim_calibration")) {
    throw ConfigError(where + ": not a servesim calibration profile (no 'servesim_calibration' key)");
  }
  Calibration c;
  c.gpu = optional_field<std::string>(j, "gpu", where, "");
  c.description = optional_field<std::string>(j, "description", where, "");
  if (j.contains("parameters")) {
    const auto& params = j.at("parameters");
    if (!params.is_object()) throw ConfigError(where + ": 'parameters' must be an object");
    for (const auto& [name, v] : params.items()) {
      auto r = ranges().find(name);
      if (r == ranges().end()) {
        throw ConfigError(where + ": unknown parameter '" + name + "' in 'parameters'");
      }
      FittedValue f;
      if (v.is_number()) {
        f.value = v.get<double>();
      } else {
        f.value = require_field<double>(v, "value", where + ": parameters." + name);
        f.std_error = optional_field<double>(v, "std_error", where + ": parameters." + name, 0.0);
      }
      if (!std::isfinite(f.value) || f.value < r->second.lo || f.value > r->second.hi) {
        throw ConfigError(where + ": parameters." + name + " = " + std::to_string(f.value) +
                          " is outside [" + std::to_string(r->second.lo) + ", " +
                          std::to_string(r->second.hi) + "]");
      }
      c.parameters[name] = f;
    }
  }
  if (j.contains("fit_set")) c.fit_set = j.at("fit_set").get<std::vector<std::string>>();
  if (j.contains("residuals")) c.residuals = j.at("residuals");
  if (j.contains("fit_info")) c.fit_info = j.at("fit_info");
  if (j.contains("kernels")) {
    c.kernels = std::make_shared<const KernelProfile>(KernelProfile::from_json(j.at("kernels"), where));
  }
  return c;
}

Calibration load_calibration(const std::string& path) {
  return calibration_from_json(read_json_file(path), path);
}

std::optional<std::string> default_kernel_table_path(const std::string& gpu_name) {
  const auto p = data_dir() / "hardware" / "kernels" / (gpu_name + ".json");
  if (std::filesystem::exists(p)) return p.string();
  return std::nullopt;
}

std::optional<std::string> default_calibration_path(const std::string& gpu_name) {
  const auto p = data_dir() / "hardware" / "calibration" / (gpu_name + ".json");
  if (std::filesystem::exists(p)) return p.string();
  return std::nullopt;
}

}  // namespace servesim::hardware
