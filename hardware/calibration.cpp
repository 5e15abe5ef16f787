#include "hardware/calibration.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iomanip>
#include <sstream>
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
      {"per_prefill_token_overhead_s", {0, 1e-3}},
      {"tp_broadcast_overhead_s", {0, 0.1}},
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
      "per_prefill_token_overhead_s", "tp_broadcast_overhead_s",
      "link_latency_s",     "link_bandwidth_bytes_per_s", "client_ttft_overhead_s",
      "host_step_s",        "host_per_seq_s",     "host_per_prefill_token_s",
      "host_per_sampled_token_s", "frontend_per_request_s", "frontend_per_prompt_token_s",
      "frontend_per_output_token_s"};
  return names;
}

nlohmann::ordered_json to_json(const Calibration& c) {
  nlohmann::ordered_json j;
  j["servesim_calibration"] = 1;
  j["format_version"] = kCalibrationFormatVersion;
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
  if (!c.domain.empty()) j["domain"] = to_json(c.domain);
  j["fit_info"] = c.fit_info.is_null() ? nlohmann::json::object() : c.fit_info;
  j["residuals"] = c.residuals.is_null() ? nlohmann::json::array() : c.residuals;
  if (c.kernels) j["kernels"] = c.kernels->to_json();
  return j;
}

Calibration calibration_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("servesim_calibration")) {
    throw ConfigError(where + ": not a servesim calibration profile (no 'servesim_calibration' key)");
  }
  // The format: "format_version" when written (from 2026-11-27), else the marker's own value;
  // profiles written before carry only "servesim_calibration": 1, and are version 1.
  const std::string key = j.contains("format_version") ? "format_version" : "servesim_calibration";
  const nlohmann::json& version = j.at(key);
  if (!version.is_number_integer() || version.get<int64_t>() != kCalibrationFormatVersion ||
      (key == "format_version" && j.at("servesim_calibration") != 1)) {
    throw ConfigError(where + ": field '" + key + "' has value " +
                      version.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                      "; expected " + std::to_string(kCalibrationFormatVersion) +
                      " (a calibration profile of another format: re-make it with this "
                      "servesim's calibrate)");
  }
  if (!j.contains("parameters") || !j.at("parameters").is_object() ||
      (j.at("parameters").empty() && !j.contains("kernels"))) {
    throw ConfigError(where + ": no fitted 'parameters' (and no 'kernels'); expected a "
                      "calibration profile that sets something (servesim calibrate writes one)");
  }
  Calibration c;
  c.gpu = optional_field<std::string>(j, "gpu", where, "");
  c.description = optional_field<std::string>(j, "description", where, "");
  {
    const auto& params = j.at("parameters");
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
  c.fit_set = optional_field<std::vector<std::string>>(j, "fit_set", where, {});
  if (j.contains("residuals")) c.residuals = j.at("residuals");
  if (j.contains("domain")) c.domain = domain_from_json(j.at("domain"), where + ": domain");
  if (j.contains("fit_info")) c.fit_info = j.at("fit_info");
  if (j.contains("kernels")) {
    c.kernels = std::make_shared<const KernelProfile>(KernelProfile::from_json(j.at("kernels"), where));
  }
  return c;
}

nlohmann::ordered_json to_json(const CalibrationDomain& d) {
  nlohmann::ordered_json j;
  j["models"] = d.models;
  j["tensor_parallel_sizes"] = d.tensor_parallel_sizes;
  j["pipeline_parallel_sizes"] = d.pipeline_parallel_sizes;
  j["engine_versions"] = d.engine_versions;
  j["dtypes"] = d.dtypes;
  j["max_request_rate"] = d.max_request_rate;
  j["max_concurrency"] = d.max_concurrency;
  j["has_unbounded_load"] = d.has_unbounded_load;
  if (d.offline_only) j["offline_only"] = true;
  if (!d.deployments.empty()) j["deployments"] = d.deployments;
  if (!d.host_lines.empty()) j["host_lines"] = d.host_lines;
  if (!d.gpus.empty()) j["gpus"] = d.gpus;
  return j;
}

std::string deployment_key(const std::string& model, int tensor_parallel_size,
                           int pipeline_parallel_size, const std::string& dtype) {
  return model + " TP " + std::to_string(tensor_parallel_size) + " PP " +
         std::to_string(pipeline_parallel_size) + " " + dtype;
}

CalibrationDomain domain_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw ConfigError(where + ": expected an object");
  // Each field through the input contract (json_value_fits): a count beyond int, or 1e300 where
  // an integer belongs, is refused rather than converted (a double -> int cast out of range is
  // undefined behaviour).
  CalibrationDomain d;
  d.models = optional_field<std::vector<std::string>>(j, "models", where, {});
  for (const char* key : {"tensor_parallel_sizes", "pipeline_parallel_sizes"}) {
    const auto v = optional_field<nlohmann::json>(j, key, where, nlohmann::json::array());
    if (!v.is_array()) {
      throw ConfigError(where + ": field '" + key + "' has the wrong type; expected a list of integers");
    }
    std::vector<int> sizes;
    for (size_t i = 0; i < v.size(); ++i) {
      sizes.push_back(
          json_value_as<int>(v[i], where + ": field '" + key + "[" + std::to_string(i) + "]'"));
    }
    (std::string(key) == "tensor_parallel_sizes" ? d.tensor_parallel_sizes
                                                 : d.pipeline_parallel_sizes) = sizes;
  }
  d.engine_versions = optional_field<std::vector<std::string>>(j, "engine_versions", where, {});
  d.dtypes = optional_field<std::vector<std::string>>(j, "dtypes", where, {});
  d.max_request_rate = optional_field<double>(j, "max_request_rate", where, 0.0);
  d.max_concurrency = optional_field<int64_t>(j, "max_concurrency", where, 0);
  d.has_unbounded_load = optional_field<bool>(j, "has_unbounded_load", where, false);
  d.offline_only = optional_field<bool>(j, "offline_only", where, false);
  d.deployments = optional_field<std::vector<std::string>>(j, "deployments", where, {});
  d.host_lines = optional_field<std::vector<std::string>>(j, "host_lines", where, {});
  d.gpus = optional_field<std::vector<std::string>>(j, "gpus", where, {});
  return d;
}

namespace {
template <typename T>
bool contains(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// "a, b, c".
std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// "0.11" of "0.11.0" or "0.11"; "" for a version that does not start with two numbers
// ("nightly-2025-10", "unrecorded").
std::string release_line(const std::string& version) {
  const size_t dot = version.find('.');
  if (dot == 0 || dot == std::string::npos || dot + 1 >= version.size()) return "";
  size_t end = dot + 1;
  while (end < version.size() && std::isdigit(static_cast<unsigned char>(version[end]))) ++end;
  if (end == dot + 1) return "";
  for (size_t i = 0; i < dot; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(version[i]))) return "";
  }
  return version.substr(0, end);
}
}  // namespace

PredictionBasis classify_prediction(const Calibration* profile, const std::string& profile_source,
                                    const PredictionQuery& q) {
  if (profile == nullptr || profile->empty()) {
    return {"datasheet-only", "no calibration profile: datasheet peaks + catalog defaults"};
  }
  const std::string src = profile_source.empty() ? std::string("the profile") : profile_source;
  if (!profile->gpu.empty() && profile->gpu != q.gpu) {
    return {"transferred", src + " was fitted on " + profile->gpu + ", applied to " + q.gpu};
  }
  const CalibrationDomain& d = profile->domain;
  if (d.empty()) {
    return {"transferred", src + " records no serving-run domain (kernel terms only, or an older "
                           "profile): nothing it was fitted on is known to resemble this run"};
  }
  std::vector<std::string> outside;
  if (!contains(d.models, q.model)) outside.push_back("model " + q.model);
  if (!d.tensor_parallel_sizes.empty() && !contains(d.tensor_parallel_sizes, q.tensor_parallel_size)) {
    outside.push_back("TP " + std::to_string(q.tensor_parallel_size));
  }
  if (!d.pipeline_parallel_sizes.empty() &&
      !contains(d.pipeline_parallel_sizes, q.pipeline_parallel_size)) {
    outside.push_back("PP " + std::to_string(q.pipeline_parallel_size));
  }
  if (!q.engine_version.empty() && !d.engine_versions.empty() &&
      !contains(d.engine_versions, q.engine_version)) {
    outside.push_back("vLLM " + q.engine_version);
  }
  if (!d.dtypes.empty() && !contains(d.dtypes, q.dtype)) outside.push_back("weights " + q.dtype);
  if (!q.host_line.empty() && !d.host_lines.empty() && !contains(d.host_lines, q.host_line)) {
    outside.push_back("host line vLLM " + q.host_line + " (fitted on " + join(d.host_lines) + ")");
  } else if (!q.host_line.empty() && d.host_lines.empty() && q.engine_version.empty() &&
             !d.engine_versions.empty()) {
    // A profile written before host lines were recorded: compare release lines (X.Y) of its
    // stated versions with the query's, when every stated version names one.
    const std::string line = q.host_line.substr(0, q.host_line.find(' '));
    bool known = true, same = false;
    for (const std::string& v : d.engine_versions) {
      const std::string fitted_line = release_line(v);
      known = known && !fitted_line.empty();
      same = same || fitted_line == line;
    }
    if (known && !same) {
      outside.push_back("vLLM " + line + " (fitted on " + join(d.engine_versions) + ")");
    }
  }
  // Each part inside, the combination not fitted (only checked when every part is inside, so a
  // new model is reported once, as a model).
  const std::string key = deployment_key(q.model, q.tensor_parallel_size,
                                         q.pipeline_parallel_size, q.dtype);
  if (outside.empty() && !d.deployments.empty() && !contains(d.deployments, key)) {
    outside.push_back(key + " (each part fitted, not this combination)");
  }
  // Load: a closed loop above the highest fitted concurrency (or any closed loop, when only
  // bounded open-loop rates were fitted), or an open loop above the highest fitted rate (unless a
  // fitted run sent everything at once, which covers any load).
  if (q.max_concurrency > 0 && d.max_concurrency > 0 && q.max_concurrency > d.max_concurrency) {
    outside.push_back("concurrency " + std::to_string(q.max_concurrency) + " > " +
                      std::to_string(d.max_concurrency));
  } else if (q.max_concurrency > 0 && d.max_concurrency == 0 && d.max_request_rate > 0 &&
             !d.has_unbounded_load) {
    // Fitted on open-loop runs at bounded rates only: nothing says how far a closed loop of
    // this concurrency loads the server.
    outside.push_back("a closed loop at concurrency " + std::to_string(q.max_concurrency) +
                      " (fitted on open-loop runs only)");
  } else if (q.max_concurrency == 0 && q.request_rate > 0 && !d.has_unbounded_load &&
             q.request_rate > d.max_request_rate) {
    std::ostringstream os;
    os << std::setprecision(4);
    if (std::isinf(q.request_rate)) {
      os << "all requests at once";
    } else {
      os << (d.max_request_rate > 0 ? "rate " : "an open loop at ") << q.request_rate << " req/s";
    }
    if (d.max_request_rate > 0) {
      if (std::isinf(q.request_rate)) {
        os << " (fitted rates up to " << d.max_request_rate << " req/s)";
      } else {
        os << " > " << d.max_request_rate;
      }
    } else if (d.max_concurrency > 0) {
      os << " (fitted on closed-loop runs only)";
    }
    outside.push_back(os.str());
  }
  if (d.offline_only && !q.offline) {
    outside.push_back("an online server (fitted on offline batches only: no client or API-server "
                      "cost seen)");
  }
  if (!d.gpus.empty() && !contains(d.gpus, q.gpu)) {
    // This GPU's kernel terms, host terms from another GPU's runs (calibrate --base, or a joint
    // fit over other GPUs): transferred whatever else matches.
    std::string reason = src + ": its serving terms were fitted on runs on " + join(d.gpus) +
                         ", applied to " + q.gpu;
    if (!outside.empty()) reason += "; also outside its domain: " + join(outside);
    return {"transferred", reason};
  }
  if (outside.empty()) return {"calibrated", src + ": inside its fitted domain"};
  return {"transferred", src + " fitted on this GPU, but outside its domain: " + join(outside)};
}

Calibration load_calibration(const std::string& path) {
  return calibration_from_json(read_json_file(path), path);
}

std::optional<std::string> default_kernel_table_path(const std::string& gpu_name) {
  const auto p = data_dir() / "hardware" / "kernels" / (gpu_name + ".json");
  if (std::filesystem::exists(p)) return p.string();
  return std::nullopt;
}

std::string host_line_dir(const std::string& host_line) {
  std::string dir = "vllm-" + host_line;
  std::replace(dir.begin(), dir.end(), ' ', '-');
  return dir;
}

std::optional<std::string> default_calibration_path(const std::string& gpu_name,
                                                    const std::string& host_line) {
  if (!host_line.empty()) {
    const auto line_profile =
        data_dir() / "hardware" / "calibration" / host_line_dir(host_line) / (gpu_name + ".json");
    if (std::filesystem::exists(line_profile)) return line_profile.string();
  }
  const auto p = data_dir() / "hardware" / "calibration" / (gpu_name + ".json");
  if (std::filesystem::exists(p)) return p.string();
  return std::nullopt;
}

}  // namespace servesim::hardware
